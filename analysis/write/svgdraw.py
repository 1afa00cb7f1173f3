"""Line charts written straight to SVG text: a chart described as plain data (`Plot`), laid
out on a figure of fixed size (`render_svg`), with no plotting library in between.

Why: a build draws 40 SVGs per run (20 charts, each at 700 px and in the phone layout), and
matplotlib took ~40 ms for each, two thirds of a run's CPU (bench/perf/run_cost.py). The charts
are a few polylines, markers and text; written directly they cost about a millisecond. The look
follows the house style of plots.py (same figure sizes and margins, colours, DejaVu Sans at the
same point sizes, grey grid, outward ticks), and the SVG keeps the ids the tests and the
browser check read back (plots.PLOT_AREA_ID, LEGEND_ID, LEGEND_INSIDE_ID: a group whose first
path is the box). The PNG a feed or og:image needs is still drawn by matplotlib (charts.py).

Units are points (1/72 in), as in matplotlib's SVG: a 7-inch figure is 504 units wide, and a
font size of 10 is 10 units. Every number is printed with at most two decimals, so two builds
of the same data write the same bytes.
"""
from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Sequence

from analysis.write.plots import (FIGSIZE_IN, LEGEND_ID, LEGEND_INSIDE_ID, MARGINS,
                                  NARROW_FIGSIZE_IN, NARROW_MARGINS_IN, NARROW_TEXT_PT,
                                  NARROW_TITLE_CHARS, PANEL_TITLE_ID, PLOT_AREA_ID, PNG_DPI)

FONT_FAMILY = ("'DejaVu Sans', 'Bitstream Vera Sans', 'Verdana', 'Geneva', 'Arial', "
               "'Helvetica', sans-serif")
GRID = "#b0b0b0"
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
    try:
        glyph = _font().load_char(ord(ch), flags=flags)
    except (RuntimeError, ValueError):
        return 0.6
    return glyph.linearHoriAdvance / 65536 / 100


def text_width(text: str, size: float) -> float:
    """The width of one line of `text` at `size` points."""
    return sum(_advance(ch) for ch in text) * size


def escape(text: str) -> str:
    """Text for an SVG element or attribute: markup escaped, characters XML 1.0 forbids
    replaced (a label from a manifest may hold anything)."""
    text = "".join(ch if ch >= " " or ch in "\t\n" else "\ufffd" for ch in str(text))
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


NAMED_COLOURS = {"grey": "#808080", "gray": "#808080", "black": "#000000", "white": "#ffffff"}


def colour(name: str) -> str:
    """A colour as matplotlib writes it in SVG: lower-case #rrggbb (tests and the browser
    check read the strokes back)."""
    return NAMED_COLOURS.get(name, name).lower()


def num(v: float) -> str:
    """A coordinate with at most two decimals and no trailing zeros ("-0" as "0")."""
    text = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


# --- what a chart is ----------------------------------------------------------------------------

@dataclass
class Style:
    """How a line, a marker or a legend handle looks. `dash`: None (solid), ":" or "--", or
    matplotlib's (offset, (on, off, ...)) in multiples of the line width."""
    color: str
    width: float = 1.5
    dash: object = None
    alpha: float = 1.0
    marker: str | None = None         # "o" "s" "^" "D" "|"
    marker_size: float = 6.0          # points across
    face: str | None = None           # marker fill: None = the colour, "none" = hollow
    edge: str | None = None           # marker edge: None = the colour
    edge_width: float = 1.0


@dataclass
class Series:
    """A polyline in data coordinates; None or NaN values break it. `steps`: steps-post (each
    value holds until the next x). A width of 0 draws only the markers."""
    xs: Sequence[float]
    ys: Sequence[float | None]
    style: Style
    steps: bool = False
    edges: Sequence[str] | None = None    # per-point marker edge colours


@dataclass
class Bars:
    """Vertical error bars with caps: from lo to hi at each x."""
    xs: Sequence[float]
    lo: Sequence[float]
    hi: Sequence[float]
    color: str
    width: float = 1.0
    cap: float = 3.0


