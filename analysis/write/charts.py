"""-> `assets/charts/<run-id>/*.svg|png`: percentile spectrum (small multiples for many systems),
load curve, latency and throughput over time, GC pause against tail, JMH sweeps; per scenario.

This module turns a run into chart jobs (chart_plan) and jobs into files (render_job). Every
SVG - the 700 px chart and its phone layout - is written straight from the job's data by
svgcharts/svgdraw (about a millisecond a chart; matplotlib took ~40 ms). The PNG, drawn only
where a feed or an og:image uses it (png_use), is matplotlib's drawing of the same data
(plots.py) at the SVG's size; `_write_figure` (behind `save_figure`, which also closes the
figure, and `render_job`, which reuses one figure per layout) strips its volatile metadata.
Both go through analysis.atomic, so two builds give byte-identical charts.
Figures are 7 x 4 inches: 700 px wide at 100 dpi, the width of a blog column.
"""
from __future__ import annotations

import io
import math
import os
import re
import textwrap
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
from analysis.gc_tail import gc_tail_points  # noqa: E402
from analysis.model import Cell, LoadPoint, Run, Scenario, System  # noqa: E402
from analysis.write import svgcharts  # noqa: E402
from analysis.write.svgdraw import WIDE_BELOW, figure_size_in, panel_layout, render_svg  # noqa: E402
from analysis.write.chartset import MANY_SYSTEMS, chart_set, load_text, scenario_suffix  # noqa: E402
from analysis.write.plots import (FIGSIZE_IN, LEGEND_BELOW_FIGSIZE_IN, LEGEND_BELOW_MARGINS,  # noqa: E402
                                  MARGINS, NARROW_TEXT_PT, NARROW_TITLE_CHARS, PNG_DPI, STYLE,
                                  plot_gc_tail, plot_latency_over_time, plot_load_curve,
                                  plot_spectrum, plot_spectrum_panels, plot_sweep,
                                  plot_throughput_over_time, system_style)


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
    key = legend_below
    entry = _REUSED.get(key)
    with plt.rc_context(STYLE):
        if entry is None:
            # Not through pyplot: its figure registry would keep these open "figures" visible
            # (plt.get_fignums) and add a manager we never use.
            fig = Figure(figsize=figsize)
            FigureCanvasAgg(fig)  # kept, so the PNG renderer and its text-size cache are reused
            ax = fig.add_subplot()
            for axis in (ax.xaxis, ax.yaxis):
                axis.reset_ticks = _keep_ticks
            entry = _REUSED[key] = (fig, ax)
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

def system_styles(run: Run) -> dict[str, dict[str, Any]]:
    """Each system's colour and line style (plots.system_style), one mapping for every chart
    of the run: systems ranked by their place in run.yml (System.index) across all scenarios,
    so a system keeps its colour from the load curve to the small multiples and the scatter,
    and from one scenario to the next."""
    index: dict[str, int] = {}
    for scenario in run.scenarios:
        for s in scenario.systems:
            index.setdefault(s.id, s.index)
    ranked = sorted(index, key=lambda sid: (index[sid], sid))
    return {sid: system_style(i) for i, sid in enumerate(ranked)}


def chart_plan(run: Run) -> list[dict[str, Any]]:
    """The picklable jobs that draw the run's charts (chartset.chart_set), one per chart."""
    styles = system_styles(run)
    scenarios = {scenario.id: scenario for scenario in run.scenarios}
    rows = {(scenario.id, lp.id): row for scenario in run.scenarios
            for lp, row in scenario.grid()}
    jobs = []
    for chart in chart_set(run):
        scenario = scenarios[chart.scenario]
        of = scenario_suffix(scenario)     # charts of a named scenario say which
        if chart.kind == "load_curve":
            data = _load_curve_data(scenario, styles, of)
        elif chart.kind == "gc_tail":
            data = _gc_tail_data(scenario, styles, of)
        else:
            present = [(s, c) for s, c in rows[(scenario.id, chart.load.id)] if c]
            data = CHART_DATA[chart.kind](chart.load, present, styles, of)
        jobs.append({"kind": chart.kind, "data": data, **chart.files(run.id)})
    return jobs


