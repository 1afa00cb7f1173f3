"""A chart of the shape of the one drawn before it, redrawn on that one's artists (issue 36).

A build's worker draws one PNG a run, its og:image, and the runs of a corpus are mostly of one
shape (the same systems and loads, so the same lines, bars and legend): each og:image is the
chart before it with other numbers. Clearing the figure and making the artists again (the
errorbars, the scatter markers, the legend) was a third of the PNG's time; here the numbers are
set on the artists the chart before made, as making them would have set them: the same arrays
(errorbar's own arithmetic for its bars' ends), the same calls for the ranges, ticks, title and
labels. `shape` is everything of a Plot but those numbers and texts; a chart with a part not
updated here (bands, notes, remarks, markers with missing values or their own edge colours)
is drawn on a cleared figure, as before. tests/test_charts.py: the same bytes as a fresh
figure's, for charts of one shape with other numbers, in any order.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import matplotlib
import numpy as np
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

from analysis.write.charts import chartlayout
from analysis.write.charts.chartlayout import figure_size_in, finite
from analysis.write.charts.plots import STYLE


@dataclass
class Drawn:
    """The artists render._draw_plot made for a chart, in its drawing order."""
    rules: list          # a Line2D a rule
    bars: list           # errorbar's container a Bars: (None, caps, (its LineCollection,))
    series: list         # a Line2D (a line) or a PathCollection (markers only) a Series
    rule_labels: list    # a Text a labelled rule
    legend: Any


@contextmanager
def style_params():
    """rcParams as `matplotlib.rc_context(STYLE)` sets them, for the drawing of a PNG. That
    copies all ~320 parameters on entry and writes them back on exit (~3,000 Python calls, and
    a run's og:image entered it two to four times); this saves and restores the few STYLE
    sets. Unlike rc_context it leaves what the block itself sets (nothing here does)."""
    params = matplotlib.rcParams
    saved = {key: params[key] for key in STYLE}
    try:
        params.update(STYLE)
        yield
    finally:
        params.update(saved)


# the last chart drawn on a reused figure: [(figure, its shape, Drawn)]
_LAST: list = []


def forget() -> None:
    _LAST.clear()


def remember(fig, plot, g, drawn: Drawn) -> None:
    _LAST[:] = [(fig, shape(plot, g), drawn)]


def _drawn_as(s) -> str | None:
    """How render._draw_content draws a series: a line, markers alone, or not at all."""
    return "line" if s.style.width > 0 else "markers" if s.style.marker else None


def shape(plot, g) -> tuple | None:
    """Everything that decides which artists a chart has and how they look; None for a chart
    this module does not redraw."""
    if plot.bands or plot.notes or g.remarks:
        return None
    for s in plot.series:
        if len(s.xs) != len(s.ys) or _drawn_as(s) == "markers" and (
                s.edges or not all(finite(x) and finite(y) for x, y in zip(s.xs, s.ys))):
            return None
    for b in plot.bars:
        # (what errorbar refuses is left to it, on a cleared figure: its error is the build's)
        if not len(b.xs) == len(b.lo) == len(b.hi) or any(h - lo < 0 for lo, h in zip(b.lo, b.hi)):
            return None
    legend = None
    if g.legend:
        kind, _, _, size, cols, _, _ = g.legend
        legend = (kind, size, cols, [(e.line, e.style) for e in plot.entries])
    return (plot.x.scale, plot.y.scale,
            [(r.vertical, r.span, r.style) for r in plot.rules],
            [(b.color, b.width, b.cap, len(b.xs) > 0) for b in plot.bars],
            [(_drawn_as(s), s.style, s.steps) for s in plot.series],
            bool(plot.title), [anchor for _, _, anchor, _ in _rule_labels(plot, g)], legend)


def _rule_labels(plot, g) -> list:
    x0, _, x1, _ = g.box
    return chartlayout.rule_labels(plot, g.box, chartlayout.Scale(plot.x.scale, *g.xlim, x0, x1))


def redraw(fig, ax, plot, g) -> bool:
    """Draw `plot` on the artists of the chart last drawn on `fig`, if it has that one's
    shape; False (nothing changed) if not."""
    if not _LAST or _LAST[0][0] is not fig:
        return False
    _, last, drawn = _LAST[0]
    if last is None or shape(plot, g) != last:
        return False
    # as render._draw_plot and _draw_content set them on a cleared figure, in their order
    fig.set_size_inches(figure_size_in(plot))
    x0, y0, x1, y1 = g.box
    fig.subplots_adjust(left=x0 / g.width, right=x1 / g.width, top=1 - y0 / g.height,
                        bottom=1 - y1 / g.height)
    with style_params():   # (rcParams as _draw_plot's: the title's font)
        ax.set_xlim(*g.xlim)
        ax.set_ylim(*g.ylim)
        for axis, ticks, spec in ((ax.xaxis, g.xticks, plot.x), (ax.yaxis, g.yticks, plot.y)):
            axis.set_major_locator(FixedLocator(ticks))
            axis.set_minor_locator(NullLocator())
            fmt = spec.formatter or chartlayout.plain
            axis.set_major_formatter(FuncFormatter(lambda v, _pos, fmt=fmt: fmt(v)))
        for r, line in zip(plot.rules, drawn.rules):
            # axvline / axhline: Line2D([at, at], span) or (span, [at, at])
            at, span = [r.at, r.at], list(r.span)
            line.set_data((at, span) if r.vertical else (span, at))
        for b, container in zip(plot.bars, drawn.bars):
            _set_bars(b, container)
        for s, artist in zip(plot.series, drawn.series):
            if _drawn_as(s) == "line":
                artist.set_data(s.xs, [float("nan") if v is None else v for v in s.ys])
            elif _drawn_as(s) == "markers":
                artist.set_offsets(np.ma.column_stack([np.ma.masked_invalid(np.ma.ravel(s.xs)),
                                                       np.ma.masked_invalid(np.ma.ravel(s.ys))]))
        for (x, y, _, text), label in zip(_rule_labels(plot, g), drawn.rule_labels):
            label.set_position((x / g.width, 1 - y / g.height))
            label.set_text(text)
        if plot.title:
            ax.set_title(plot.title, y=1.0, pad=6)
        ax.set_xlabel(plot.x.label)
        ax.set_ylabel(plot.y.label)
        if g.legend:
            _, lx, ly, _, _, _, _ = g.legend
            drawn.legend.set_bbox_to_anchor(((lx - x0) / (x1 - x0), (y1 - ly) / (y1 - y0)))
            # (the legend lays its box out as it draws: from these texts)
            for text, entry in zip(drawn.legend.get_texts(), plot.entries):
                text.set_text(entry.label)
    return True


def _set_bars(b, container) -> None:
    """errorbar(xs, lo, yerr=[zeros, hi - lo], fmt="none")'s numbers: its object arrays and
    its arithmetic for the bars' ends (lo + -1 * 0.0, lo + 1 * (hi - lo)), then vlines'
    segments and the two cap lines."""
    _, caps, (bars,) = container
    n = len(b.lo)
    x = np.atleast_1d(np.asarray(b.xs, dtype=object))
    y = np.atleast_1d(np.asarray(b.lo, dtype=object))
    err = np.asarray([[0.0] * n, [h - lo for lo, h in zip(b.lo, b.hi)]], dtype=object)
    no_limits = np.zeros(n, dtype=bool)
    low, high = y + np.vstack([-(1 - no_limits), 1 - no_limits]) * err
    verts = np.ma.empty((n, 2, 2))
    verts[:, 0, 0] = x
    verts[:, 0, 1] = low
    verts[:, 1, 0] = x
    verts[:, 1, 1] = high
    bars.set_segments(verts)
    for cap, end in zip(caps, (low, high)):
        cap.set_data(x, end)
