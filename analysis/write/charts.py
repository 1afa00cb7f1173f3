"""-> `assets/charts/<run-id>/*.svg|png`: percentile spectrum, load curve, latency and throughput
over time.

The drawing itself is in plots.py; this module turns a run into chart jobs and figures into
files. `_write_figure` (behind `save_figure`, which also
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
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.transforms import Bbox  # noqa: E402

from PIL import Image  # noqa: E402  (matplotlib's own PNG writer)

from analysis import atomic  # noqa: E402
from analysis.write.paths import chart_path  # noqa: E402
from analysis.write.plots import (FIGSIZE_IN, LEGEND_BELOW_FIGSIZE_IN, LEGEND_BELOW_MARGINS,  # noqa: E402
                                  MARGINS, PNG_DPI, STYLE, color, plot_latency_over_time,
                                  plot_load_curve, plot_spectrum, plot_throughput_over_time)


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