def _at_timeout(c: Cell, name: str) -> tuple[float | None, bool]:
    """A statistic to plot: its value, or the timeout (its bound) when censored."""
    p = c.stats.get(name)
    return p.bound(), p.censored


def _range(c: Cell, name: str) -> list[float] | None:
    s = c.spread.get(name)
    if s is None or s.min.bound() is None or s.max.bound() is None:
        return None
    return [s.min.bound(), s.max.bound()]


def _load_curve_data(scenario: Scenario, styles: dict[str, dict[str, Any]],
                     of: str = "") -> dict[str, Any]:
    systems = []
    for s in scenario.systems:
        row = [(lp, scenario.cell(lp.id, s.id)) for lp in scenario.load_points]
        cells = [c for _, c in row if c]
        entry = {"label": s.label, **styles[s.id],
                 "offered": [lp.offered_rate for lp, c in row if c],
                 "saturated": [c.saturation.saturated for c in cells],
                 "ceiling_rps": s.predicted_ceiling_rps}
        for name in ("p50", "p99"):
            points = [_at_timeout(c, name) for c in cells]
            entry[f"{name}_ms"] = [v for v, _ in points]
            entry[f"{name}_censored"] = [k for _, k in points]
            entry[f"{name}_range"] = [_range(c, name) for c in cells]
        systems.append(entry)
    timeout = next((c.timeout_ms for c in scenario.measured() if c.timeout_ms), None)
    return {"systems": systems, "title": f"Latency vs offered load{of}", "timeout_ms": timeout}


def _gc_tail_data(scenario: Scenario, styles: dict[str, dict[str, Any]],
                  of: str = "") -> dict[str, Any]:
    """gc_tail.gc_tail_points as plot_gc_tail's points, systems in the run's order."""
    labels = {s.id: s.label for s in scenario.systems}
    rank = {sid: i for i, sid in enumerate(styles)}
    points = sorted(gc_tail_points(scenario), key=lambda p: rank[p.system])
    return {"title": f"Longest GC pause in the window against the tail{of}",
            "points": [{"label": labels[p.system], "color": styles[p.system]["color"],
                        "pause_ms": p.pause_ms,
                        "p999_ms": p.p999.bound(), "p999_censored": p.p999.censored,
                        "max_ms": p.max.bound(), "max_censored": p.max.censored}
                       for p in points]}


def _spectrum_data(lp: LoadPoint, present: list[tuple[System, Cell]],
                   styles: dict[str, dict[str, Any]], of: str = "") -> dict[str, Any]:
    return {"title": f"Latency by percentile at {load_text(lp)}{of}",
            "timeout_ms": next((c.timeout_ms for _, c in present if c.timeout_ms), None),
            "curves": [{"label": s.label, **styles[s.id],
                        "count": c.stats.count, "points": c.spectrum} for s, c in present]}


def _latency_data(lp: LoadPoint, present: list[tuple[System, Cell]],
                  styles: dict[str, dict[str, Any]], of: str = "") -> dict[str, Any]:
    # the first repetition over time; JFR's pauses of the first system that has them (one JVM
    # per system)
    return {"title": f"Latency per interval at {load_text(lp)}{of}",
            "systems": [{"label": s.label, **styles[s.id],
                         "t_s": _step_times(c.repetitions[0].series),
                         "p99_ms": _step_values(c.repetitions[0].series, "p99_ms"),
                         "max_ms": _step_values(c.repetitions[0].series, "max_ms")}
                        for s, c in present],
            "gc_pauses": next((c.gc_pauses for _, c in present if c.gc_pauses), None)}


