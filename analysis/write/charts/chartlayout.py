"""Where everything of a chart goes: the figure sizes (plots.py's house style), the axes'
ranges and ticks (chosen as matplotlib's autoscale, MaxNLocator and LogLocator choose them),
the legend's size and spot, the small multiples' grid. Both writers follow it: svgdraw.py (the
SVG) and render.py (matplotlib's PNG), so the two files of a chart have the same layout.

Units are points (1/72 in): a 7-inch figure is 504 wide; a font size of 10 is 10 points.
"""
from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Sequence

import numpy as np

from analysis.write.charts.chartspec import Axis, Panels, Plot
from analysis.write.charts.plots import (FIGSIZE_IN, MARGINS, NARROW_FIGSIZE_IN, NARROW_MARGINS_IN,
                                  NARROW_TEXT_PT, PNG_DPI)

TICK_PT = 3.5        # tick length, and the gap between a tick and its label
LINE_H = 1.17        # DejaVu Sans: ascent + descent per point of font size
ASCENT = 0.76        # baseline below the top of a line, per point of font size (cap height-ish)


# --- text -------------------------------------------------------------------------------------

@lru_cache(maxsize=None)
def _font():
    """DejaVu Sans (matplotlib ships it) for advance widths: the SVG names the same font, so a
    legend box fits its text where the reader has it (and roughly anywhere else)."""
    from matplotlib import font_manager, ft2font
    font = ft2font.FT2Font(font_manager.findfont("DejaVu Sans"))
    font.set_size(100, 72)
    return font


@lru_cache(maxsize=4096)
def _advance(ch: str) -> float:
    """The advance width of one character at 1 pt."""
    from matplotlib import ft2font
    flags = getattr(ft2font, "LoadFlags", None)
    flags = flags.NO_HINTING if flags is not None else ft2font.LOAD_NO_HINTING
    font = _font()
    try:
        if font.get_char_index(ord(ch)) == 0:
            # not in DejaVu Sans: the reader's browser draws it from another font; wide (CJK)
            # characters take a whole em there
            return 1.0 if unicodedata.east_asian_width(ch) in ("W", "F") else 0.6
        glyph = font.load_char(ord(ch), flags=flags)
    except (RuntimeError, ValueError, OverflowError):
        return 0.6
    return glyph.linearHoriAdvance / 65536 / 100


def text_width(text: str, size: float) -> float:
    """The width of one line of `text` at `size` points."""
    return _line_advance(text) * size


@lru_cache(maxsize=8192)
def _line_advance(text: str) -> float:
    """(tick labels, legend entries and titles recur in every chart of a run, and every run)"""
    return sum(_advance(ch) for ch in text)


# --- layouts (the figure sizes of plots.py) ---------------------------------------------------

@dataclass(frozen=True)
class Layout:
    width_in: float
    left_in: float
    right_in: float
    top_in: float
    plot_in: float          # the plot area's height
    bottom_in: float        # below the plot area, before any legend under it
    tick_pt: float
    label_pt: float
    title_pt: float
    legend_pt: float
    legend_row_in: float
    narrow: bool = False


# The 700 px figure: 7 x 4 in with plots.MARGINS; with the legend below, the plot area 3.05 in
# high and the figure 0.36 + 3.05 + 0.62 in plus 0.17 in per legend row.
_W, _H = FIGSIZE_IN
WIDE = Layout(width_in=_W, left_in=MARGINS["left"] * _W, right_in=(1 - MARGINS["right"]) * _W,
              top_in=(1 - MARGINS["top"]) * _H, plot_in=(MARGINS["top"] - MARGINS["bottom"]) * _H,
              bottom_in=MARGINS["bottom"] * _H, tick_pt=10, label_pt=10, title_pt=11,
              legend_pt=9, legend_row_in=0.17)
WIDE_BELOW = Layout(width_in=_W, left_in=WIDE.left_in, right_in=WIDE.right_in, top_in=0.36,
                    plot_in=3.05, bottom_in=0.62, tick_pt=10, label_pt=10, title_pt=11,
                    legend_pt=8, legend_row_in=0.17)