@dataclass
class Rule:
    """A line across the plot area: horizontal at y=`at`, or vertical at x=`at`; `span`: the
    part of the axes it covers (0..1 from the bottom or left)."""
    at: float
    vertical: bool
    style: Style
    span: tuple[float, float] = (0.0, 1.0)


@dataclass
class Note:
    """Text at a data point, `dy` points above it, left-aligned."""
    x: float
    y: float
    text: str
    size: float = 8.0
    dy: float = 3.0


@dataclass
class Entry:
    """A legend row: its handle's style and its label."""
    label: str
    style: Style
    line: bool = True


@dataclass
class Axis:
    label: str
    scale: str = "linear"                 # or "log"
    limits: tuple[float | None, float | None] = (None, None)   # None: from the data
    ticks: Sequence[float] | None = None  # fixed ticks, else chosen (nice numbers / decades)
    subs: Sequence[float] = (1.0,)        # a log axis: ticks at these multiples of decades
    formatter: Callable[[float], str] | None = None


@dataclass
class Plot:
    """One chart: what is drawn (in drawing order within each list: rules, bars, series, notes),
    its axes, title and legend ("inside": the emptiest spot of the plot area; "below": under the
    x axis; None)."""
    x: Axis
    y: Axis
    series: list[Series] = field(default_factory=list)
    bars: list[Bars] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)
    title: str = ""
    legend: str | None = "inside"
    thin_x_ticks: bool = False           # the phone layout shows every other x tick
    legend_size: float | None = None     # the inside legend's font size (default 9 pt)


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
# high and the figure 0.36 + 3.05 + 0.62 in plus 0.17 in per legend row (charts.py grows
# matplotlib's figure for the PNG by the same numbers: _fit_legend_below).
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


def layout_for(plot: Plot, narrow: bool) -> Layout:
    if narrow:
        return NARROW
    return WIDE_BELOW if plot.legend == "below" else WIDE


def legend_columns(plot: Plot, layout: Layout) -> int:
    if layout.narrow or plot.legend != "below":
        return 1
    return 2 if max((len(e.label) for e in plot.entries), default=0) <= BELOW_TWO_COLUMNS_CHARS \
        else 1


def _below_rows(plot: Plot, layout: Layout) -> int:
    """Rows of a legend under the axes (0 when the legend is inside or absent)."""
    below = plot.entries and (plot.legend == "below" or (layout.narrow and plot.legend))
    if not below:
        return 0
    return math.ceil(len(plot.entries) / legend_columns(plot, layout))


def figure_size_in(plot: Plot, narrow: bool = False) -> tuple[float, float]:
    """The figure's width and height in inches: fixed, plus a row of legend under the axes per
    `legend_row_in` (the same sizes charts.py gives matplotlib's figures)."""
    layout = layout_for(plot, narrow)
    rows = _below_rows(plot, layout)
    extra = (0.12 + rows * layout.legend_row_in if rows else 0.0) if layout.narrow \
        else rows * layout.legend_row_in
    # summed in the order matplotlib's figure is sized (charts._fit_legend_below): the
    # PNG's pixels are the float's int(), so 4.539999 and 4.54 differ by a row
    return layout.width_in, layout.plot_in + (layout.bottom_in + extra) + layout.top_in


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

    def inside(self, v: float) -> bool:
        lo, hi = min(self.lo, self.hi), max(self.lo, self.hi)
        return lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9) if self.kind == "log" \
            else lo - 1e-9 * abs(hi - lo) <= v <= hi + 1e-9 * abs(hi - lo)


def _finite(v) -> bool:
    return v is not None and v == v and not math.isinf(v)


def view_limits(axis: Axis, values: list[float]) -> tuple[float, float]:
    """The axis's range: its fixed limits, else the data's with 5 % margins on each side (in
    log space on a log axis), as matplotlib's autoscale does."""
    lo, hi = axis.limits
    data = [v for v in values if _finite(v) and (axis.scale != "log" or v > 0)]
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


# --- the writer ---------------------------------------------------------------------------------

