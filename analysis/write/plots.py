"""Chart drawing on a given matplotlib `Axes`: the house style and one `plot_*` function per
chart kind. Each draws from plain data and returns the artists it made, so tests and other
layouts can reuse it (files are `charts.py`'s business)."""
from __future__ import annotations

import math
import textwrap
from typing import Any, Sequence

import matplotlib

matplotlib.use("Agg")
from matplotlib.container import ErrorbarContainer  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullLocator  # noqa: E402

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

def _percent_label(x: float, _pos=None) -> str:
    """1/(1-p) -> 'p%': 2 -> 50%, 10 -> 90%, 1000 -> 99.9%."""
    if x <= 1:
        return "0%"
    p = 100.0 * (1.0 - 1.0 / x)
    text = f"{p:.6f}".rstrip("0").rstrip(".")
    return f"{text}%"


def _spectrum_xy(curve: dict[str, Any]) -> tuple[list[float], list[float], int]:
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


def _draw_spectrum_curve(ax, curve: dict[str, Any], *, color: str | None = None,
                         linewidth: float = 1.6, zorder: float = 2, labels: bool = True) -> list:
    """One curve: steps up to where its censored part starts, then that part dotted."""
    xs, ys, first = _spectrum_xy(curve)
    color = color or curve["color"]
    style = curve.get("linestyle", "-")
    artists = []
    if first > 0:
        end = min(first + 1, len(xs))   # step up to where the censored part starts
        artists += ax.plot(xs[:end], ys[:first] + ys[first:end], color=color, linestyle=style,
                           label=curve["label"] if labels else "_nolegend_",
                           linewidth=linewidth, drawstyle="steps-post", zorder=zorder)
    if first < len(xs):
        artists += ax.plot(xs[first:], ys[first:], color=color, linewidth=linewidth + 0.8,
                           linestyle=":", drawstyle="steps-post", zorder=zorder,
                           label=(f"{curve['label']}: no answer (> timeout)" if first > 0
                                  else f"{curve['label']} (> timeout)") if labels
                           else "_nolegend_")
    return artists


def _spectrum_censored(curves: Sequence[dict[str, Any]]) -> bool:
    return any(len(pt) > 2 and pt[2] for c in curves for pt in c["points"])


def _spectrum_x_axis(ax, curves: Sequence[dict[str, Any]], max_ticks: int | None = None) -> None:
    """The log axis of 1/(1-p) from p0 to past the largest max; `max_ticks`: at most that many
    labels (every n-th decade; panels are narrow)."""
    top = max([2.0] + [max(_spectrum_xy(c)[0]) for c in curves if c["points"]])
    ax.set_xscale("log")
    right = top * 1.5  # a little room past the max, so the last label is not cut off
    decades = [10.0 ** k for k in range(1, 19) if 10.0 ** k <= right]
    if max_ticks is None:
        ticks = [1.0, 2.0] + decades
    else:
        every = max(1, math.ceil(len(decades) / max(1, max_ticks - 1)))
        ticks = [1.0] + decades[::-1][::every][::-1]    # down from the tail's decade
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(_percent_label))
    ax.set_xlim(1.0, right)


def plot_spectrum(ax, curves: Sequence[dict[str, Any]], *, title: str | None = None,
                  timeout_ms: float | None = None, ylabel: str = "latency (ms)") -> list:
    """Latency by percentile. x is 1/(1-p) on a log scale so the tail gets room; each curve is
    {label, color, [linestyle], count, points: [(percentile, ms, censored), ..., (100, max,
    censored)]}; the max is drawn where one sample lies beyond (x = count). The censored part
    of a curve (ranks among requests that got no answer) is drawn at the timeout, dotted, as
    off the scale, with a line and label "> timeout". For up to MANY_SYSTEMS curves; more get
    plot_spectrum_panels."""
    mark_plot_area(ax)
    artists = []
    for curve in curves:
        if curve["points"]:
            artists += _draw_spectrum_curve(ax, curve)
    _spectrum_x_axis(ax, curves)
    ax.set_xlabel("percentile (log scale of 1/(1 − p))")
    ax.set_ylabel(ylabel)
    _auto_log_y(ax, [pt[1] for curve in curves for pt in curve["points"]])
    if _spectrum_censored(curves) and timeout_ms:
        artists.append(ax.axhline(timeout_ms, color="black", linewidth=0.8, linestyle="--"))
        artists.append(ax.annotate(f"timeout: beyond it, > {timeout_ms / 1000:g} s (off the "
                                   f"scale)", (1.05, timeout_ms), xycoords=("data", "data"),
                                   textcoords="offset points", xytext=(0, 3), fontsize=8))
    if title:
        _title(ax, title)
    if curves:
        artists.append(mark_legend(ax.legend(loc="best", framealpha=0.85), inside=True))
    return artists


