"""Charts written straight to SVG text: a chartspec Plot (or Panels) in chartlayout's layout,
with no plotting library in between.

Why: a build draws 40 SVGs per run (20 charts, each at 700 px and in the phone layout), and
matplotlib took ~40 ms for each, two thirds of a run's CPU (bench/perf/run_cost.py). The charts
are a few polylines, markers and text; written directly they cost about a millisecond. The look
follows the house style of plots.py (same figure sizes and margins, colours, DejaVu Sans at the
same point sizes, grey grid, outward ticks), and the SVG keeps the ids the tests and the
browser check read back (plots.PLOT_AREA_ID, LEGEND_ID, LEGEND_INSIDE_ID: a group whose first
path is the box). The PNG a feed or og:image needs is matplotlib's drawing of the same Plot
(render.py).

Every number is printed with at most two decimals, so two builds of the same data write the
same bytes.
"""
from __future__ import annotations

import math
import re
import textwrap
from dataclasses import dataclass
from typing import Sequence

from analysis.write.charts.chartlayout import (ASCENT, LINE_H, NARROW, REMARK_PT, RULE_LABEL_PT,
                                        TICK_PT, Geometry, Scale, axis_ticks, data_values, finite,
                                        geometry, legend_box, panel_tick_pt, plain, rule_labels,
                                        shared_limits, text_width, view_limits, xlabel_y)
from analysis.write.charts.chartspec import Entry, Panels, Plot, Style
from analysis.write.charts.plots import (LEGEND_ID, LEGEND_INSIDE_ID, NARROW_TITLE_CHARS,
                                  PANEL_TITLE_ID, PLOT_AREA_ID)

FONT_FAMILY = ("'DejaVu Sans', 'Bitstream Vera Sans', 'Verdana', 'Geneva', 'Arial', "
               "'Helvetica', sans-serif")
GRID = "#b0b0b0"
# a framed box in the plot area, matplotlib's legend frame: the inside legend, a plot's remarks
FRAME = "fill: #ffffff; fill-opacity: 0.85; stroke: #cccccc; stroke-width: 1"


# The characters XML 1.0 forbids (below " " but tab and newline).
_FORBIDDEN = re.compile("[\x00-\x08\x0b-\x1f]")
# What escape changes: most texts (tick labels, titles, legend entries) hold none of it.
_CHANGED = re.compile('[&<>"\x00-\x08\x0b-\x1f]')


def escape(text: str) -> str:
    """Text for an SVG element or attribute: markup escaped, characters XML 1.0 forbids
    replaced (a label from a manifest may hold anything)."""
    # (a regex, not a loop per character: a flame graph escapes thousands of frame names;
    # one search for a text with nothing to change, not a substitution and four replaces)
    text = str(text)
    if _CHANGED.search(text) is None:
        return text
    text = _FORBIDDEN.sub("\ufffd", text)
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


NAMED_COLOURS = {"grey": "#808080", "gray": "#808080", "black": "#000000", "white": "#ffffff"}


def colour(name: str) -> str:
    """A colour as matplotlib writes it in SVG: lower-case #rrggbb (tests and the browser
    check read the strokes back)."""
    return NAMED_COLOURS.get(name, name).lower()


# num's texts for the document being written (Canvas clears it): a chart's coordinates repeat
# (the shared x positions of its series, the grid and tick positions, the markers' corners), so
# of a run's ~13,400 numbers in 40 SVGs ~4,300 are distinct in their document, and formatting
# was a quarter of the SVG writer's time. Kept for one document only, so that no chart's work is
# spared by another's, nor one run's by another's in a corpus of equal runs.
_NUM_TEXTS: dict[float, str] = {}