def _dasharray(dash, width: float) -> str | None:
    """matplotlib's dash patterns scaled by the line width (lines.scale_dashes)."""
    if dash is None or dash == "-":
        return None
    if dash == "--":
        pattern = (3.7, 1.6)
    elif dash == ":":
        pattern = (1.0, 1.65)
    elif dash == "-.":
        pattern = (6.4, 1.6, 1.0, 1.6)
    else:
        pattern = dash[1]
    return ",".join(num(p * max(width, 1.0)) for p in pattern)


def _stroke(style: Style, width: float | None = None) -> str:
    w = style.width if width is None else width
    parts = [f"fill: none; stroke: {colour(style.color)}; stroke-width: {num(w)}"]
    if style.alpha < 1:
        parts.append(f"stroke-opacity: {num(style.alpha)}")
    dashes = _dasharray(style.dash, w)
    if dashes:
        parts.append(f"stroke-dasharray: {dashes}")
    return "; ".join(parts)


def _marker_path(marker: str, x: float, y: float, size: float) -> str:
    r = size / 2
    if marker == "o":
        return (f"M {num(x - r)} {num(y)} A {num(r)} {num(r)} 0 1 0 {num(x + r)} {num(y)} "
                f"A {num(r)} {num(r)} 0 1 0 {num(x - r)} {num(y)} z")
    if marker == "s":
        return (f"M {num(x - r)} {num(y - r)} H {num(x + r)} V {num(y + r)} H {num(x - r)} z")
    if marker == "^":
        return (f"M {num(x)} {num(y - r)} L {num(x + r)} {num(y + r)} L {num(x - r)} "
                f"{num(y + r)} z")
    if marker == "D":
        r = size * 0.7071  # matplotlib's D: a square of side `size` turned 45 degrees
        return (f"M {num(x)} {num(y - r)} L {num(x + r)} {num(y)} L {num(x)} {num(y + r)} "
                f"L {num(x - r)} {num(y)} z")
    if marker == "|":
        return f"M {num(x)} {num(y - r)} V {num(y + r)}"
    raise ValueError(f"unknown marker {marker!r}")


class Canvas:
    """The SVG document being written: elements appended as text; one clip path per plot
    area (`clip` names it by its number)."""

    def __init__(self, width_pt: float, height_pt: float):
        self.width, self.height = width_pt, height_pt
        self.out: list[str] = []
        self.clips: list[tuple[float, float, float, float]] = []

    def path(self, d: str, style: str, clip: int | None = None) -> None:
        attr = f' clip-path="url(#clip-{clip})"' if clip is not None else ""
        self.out.append(f'<path d="{d}"{attr} style="{style}"/>')

    def text(self, x: float, y: float, text: str, size: float, anchor: str = "middle",
             rotate: bool = False, gid: str | None = None) -> None:
        transform = f' transform="rotate(-90 {num(x)} {num(y)})"' if rotate else ""
        ident = f' id="{gid}"' if gid else ""
        self.out.append(f'<text{ident} x="{num(x)}" y="{num(y)}"{transform} style="font-size: '
                        f'{num(size)}px; text-anchor: {anchor}">{escape(text)}</text>')

    def lines(self, x: float, y: float, lines: Sequence[str], size: float, anchor: str,
              rotate: bool = False) -> None:
        """Lines of text whose first baseline is at y (at x, rotated: lines go right)."""
        for i, line in enumerate(lines):
            if rotate:
                self.text(x + i * size * LINE_H, y, line, size, anchor, rotate=True)
            else:
                self.text(x, y + i * size * LINE_H, line, size, anchor)

    def document(self) -> str:
        clips = "".join(f'<clipPath id="clip-{i}"><rect x="{num(x0)}" y="{num(y0)}" '
                        f'width="{num(x1 - x0)}" height="{num(y1 - y0)}"/></clipPath>'
                        for i, (x0, y0, x1, y1) in enumerate(self.clips))
        return (f'<?xml version="1.0" encoding="utf-8" standalone="no"?>\n'
                f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" '
                f'width="{num(self.width)}pt" height="{num(self.height)}pt" '
                f'viewBox="0 0 {num(self.width)} {num(self.height)}">\n'
                f'<defs><style type="text/css">*{{stroke-linejoin: round; stroke-linecap: butt}}'
                f' text{{font-family: {FONT_FAMILY}; fill: #000000}}</style>{clips}</defs>\n'
                f'<rect width="100%" height="100%" style="fill: #ffffff"/>\n'
                + "\n".join(self.out) + "\n</svg>\n")