def panel_title(label: str, chars: int) -> str:
    """A label on at most two lines of `chars` (the panel's width), cut with "…" beyond."""
    lines = textwrap.wrap(label, chars, break_long_words=True) or [""]
    if len(lines) > 2:
        lines = [lines[0], lines[1][:chars - 1].rstrip() + "…"]
    return "\n".join(lines)


def plot_spectrum_panels(axes: Sequence, curves: Sequence[dict[str, Any]], *,
                         timeout_ms: float | None = None, max_ticks: int = 4,
                         title_chars: int = 30) -> list:
    """Small multiples of the percentile spectrum: panel i (axes[i], sharing x and y with the
    others) draws curve i in its colour over every other curve in light grey, so each system
    reads against the field without a legend: the panel's title names it. Axes beyond the
    curves are hidden. `max_ticks` and `title_chars` fit the x labels and titles to the panel
    width.
    The censored parts are dotted at the timeout, as in plot_spectrum."""
    artists = []
    drawn = [c for c in curves if c["points"]]
    censored = _spectrum_censored(drawn) and timeout_ms
    for i, ax in enumerate(axes):
        if i >= len(curves):
            ax.set_visible(False)
            continue
        mark_plot_area(ax, i + 1)
        own = curves[i]
        for other in drawn:
            if other is not own:
                artists += _draw_spectrum_curve(ax, other, color=OTHERS_GREY, linewidth=0.9,
                                                zorder=1, labels=False)
        if own["points"]:
            artists += _draw_spectrum_curve(ax, own, linewidth=1.8, zorder=3)
        if censored:
            artists.append(ax.axhline(timeout_ms, color="black", linewidth=0.7, linestyle="--",
                                      zorder=2))
        label = own["label"] if own["points"] else f"{own['label']} (no samples)"
        # the title in black: some of the colours are too pale for small text
        title = ax.set_title(panel_title(label, title_chars), y=1.0, pad=3, fontsize=8.5)
        title.set_gid(f"{PANEL_TITLE_ID}-{i + 1}")
        artists.append(title)
        ax.tick_params(labelsize=7.5)
    if drawn:
        _spectrum_x_axis(axes[0], drawn, max_ticks)    # shared: one call sets every panel
        values = [pt[1] for curve in drawn for pt in curve["points"]]
        _auto_log_y(axes[0], values)
        positive = [v for v in values if v is not None and v > 0]
        if axes[0].get_yscale() == "log" and max(positive) / min(positive) >= 100:
            # decades only: 1-2-5 steps crowd a 1.3-inch panel, and every tick is drawn
            # (and made: five artists) once per panel
            axes[0].yaxis.set_major_locator(LogLocator(base=10, subs=(1.0,)))
    # a hidden panel leaves the one above it at the bottom of its column: give it the ticks
    shown = [ax for ax in axes if ax.get_visible()]
    for ax in shown:
        below = ax.get_subplotspec()
        if below is not None and below.rowspan.stop < below.get_gridspec().nrows:
            under = [o for o in axes if o.get_subplotspec().rowspan.start == below.rowspan.stop
                     and o.get_subplotspec().colspan.start == below.colspan.start]
            if under and not under[0].get_visible():
                ax.xaxis.set_tick_params(labelbottom=True)
    return artists