# The phone figure (plots.NARROW_*): 3.6 in wide, a 2.2 in plot area, text at least
# NARROW_TEXT_PT, the title wrapped, the legend below in one column, 0.16 in a row after a
# 0.12 in gap.
NARROW = Layout(width_in=NARROW_FIGSIZE_IN[0], left_in=NARROW_MARGINS_IN["left"],
                right_in=NARROW_MARGINS_IN["right"], top_in=NARROW_MARGINS_IN["top"],
                plot_in=2.2, bottom_in=NARROW_MARGINS_IN["bottom"], tick_pt=NARROW_TEXT_PT,
                label_pt=NARROW_TEXT_PT + 1, title_pt=10, legend_pt=NARROW_TEXT_PT,
                legend_row_in=0.16, narrow=True)
BELOW_TWO_COLUMNS_CHARS = 42   # plots.legend_below: two columns when every label fits


# A summary panel (issue 34): one of several SVGs that wrap, so it is narrower than the phone
# figure (three fit a 66rem column, one a 390 px phone at its own size), with the phone's text
# sizes, no y tick labels (each row's label is written above it) and a row per target.
SUMMARY_WIDTH_IN = 3.2
SUMMARY_ROW_IN = 0.4


def summary_layout(rows: int) -> Layout:
    return Layout(width_in=SUMMARY_WIDTH_IN, left_in=0.14, right_in=0.14,
                  top_in=NARROW_MARGINS_IN["top"], plot_in=rows * SUMMARY_ROW_IN + 0.1,
                  bottom_in=NARROW_MARGINS_IN["bottom"], tick_pt=NARROW_TEXT_PT,
                  label_pt=NARROW_TEXT_PT + 1, title_pt=10, legend_pt=NARROW_TEXT_PT,
                  legend_row_in=0.16, narrow=True)


def layout_for(plot: Plot, narrow: bool) -> Layout:
    if plot.panel_rows:
        return summary_layout(plot.panel_rows)
    if narrow:
        return NARROW
    return WIDE_BELOW if plot.legend == "below" else WIDE


def legend_columns(plot: Plot, layout: Layout) -> int:
    if layout.narrow or plot.legend != "below":
        return 1
    return 2 if max((len(e.label) for e in plot.entries), default=0) <= BELOW_TWO_COLUMNS_CHARS \
        else 1


def legend_size(plot: Plot, layout: Layout) -> float:
    """The legend's font size: the layout's; 7.5 pt for a one-column legend below a wide chart
    (labels too long for two columns)."""
    if plot.legend == "below" and not layout.narrow and legend_columns(plot, layout) == 1:
        return 7.5
    if plot.legend == "inside" and not layout.narrow and plot.legend_size is not None:
        return plot.legend_size
    return layout.legend_pt


def legend_labels(plot: Plot, layout: Layout) -> list[list[str]]:
    """Each legend entry's label as the lines it is written on: one line, except on a phone,
    where a label wider than the figure (beside its handle) is wrapped at spaces."""
    if not layout.narrow:
        return [[e.label] for e in plot.entries]
    size = legend_size(plot, layout)
    room = layout.width_in * 72 - 8 - 3.6 * size      # the figure less margins, border, handle
    out = []
    for e in plot.entries:
        lines: list[str] = []
        for word in e.label.split(" "):
            if lines and text_width(f"{lines[-1]} {word}", size) <= room:
                lines[-1] = f"{lines[-1]} {word}"
            else:
                lines.append(word)
        out.append(lines or [""])
    return out


def _below_rows(plot: Plot, layout: Layout) -> int:
    """Rows of a legend under the axes (0 when the legend is inside or absent): a row per line
    of the tallest column."""
    below = plot.entries and (plot.legend == "below" or (layout.narrow and plot.legend))
    if not below:
        return 0
    cols = legend_columns(plot, layout)
    labels = legend_labels(plot, layout)
    per_col = math.ceil(len(labels) / cols)
    return max(sum(len(lines) for lines in labels[c * per_col:(c + 1) * per_col])
               for c in range(cols))