def _rect(x0: float, y0: float, x1: float, y1: float) -> str:
    return f"M {num(x0)} {num(y1)} L {num(x1)} {num(y1)} L {num(x1)} {num(y0)} L {num(x0)} {num(y0)} z"


def _polyline(xs: Sequence[float], ys: Sequence[float | None], sx: Scale, sy: Scale,
              steps: bool) -> str:
    """Path data of a polyline broken at missing values; steps-post when `steps`."""
    parts: list[str] = []
    pen = False
    last_y = None
    n = len(xs)
    for i in range(n):
        y = ys[i]
        x = xs[i]
        if not _finite(y) or not _finite(x) or (sy.kind == "log" and y <= 0) \
                or (sx.kind == "log" and x <= 0):
            if steps and pen and last_y is not None:
                parts.append(f"H {num(sx(x))}" if _finite(x) and (sx.kind != "log" or x > 0)
                             else "")
            pen = False
            continue
        px, py = sx(x), sy(y)
        if not pen:
            parts.append(f"M {num(px)} {num(py)}")
            pen = True
        elif steps:
            parts.append(f"H {num(px)} V {num(py)}")
        else:
            parts.append(f"L {num(px)} {num(py)}")
        last_y = py
    return " ".join(p for p in parts if p)


def _values(plot: Plot) -> tuple[list[float], list[float]]:
    xs: list[float] = []
    ys: list[float] = []
    for s in plot.series:
        pts = [(x, y) for x, y in zip(s.xs, s.ys) if _finite(y)]
        xs += [x for x, _ in pts]
        ys += [y for _, y in pts]
        if s.steps:     # a step holds its value up to the next x, even where that one is a gap
            xs += [s.xs[i + 1] for i in range(len(s.xs) - 1)
                   if _finite(s.ys[i]) and not _finite(s.ys[i + 1])]
    for b in plot.bars:
        xs += list(b.xs)
        ys += list(b.lo) + list(b.hi)
    for r in plot.rules:
        (xs if r.vertical else ys).append(r.at)
    return xs, ys


def _ticks(axis: Axis, scale: Scale, length_pt: float, font_pt: float, per_label: float) -> list[float]:
    if axis.ticks is not None:
        return [t for t in axis.ticks if scale.inside(t)]
    lo, hi = scale.lo, scale.hi
    room = max(2, min(9, int(length_pt / (font_pt * per_label))))
    if axis.scale == "log":
        return log_ticks(lo, hi, axis.subs, room)
    return [t for t in linear_ticks(lo, hi, room) if scale.inside(t)]


def _legend_box(entries: Sequence[Entry], size: float, cols: int,
                row_h: float | None = None) -> tuple[float, float, list]:
    """Width and height of a legend (matplotlib's paddings, in font sizes: border 0.4, row
    spacing 0.5, handle 2.0, handle-text 0.8, columns 2.0) and its columns of entries.
    `row_h`: the pitch of the rows (a legend under the axes has the figure's row height)."""
    rows = math.ceil(len(entries) / cols)
    columns = [list(entries[c * rows:(c + 1) * rows]) for c in range(cols)]
    widths = [max(text_width(e.label, size) for e in col) + 2.8 * size for col in columns if col]
    width = sum(widths) + 2.0 * size * (len(widths) - 1) + 0.8 * size
    row_h = row_h or size * LINE_H + 0.5 * size
    height = rows * row_h - (row_h - size * LINE_H) + 0.8 * size
    return width, height, [(col, w) for col, w in zip(columns, widths)]