def plot_load_curve(ax, systems: Sequence[dict[str, Any]], *, title: str | None = None,
                    timeout_ms: float | None = None) -> list:
    """p50 (dashed) and p99 (solid) median latency vs offered load per system, with the
    repetitions' range as error bars; saturated points hollow-ringed; a censored point (only
    known to exceed the timeout) drawn at the timeout as an upward triangle, with a line and
    label "> timeout"; each system's predicted ceiling as a vertical dotted line.
    systems: [{label, color, offered, p50_ms, p99_ms, p50_range, p99_range ([lo, hi] or None
    per point), p50_censored, p99_censored, saturated, ceiling_rps}]"""
    mark_plot_area(ax)
    artists = []
    all_x, all_y = [], []
    censored_any = False
    for s in systems:
        n = len(s["offered"])
        pts = [i for i in range(n) if s["p99_ms"][i] is not None]
        if not pts:
            continue
        s = {**{f"{k}_{what}": [fill] * n for k in ("p50", "p99")
                for what, fill in (("range", None), ("censored", False))}, **s}
        xs = [s["offered"][i] for i in pts]
        all_x += xs
        for key, width, style, marker, size in (("p99", 1.8, s.get("linestyle", "-"), "o", 6),
                                                 ("p50", 1.2, "--", "s", 4)):
            ys = [s[f"{key}_ms"][i] for i in pts]
            all_y += ys
            artists += ax.plot(xs, ys, color=s["color"], linewidth=width, linestyle=style,
                               marker=marker, markersize=size, label=f"{s['label']} {key}")
            ranged = [(s["offered"][i], s[f"{key}_ms"][i], s[f"{key}_range"][i]) for i in pts
                      if s[f"{key}_range"][i] is not None]
            if ranged:
                lo = [max(y - r[0], 0.0) for _, y, r in ranged]
                hi = [max(r[1] - y, 0.0) for _, y, r in ranged]
                all_y += [r[0] for _, _, r in ranged] + [r[1] for _, _, r in ranged]
                bars = ax.errorbar([x for x, _, _ in ranged], [y for _, y, _ in ranged],
                                   yerr=[lo, hi], fmt="none", ecolor=s["color"], elinewidth=1.0,
                                   capsize=3)
                artists.append(bars)
            cens = [(s["offered"][i], s[f"{key}_ms"][i]) for i in pts if s[f"{key}_censored"][i]]
            if cens:
                censored_any = True
                artists.append(ax.scatter([x for x, _ in cens], [y for _, y in cens], s=70,
                                          marker="^", color=s["color"], edgecolors="black",
                                          linewidths=0.8, zorder=6))
        sat = [i for i in pts if s["saturated"][i]]
        if sat:
            artists.append(ax.scatter([s["offered"][i] for i in sat], [s["p99_ms"][i] for i in sat],
                                      s=110, facecolors="none", edgecolors="black",
                                      linewidths=1.2, zorder=5))
    for s in systems:
        if s.get("ceiling_rps"):
            artists.append(ax.axvline(s["ceiling_rps"], color=s["color"], linestyle=":",
                                      linewidth=1.4, label=f"{s['label']} predicted ceiling "
                                      f"({s['ceiling_rps']:,.0f}/s)"))
            all_x.append(s["ceiling_rps"])
    if all_x and max(all_x) / max(min(all_x), 1e-9) > 20:
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(FuncFormatter(_plain))
        ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("offered load (requests/s)")
    ax.set_ylabel("latency (ms)")
    _auto_log_y(ax, all_y)
    if censored_any and timeout_ms:
        artists.append(ax.axhline(timeout_ms, color="black", linewidth=0.8, linestyle="--"))
        artists += ax.plot([], [], linestyle="none", marker="^", markersize=8, color="grey",
                           markeredgecolor="black",
                           label=f"> {timeout_ms / 1000:g} s: no answer within the timeout "
                                 f"(drawn at it)")
    if any(any(s["saturated"]) for s in systems):
        artists += ax.plot([], [], linestyle="none", marker="o", markersize=9, markerfacecolor="none",
                           markeredgecolor="black", label="saturated (see the table's rules)")
    ranged = any(r is not None for s in systems for key in ("p50_range", "p99_range")
                 for r in s.get(key) or ())
    return _finish_below(ax, artists, title, "range of the repetitions" if ranged else None)


def _finish_below(ax, artists: list, title: str | None, bars: str | None) -> list:
    """The end of a chart with its legend below: the error bars' legend entry (what `bars`
    are, when drawn), the title, the legend."""
    if bars:
        artists += ax.plot([], [], color="grey", linewidth=1.0, marker="|", markersize=8,
                           label=f"bars: {bars}")
    if title:
        _title(ax, title)
    if artists:
        artists.append(legend_below(ax))
    return artists


def legend_below(ax):
    """A legend under the x axis label, two columns: long system labels never cover data.
    Figures using it need the taller LEGEND_BELOW layout (see render_job)."""
    handles, labels = ax.get_legend_handles_labels()
    # one column when labels are too long for two side by side at 700 px
    ncol = 2 if max((len(t) for t in labels), default=0) <= 42 else 1
    return mark_legend(ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=ncol,
                                 fontsize=8 if ncol == 2 else 7.5, frameon=False))