def figure_size_in(plot: Plot, narrow: bool = False) -> tuple[float, float]:
    """The figure's width and height in inches: fixed, plus a row of legend under the axes per
    `legend_row_in` (render.py gives matplotlib's figure for the PNG the same size)."""
    layout = layout_for(plot, narrow)
    rows = _below_rows(plot, layout)
    extra = (0.12 + rows * layout.legend_row_in if rows else 0.0) if layout.narrow \
        else rows * layout.legend_row_in
    height = layout.plot_in + (layout.bottom_in + extra) + layout.top_in
    # whole pixels plus a quarter: Agg makes the PNG int(height x dpi) pixels high and
    # pixel_sizes (the <img> size) rounds, and 8.279999 in would be 827 against 828
    return layout.width_in, (round(height * PNG_DPI) + 0.25) / PNG_DPI


# --- scales and ticks -------------------------------------------------------------------------

class Scale:
    """Data -> position along one axis (points), linear or log10."""

    def __init__(self, kind: str, lo: float, hi: float, p0: float, p1: float):
        self.kind, self.lo, self.hi = kind, lo, hi
        self._f = math.log10 if kind == "log" else float
        a, b = self._f(lo), self._f(hi)
        self._k = (p1 - p0) / ((b - a) or 1.0)
        self._a, self._p0 = a, p0

    def __call__(self, v: float) -> float:
        return self._p0 + (self._f(v) - self._a) * self._k

    def at(self, values: np.ndarray) -> np.ndarray:
        """__call__ of each value: numpy's float64 operations are Python's; a log axis takes
        math.log10 of each (numpy's log10 may differ from it in the last bit)."""
        if self.kind == "log":
            values = np.array([math.log10(v) for v in values.tolist()], dtype=float)
        return self._p0 + (values - self._a) * self._k

    def inside(self, v: float) -> bool:
        lo, hi = min(self.lo, self.hi), max(self.lo, self.hi)
        return lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9) if self.kind == "log" \
            else lo - 1e-9 * abs(hi - lo) <= v <= hi + 1e-9 * abs(hi - lo)


def finite(v) -> bool:
    return v is not None and v == v and not math.isinf(v)


def view_limits(axis: Axis, values: list[float]) -> tuple[float, float]:
    """The axis's range: its fixed limits, else the data's with 5 % margins on each side (in
    log space on a log axis), as matplotlib's autoscale does."""
    lo, hi = axis.limits
    data = [v for v in values if finite(v) and (axis.scale != "log" or v > 0)]
    if axis.scale == "log":
        data_lo, data_hi = (min(data), max(data)) if data else (1.0, 10.0)
        if data_lo == data_hi:
            data_lo, data_hi = data_lo / 10, data_hi * 10
        a, b = math.log10(data_lo), math.log10(data_hi)
        m = 0.05 * (b - a)
        auto = (10 ** (a - m), 10 ** (b + m))
    else:
        data_lo, data_hi = (min(data), max(data)) if data else (0.0, 1.0)
        if data_lo == data_hi:
            pad = abs(data_lo) * 0.05 or 0.05
            data_lo, data_hi = data_lo - pad, data_hi + pad
        m = 0.05 * (data_hi - data_lo)
        auto = (data_lo - m, data_hi + m)
    lo = auto[0] if lo is None else lo
    hi = auto[1] if hi is None else hi
    if hi <= lo:
        hi = lo + (abs(lo) or 1.0)
    return lo, hi


NICE_STEPS = (1.0, 2.0, 2.5, 5.0, 10.0)


def linear_ticks(lo: float, hi: float, max_bins: int) -> list[float]:
    """Ticks at multiples of the smallest nice step (1, 2, 2.5, 5 x 10^k) at least
    (hi - lo) / max_bins, inside [lo, hi] (matplotlib's MaxNLocator)."""
    raw = (hi - lo) / max(1, max_bins)
    scale = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    step = next((m * scale for m in NICE_STEPS if m * scale >= raw * (1 - 1e-12)), 10 * scale)
    first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
    # printed from the step's decimals, so 0.30000000000000004 is 0.3
    digits = max(0, 2 - math.floor(math.log10(step)))
    return [round(k * step, digits) for k in range(first, last + 1)]


