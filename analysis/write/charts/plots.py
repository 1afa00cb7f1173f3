"""The charts' house style - figure sizes, colours and line styles per system, the ids the
SVG carries for its plot areas and legends - and the labels of their axes. What each chart
draws is described once, as data, by svgcharts.py; svgdraw.py writes it as SVG and charts.py
draws the same with matplotlib for the PNGs."""
from __future__ import annotations

import textwrap
from typing import Any, Sequence

FIGSIZE_IN = (7.0, 4.0)
# left: room for tick labels like "10,000" and the axis label at 700 px
MARGINS = {"left": 0.125, "right": 0.955, "top": 0.91, "bottom": 0.13}
# charts with the legend under the axes: taller, with room at the bottom
LEGEND_BELOW_FIGSIZE_IN = (7.0, 4.8)
LEGEND_BELOW_MARGINS = {"left": 0.125, "right": 0.955, "top": 0.925, "bottom": 0.3}
PNG_DPI = 100            # 700 px: a blog column (and a quarter less drawing time than 150 dpi)
# The phone variant (an SVG only): a 390 px screen shows the 7-inch chart at about half size,
# legend text at 5 CSS px. At 3.6 inches the same point sizes show at 1.35x on a 350 px column,
# so 8 pt (the smallest text, legend and ticks) is 10.8 CSS px.
NARROW_FIGSIZE_IN = (3.6, 3.3)
NARROW_MARGINS_IN = {"left": 0.62, "right": 0.12, "top": 0.62, "bottom": 0.5}
NARROW_TEXT_PT = 8
NARROW_TITLE_CHARS = 36
# One colour per system, by its position in the run (charts.system_styles): the same system
# has the same colour in every chart of a run. Okabe-Ito's colour-blind-safe seven (its yellow
# left out: too pale on white), then five of Paul Tol's "muted" that stay apart from them
# (wine, indigo, olive, brown, teal). Twelve colours cannot all stay distinct for every
# colour vision, so the charts that draw many systems at once say which is which by place
# (one panel per system) or by label as well; past twelve, the colours repeat with a
# different dash (LINESTYLES).
COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
          "#882255", "#332288", "#999933", "#661100", "#44AA99")
LINESTYLES = ("-", (0, (6, 2)), (0, (1.5, 1.5)), (0, (6, 2, 1.5, 2)))
# The other systems behind a small-multiples panel's own one (chartset.MANY_SYSTEMS says when
# a spectrum becomes small multiples)
OTHERS_GREY = "#c4c4c4"
STYLE = {
    "svg.hashsalt": "loadcurve",     # stable element ids in SVG output
    # text stays <text> (font-family DejaVu Sans, then sans-serif): half the SVG size of glyph
    # paths, faster to write, and selectable/searchable by readers
    "svg.fonttype": "none",
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.fontsize": 9,
    "figure.dpi": 100,
}


def color(i: int) -> str:
    return COLORS[i % len(COLORS)]


def linestyle(i: int):
    """Solid for the first len(COLORS) systems, then a dash per round of the colours."""
    return LINESTYLES[(i // len(COLORS)) % len(LINESTYLES)]


def system_style(i: int) -> dict[str, Any]:
    """The colour and line style of the run's i-th system (charts.system_styles)."""
    return {"color": color(i), "linestyle": linestyle(i)}


# --- ids in the SVG: where the plot area and the legend are ---------------------------------
# tests/test_charts.py and the browser test read these group ids back from the written SVG to
# check that no legend covers a plot area.

PLOT_AREA_ID = "plot-area"
LEGEND_ID = "legend"                # a legend outside every plot area
LEGEND_INSIDE_ID = "legend-inside"  # few systems: matplotlib's "best" spot inside the axes
PANEL_TITLE_ID = "panel-title"      # small multiples: the panel's system, instead of a legend


def mark_plot_area(ax, n: int | None = None) -> None:
    """Give the axes' background patch (its plot area) an SVG id; `n`: the panel's number."""
    ax.patch.set_gid(PLOT_AREA_ID if n is None else f"{PLOT_AREA_ID}-{n}")


def mark_legend(legend, inside: bool = False):
    """An SVG id on the legend's group. A legend without a frame gets an invisible one, so the
    SVG still carries its box (the frame is drawn first in the group)."""
    if not legend.get_frame_on():
        legend.set_frame_on(True)
        legend.get_frame().set_facecolor("none")
        legend.get_frame().set_edgecolor("none")
    legend.set_gid(LEGEND_INSIDE_ID if inside else LEGEND_ID)
    return legend


# --- plotting functions: (ax, data) -> artists ----------------------------------------------

def percent_label(x: float, _pos=None) -> str:
    """1/(1-p) -> 'p%': 2 -> 50%, 10 -> 90%, 1000 -> 99.9%."""
    if x <= 1:
        return "0%"
    p = 100.0 * (1.0 - 1.0 / x)
    text = f"{p:.6f}".rstrip("0").rstrip(".")
    return f"{text}%"


def spectrum_xy(curve: dict[str, Any]) -> tuple[list[float], list[float], int]:
    """A curve's x (1/(1-p); the max at x = count), y, and the index of its first censored
    point (len(xs) when none)."""
    xs, ys, cens = [], [], []
    count = curve["count"]
    for point in curve["points"]:
        p, ms = point[0], point[1]
        xs.append(float(count) if p >= 100.0 else 1.0 / (1.0 - p / 100.0))
        ys.append(ms)
        cens.append(len(point) > 2 and bool(point[2]))
    return xs, ys, next((i for i, c in enumerate(cens) if c), len(xs))


def spectrum_censored(curves: Sequence[dict[str, Any]]) -> bool:
    return any(len(pt) > 2 and pt[2] for c in curves for pt in c["points"])


def panel_title(label: str, chars: int) -> str:
    """A label on at most two lines of `chars` (the panel's width), cut with "…" beyond."""
    lines = textwrap.wrap(label, chars, break_long_words=True) or [""]
    if len(lines) > 2:
        lines = [lines[0], lines[1][:chars - 1].rstrip() + "…"]
    return "\n".join(lines)


def plain_tick(value: float, _pos=None) -> str:
    """Log-axis tick labels as plain numbers (0.1, 1, 10, 1,000), not powers of ten."""
    return f"{value:,.6f}".rstrip("0").rstrip(".") if value < 1 else f"{value:,.0f}"