def plot_latency_over_time(ax, systems: Sequence[dict[str, Any]], *, title: str | None = None,
                           gc_pauses: Sequence[dict[str, Any]] | None = None) -> list:
    """Per-interval p99 (solid) and max (thin) per system. systems: [{label, color,
    t_s: [...], p99_ms: [...], max_ms: [...]}]. `gc_pauses` ([{t_s, duration_ms}], from JFR)
    is drawn as markers along the top, so a tail that lines up with a pause shows it."""
    mark_plot_area(ax)
    artists = []
    values = []
    for s in systems:
        # a system with no answered request in any interval draws nothing: the legend says why
        none = "" if any(v is not None for v in s["p99_ms"]) else " (no request answered)"
        artists += ax.plot(s["t_s"], _nan(s["p99_ms"]), color=s["color"], linewidth=1.6,
                           linestyle=s.get("linestyle", "-"), label=f"{s['label']} p99{none}",
                           drawstyle="steps-post")
        artists += ax.plot(s["t_s"], _nan(s["max_ms"]), color=s["color"], linewidth=0.8,
                           alpha=0.7, label=f"{s['label']} max", drawstyle="steps-post")
        values += [v for v in s["p99_ms"] + s["max_ms"] if v is not None]
    ax.set_xlabel("time since start of measurement (s)")
    ax.set_ylabel("latency per interval (ms)")
    _auto_log_y(ax, values)
    if gc_pauses:
        artists += draw_gc_pauses(ax, gc_pauses)
    if title:
        _title(ax, title)
    if artists:
        artists.append(legend_below(ax))
    return artists


def draw_gc_pauses(ax, pauses: Sequence[dict[str, Any]]) -> list:
    """GC pauses as ticks on the time axis (the hook for JFR data: [{t_s, duration_ms}])."""
    if not pauses:
        return []
    xs = [p["t_s"] for p in pauses]
    trans = ax.get_xaxis_transform()  # x in data, y in axes fraction
    return [ax.vlines(xs, 0.0, 0.04, transform=trans, colors="black", linewidth=1.0,
                      label="GC pause")]


def plot_throughput_over_time(ax, systems: Sequence[dict[str, Any]], *, offered_rate: float,
                              title: str | None = None, legend: str = "inside") -> list:
    """Achieved requests/s per interval per system against the offered rate. `legend`:
    "inside" (matplotlib's best spot; few systems) or "below" the axes (legend_below)."""
    mark_plot_area(ax)
    artists = [ax.axhline(offered_rate, color="black", linestyle="--", linewidth=1.0,
                          label=f"offered ({offered_rate:,.0f}/s)")]
    top = offered_rate
    for s in systems:
        artists += ax.plot(s["t_s"], _nan(s["achieved_rate"]), color=s["color"], linewidth=1.4,
                           linestyle=s.get("linestyle", "-"), label=f"{s['label']} achieved",
                           drawstyle="steps-post")
        top = max([top] + [v for v in s["achieved_rate"] if v is not None])
    ax.set_ylim(0, top * 1.15)
    ax.set_xlabel("time since start of measurement (s)")
    ax.set_ylabel("throughput (requests/s)")
    if title:
        _title(ax, title)
    if legend == "below":
        artists.append(legend_below(ax))
    else:
        artists.append(mark_legend(ax.legend(loc="best", fontsize=8, framealpha=0.85),
                                   inside=True))
    return artists


def plot_gc_tail(ax, points: Sequence[dict[str, Any]], *, title: str | None = None) -> list:
    """Each cell's longest in-window GC pause (x, ms) against its p99.9 (filled circle) and its
    max (hollow diamond), the two joined by a thin line in the system's colour; the dashed grey
    line is y = x (a latency as long as the pause), for reference only. A censored value (no
    answer within the timeout) sits at its bound, the timeout, with a black edge.
    points: [{label, color, pause_ms, p999_ms, p999_censored, max_ms, max_censored}], one per
    cell; the legend (under the axes) names each system once, in the order of the points."""
    mark_plot_area(ax)
    artists = []
    by_system: dict[str, list[dict[str, Any]]] = {}
    for pt in points:
        by_system.setdefault(pt["label"], []).append(pt)
    xs = [pt["pause_ms"] for pt in points]
    ys = [v for pt in points for v in (pt["p999_ms"], pt["max_ms"]) if v is not None]
    censored = False
    for label, pts in by_system.items():
        colour = pts[0]["color"]
        for pt in pts:
            pair = [v for v in (pt["p999_ms"], pt["max_ms"]) if v is not None]
            if len(pair) == 2:
                artists += ax.plot([pt["pause_ms"]] * 2, pair, color=colour, linewidth=0.8,
                                   alpha=0.7, zorder=2, label="_nolegend_")
        for key, marker, size, filled in (("p999", "o", 30, True), ("max", "D", 26, False)):
            shown = [pt for pt in pts if pt[f"{key}_ms"] is not None]
            if not shown:
                continue
            edges = ["black" if pt[f"{key}_censored"] else colour for pt in shown]
            censored = censored or any(pt[f"{key}_censored"] for pt in shown)
            artists.append(ax.scatter([pt["pause_ms"] for pt in shown],
                                      [pt[f"{key}_ms"] for pt in shown], s=size, marker=marker,
                                      facecolors=colour if filled else "none", edgecolors=edges,
                                      linewidths=1.2, zorder=4,
                                      label=label if key == "p999" else "_nolegend_"))
    positive = [x for x in xs if x > 0]
    if positive:
        lo, hi = min(positive), max(positive)
        artists += ax.plot([lo, hi], [lo, hi], color="grey", linestyle="--", linewidth=0.9,
                           zorder=1, label="latency = longest pause")
    right = max(xs, default=0) * 1.08 or 1.0
    ax.set_xlim(-0.03 * right, right)      # markers at 0 (no pause in the window) whole
    ax.set_xlabel("longest GC pause in the window (ms)")
    ax.set_ylabel("latency (ms)")
    _auto_log_y(ax, ys)
    artists += ax.plot([], [], linestyle="none", marker="o", markersize=5, color="grey",
                       label="p99.9 (filled)")
    artists += ax.plot([], [], linestyle="none", marker="D", markersize=5,
                       markerfacecolor="none", markeredgecolor="grey", label="max (hollow)")
    if censored:
        artists += ax.plot([], [], linestyle="none", marker="o", markersize=5, color="grey",
                           markeredgecolor="black",
                           label="black edge: no answer within the timeout (drawn at it)")
    if title:
        _title(ax, title)
    if points:
        artists.append(legend_below(ax))
    return artists