def log_ticks(lo: float, hi: float, subs: Sequence[float], numticks: int) -> list[float]:
    """Decades times `subs` inside [lo, hi]; decades alone, every n-th, when the range holds
    more decades than `numticks`; linear ticks when at most one would show (matplotlib's
    LogLocator)."""
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    numdec = math.floor(math.log10(hi)) - math.ceil(math.log10(lo))
    stride = numdec // max(1, numticks) + 1
    if stride >= numdec:       # never so wide a stride that one tick is left
        stride = max(1, numdec - 1)
    # (matplotlib draws no tick at all for subs with a stride over 1; plots.py never asks for
    # that, and decades are the sensible answer)
    use = tuple(subs) if stride == 1 else (1.0,)
    ticks = [s * 10.0 ** k for k in range(first - stride, last + 2 * stride, stride)
             for s in use if lo * (1 - 1e-9) <= s * 10.0 ** k <= hi * (1 + 1e-9)]
    if len(use) > 1 and len(ticks) <= 1:
        return linear_ticks(lo, hi, numticks)
    return ticks


def plain(value: float) -> str:
    """Tick labels as plain numbers with thousands separators (0.1, 1, 10, 1,000)."""
    if value == 0:
        return "0"
    if abs(value) < 1:
        return f"{value:,.6f}".rstrip("0").rstrip(".")
    text = f"{value:,.6f}".rstrip("0").rstrip(".")
    return text


def data_values(plot: Plot) -> tuple[list[float], list[float]]:
    xs: list[float] = []
    ys: list[float] = []
    for s in plot.series:
        pts = [(x, y) for x, y in zip(s.xs, s.ys) if finite(y)]
        xs += [x for x, _ in pts]
        ys += [y for _, y in pts]
        if s.steps:     # a step holds its value up to the next x, even where that one is a gap
            xs += [s.xs[i + 1] for i in range(len(s.xs) - 1)
                   if finite(s.ys[i]) and not finite(s.ys[i + 1])]
    for b in plot.bars:
        xs += list(b.xs)
        ys += list(b.lo) + list(b.hi)
    for r in plot.rules:
        (xs if r.vertical else ys).append(r.at)
    for band in plot.bands:
        xs += [band.x0, band.x1]
    return xs, ys


RULE_LABEL_PT = 8.0


def rule_labels(plot: Plot, box: tuple[float, float, float, float],
                sx: Scale) -> list[tuple[float, float, str, str]]:
    """Where each labelled vertical rule's text goes: (x, baseline y, anchor, text) in points,
    at the top of the plot area, a row apart from the one before so that two rules close
    together do not print over each other; to the rule's right, or to its left where the text
    would leave the plot area."""
    x0, y0, x1, _ = box
    out = []
    for r in plot.rules:
        if not (r.vertical and r.label and sx.inside(r.at)):
            continue
        px = sx(r.at)
        gap = 0.4 * RULE_LABEL_PT
        right = px + gap + text_width(r.label, RULE_LABEL_PT) <= x1 - gap
        y = y0 + gap + RULE_LABEL_PT * ASCENT + len(out) * RULE_LABEL_PT * LINE_H
        out.append((px + gap, y, "start", r.label) if right else (px - gap, y, "end", r.label))
    return out


def axis_ticks(axis: Axis, scale: Scale, length_pt: float, font_pt: float,
               per_label: float) -> list[float]:
    """An axis's ticks: its fixed ones inside the range, else at most one per `per_label`
    font sizes of its length (3 across, 2 up, at most 9: matplotlib's tick space)."""
    if axis.ticks is not None:
        return [t for t in axis.ticks if scale.inside(t)]
    lo, hi = scale.lo, scale.hi
    room = max(2, min(9, int(length_pt / (font_pt * per_label))))
    if axis.scale == "log":
        return log_ticks(lo, hi, axis.subs, room)
    return [t for t in linear_ticks(lo, hi, room) if scale.inside(t)]


