"""-> `assets/charts/<run-id>/*.svg|png`: percentile spectrum, load curve, latency and throughput
over time.

Each `plot_*` function draws on a given matplotlib `Axes` from plain data and returns the artists
it made, so tests and other layouts can reuse it. `_write_figure` (behind `save_figure`, which also
closes the figure, and `render_job`, which reuses one figure per layout) is the one place figures
become files: it fixes every source of byte-level variation (SVG ids and date, PNG text chunks)
and writes through analysis.atomic, so two builds give byte-identical charts.
Figures are 7 x 4 inches: 700 px wide at 100 dpi, the width of a blog column.
"""
from __future__ import annotations

import io
import math
import os
import re
import warnings
from pathlib import Path
from typing import Any, Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullLocator  # noqa: E402
from matplotlib.transforms import Bbox  # noqa: E402

from PIL import Image  # noqa: E402  (matplotlib's own PNG writer)

from analysis import atomic  # noqa: E402
from analysis.datafiles import chart_path  # noqa: E402

FIGSIZE_IN = (7.0, 4.0)
# left: room for tick labels like "10,000" and the axis label at 700 px
MARGINS = {"left": 0.125, "right": 0.955, "top": 0.91, "bottom": 0.13}
# charts with the legend under the axes: taller, with room at the bottom
LEGEND_BELOW_FIGSIZE_IN = (7.0, 4.8)
LEGEND_BELOW_MARGINS = {"left": 0.125, "right": 0.955, "top": 0.925, "bottom": 0.3}
PNG_DPI = 100            # 700 px: a blog column (and a quarter less drawing time than 150 dpi)
# Colour-blind-safe (Okabe-Ito); system i always gets colour i in every chart of a run.
COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
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


# --- plotting functions: (ax, data) -> artists ----------------------------------------------

def _percent_label(x: float, _pos=None) -> str:
    """1/(1-p) -> 'p%': 2 -> 50%, 10 -> 90%, 1000 -> 99.9%."""
    if x <= 1:
        return "0%"
    p = 100.0 * (1.0 - 1.0 / x)
    text = f"{p:.6f}".rstrip("0").rstrip(".")
    return f"{text}%"


def plot_spectrum(ax, curves: Sequence[dict[str, Any]], *, title: str | None = None) -> list:
    """Latency by percentile. x is 1/(1-p) on a log scale so the tail gets room; each curve is
    {label, color, count, points: [(percentile, ms), ..., (100, max)]}; the max is drawn where
    one sample lies beyond (x = count)."""
    artists = []
    top = 2.0
    for curve in curves:
        xs, ys = [], []
        count = curve["count"]
        for p, ms in curve["points"]:
            x = float(count) if p >= 100.0 else 1.0 / (1.0 - p / 100.0)
            xs.append(x)
            ys.append(ms)
        if not xs:
            continue
        top = max(top, max(xs))
        artists += ax.plot(xs, ys, color=curve["color"], label=curve["label"], linewidth=1.6,
                           drawstyle="steps-post")
    ax.set_xscale("log")
    right = top * 1.5  # a little room past the max, so the last label is not cut off
    ticks = [1.0, 2.0] + [10.0 ** k for k in range(1, 19) if 10.0 ** k <= right]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(_percent_label))
    ax.set_xlim(1.0, right)
    ax.set_xlabel("percentile (log scale of 1/(1 − p))")
    ax.set_ylabel("latency (ms)")
    _auto_log_y(ax, [y for curve in curves for _, y in curve["points"]])
    if title:
        _title(ax, title)
    if curves:
        artists.append(ax.legend(loc="best", framealpha=0.85))
    return artists


def plot_load_curve(ax, systems: Sequence[dict[str, Any]], *, title: str | None = None) -> list:
    """p50 (dashed) and p99 (solid) latency vs offered load per system; saturated points hollow;
    each system's predicted ceiling (concurrency / service time) as a vertical dotted line.
    systems: [{label, color, offered: [...], p50_ms: [...], p99_ms: [...], saturated: [...],
    ceiling_rps}]"""
    artists = []
    all_x, all_y = [], []
    for s in systems:
        pairs = [(x, p50, p99, sat) for x, p50, p99, sat in
                 zip(s["offered"], s["p50_ms"], s["p99_ms"], s["saturated"]) if p99 is not None]
        if not pairs:
            continue
        xs = [p[0] for p in pairs]
        all_x += xs
        all_y += [p[1] for p in pairs] + [p[2] for p in pairs]
        artists += ax.plot(xs, [p[2] for p in pairs], color=s["color"], linewidth=1.8,
                           marker="o", label=f"{s['label']} p99")
        artists += ax.plot(xs, [p[1] for p in pairs], color=s["color"], linewidth=1.2,
                           linestyle="--", marker="s", markersize=4, label=f"{s['label']} p50")
        sat = [p for p in pairs if p[3]]
        if sat:
            artists.append(ax.scatter([p[0] for p in sat], [p[2] for p in sat], s=90,
                                      facecolors="none", edgecolors="black", linewidths=1.2,
                                      zorder=5))
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
    if any(any(s["saturated"]) for s in systems):
        artists += ax.plot([], [], linestyle="none", marker="o", markersize=9, markerfacecolor="none",
                           markeredgecolor="black", label="saturated (achieved < 90 % offered)")
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
    return ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=ncol,
                     fontsize=8 if ncol == 2 else 7.5, frameon=False)


