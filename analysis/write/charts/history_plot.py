"""The chart of one cell's history: the statistic over the versions of a series, the median of
the repetitions as a line with their range as error bars, censored (lower-bound) and host-busy
versions marked, and each detected change as a dashed line labelled with its size.

Drawn as the run charts are (issue 34): history_job makes a chart job of plain data,
`history_plot` describes it once as a chartspec Plot (svgcharts.BUILDERS["history"]), and
render.render_job writes the SVG with svgdraw - every version's point with a <title> of its
values and unit - and the PNG with matplotlib from the same Plot.
"""
from __future__ import annotations

from typing import Any

from analysis.corpus.history import CellHistory
from analysis.vocabulary import fmt_ms
from analysis.write.charts.chartlayout import WIDE, text_width
from analysis.write.charts.chartspec import Axis, Bars, Entry, Plot, Rule, Series, Style
from analysis.write.charts.plots import color

REGRESSION_COLOR, IMPROVEMENT_COLOR = "#D55E00", "#009E73"
MAX_TICK_LABELS = 15
TICK_GAP_PT = 6.0           # the least space between two version labels on the x axis
# The marks of censored and host-busy versions: (flag, marker, legend label)
FLAGS = (("censored", "^", "censored (at least)"), ("host_busy", "s", "host busy"))


def history_job(h: CellHistory, chart: dict[str, Any], metric: str,
                label: str) -> dict[str, Any]:
    """The chart job (render.render_job) of one cell's history; `chart`: the history data
    file's entry (svg, png)."""
    points = [{"version": p.version, "run": p.run, "median": p.median, "low": p.low,
               "high": p.high, "repetitions": len(p.values), "censored": p.censored,
               "host_busy": p.host_busy} for p in h.points]
    changes = [{"index": c.index, "size_pct": c.size_pct, "kind": c.kind} for c in h.changes]
    return {"kind": "history", "svg": chart["svg"], "png": chart["png"],
            "data": {"metric": metric, "label": label, "points": points, "changes": changes}}


def point_title(p: dict[str, Any], metric: str, change: dict[str, Any] | None) -> str:
    """A version's <title>: the version and its run, the median with its unit, how many
    repetitions and their range, the flags, and the change that starts at it."""
    reps = p["repetitions"]
    text = (f"version {p['version']} (run {p['run']}): {metric} {fmt_ms(p['median'])} ms, "
            + (f"median of {reps} repetitions (range {fmt_ms(p['low'])}–{fmt_ms(p['high'])} "
               f"ms)" if reps > 1 else "1 repetition"))
    if p["censored"]:
        text += "; censored: a lower bound"
    if p["host_busy"]:
        text += "; host busy"
    if change is not None:
        text += f"; a {change['kind']} of {change['size_pct']:+.1f} % starts here"
    return text


def _tick_step(versions: list[str]) -> int:
    """Every how many versions the x axis names one: at most MAX_TICK_LABELS, and no more
    than the plot area's width holds side by side."""
    room = (WIDE.width_in - WIDE.left_in - WIDE.right_in) * 72
    widest = max(text_width(v, WIDE.tick_pt) for v in versions) + TICK_GAP_PT
    fit = max(1, int(room // widest))
    return max(1, -(-len(versions) // min(MAX_TICK_LABELS, fit)))


def history_plot(data: dict[str, Any]) -> Plot:
    metric, points = data["metric"], data["points"]
    xs = list(range(len(points)))
    versions = [p["version"] for p in points]
    step = _tick_step(versions) if versions else 1

    def version_tick(value: float, _pos=None) -> str:
        i = int(round(value))
        return versions[i] if 0 <= i < len(versions) else ""

    plot = Plot(x=Axis("version", limits=(-0.5, max(len(points), 1) - 0.5), ticks=xs[::step],
                       formatter=version_tick),
                y=Axis(f"{metric} latency (ms)", limits=(0.0, None)),
                title=f"{metric} of {data['label']} over versions")
    ranged = [(x, p) for x, p in zip(xs, points) if p["repetitions"] > 1]
    if ranged:
        plot.bars.append(Bars([x for x, _ in ranged], [p["low"] for _, p in ranged],
                              [p["high"] for _, p in ranged], color(0), width=1.0, cap=2.5))
        plot.entries.append(Entry("range of repetitions",
                                  Style(color(0), 1.0, marker="|", marker_size=8), line=False))
    starts = {c["index"]: c for c in data["changes"]}
    line = Style(color(0), 1.4, marker="o", marker_size=4)
    plot.series.append(Series(xs, [p["median"] for p in points], line, titles=[
        point_title(p, metric, starts.get(x)) for x, p in zip(xs, points)]))
    plot.entries.append(Entry(f"median {metric}", line))
    for flag, marker, name in FLAGS:
        marked = [x for x, p in zip(xs, points) if p[flag]]
        if marked:
            style = Style("#000000", 0, marker=marker, marker_size=8, face="none",
                          edge_width=1.2)
            plot.series.append(Series(marked, [points[x]["median"] for x in marked], style,
                                      titles=[point_title(points[x], metric, starts.get(x))
                                              for x in marked]))
            plot.entries.append(Entry(name, style, line=False))
    for c in data["changes"]:
        colour = REGRESSION_COLOR if c["kind"] == "regression" else IMPROVEMENT_COLOR
        plot.rules.append(Rule(c["index"] - 0.5, True, Style(colour, 1.2, "--"),
                               label=f"{c['size_pct']:+.0f} %"))
    return plot