def _draw_legend(c: Canvas, entries: Sequence[Entry], x0: float, y0: float, size: float,
                 cols: int, framed: bool, gid: str, row_h: float | None = None) -> None:
    width, height, columns = _legend_box(entries, size, cols, row_h)
    frame = "fill: #ffffff; fill-opacity: 0.85; stroke: #cccccc; stroke-width: 1" if framed \
        else "fill: none; stroke: none"
    c.out.append(f'<g id="{gid}">')
    c.path(_rect(x0, y0, x0 + width, y0 + height), frame)
    row_h = row_h or size * LINE_H + 0.5 * size
    x = x0 + 0.4 * size
    for col, col_w in columns:
        for i, e in enumerate(col):
            mid = y0 + 0.4 * size + i * row_h + size * LINE_H / 2
            s = e.style
            if e.line and s.width > 0:
                c.path(f"M {num(x)} {num(mid)} H {num(x + 2.0 * size)}", _stroke(s))
            if s.marker:
                _marker(c, s, x + 1.0 * size, mid, s.edge)
            c.text(x + 2.8 * size, mid + size * 0.36, e.label, size, "start")
        x += col_w + 2.0 * size
    c.out.append("</g>")


def _marker(c: Canvas, s: Style, x: float, y: float, edge: str | None) -> None:
    face = s.color if s.face is None else s.face
    edge = colour(edge or s.edge or s.color)
    fill = "none" if face == "none" else colour(face)
    style = f"fill: {fill}; stroke: {edge}; stroke-width: {num(s.edge_width)}"
    if s.alpha < 1:
        style += f"; fill-opacity: {num(s.alpha)}; stroke-opacity: {num(s.alpha)}"
    c.path(_marker_path(s.marker, x, y, s.marker_size), style)


def _best_spot(plot: Plot, box: tuple[float, float, float, float], size_wh: tuple[float, float],
               sx: Scale, sy: Scale, pad: float) -> tuple[float, float]:
    """Where a legend inside the plot area covers the fewest data points and line segments,
    trying matplotlib's order of spots (upper right first) and keeping the first best."""
    x0, y0, x1, y1 = box
    w, h = size_wh
    left, right, cx = x0 + pad, x1 - pad - w, (x0 + x1 - w) / 2
    top, bottom, cy = y0 + pad, y1 - pad - h, (y0 + y1 - h) / 2
    spots = [(right, top), (left, top), (left, bottom), (right, bottom), (right, cy),
             (left, cy), (right, cy), (cx, bottom), (cx, top), (cx, cy)]
    points: list[tuple[float, float]] = []
    for s in plot.series:
        prev = None
        for x, y in zip(s.xs, s.ys):
            if not (_finite(x) and _finite(y)) or (sy.kind == "log" and y <= 0) \
                    or (sx.kind == "log" and x <= 0):
                prev = None
                continue
            p = (sx(x), sy(y))
            if prev is not None:
                # sample the segment (and the step's corner) so long segments count too
                corner = (p[0], prev[1]) if s.steps else None
                for a, b in ((prev, corner), (corner, p)) if corner else ((prev, p),):
                    for k in range(1, 4):
                        points.append((a[0] + (b[0] - a[0]) * k / 4, a[1] + (b[1] - a[1]) * k / 4))
            points.append(p)
            prev = p
    for r in plot.rules:
        for k in range(21):
            t = k / 20
            points.append((sx(r.at), y1 + (y0 - y1) * t) if r.vertical else
                          (x0 + (x1 - x0) * t, sy(r.at)))
    best, best_score = spots[0], None
    for sxp, syp in spots:
        score = sum(1 for px, py in points if sxp <= px <= sxp + w and syp <= py <= syp + h)
        if best_score is None or score < best_score:
            best, best_score = (sxp, syp), score
    return best


@dataclass
class Frame:
    """One plot area on the canvas: its box (points, y down), scales and ticks."""
    box: tuple[float, float, float, float]
    sx: Scale
    sy: Scale
    xticks: list[float]
    yticks: list[float]
    clip: int