def plot_latency_over_time(ax, systems: Sequence[dict[str, Any]], *, title: str | None = None,
                           gc_pauses: Sequence[dict[str, Any]] | None = None) -> list:
    """Per-interval p99 (solid) and max (thin) per system. systems: [{label, color,
    t_s: [...], p99_ms: [...], max_ms: [...]}]. `gc_pauses` ([{t_s, duration_ms}], from JFR)
    is drawn as markers along the top, so a tail that lines up with a pause shows it."""
    artists = []
    values = []
    for s in systems:
        artists += ax.plot(s["t_s"], _nan(s["p99_ms"]), color=s["color"], linewidth=1.6,
                           label=f"{s['label']} p99", drawstyle="steps-post")
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
                              title: str | None = None) -> list:
    """Achieved requests/s per interval per system against the offered rate."""
    artists = [ax.axhline(offered_rate, color="black", linestyle="--", linewidth=1.0,
                          label=f"offered ({offered_rate:,.0f}/s)")]
    top = offered_rate
    for s in systems:
        artists += ax.plot(s["t_s"], _nan(s["achieved_rate"]), color=s["color"], linewidth=1.4,
                           label=f"{s['label']} achieved", drawstyle="steps-post")
        top = max([top] + [v for v in s["achieved_rate"] if v is not None])
    ax.set_ylim(0, top * 1.15)
    ax.set_xlabel("time since start of measurement (s)")
    ax.set_ylabel("throughput (requests/s)")
    if title:
        _title(ax, title)
    artists.append(ax.legend(loc="best", fontsize=8, framealpha=0.85))
    return artists


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


# --- files ----------------------------------------------------------------------------------

def new_figure(legend_below: bool = False):
    with plt.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=LEGEND_BELOW_FIGSIZE_IN if legend_below else FIGSIZE_IN)
    # Fixed margins instead of tight_layout: the figure size is fixed, and tight_layout
    # costs a third of the drawing time.
    fig.subplots_adjust(**(LEGEND_BELOW_MARGINS if legend_below else MARGINS))
    return fig, ax


def save_figure(fig, svg_path: str | os.PathLike | None, png_path: str | os.PathLike | None) -> None:
    """Write `fig` as SVG and/or PNG with no volatile metadata, atomically; closes the figure."""
    try:
        _write_figure(fig, svg_path, png_path)
    finally:
        plt.close(fig)


def _write_figure(fig, svg_path: str | os.PathLike | None,
                  png_path: str | os.PathLike | None) -> None:
    with plt.rc_context(STYLE):
        if svg_path is not None:
            buf = io.BytesIO()
            fig.savefig(buf, format="svg", metadata={"Date": None})
            atomic.write_bytes(svg_path, buf.getvalue())
        if png_path is not None:
            atomic.write_bytes(png_path, _png_bytes(fig))


def _png_bytes(fig) -> bytes:
    """The figure as an opaque RGB PNG. matplotlib writes RGBA at zlib level 6; the charts are
    opaque (white background), so the alpha channel is redundant. RGB at level 1 gives the
    same pixels in a file about 8 % smaller, and takes 40 % less time to encode (a tenth of a
    chart's drawing time). No text chunks (no Software tag): the bytes depend only on pixels."""
    raw = io.BytesIO()
    fig.savefig(raw, format="rgba", dpi=PNG_DPI)
    width = int(fig.get_figwidth() * PNG_DPI)
    data = raw.getvalue()
    height = len(data) // (4 * width)
    if width * height * 4 != len(data):  # not the size we computed: let matplotlib write it
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=PNG_DPI, metadata={"Software": None})
        return buf.getvalue()
    image = Image.frombuffer("RGBA", (width, height), data, "raw", "RGBA", 0, 1)
    if image.getextrema()[3][0] < 255:  # some transparency: keep the alpha channel
        rgb = image
    else:
        rgb = image.convert("RGB")
    out = io.BytesIO()
    rgb.save(out, format="png", compress_level=1, dpi=(PNG_DPI, PNG_DPI))
    return out.getvalue()


