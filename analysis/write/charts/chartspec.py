"""What a chart is, as plain data: the lines, markers, error bars, rules and notes it draws,
its axes and its legend entries (`Plot`; `Panels` for small multiples). svgcharts.py builds one
per chart job; chartlayout.py lays it out; svgdraw.py writes it as SVG and render.py draws it
with matplotlib for the PNG, so both files show one chart."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence


# --- what a chart is ----------------------------------------------------------------------------

@dataclass
class Style:
    """How a line, a marker or a legend handle looks. `dash`: None (solid), ":" or "--", or
    matplotlib's (offset, (on, off, ...)) in multiples of the line width."""
    color: str
    width: float = 1.5
    dash: object = None
    alpha: float = 1.0
    marker: str | None = None         # "o" "s" "^" ">" "D" "|"
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
    titles: Sequence[str | None] | None = None   # per-point marker <title> (SVG only: a
                                                 #   tooltip and what a screen reader says)
    title: str | None = None              # the line's own <title>: a line without markers
                                          #   (a spectrum, a series per interval) says on
                                          #   hover what it is and its values (issue 34)


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
    label: str | None = None        # a vertical rule's text, at the top of the plot area, to
                                    #   its right (labelled rules stack a row apart)


@dataclass
class Band:
    """A stretch of the x axis shaded across the plot area's height, under everything else;
    `title` says what it means (the SVG's <title> of the band, for a reader and a screen
    reader: the PNG cannot carry it, so the legend and caption say it too)."""
    x0: float
    x1: float
    color: str
    alpha: float
    title: str


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
    """One chart: what is drawn (in drawing order: bands, rules, bars, series, notes, each list
    in its order), its axes, title and legend ("inside": the emptiest spot of the plot area;
    "below": under the x axis; None)."""
    x: Axis
    y: Axis
    series: list[Series] = field(default_factory=list)
    bars: list[Bars] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    bands: list[Band] = field(default_factory=list)
    remarks: list[str] = field(default_factory=list)   # what the chart says in words, in a box
                                                       #   in the plot area's emptiest corner
    entries: list[Entry] = field(default_factory=list)
    title: str = ""
    legend: str | None = "inside"
    thin_x_ticks: bool = False           # the phone layout shows every other x tick
    legend_size: float | None = None     # the inside legend's font size (default 9 pt)
    panel_rows: int | None = None        # a summary panel (issue 34): a phone's width, this
                                         #   many rows high (chartlayout.summary_layout)


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