def legend_box(labels: Sequence[Sequence[str]], size: float, cols: int,
               row_h: float | None = None) -> tuple[float, float, list]:
    """Width and height of a legend whose entries have these label lines (matplotlib's
    paddings, in font sizes: border 0.4, row spacing 0.5, handle 2.0, handle-text 0.8, columns
    2.0), and its columns: (the entries' indexes, the column's width). `row_h`: the pitch of
    the lines (a legend under the axes has the figure's row height)."""
    per_col = math.ceil(len(labels) / cols)
    columns = [list(range(c * per_col, min(len(labels), (c + 1) * per_col)))
               for c in range(cols)]
    columns = [col for col in columns if col]
    widths = [max(text_width(line, size) for i in col for line in labels[i]) + 2.8 * size
              for col in columns]
    width = sum(widths) + 2.0 * size * (len(widths) - 1) + 0.8 * size
    row_h = row_h or size * LINE_H + 0.5 * size
    rows = max((sum(len(labels[i]) for i in col) for col in columns), default=0)
    height = rows * row_h - (row_h - size * LINE_H) + 0.8 * size
    return width, height, list(zip(columns, widths))


def best_spot(plot: Plot, box: tuple[float, float, float, float], size_wh: tuple[float, float],
              sx: Scale, sy: Scale, pad: float) -> tuple[float, float]:
    """Where a legend inside the plot area covers the fewest data points and line segments,
    trying matplotlib's order of spots (upper right first) and keeping the first best."""
    x0, y0, x1, y1 = box
    w, h = size_wh
    left, right, cx = x0 + pad, x1 - pad - w, (x0 + x1 - w) / 2
    top, bottom, cy = y0 + pad, y1 - pad - h, (y0 + y1 - h) / 2
    spots = [(right, top), (left, top), (left, bottom), (right, bottom), (right, cy),
             (left, cy), (right, cy), (cx, bottom), (cx, top), (cx, cy)]
    rule_points = []
    for r in plot.rules:
        for k in range(21):
            t = k / 20
            rule_points.append((sx(r.at), y1 + (y0 - y1) * t) if r.vertical else
                               (x0 + (x1 - x0) * t, sy(r.at)))
    # Each segment sampled at its quarters so long segments count too: a + (b - a) * k / 4.
    # All of it in numpy, the same float operations in the same order as one point at a time
    # in Python (Scale.at), for all of a chart's series at once; the count of points under
    # each of the 10 spots ignores their order.
    points, a, b = _series_points(plot.series, sx, sy)
    step = b - a
    every = np.concatenate([points, np.array(rule_points, dtype=float).reshape(-1, 2)]
                           + [a + step * k / 4 for k in range(1, 4)])
    left_x, top_y = (np.array(v, dtype=float)[:, None] for v in zip(*spots))
    pxs, pys = every[:, 0], every[:, 1]
    scores = np.count_nonzero((left_x <= pxs) & (pxs <= left_x + w)
                              & (top_y <= pys) & (pys <= top_y + h), axis=1)
    return spots[int(np.argmin(scores))]     # (the first of the lowest)