# --- one reused figure per layout (the build draws thousands of charts) ----------------------
#
# Profiled on the synthetic 200-run corpus, a fresh figure per chart spent about a fifth of a
# chart's time outside drawing: building the Figure and Axes, and creating the Tick objects
# (each tick is five artists; a figure makes 20-30 of them, also for locations outside the
# view) on the first draw. render_job therefore keeps one figure per layout in each process
# and clears it between charts; a cleared figure draws byte-identical files to a fresh one
# (tests/test_charts.py checks this in several orders, so no chart depends on the one before).

_REUSED: dict[bool, tuple[Any, Any]] = {}


def _keep_ticks() -> None:
    """Replacement for `Axis.reset_ticks` on a reused figure. Axes.cla() calls reset_ticks,
    which throws away the axis's Tick objects (and at once builds a new one to set a clip path
    on). Ticks hold no chart data: every draw sets each used tick's location and label text,
    and cla() itself ends by clipping all ticks to the new axes patch, so keeping them is safe
    and saves re-creating them on every chart."""


def _reused_figure(legend_below: bool):
    """This process's figure and axes for one layout, cleared to the state of a new_figure()."""
    figsize = LEGEND_BELOW_FIGSIZE_IN if legend_below else FIGSIZE_IN
    entry = _REUSED.get(legend_below)
    with plt.rc_context(STYLE):
        if entry is None:
            # Not through pyplot: its figure registry would keep these open "figures" visible
            # (plt.get_fignums) and add a manager we never use.
            fig = Figure(figsize=figsize)
            FigureCanvasAgg(fig)  # kept, so the PNG renderer and its text-size cache are reused
            ax = fig.add_subplot()
            for axis in (ax.xaxis, ax.yaxis):
                axis.reset_ticks = _keep_ticks
            entry = _REUSED[legend_below] = (fig, ax)
        else:
            fig, ax = entry
            ax.cla()
            # cla() leaves the data limits of the last chart; an axhline (updates y only)
            # would then inherit the previous chart's x range.
            ax.dataLim.set(Bbox.null())
            fig.set_size_inches(figsize)  # _fit_legend_below may have grown it
    fig.subplots_adjust(**(LEGEND_BELOW_MARGINS if legend_below else MARGINS))
    return fig, ax


# --- from an analysed run to chart jobs -----------------------------------------------------

def _cell_map(result):
    return {(c["load"], c["system"]): c for c in result["cells"]}


