"""The chart of one cell's history: the statistic over the versions of a series, the median of
the repetitions as a line with their range as a band, censored (lower-bound) and host-busy
versions marked, and each detected change as a dashed line labelled with its size."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt

from analysis.corpus.history import CellHistory
from analysis.write.charts.render import new_figure, save_figure
from analysis.write.charts.plots import STYLE, color

REGRESSION_COLOR, IMPROVEMENT_COLOR = "#D55E00", "#009E73"
MAX_TICK_LABELS = 15


def draw_history(h: CellHistory, chart: dict[str, Any], site: Path, metric: str,
                 label: str) -> None:
    fig, ax = new_figure()
    with plt.rc_context(STYLE):
        xs = list(range(len(h.points)))
        med = [p.median for p in h.points]
        ax.fill_between(xs, [min(p.values) for p in h.points], [max(p.values) for p in h.points],
                        color=color(0), alpha=0.2, linewidth=0, label="range of repetitions")
        ax.plot(xs, med, color=color(0), marker="o", markersize=3, linewidth=1.4,
                label=f"median {metric}")
        for flag, marker, name in (("censored", "^", "censored (at least)"),
                                   ("host_busy", "x", "host busy")):
            marked = [(x, m) for x, m, p in zip(xs, med, h.points) if getattr(p, flag)]
            if marked:
                ax.plot([x for x, _ in marked], [m for _, m in marked], linestyle="none",
                        marker=marker, markersize=8, color="black", label=name)
        for c in h.changes:
            colour = REGRESSION_COLOR if c.kind == "regression" else IMPROVEMENT_COLOR
            ax.axvline(c.index - 0.5, color=colour, linestyle="--", linewidth=1.2)
            ax.annotate(f"{c.size_pct:+.0f} %", (c.index - 0.5, 1.0),
                        xycoords=("data", "axes fraction"), xytext=(3, -12),
                        textcoords="offset points", color=colour, fontsize=9)
        step = max(1, -(-len(xs) // MAX_TICK_LABELS))
        ax.set_xticks(xs[::step])
        ax.set_xticklabels([h.points[i].version for i in xs[::step]], rotation=45,
                           ha="right", fontsize=8)
        ax.set_xlabel("version")
        ax.set_ylabel(f"{metric} latency (ms)")
        ax.set_ylim(bottom=0)
        ax.set_title(f"{metric} of {label} over versions", y=1.0, pad=6)
        ax.legend(loc="best", framealpha=0.85)
    fig.subplots_adjust(bottom=0.2)
    svg, png = site / chart["svg"], site / chart["png"]
    svg.parent.mkdir(parents=True, exist_ok=True)
    save_figure(fig, svg, png)