def plot_sweep(ax, lines: Sequence[dict[str, Any]], *, xlabel: str, ylabel: str,
               log_x: bool = False, title: str | None = None) -> list:
    """A JMH score against one param (issue 13): one line per variant, error bars from JMH's
    99.9 % confidence interval, ticks at the param's values (a log x axis when they span two
    decades or more). lines: [{label, color, x: [...], y: [score or None], error: [... or
    None]}]"""
    artists = []
    values, xs_all = [], set()
    for line in lines:
        xs_all.update(line["x"])
        artists += ax.plot(line["x"], _nan(line["y"]), color=line["color"], linewidth=1.6,
                           marker="o", markersize=5, label=line["label"])
        bars = [(x, y, e) for x, y, e in zip(line["x"], line["y"], line["error"])
                if y is not None and e is not None]
        if bars:
            # a bar reaching below zero stops just above it (a log axis has no zero)
            low = [min(e, y * 0.99) if y > 0 else e for _, y, e in bars]
            artists.append(ax.errorbar([x for x, _, _ in bars], [y for _, y, _ in bars],
                                       yerr=[low, [e for _, _, e in bars]], fmt="none",
                                       ecolor=line["color"], elinewidth=1.0, capsize=3))
            values += [y - lo for (_, y, _), lo in zip(bars, low)] + [y + e for _, y, e in bars]
        values += [y for y in line["y"] if y is not None]
    if log_x:
        ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(sorted(xs_all)))
    ax.xaxis.set_major_formatter(FuncFormatter(_plain))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    _auto_log_y(ax, values)
    bars = any(isinstance(a, ErrorbarContainer) for a in artists)
    return _finish_below(ax, artists, title, "JMH's 99.9 % confidence interval" if bars else None)


def _title(ax, title: str) -> None:
    # An explicit y skips matplotlib's automatic title placement, which measures every tick
    # label of the top axis on each draw (a fifth of a chart's drawing time).
    ax.set_title(title, y=1.0, pad=6)


def _nan(values: Sequence[float | None]) -> list[float]:
    return [float("nan") if v is None else v for v in values]


def _plain(value: float, _pos=None) -> str:
    """Log-axis tick labels as plain numbers (0.1, 1, 10, 1,000), not powers of ten."""
    return f"{value:,.6f}".rstrip("0").rstrip(".") if value < 1 else f"{value:,.0f}"


def _auto_log_y(ax, values: Sequence[float | None]) -> None:
    """A log y axis when values span more than 20x (body and tail both readable)."""
    positive = [v for v in values if v is not None and v > 0]
    if positive and max(positive) / min(positive) > 20:
        ax.set_yscale("log")
        if max(positive) / min(positive) < 1e4:
            # few decades: label 1-2-5 steps so a reader can place values between decades
            ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(_plain))
        # no minor ticks: each is three Line2D objects and a label, most of a chart's drawing
        # time on a log axis, and the 1-2-5 major ticks already carry the scale
        ax.yaxis.set_minor_locator(NullLocator())
    elif positive:
        ax.set_ylim(bottom=0)