def chart_plan(result: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The `charts:` section of the data file and the picklable jobs that draw those charts."""
    m = result["manifest"]
    run_id = m.run_id
    cells = _cell_map(result)
    names = ", ".join(s.label for s in m.systems)
    section: dict[str, Any] = {}
    jobs: list[dict[str, Any]] = []

    def add(name: str, kind: str, data: dict, alt: str) -> dict:
        entry = {"svg": chart_path(run_id, name, "svg"), "png": chart_path(run_id, name, "png"),
                 "alt": alt}
        jobs.append({"kind": kind, "data": data, "svg": entry["svg"], "png": entry["png"]})
        return entry

    curve_systems = []
    for i, s in enumerate(m.systems):
        row = [cells.get((lp.id, s.id)) for lp in m.load_points]
        curve_systems.append({
            "label": s.label, "color": color(i),
            "offered": [lp.offered_rate for lp, c in zip(m.load_points, row) if c],
            "p50_ms": [c["summary"]["p50_ms"] for c in row if c],
            "p99_ms": [c["summary"]["p99_ms"] for c in row if c],
            "saturated": [c["summary"]["saturated"] for c in row if c],
            "ceiling_rps": result["systems"][s.id]["predicted_ceiling_rps"]})
    section["load_curve"] = add(
        "load-curve", "load_curve", {"systems": curve_systems, "title": "Latency vs offered load"},
        f"Load curve: p50 and p99 latency (ms) against offered load (requests/s) for {names}, "
        f"with predicted ceilings where known.")
    section["spectrum"] = []
    section["latency_over_time"] = []
    section["throughput_over_time"] = []
    for lp in m.load_points:
        present = [(i, s, cells[(lp.id, s.id)]) for i, s in enumerate(m.systems)
                   if (lp.id, s.id) in cells]
        if not present:
            continue
        load_text = f"{lp.offered_rate:,g} requests/s offered"
        section["spectrum"].append({"load": lp.id, **add(
            f"spectrum-{lp.id}", "spectrum",
            {"title": f"Latency by percentile at {load_text}",
             "curves": [{"label": s.label, "color": color(i), "count": c["summary"]["count"],
                         "points": c["spectrum"]} for i, s, c in present]},
            f"Percentile spectrum at {load_text}: latency (ms) from p0 to the max, "
            f"for {names}.")})
        series = [(i, s, c["series"][0]) for i, s, c in present]  # first repetition over time
        section["latency_over_time"].append({"load": lp.id, **add(
            f"latency-{lp.id}", "latency_over_time",
            {"title": f"Latency per interval at {load_text}",
             "systems": [{"label": s.label, "color": color(i), "t_s": _step_times(rows),
                          "p99_ms": _step_values(rows, "p99_ms"),
                          "max_ms": _step_values(rows, "max_ms")} for i, s, rows in series],
             # JFR's pauses of the first system that has them (one JVM per system)
             "gc_pauses": next((c["gc_pauses"] for _, _, c in present if c.get("gc_pauses")),
                               None)},
            f"Latency over time at {load_text}: p99 and max per interval (ms) against "
            f"seconds since the start of measurement, for {names}.")})
        section["throughput_over_time"].append({"load": lp.id, **add(
            f"throughput-{lp.id}", "throughput_over_time",
            {"title": f"Throughput per interval at {load_text}", "offered_rate": lp.offered_rate,
             "systems": [{"label": s.label, "color": color(i), "t_s": _step_times(rows),
                          "achieved_rate": _step_values(rows, "achieved_rate")}
                         for i, s, rows in series]},
            f"Throughput over time at {load_text}: achieved requests/s per interval against "
            f"the offered rate, for {names}.")})
    return section, jobs


def _fit_legend_below(fig, ax) -> None:
    """Grow the figure so a legend under the axes keeps every row (many systems, long labels)
    while the plot area stays the same size."""
    legend = ax.get_legend()
    if legend is None:
        return
    rows = math.ceil(len(legend.get_texts()) / max(1, legend._ncols))
    row_in = 0.17                     # one 8 pt legend row
    plot_in = 3.05                    # the axes' own height
    bottom_in = 0.62 + rows * row_in  # tick labels + x label + legend
    top_in = 0.36                     # title
    height = plot_in + bottom_in + top_in
    fig.set_size_inches(FIGSIZE_IN[0], height)
    fig.subplots_adjust(bottom=bottom_in / height, top=1 - top_in / height)


def _step_times(rows) -> list[float]:
    """Interval starts plus the last interval's end, so steps-post draws every interval."""
    if not rows:
        return []
    return [r["t_s"] for r in rows] + [rows[-1]["t_s"] + rows[-1]["length_s"]]


def _step_values(rows, key: str) -> list:
    values = [r[key] for r in rows]
    return values + values[-1:]


def render_job(job: dict[str, Any], site_root: str) -> list[str]:
    """Draw one chart job (see chart_plan) into its SVG and PNG files under `site_root`.

    Returns the problems to report as warnings: matplotlib would print its own multi-line
    `UserWarning` for every glyph the font lacks (CJK, emoji in a label), outside the build's
    `warning:` format; the chart is still drawn, with boxes for those characters."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _draw_job(job, site_root)
    missing = sorted({m.group(1) for w in caught
                      if (m := re.search(r"Glyph \d+ \((.*?)\) missing", str(w.message)))})
    if missing:
        return [f"chart {job['svg']}: the font has no glyph for {' '.join(missing)}; "
                f"those characters show as boxes"]
    return []


CHART_KINDS = ("spectrum", "load_curve", "latency_over_time", "throughput_over_time")
LEGEND_BELOW_KINDS = ("load_curve", "latency_over_time")


def _draw_job(job: dict[str, Any], site_root: str) -> None:
    kind = job["kind"]
    if kind not in CHART_KINDS:
        raise ValueError(f"unknown chart kind {kind!r}")
    legend_below = kind in LEGEND_BELOW_KINDS
    fig, ax = _reused_figure(legend_below)
    try:
        draw_chart(fig, ax, job)
        root = Path(site_root)
        _write_figure(fig, root / job["svg"], root / job["png"])
    except BaseException:
        _REUSED.pop(legend_below, None)  # half-drawn: start the next chart on a new figure
        raise


def draw_chart(fig, ax, job: dict[str, Any]) -> None:
    """Draw a chart job's data on `ax` (of a new_figure(legend_below=kind in
    LEGEND_BELOW_KINDS)), growing the figure to fit a legend under the axes."""
    data = job["data"]
    kind = job["kind"]
    with plt.rc_context(STYLE):
        if kind == "spectrum":
            plot_spectrum(ax, data["curves"], title=data["title"])
        elif kind == "load_curve":
            plot_load_curve(ax, data["systems"], title=data["title"])
        elif kind == "latency_over_time":
            plot_latency_over_time(ax, data["systems"], title=data["title"],
                                   gc_pauses=data.get("gc_pauses"))
        elif kind == "throughput_over_time":
            plot_throughput_over_time(ax, data["systems"], offered_rate=data["offered_rate"],
                                      title=data["title"])
        else:
            raise ValueError(f"unknown chart kind {kind!r}")
    if kind in LEGEND_BELOW_KINDS:
        _fit_legend_below(fig, ax)