def _frame(c: Canvas, plot: Plot, box: tuple[float, float, float, float], tick_pt: float,
           limits: tuple[tuple[float, float], tuple[float, float]] | None = None,
           thin_x: bool = False) -> Frame:
    """Scales and ticks for `plot` in `box` (`limits`: shared ones, else from its data)."""
    x0, y0, x1, y1 = box
    if limits is None:
        xs, ys = _values(plot)
        limits = (view_limits(plot.x, xs), view_limits(plot.y, ys))
    sx = Scale(plot.x.scale, *limits[0], x0, x1)
    sy = Scale(plot.y.scale, *limits[1], y1, y0)
    xticks = _ticks(plot.x, sx, x1 - x0, tick_pt, 3)
    if thin_x and len(xticks) > 5:
        xticks = xticks[::2]
    yticks = _ticks(plot.y, sy, y1 - y0, tick_pt, 2)
    c.clips.append(box)
    return Frame(box, sx, sy, xticks, yticks, len(c.clips) - 1)


def _draw_area(c: Canvas, plot: Plot, f: Frame, area_id: str) -> None:
    """The plot area's background (with its id), grid, then what the plot draws, clipped."""
    x0, y0, x1, y1 = f.box
    sx, sy = f.sx, f.sy
    c.out.append(f'<g id="{area_id}">')
    c.path(_rect(x0, y0, x1, y1), "fill: #ffffff")
    c.out.append("</g>")
    grid = f"fill: none; stroke: {GRID}; stroke-opacity: 0.3; stroke-width: 0.8"
    lines = [f"M {num(sx(t))} {num(y1)} V {num(y0)}" for t in f.xticks] + \
        [f"M {num(x0)} {num(sy(t))} H {num(x1)}" for t in f.yticks]
    if lines:
        c.path(" ".join(lines), grid)
    for r in plot.rules:
        if r.vertical:
            px = sx(r.at)
            d = f"M {num(px)} {num(y1 + (y0 - y1) * r.span[0])} V {num(y1 + (y0 - y1) * r.span[1])}"
        else:
            py = sy(r.at)
            d = f"M {num(x0 + (x1 - x0) * r.span[0])} {num(py)} H {num(x0 + (x1 - x0) * r.span[1])}"
        c.path(d, _stroke(r.style), clip=f.clip)
    for b in plot.bars:
        style = f"fill: none; stroke: {colour(b.color)}; stroke-width: {num(b.width)}"
        d = []
        for x, lo, hi in zip(b.xs, b.lo, b.hi):
            if sy.kind == "log" and lo <= 0:
                lo = sy.lo
            px, plo, phi = sx(x), sy(lo), sy(hi)
            d.append(f"M {num(px)} {num(plo)} V {num(phi)}")
            for py in (plo, phi):
                d.append(f"M {num(px - b.cap)} {num(py)} H {num(px + b.cap)}")
        c.path(" ".join(d), style, clip=f.clip)
    for s in plot.series:
        if s.style.width > 0:
            d = _polyline(s.xs, s.ys, sx, sy, s.steps)
            if d:
                c.path(d, _stroke(s.style), clip=f.clip)
        if s.style.marker:
            for i, (x, y) in enumerate(zip(s.xs, s.ys)):
                if _finite(x) and _finite(y) and sx.inside(x) and sy.inside(y):
                    _marker(c, s.style, sx(x), sy(y), s.edges[i] if s.edges else None)
    for n in plot.notes:
        c.text(sx(n.x), sy(n.y) - n.dy, n.text, n.size, "start")


def _draw_ticks(c: Canvas, plot: Plot, f: Frame, tick_pt: float, x_labels: bool = True,
                y_labels: bool = True) -> float:
    """The frame, the ticks and their labels; returns the widest y tick label (points)."""
    x0, y0, x1, y1 = f.box
    c.path(_rect(x0, y0, x1, y1), "fill: none; stroke: #000000; stroke-width: 0.8; "
                                  "stroke-linecap: square")
    ticks = [f"M {num(f.sx(t))} {num(y1)} v {TICK_PT}" for t in f.xticks] + \
        [f"M {num(x0)} {num(f.sy(t))} h -{TICK_PT}" for t in f.yticks]
    if ticks:
        c.path(" ".join(ticks), "fill: none; stroke: #000000; stroke-width: 0.8")
    if x_labels:
        xfmt = plot.x.formatter or plain
        label_y = y1 + 2 * TICK_PT + tick_pt * ASCENT
        for t in f.xticks:
            c.text(f.sx(t), label_y, xfmt(t), tick_pt)
    widest = 0.0
    if y_labels:
        yfmt = plot.y.formatter or plain
        for t in f.yticks:
            text = yfmt(t)
            widest = max(widest, text_width(text, tick_pt))
            c.text(x0 - 2 * TICK_PT, f.sy(t) + tick_pt * 0.36, text, tick_pt, "end")
    return widest