def _throughput_data(lp: LoadPoint, present: list[tuple[System, Cell]],
                     styles: dict[str, dict[str, Any]], of: str = "") -> dict[str, Any]:
    return {"title": f"Throughput per interval at {load_text(lp)}{of}",
            "offered_rate": lp.offered_rate,
            # a legend of many systems inside the axes would cover their lines
            "legend": "below" if len(present) > MANY_SYSTEMS else "inside",
            "systems": [{"label": s.label, **styles[s.id],
                         "t_s": _step_times(c.repetitions[0].series),
                         "achieved_rate": _step_values(c.repetitions[0].series, "achieved_rate")}
                        for s, c in present]}


CHART_DATA = {"spectrum": _spectrum_data, "spectrum_panels": _spectrum_data,
              "latency_over_time": _latency_data, "throughput_over_time": _throughput_data}


def pixel_sizes(jobs: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """Each job's PNG size in pixels by its png path (the <img> width and height). A chart
    with the legend below grows with its legend (_fit_legend_below), so its artists are made,
    but not drawn, on this process's reused figure to find out."""
    sizes = {}
    for job in jobs:
        if job["kind"] in svgcharts.BUILDERS:
            width_in, height_in = figure_size_in(svgcharts.BUILDERS[job["kind"]](job["data"]))
        elif job["kind"] == "spectrum_panels":
            width_in, height_in = panel_layout(len(job["data"]["curves"]), False)["figsize"]
        elif legend_below(job):
            fig, ax = _reused_figure(True)
            try:
                draw_chart(fig, ax, job)
            except BaseException:
                _REUSED.pop(True, None)
                raise
            width_in, height_in = fig.get_size_inches()
        else:
            width_in, height_in = FIGSIZE_IN
        # as the Agg canvas rounds the figure to whole pixels
        sizes[job["png"]] = (int(round(width_in * PNG_DPI)), int(round(height_in * PNG_DPI)))
    return sizes


def _fit_legend_below(fig, ax) -> None:
    """Grow the figure so a legend under the axes keeps every row (many systems, long labels)
    while the plot area stays the same size."""
    legend = ax.get_legend()
    if legend is None:
        return
    rows = math.ceil(len(legend.get_texts()) / max(1, legend._ncols))
    below = WIDE_BELOW    # the SVG's layout (svgdraw), so the PNG has the SVG's size
    bottom_in = below.bottom_in + rows * below.legend_row_in   # tick labels, x label, legend
    height = below.plot_in + bottom_in + below.top_in
    fig.set_size_inches(FIGSIZE_IN[0], height)
    fig.subplots_adjust(bottom=bottom_in / height, top=1 - below.top_in / height)


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


CHART_KINDS = ("spectrum", "spectrum_panels", "load_curve", "latency_over_time",
               "throughput_over_time", "gc_tail",
               "jmh_sweep", "jmh_spectrum")    # jmh_*: a JMH run's (write/jmh_views.py)
LEGEND_BELOW_KINDS = ("load_curve", "latency_over_time", "gc_tail", "jmh_sweep")


def legend_below(job: dict[str, Any]) -> bool:
    """Whether the job's chart has its legend under the axes (the taller layout): always for
    some kinds, and for a throughput chart of many systems."""
    return job["kind"] in LEGEND_BELOW_KINDS or job["data"].get("legend") == "below"


def _draw_job(job: dict[str, Any], site_root: str) -> None:
    kind = job["kind"]
    if kind not in CHART_KINDS:
        raise ValueError(f"unknown chart kind {kind!r}")
    root = Path(site_root)
    png = root / job["png"] if job["png"] else None    # png_use: only where a feed or og:image uses it
    if kind == "spectrum_panels":    # SVG written directly; a figure of its own for the PNG
        atomic.write_text(root / job["svg"], svgcharts.spectrum_panels(job["data"]))
        if job.get("narrow_svg"):
            atomic.write_text(root / job["narrow_svg"],
                              svgcharts.spectrum_panels(job["data"], narrow=True))
        if png is not None:
            _write_figure(draw_panels(job), None, png)
        return
    plot = svgcharts.BUILDERS[kind](job["data"])
    atomic.write_text(root / job["svg"], render_svg(plot))
    if job.get("narrow_svg"):
        atomic.write_text(root / job["narrow_svg"], render_svg(plot, narrow=True))
    if png is None:
        return
    below = legend_below(job)
    fig, ax = _reused_figure(below)
    try:
        draw_chart(fig, ax, job)
        _write_figure(fig, None, png)
    except BaseException:
        _REUSED.pop(below, None)  # half-drawn: start the next chart on a new figure
        raise


def draw_chart(fig, ax, job: dict[str, Any]) -> None:
    """Draw a chart job's data on `ax` (of a new_figure(legend_below=legend_below(job))) with
    matplotlib, for its PNG, growing the figure to fit a legend under the axes. Small
    multiples: draw_panels."""
    data = job["data"]
    kind = job["kind"]
    with plt.rc_context(STYLE):
        if kind == "spectrum":
            plot_spectrum(ax, data["curves"], title=data["title"],
                          timeout_ms=data.get("timeout_ms"))
        elif kind == "load_curve":
            plot_load_curve(ax, data["systems"], title=data["title"],
                            timeout_ms=data.get("timeout_ms"))
        elif kind == "latency_over_time":
            plot_latency_over_time(ax, data["systems"], title=data["title"],
                                   gc_pauses=data.get("gc_pauses"))
        elif kind == "throughput_over_time":
            plot_throughput_over_time(ax, data["systems"], offered_rate=data["offered_rate"],
                                      title=data["title"], legend=data.get("legend", "inside"))
        elif kind == "gc_tail":
            plot_gc_tail(ax, data["points"], title=data["title"])
        elif kind == "jmh_sweep":
            plot_sweep(ax, data["lines"], xlabel=data["xlabel"], ylabel=data["ylabel"],
                       log_x=data["log_x"], title=data["title"])
        elif kind == "jmh_spectrum":
            plot_spectrum(ax, data["curves"], title=data["title"], ylabel=data["ylabel"])
        else:
            raise ValueError(f"unknown chart kind {kind!r}")
    if legend_below(job):
        _fit_legend_below(fig, ax)


# --- small multiples: one panel per system ---------------------------------------------------

def draw_panels(job: dict[str, Any], narrow: bool = False) -> Figure:
    """A spectrum_panels job drawn on a new figure (panel_layout; not pyplot's, so nothing to
    close): plots.plot_spectrum_panels, the title above and the axis labels once."""
    data = job["data"]
    title = textwrap.fill(data["title"], NARROW_TITLE_CHARS) if narrow else data["title"]
    layout = panel_layout(len(data["curves"]), narrow, title.count("\n") + 1)
    text_pt = NARROW_TEXT_PT if narrow else 9
    with plt.rc_context(STYLE):
        fig = Figure(figsize=layout["figsize"])
        FigureCanvasAgg(fig)
        axes = fig.subplots(layout["rows"], layout["cols"], sharex=True, sharey=True,
                            squeeze=False).ravel().tolist()
        fig.subplots_adjust(**layout["adjust"])
        plot_spectrum_panels(axes, data["curves"], timeout_ms=data.get("timeout_ms"),
                             max_ticks=layout["max_ticks"], title_chars=layout["title_chars"])
        if narrow:
            for ax in axes:
                ax.tick_params(labelsize=NARROW_TEXT_PT)
        height = layout["figsize"][1]
        fig.suptitle(title, y=1 - 0.1 / height, va="top", fontsize=10 if narrow else 11)
        fig.supxlabel("percentile (log scale of 1/(1 − p)); each panel: one system in colour, "
                      "the others grey" if not narrow else
                      "percentile (log of 1/(1 − p));\nits system in colour, others grey",
                      y=0.08 / height, va="bottom", fontsize=text_pt)
        fig.supylabel("latency (ms)", x=0.06 / layout["figsize"][0], fontsize=text_pt)
    return fig