def _series_points(series, sx: Scale, sy: Scale) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The series' shown points (positions), and the two ends of each segment joining two
    shown points that are neighbours in one series (a step: two segments through its corner),
    all series in one pass (a chart's 2 to 20 series were ~10 numpy calls each)."""
    if any(len(s.xs) != len(s.ys) for s in series):
        raise ValueError("a series has not as many x values as y values")
    xs = np.array([x for s in series for x in s.xs], dtype=float)    # (None: NaN)
    ys = np.array([y for s in series for y in s.ys], dtype=float)
    of = np.repeat(np.arange(len(series)), [len(s.xs) for s in series])
    shown = np.isfinite(xs) & np.isfinite(ys)
    if sx.kind == "log":
        shown &= xs > 0
    if sy.kind == "log":
        shown &= ys > 0
    kept = np.flatnonzero(shown)
    p = np.column_stack([sx.at(xs[kept]), sy.at(ys[kept])])
    which = of[kept]
    joined = (np.diff(kept) == 1) & (which[1:] == which[:-1])
    prev, cur = p[:-1][joined], p[1:][joined]
    steps = np.array([s.steps for s in series], dtype=bool)[which[1:][joined]]
    corner = np.column_stack([cur[steps, 0], prev[steps, 1]])
    return (p, np.concatenate([prev[~steps], prev[steps], corner]),
            np.concatenate([cur[~steps], corner, cur[steps]]))


@dataclass
class Geometry:
    """Where everything of a single-axes chart goes, in points (y down): the figure, the plot
    area, the axes' ranges and ticks, and the legend (`legend`: None, or (kind, x, y, size,
    columns, row height, each entry's label lines) with (x, y) its top-left corner; kind
    "inside" or "below"). The SVG
    is drawn from it, and matplotlib's PNG of the same chart is laid out by it."""
    width: float
    height: float
    box: tuple[float, float, float, float]
    xlim: tuple[float, float]
    ylim: tuple[float, float]
    xticks: list[float]
    yticks: list[float]
    layout: Layout
    legend: tuple | None = None
    remarks: tuple | None = None     # (x, y, width, height, lines): the remarks' framed box


REMARK_PT = 8.0


def _remarks_box(plot: Plot, g: "Geometry", sx: Scale, sy: Scale) -> tuple | None:
    """The plot's remarks as lines that fit the plot area (wrapped at spaces), framed as an
    inside legend is, in the corner where they cover the fewest data points (best_spot)."""
    if not plot.remarks:
        return None
    x0, y0, x1, y1 = g.box
    pad = 0.4 * REMARK_PT
    room = x1 - x0 - 2 * pad - 2 * REMARK_PT
    lines: list[str] = []
    for remark in plot.remarks:
        words = remark.split(" ")
        lines.append(words[0])
        for word in words[1:]:
            if text_width(f"{lines[-1]} {word}", REMARK_PT) <= room:
                lines[-1] = f"{lines[-1]} {word}"
            else:
                lines.append(word)
    w = max(text_width(line, REMARK_PT) for line in lines) + 2 * pad
    h = len(lines) * REMARK_PT * LINE_H + 2 * pad
    x, y = best_spot(plot, g.box, (w, h), sx, sy, pad)
    return x, y, w, h, lines


def geometry(plot: Plot, narrow: bool = False,
             limits: tuple[tuple[float, float], tuple[float, float]] | None = None) -> Geometry:
    """`limits`: the axes' ranges (xlim, ylim) where the caller has them from the plot's other
    layout (they depend on its data alone, not on the layout)."""
    layout = layout_for(plot, narrow)
    width_in, height_in = figure_size_in(plot, narrow)
    W, H = width_in * 72, height_in * 72
    x0 = layout.left_in * 72
    x1 = W - layout.right_in * 72
    y0 = layout.top_in * 72
    y1 = y0 + layout.plot_in * 72
    if limits is None:
        xs, ys = data_values(plot)
        limits = view_limits(plot.x, xs), view_limits(plot.y, ys)
    xlim, ylim = limits
    sx = Scale(plot.x.scale, *xlim, x0, x1)
    sy = Scale(plot.y.scale, *ylim, y1, y0)
    xticks = axis_ticks(plot.x, sx, x1 - x0, layout.tick_pt, 3)
    if layout.narrow and plot.thin_x_ticks and len(xticks) > 5:
        xticks = xticks[::2]
    yticks = axis_ticks(plot.y, sy, y1 - y0, layout.tick_pt, 2)
    g = Geometry(W, H, (x0, y0, x1, y1), xlim, ylim, xticks, yticks, layout)
    g.remarks = _remarks_box(plot, g, sx, sy)
    if plot.entries and plot.legend:
        size = legend_size(plot, layout)
        labels = legend_labels(plot, layout)
        if plot.legend == "below" or layout.narrow:
            cols = legend_columns(plot, layout)
            row_h = layout.legend_row_in * 72
            w, _, _ = legend_box(labels, size, cols, row_h)
            # centred under the plot area, moved left as far as it must to stay in the figure
            lx = max(4.0, min((x0 + x1 - w) / 2, W - w - 4.0))
            g.legend = ("below", lx, xlabel_y(g) + layout.label_pt *
                        (LINE_H - ASCENT) + (0.12 * 72 if layout.narrow else 6), size, cols,
                        row_h, labels)
        else:
            w, h, _ = legend_box(labels, size, 1)
            lx, ly = best_spot(plot, g.box, (w, h), sx, sy, 0.5 * size)
            g.legend = ("inside", lx, ly, size, 1, None, labels)
    return g


def xlabel_y(g: Geometry) -> float:
    """The x axis label's baseline: under the tick labels."""
    label_y = g.box[3] + 2 * TICK_PT + g.layout.tick_pt * ASCENT
    return label_y + g.layout.tick_pt * (LINE_H - ASCENT) + TICK_PT + g.layout.label_pt * ASCENT


# --- small multiples ----------------------------------------------------------------------------

def panel_layout(n: int, narrow: bool, title_lines: int = 1) -> dict[str, Any]:
    """The grid of n panels: 3 columns (4 above 12 systems) at 700 px, 2 on a phone; sizes in
    inches, so the panels keep their size whatever the count and the figure grows instead.
    Between rows: room for a two-line panel title (the x tick labels show on the bottom row
    only: the panels share their axes). `title_lines`: the figure title's (wrapped on a
    phone)."""
    cols = 2 if narrow else (3 if n <= 12 else 4)
    rows = max(1, math.ceil(n / cols))
    width = NARROW_FIGSIZE_IN[0] if narrow else FIGSIZE_IN[0]
    panel_h, gap_h, gap_w = (1.15, 0.42, 0.14) if narrow else (1.3, 0.42, 0.16)
    left, right = (0.7, 0.12) if narrow else (0.8, 0.15)
    top = 0.45 + 0.19 * title_lines     # the title, then the first row's (two-line) panel titles
    bottom = 0.72 if narrow else 0.62   # x tick labels and the x label (two lines on a phone)
    height = top + rows * panel_h + (rows - 1) * gap_h + bottom
    # whole pixels plus a quarter, so Agg's int() and pixel_sizes' round() agree
    height = (round(height * PNG_DPI) + 0.25) / PNG_DPI
    panel_w = (width - left - right - (cols - 1) * gap_w) / cols
    return {"cols": cols, "rows": rows, "figsize": (width, height),
            "adjust": {"left": left / width, "right": 1 - right / width,
                       "bottom": bottom / height, "top": 1 - top / height,
                       "hspace": gap_h / panel_h, "wspace": gap_w / panel_w},
            # 8.5 pt titles are about 4.8 pt a character; x labels like "99.99%" ~ 0.45 in
            "title_chars": max(8, int(panel_w * 72 / 4.8)),
            "max_ticks": max(2, int(panel_w / 0.42))}



def panel_tick_pt(narrow: bool) -> float:
    return NARROW.tick_pt if narrow else 7.5


def shared_limits(p: Panels) -> tuple[tuple[float, float], tuple[float, float]]:
    """The panels' common x and y ranges (the first panel's axes, every panel's data)."""
    xs: list[float] = []
    ys: list[float] = []
    for plot in p.plots:
        px, py = data_values(plot)
        xs += px
        ys += py
    return view_limits(p.plots[0].x, xs), view_limits(p.plots[0].y, ys)


def panel_ticks(p: Panels, layout: dict, narrow: bool) -> tuple[list[float], list[float]]:
    """The panels' x and y ticks (every panel has the same box size and ranges)."""
    W, H = layout["figsize"][0] * 72, layout["figsize"][1] * 72
    adjust = layout["adjust"]
    panel_w = (adjust["right"] - adjust["left"]) * W / (layout["cols"] + (layout["cols"] - 1)
                                                        * adjust["wspace"])
    panel_h = (adjust["top"] - adjust["bottom"]) * H / (layout["rows"] + (layout["rows"] - 1)
                                                        * adjust["hspace"])
    xlim, ylim = shared_limits(p)
    shared = p.plots[0]
    tick_pt = panel_tick_pt(narrow)
    sx = Scale(shared.x.scale, *xlim, 0.0, panel_w)
    sy = Scale(shared.y.scale, *ylim, panel_h, 0.0)
    return (axis_ticks(shared.x, sx, panel_w, tick_pt, 3),
            axis_ticks(shared.y, sy, panel_h, tick_pt, 2))