@dataclass
class Geometry:
    """Where everything of a single-axes chart goes, in points (y down): the figure, the plot
    area, the axes' ranges and ticks, and the legend (`legend`: None, or (kind, x, y, size,
    columns, row height) with (x, y) its top-left corner; kind "inside" or "below"). The SVG
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


def geometry(plot: Plot, narrow: bool = False) -> Geometry:
    layout = layout_for(plot, narrow)
    width_in, height_in = figure_size_in(plot, narrow)
    W, H = width_in * 72, height_in * 72
    x0 = layout.left_in * 72
    x1 = W - layout.right_in * 72
    y0 = layout.top_in * 72
    y1 = y0 + layout.plot_in * 72
    xs, ys = _values(plot)
    xlim, ylim = view_limits(plot.x, xs), view_limits(plot.y, ys)
    sx = Scale(plot.x.scale, *xlim, x0, x1)
    sy = Scale(plot.y.scale, *ylim, y1, y0)
    xticks = _ticks(plot.x, sx, x1 - x0, layout.tick_pt, 3)
    if layout.narrow and plot.thin_x_ticks and len(xticks) > 5:
        xticks = xticks[::2]
    yticks = _ticks(plot.y, sy, y1 - y0, layout.tick_pt, 2)
    g = Geometry(W, H, (x0, y0, x1, y1), xlim, ylim, xticks, yticks, layout)
    if plot.entries and plot.legend:
        if plot.legend == "below" or layout.narrow:
            cols = legend_columns(plot, layout)
            size = 7.5 if not layout.narrow and cols == 1 else layout.legend_pt
            row_h = layout.legend_row_in * 72
            w, _, _ = _legend_box(plot.entries, size, cols, row_h)
            g.legend = ("below", (x0 + x1 - w) / 2, _xlabel_y(g) + layout.label_pt *
                        (LINE_H - ASCENT) + (0.12 * 72 if layout.narrow else 6), size, cols, row_h)
        else:
            size = layout.legend_pt if plot.legend_size is None else plot.legend_size
            w, h, _ = _legend_box(plot.entries, size, 1)
            lx, ly = _best_spot(plot, g.box, (w, h), sx, sy, 0.5 * size)
            g.legend = ("inside", lx, ly, size, 1, None)
    return g


def _xlabel_y(g: Geometry) -> float:
    """The x axis label's baseline: under the tick labels."""
    label_y = g.box[3] + 2 * TICK_PT + g.layout.tick_pt * ASCENT
    return label_y + g.layout.tick_pt * (LINE_H - ASCENT) + TICK_PT + g.layout.label_pt * ASCENT


def render_svg(plot: Plot, narrow: bool = False) -> str:
    """The chart as an SVG document: the wide (700 px) layout, or the phone one."""
    g = geometry(plot, narrow)
    layout = g.layout
    x0, y0, x1, y1 = g.box
    c = Canvas(g.width, g.height)
    c.clips.append(g.box)
    f = Frame(g.box, Scale(plot.x.scale, *g.xlim, x0, x1), Scale(plot.y.scale, *g.ylim, y1, y0),
              g.xticks, g.yticks, 0)
    _draw_area(c, plot, f, PLOT_AREA_ID)
    widest = _draw_ticks(c, plot, f, layout.tick_pt)
    label_pt = layout.label_pt
    c.text((x0 + x1) / 2, _xlabel_y(g), plot.x.label, label_pt)
    ylabel_x = max(label_pt * ASCENT, x0 - 2 * TICK_PT - widest - TICK_PT - label_pt * 0.24)
    c.text(ylabel_x, (y0 + y1) / 2, plot.y.label, label_pt, rotate=True)
    if plot.title:
        lines = textwrap.wrap(plot.title, NARROW_TITLE_CHARS) if layout.narrow else [plot.title]
        first = y0 - 6 - (len(lines) - 1) * layout.title_pt * LINE_H - layout.title_pt * 0.24
        c.lines((x0 + x1) / 2, first, lines, layout.title_pt, "middle")
    if g.legend:
        kind, lx, ly, size, cols, row_h = g.legend
        _draw_legend(c, plot.entries, lx, ly, size, cols, kind == "inside",
                     LEGEND_INSIDE_ID if kind == "inside" else LEGEND_ID, row_h)
    return c.document()


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