def num(v: float) -> str:
    """A coordinate with at most two decimals and no trailing zeros ("-0" as "0")."""
    text = _NUM_TEXTS.get(v)
    if text is None:
        # (numbers that compare equal format alike: 1, 1.0 and True; 0.0 and -0.0)
        text = f"{v:.2f}".rstrip("0").rstrip(".")
        if text in ("-0", ""):
            text = "0"
        _NUM_TEXTS[v] = text
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
    if marker == ">":
        return (f"M {num(x + r)} {num(y)} L {num(x - r)} {num(y - r)} L {num(x - r)} "
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
        _NUM_TEXTS.clear()      # (a new document: see num)
        self.width, self.height = width_pt, height_pt
        self.out: list[str] = []
        self.clips: list[tuple[float, float, float, float]] = []

    def path(self, d: str, style: str, clip: int | None = None,
             title: str | None = None, cls: str | None = None) -> None:
        """A path; with a `title`, its <title> child (a tooltip, and what a screen reader
        says of it); `cls`: its class ("pt": a data point's marker, which tests find)."""
        attr = f' clip-path="url(#clip-{clip})"' if clip is not None else ""
        attr += f' class="{cls}"' if cls else ""
        if title:
            self.out.append(f'<path d="{d}"{attr} style="{style}"><title>{escape(title)}</title>'
                            f'</path>')
        else:
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
    return (f"M {num(x0)} {num(y1)} L {num(x1)} {num(y1)} L {num(x1)} {num(y0)} "
            f"L {num(x0)} {num(y0)} z")


def _polyline(xs: Sequence[float], ys: Sequence[float | None], sx: Scale, sy: Scale,
              steps: bool) -> str:
    """Path data of a polyline broken at missing values (and at values a log axis cannot
    show); steps-post when `steps`: a value holds up to the next x, even a missing one's."""
    # (finite(v) and, on a log axis, v > 0, written out: a run's 40 SVGs test ~9,000 values)
    x_log, y_log = sx.kind == "log", sy.kind == "log"
    isinf = math.isinf
    # Scale.__call__'s arithmetic written out (its operations in its order: the same floats),
    # not a method call for each of a run's ~4,600 coordinates
    fx, ax, kx, x_p0 = sx._f, sx._a, sx._k, sx._p0
    fy, ay, ky, y_p0 = sy._f, sy._a, sy._k, sy._p0
    parts: list[str] = []
    pen = False
    for x, y in zip(xs, ys):
        x_shown = x is not None and x == x and not isinf(x) and (not x_log or x > 0)
        if not (x_shown and y is not None and y == y and not isinf(y) and (not y_log or y > 0)):
            if steps and pen and x_shown:
                parts.append(f"H {num(sx(x))}")
            pen = False
            continue
        px, py = x_p0 + (fx(x) - ax) * kx, y_p0 + (fy(y) - ay) * ky
        if not pen:
            parts.append(f"M {num(px)} {num(py)}")
            pen = True
        elif steps:
            parts.append(f"H {num(px)} V {num(py)}")
        else:
            parts.append(f"L {num(px)} {num(py)}")
    return " ".join(parts)


def _draw_legend(c: Canvas, entries: Sequence[Entry], labels: Sequence[Sequence[str]],
                 x0: float, y0: float, size: float, cols: int, framed: bool, gid: str,
                 row_h: float | None = None) -> None:
    """The legend's group: its box first (invisible without a frame), then each entry's
    handle and its label's lines, column by column."""
    width, height, columns = legend_box(labels, size, cols, row_h)
    frame = FRAME if framed else "fill: none; stroke: none"
    c.out.append(f'<g id="{gid}">')
    c.path(_rect(x0, y0, x0 + width, y0 + height), frame)
    row_h = row_h or size * LINE_H + 0.5 * size
    x = x0 + 0.4 * size
    for col, col_w in columns:
        line = 0
        for i in col:
            mid = y0 + 0.4 * size + line * row_h + size * LINE_H / 2
            s = entries[i].style
            if entries[i].line and s.width > 0:
                c.path(f"M {num(x)} {num(mid)} H {num(x + 2.0 * size)}", _stroke(s))
            if s.marker:
                _marker(c, s, x + 1.0 * size, mid, s.edge)
            for k, text in enumerate(labels[i]):
                c.text(x + 2.8 * size, mid + size * 0.36 + k * row_h, text, size, "start")
            line += len(labels[i])
        x += col_w + 2.0 * size
    c.out.append("</g>")


def _marker(c: Canvas, s: Style, x: float, y: float, edge: str | None,
            title: str | None = None, point: bool = False) -> None:
    face = s.color if s.face is None else s.face
    edge = colour(edge or s.edge or s.color)
    fill = "none" if face == "none" else colour(face)
    style = f"fill: {fill}; stroke: {edge}; stroke-width: {num(s.edge_width)}"
    if s.alpha < 1:
        style += f"; fill-opacity: {num(s.alpha)}; stroke-opacity: {num(s.alpha)}"
    c.path(_marker_path(s.marker, x, y, s.marker_size), style, title=title,
           cls="pt" if point else None)


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
        xs, ys = data_values(plot)
        limits = (view_limits(plot.x, xs), view_limits(plot.y, ys))
    sx = Scale(plot.x.scale, *limits[0], x0, x1)
    sy = Scale(plot.y.scale, *limits[1], y1, y0)
    xticks = axis_ticks(plot.x, sx, x1 - x0, tick_pt, 3)
    if thin_x and len(xticks) > 5:
        xticks = xticks[::2]
    yticks = axis_ticks(plot.y, sy, y1 - y0, tick_pt, 2)
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
    for b in plot.bands:
        c.path(_rect(sx(b.x0), y0, sx(b.x1), y1),
               f"fill: {colour(b.color)}; fill-opacity: {num(b.alpha)}; stroke: none",
               clip=f.clip, title=b.title)
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
                c.path(d, _stroke(s.style), clip=f.clip, title=s.title)
        if s.style.marker:
            for i, (x, y) in enumerate(zip(s.xs, s.ys)):
                if finite(x) and finite(y) and sx.inside(x) and sy.inside(y):
                    _marker(c, s.style, sx(x), sy(y), s.edges[i] if s.edges else None,
                            s.titles[i] if s.titles else None, point=True)
    for n in plot.notes:
        c.text(sx(n.x), sy(n.y) - n.dy, n.text, n.size, "start")
    for x, y, anchor, text in rule_labels(plot, f.box, sx):
        c.text(x, y, text, RULE_LABEL_PT, anchor)


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
            text = xfmt(t)
            half = text_width(text, tick_pt) / 2
            # a label centred on an end tick may not fit the canvas (a phone's spectrum ends at
            # 99.999%): kept inside it, as near its tick as it fits
            c.text(min(max(f.sx(t), half + 1), c.width - half - 1), label_y, text, tick_pt)
    widest = 0.0
    if y_labels:
        yfmt = plot.y.formatter or plain
        for t in f.yticks:
            text = yfmt(t)
            widest = max(widest, text_width(text, tick_pt))
            c.text(x0 - 2 * TICK_PT, f.sy(t) + tick_pt * 0.36, text, tick_pt, "end")
    return widest


def render_svg(plot: Plot, narrow: bool = False, g: Geometry | None = None) -> str:
    """The chart as an SVG document: the wide (700 px) layout, or the phone one; `g`: its
    geometry(plot, narrow), where the caller has it already (the PNG is laid out by the wide
    one)."""
    g = geometry(plot, narrow) if g is None else g
    layout = g.layout
    x0, y0, x1, y1 = g.box
    c = Canvas(g.width, g.height)
    c.clips.append(g.box)
    f = Frame(g.box, Scale(plot.x.scale, *g.xlim, x0, x1), Scale(plot.y.scale, *g.ylim, y1, y0),
              g.xticks, g.yticks, 0)
    _draw_area(c, plot, f, PLOT_AREA_ID)
    widest = _draw_ticks(c, plot, f, layout.tick_pt)
    label_pt = layout.label_pt
    c.text((x0 + x1) / 2, xlabel_y(g), plot.x.label, label_pt)
    ylabel_x = max(label_pt * ASCENT, x0 - 2 * TICK_PT - widest - TICK_PT - label_pt * 0.24)
    c.text(ylabel_x, (y0 + y1) / 2, plot.y.label, label_pt, rotate=True)
    if plot.title:
        lines = textwrap.wrap(plot.title, NARROW_TITLE_CHARS) if layout.narrow else [plot.title]
        first = y0 - 6 - (len(lines) - 1) * layout.title_pt * LINE_H - layout.title_pt * 0.24
        c.lines((x0 + x1) / 2, first, lines, layout.title_pt, "middle")
    if g.remarks:
        rx, ry, rw, rh, lines = g.remarks
        c.path(_rect(rx, ry, rx + rw, ry + rh), FRAME)
        c.lines(rx + 0.4 * REMARK_PT, ry + 0.4 * REMARK_PT + REMARK_PT * ASCENT, lines,
                REMARK_PT, "start")
    if g.legend:
        kind, lx, ly, size, cols, row_h, labels = g.legend
        _draw_legend(c, plot.entries, labels, lx, ly, size, cols, kind == "inside",
                     LEGEND_INSIDE_ID if kind == "inside" else LEGEND_ID, row_h)
    return c.document()


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