@dataclass
class Panels:
    """Small multiples: one Plot per panel on shared axes (the first panel's Axis objects
    give the scales and labels' formats), each titled (`titles`: lines), under a figure title
    with the axis labels written once."""
    plots: list[Plot]
    titles: list[list[str]]
    title: str
    xlabel: str
    ylabel: str


def panel_tick_pt(narrow: bool) -> float:
    return NARROW.tick_pt if narrow else 7.5


def shared_limits(p: Panels) -> tuple[tuple[float, float], tuple[float, float]]:
    """The panels' common x and y ranges (the first panel's axes, every panel's data)."""
    xs: list[float] = []
    ys: list[float] = []
    for plot in p.plots:
        px, py = _values(plot)
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
    c = Canvas(W, H)
    f = _frame(c, p.plots[0], (0.0, 0.0, panel_w, panel_h), panel_tick_pt(narrow),
               shared_limits(p))
    return f.xticks, f.yticks


def render_panels(p: Panels, layout: dict, narrow: bool = False) -> str:
    """The panels on the grid of `layout` (charts.panel_layout: columns, rows, figure size in
    inches, matplotlib's subplots_adjust fractions); x tick labels on each column's lowest
    panel, y tick labels on the first column, as matplotlib's shared axes show them."""
    W, H = layout["figsize"][0] * 72, layout["figsize"][1] * 72
    adjust = layout["adjust"]
    cols, rows = layout["cols"], layout["rows"]
    left, right = adjust["left"] * W, adjust["right"] * W
    top, bottom = (1 - adjust["top"]) * H, (1 - adjust["bottom"]) * H
    panel_w = (right - left) / (cols + (cols - 1) * adjust["wspace"])
    panel_h = (bottom - top) / (rows + (rows - 1) * adjust["hspace"])
    c = Canvas(W, H)
    tick_pt = panel_tick_pt(narrow)
    limits = shared_limits(p)
    n = len(p.plots)
    for i, plot in enumerate(p.plots):
        row, col = divmod(i, cols)
        x0 = left + col * panel_w * (1 + adjust["wspace"])
        y0 = top + row * panel_h * (1 + adjust["hspace"])
        f = _frame(c, plot, (x0, y0, x0 + panel_w, y0 + panel_h), tick_pt, limits)
        _draw_area(c, plot, f, f"{PLOT_AREA_ID}-{i + 1}")
        _draw_ticks(c, plot, f, tick_pt, x_labels=i + cols >= n, y_labels=col == 0)
        c.out.append(f'<g id="{PANEL_TITLE_ID}-{i + 1}">')
        lines = p.titles[i]
        c.lines(x0 + panel_w / 2, y0 - 3 - 8.5 * (LINE_H - ASCENT)
                - (len(lines) - 1) * 8.5 * LINE_H, lines, 8.5, "middle")
        c.out.append("</g>")
    title_pt = 10 if narrow else 11
    lines = textwrap.wrap(p.title, NARROW_TITLE_CHARS) if narrow else [p.title]
    c.lines(W / 2, 0.1 * 72 + title_pt * ASCENT, lines, title_pt, "middle")
    label_pt = NARROW.tick_pt if narrow else 9
    xlabel = p.xlabel.split("\n")
    c.lines(W / 2, H - 0.08 * 72 - label_pt * (LINE_H - ASCENT)
            - (len(xlabel) - 1) * label_pt * LINE_H, xlabel, label_pt, "middle")
    c.text(0.06 * 72 + label_pt * ASCENT, H / 2, p.ylabel, label_pt, rotate=True)
    return c.document()
