"""Chart jobs (run_jobs.chart_plan) -> `assets/charts/<run-id>/*.svg|png`: percentile spectrum
(small multiples for many systems), load curve, latency and throughput over time, GC pause
against tail, JMH sweeps; per scenario.

Each job's chart is described once (svgcharts: a chartspec Plot) and laid out once
(chartlayout). Every SVG - the 700 px chart and its phone layout - is written from that by
svgdraw (about a millisecond a chart; matplotlib took ~40 ms). The PNG, drawn only where a feed
or an og:image uses it (png_use), is matplotlib's drawing of the same Plot in the same layout
(draw_chart, draw_panels); `_write_figure` (behind `save_figure`, which also closes the figure,
and `render_job`, which reuses one figure) strips its volatile metadata. Both go through
analysis.atomic, so two builds give byte-identical charts.
"""
from __future__ import annotations

import io
import os
import re
import textwrap
import warnings
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.transforms import Bbox  # noqa: E402

from PIL import Image  # noqa: E402  (matplotlib's own PNG writer)

from analysis import atomic  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator  # noqa: E402

from analysis.write.charts import chartlayout, png_encode, png_redraw, svgcharts  # noqa: E402
from analysis.write.charts.chartlayout import figure_size_in  # noqa: E402
from analysis.write.charts.png_text import TextBitmapCanvas  # noqa: E402
from analysis.write.charts.run_jobs import CHART_KINDS, CORPUS_CHART_KINDS  # noqa: E402
from analysis.write.charts.svgdraw import render_svg  # noqa: E402
from analysis.write.charts.plots import (FIGSIZE_IN, LEGEND_BELOW_FIGSIZE_IN, LEGEND_BELOW_MARGINS,  # noqa: E402
                                         MARGINS, NARROW_TEXT_PT, NARROW_TITLE_CHARS,
                                         PANEL_TITLE_ID, PNG_DPI, STYLE, mark_legend,
                                         mark_plot_area)


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
    with png_redraw.style_params():
        if svg_path is not None:
            buf = io.BytesIO()
            fig.savefig(buf, format="svg", metadata={"Date": None})
            atomic.write_bytes(svg_path, buf.getvalue())
        if png_path is not None:
            atomic.write_bytes(png_path, _png_bytes(fig))


class _Pixels:
    """savefig's file for format="rgba": what print_raw writes, kept as given (the canvas's own
    buffer, not a 1.5 MB copy into a BytesIO); read before anything draws again."""
    __slots__ = ("parts",)

    def __init__(self):
        self.parts: list = []

    def write(self, data) -> int:
        self.parts.append(data)
        return len(data)

    def seek(self, *args) -> int:     # (matplotlib takes an object with seek for a file)
        return 0


def _png_bytes(fig) -> bytes:
    """The figure as an opaque RGB PNG. matplotlib writes RGBA at zlib level 6; the charts are
    opaque (white background), so the alpha channel is redundant. RGB at level 1 gives the
    same pixels in a file about 8 % smaller, and takes 40 % less time to encode (a tenth of a
    chart's drawing time). No text chunks (no Software tag): the bytes depend only on pixels.
    The RGB image is unpacked from the canvas's RGBA pixels in one pass (Pillow's RGBX raw
    mode drops the fourth byte, as convert("RGB") does), the alpha checked with numpy: the
    copy, the RGBA image's extrema of every band and its conversion took ~2 ms of a PNG.
    An opaque image's rows are filtered by compiled code where it loads (png_encode: Pillow's
    bytes in about half the encoding's instructions), else Pillow saves it."""
    pixels = _Pixels()
    fig.savefig(pixels, format="rgba", dpi=PNG_DPI)
    width = int(fig.get_figwidth() * PNG_DPI)
    data = pixels.parts[0] if len(pixels.parts) == 1 else b"".join(pixels.parts)
    size = memoryview(data).nbytes
    height = size // (4 * width)
    if width * height * 4 != size:  # not the size we computed: let matplotlib write it
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=PNG_DPI, metadata={"Software": None})
        return buf.getvalue()
    if np.frombuffer(data, np.uint8)[3::4].min() < 255:  # some transparency: keep the alpha
        image = Image.frombuffer("RGBA", (width, height), data, "raw", "RGBA", 0, 1)
    else:
        encoded = png_encode.rgbx_png(data, width, height, PNG_DPI)
        if encoded is not None:
            return encoded
        image = Image.frombytes("RGB", (width, height), data, "raw", "RGBX", 0, 1)
    out = io.BytesIO()
    image.save(out, format="png", compress_level=1, dpi=(PNG_DPI, PNG_DPI))
    return out.getvalue()


# --- one reused figure (the build draws thousands of charts) -------------------------------
#
# Profiled on the synthetic 200-run corpus, a fresh figure per chart spent about a fifth of a
# chart's time outside drawing: building the Figure and Axes, and creating the Tick objects
# (each tick is five artists; a figure makes 20-30 of them, also for locations outside the
# view) on the first draw. render_job therefore keeps one figure in each process and clears
# it between charts (draw_chart sizes it to each chart); a cleared figure draws byte-identical files to a fresh one
# (tests/test_charts.py checks this in several orders, so no chart depends on the one before).

_REUSED: list[tuple[Any, Any]] = []    # [(figure, axes)] once made


def _keep_ticks() -> None:
    """Replacement for `Axis.reset_ticks` on a reused figure. Axes.cla() calls reset_ticks,
    which throws away the axis's Tick objects (and at once builds a new one to set a clip path
    on). Ticks hold no chart data: every draw sets each used tick's location and label text,
    and cla() itself ends by clipping all ticks to the new axes patch, so keeping them is safe
    and saves re-creating them on every chart."""


def _reused_figure():
    """This process's figure and axes, cleared to the state of a new figure."""
    with png_redraw.style_params():
        if not _REUSED:
            # Not through pyplot: its figure registry would keep this open "figure" visible
            # (plt.get_fignums) and add a manager we never use.
            fig = Figure(figsize=FIGSIZE_IN)
            TextBitmapCanvas(fig)  # kept, so the PNG renderer and its text-size cache are reused
            ax = fig.add_subplot()
            for axis in (ax.xaxis, ax.yaxis):
                axis.reset_ticks = _keep_ticks
            _REUSED.append((fig, ax))
            return fig, ax
        fig, ax = _REUSED[0]
        png_redraw.forget()
        ax.cla()
        # cla() leaves the data limits of the last chart; an axhline (updates y only) would
        # then inherit the previous chart's x range.
        ax.dataLim.set(Bbox.null())
    return fig, ax


def render_job(job: dict[str, Any], site_root: str) -> list[str]:
    """Draw one chart job (see chart_plan) into its SVG and PNG files under `site_root`.

    Returns the problems to report as warnings: drawing the PNG, matplotlib would print its
    own multi-line `UserWarning` for every glyph its font lacks (CJK, emoji in a label),
    outside the build's `warning:` format; the PNG is still drawn, with boxes for those
    characters (the SVG leaves them to the reader's fonts)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _draw_job(job, site_root)
    missing = sorted({m.group(1) for w in caught
                      if (m := re.search(r"Glyph \d+ \((.*?)\) missing", str(w.message)))})
    if missing:
        return [f"chart {job['png']}: the font has no glyph for {' '.join(missing)}; "
                f"those characters show as boxes in the PNG"]
    return []


def _draw_job(job: dict[str, Any], site_root: str) -> None:
    kind = job["kind"]
    if kind not in CHART_KINDS and kind not in CORPUS_CHART_KINDS:
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
    g = chartlayout.geometry(plot)      # the wide SVG's layout, and the PNG's
    atomic.write_text(root / job["svg"], render_svg(plot, g=g))
    if job.get("narrow_svg"):
        # (the phone layout's ranges are the wide one's: the data's)
        narrow = chartlayout.geometry(plot, True, limits=(g.xlim, g.ylim))
        atomic.write_text(root / job["narrow_svg"], render_svg(plot, narrow=True, g=narrow))
    if png is None:
        return
    try:
        # a chart of the last one's shape (the og:image of run after run): its artists reused
        if not (_REUSED and png_redraw.redraw(*_REUSED[0], plot, g)):
            fig, ax = _reused_figure()
            png_redraw.remember(fig, plot, g, _draw_plot(fig, ax, plot, g))
        _write_figure(_REUSED[0][0], None, png)
    except BaseException:
        _REUSED.clear()  # half-drawn: start the next chart on a new figure
        png_redraw.forget()
        raise


def draw_chart(fig, ax, job: dict[str, Any]) -> None:
    """Draw a chart job on `ax` with matplotlib, for its PNG: the job's svgcharts Plot, laid
    out by chartlayout.geometry (figure size, plot area, ranges, ticks, legend spot), so the PNG
    is the SVG's chart. Small multiples: draw_panels."""
    _draw_plot(fig, ax, svgcharts.BUILDERS[job["kind"]](job["data"]))


def _draw_plot(fig, ax, plot, g=None) -> png_redraw.Drawn:
    """`plot` on a cleared figure, laid out by `g` (its chartlayout.geometry); returns the
    artists made, for png_redraw."""
    g = g or chartlayout.geometry(plot)
    fig.set_size_inches(figure_size_in(plot))    # inches as pixel_sizes has them
    x0, y0, x1, y1 = g.box
    fig.subplots_adjust(left=x0 / g.width, right=x1 / g.width, top=1 - y0 / g.height,
                        bottom=1 - y1 / g.height)
    with png_redraw.style_params():
        mark_plot_area(ax)
        rules, bars, series = _draw_content(ax, plot, g.xlim, g.ylim, g.xticks, g.yticks)
        # the rules' labels where the SVG has them (chartlayout.rule_labels, in points from
        # the figure's top left)
        sx = chartlayout.Scale(plot.x.scale, *g.xlim, x0, x1)
        labels = [ax.text(x / g.width, 1 - y / g.height, text, transform=fig.transFigure,
                          ha="left" if anchor == "start" else "right", va="baseline",
                          fontsize=chartlayout.RULE_LABEL_PT)
                  for x, y, anchor, text in chartlayout.rule_labels(plot, g.box, sx)]
        if g.remarks:
            _draw_remarks(fig, ax, g)
        if plot.title:
            ax.set_title(plot.title, y=1.0, pad=6)
        ax.set_xlabel(plot.x.label)
        ax.set_ylabel(plot.y.label)
        legend = None
        if g.legend:
            kind, lx, ly, size, cols, _, _ = g.legend
            anchor = ((lx - x0) / (x1 - x0), (y1 - ly) / (y1 - y0))   # top-left, axes fraction
            legend = ax.legend(_handles(plot), [e.label for e in plot.entries], loc="upper left",
                               bbox_to_anchor=anchor, borderaxespad=0, ncol=cols, fontsize=size,
                               framealpha=0.85, frameon=kind == "inside")
            mark_legend(legend, inside=kind == "inside")
    return png_redraw.Drawn(rules, bars, series, labels, legend)


def _draw_remarks(fig, ax, g) -> None:
    """The remarks' framed box where the SVG has it (chartlayout's points, y down)."""
    rx, ry, rw, rh, lines = g.remarks
    size = chartlayout.REMARK_PT
    ax.add_artist(Rectangle((rx / g.width, 1 - (ry + rh) / g.height), rw / g.width, rh / g.height,
                            transform=fig.transFigure, facecolor=(1.0, 1.0, 1.0, 0.85),
                            edgecolor="#cccccc", linewidth=1.0, zorder=5, clip_on=False))
    for i, line in enumerate(lines):
        y = ry + 0.4 * size + size * chartlayout.ASCENT + i * size * chartlayout.LINE_H
        ax.text((rx + 0.4 * size) / g.width, 1 - y / g.height, line, transform=fig.transFigure,
                ha="left", va="baseline", fontsize=size, zorder=6)


def _draw_content(ax, plot, xlim, ylim, xticks, yticks) -> tuple[list, list, list]:
    """A Plot's bands, rules, bars, series and notes on `ax`, with the given ranges and
    ticks; returns the artists of its rules, bars and series (png_redraw.Drawn's)."""
    ax.set_xscale(plot.x.scale)
    ax.set_yscale(plot.y.scale)
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    for axis, ticks, spec in ((ax.xaxis, xticks, plot.x), (ax.yaxis, yticks, plot.y)):
        axis.set_major_locator(FixedLocator(ticks))
        axis.set_minor_locator(NullLocator())
        fmt = spec.formatter or chartlayout.plain
        axis.set_major_formatter(FuncFormatter(lambda v, _pos, fmt=fmt: fmt(v)))
    for b in plot.bands:
        ax.axvspan(b.x0, b.x1, color=b.color, alpha=b.alpha, linewidth=0)
    rules, bars, series = [], [], []
    for r in plot.rules:
        line = _line_kwargs(r.style)
        if r.vertical:
            rules.append(ax.axvline(r.at, ymin=r.span[0], ymax=r.span[1], **line))
        else:
            rules.append(ax.axhline(r.at, xmin=r.span[0], xmax=r.span[1], **line))
    for b in plot.bars:
        bars.append(ax.errorbar(b.xs, b.lo, yerr=[[0.0] * len(b.lo),
                                                  [h - lo for lo, h in zip(b.lo, b.hi)]],
                                fmt="none", ecolor=b.color, elinewidth=b.width, capsize=b.cap))
    for s in plot.series:
        ys = [float("nan") if v is None else v for v in s.ys]
        st = s.style
        drawn = None
        if st.width > 0:
            drawn, = ax.plot(s.xs, ys, drawstyle="steps-post" if s.steps else "default",
                             **_line_kwargs(st), **_marker_kwargs(st))
        elif st.marker:
            face = st.color if st.face is None else st.face
            drawn = ax.scatter(s.xs, ys, s=st.marker_size ** 2, marker=st.marker,
                               facecolors=face,
                               edgecolors=list(s.edges) if s.edges else (st.edge or st.color),
                               linewidths=st.edge_width, zorder=4)
        series.append(drawn)
    for n in plot.notes:
        ax.annotate(n.text, (n.x, n.y), textcoords="offset points", xytext=(0, n.dy),
                    fontsize=n.size)
    return rules, bars, series


def _line_kwargs(st) -> dict[str, Any]:
    return {"color": st.color, "linewidth": st.width, "alpha": st.alpha if st.alpha < 1 else None,
            "linestyle": st.dash if st.dash is not None else "-"}


def _marker_kwargs(st) -> dict[str, Any]:
    if not st.marker:
        return {}
    return {"marker": st.marker, "markersize": st.marker_size,
            "markerfacecolor": st.color if st.face is None else st.face,
            "markeredgecolor": st.edge or st.color, "markeredgewidth": st.edge_width}


def _handles(plot) -> list:
    """Legend handles drawn as the SVG's legend draws each entry: a line and/or a marker."""
    handles = []
    for e in plot.entries:
        st = e.style
        kwargs = _line_kwargs(st) if e.line and st.width > 0 else {"linestyle": "none",
                                                                   "color": st.color}
        handles.append(Line2D([], [], **kwargs, **_marker_kwargs(st)))
    return handles


# --- small multiples: one panel per system ---------------------------------------------------

def draw_panels(job: dict[str, Any], narrow: bool = False) -> Figure:
    """A spectrum_panels job drawn with matplotlib on a new figure (not pyplot's, so nothing
    to close), for its PNG: svgcharts.spectrum_panels_plot on its panel_layout grid, with
    chartlayout's shared ranges and ticks; x tick labels on each column's lowest panel."""
    panels, layout = svgcharts.spectrum_panels_plot(job["data"], narrow)
    xlim, ylim = chartlayout.shared_limits(panels)
    xticks, yticks = chartlayout.panel_ticks(panels, layout, narrow)
    text_pt = NARROW_TEXT_PT if narrow else 9
    n = len(panels.plots)
    with plt.rc_context(STYLE):
        fig = Figure(figsize=layout["figsize"])
        TextBitmapCanvas(fig)
        axes = fig.subplots(layout["rows"], layout["cols"], sharex=True, sharey=True,
                            squeeze=False).ravel().tolist()
        fig.subplots_adjust(**layout["adjust"])
        for i, ax in enumerate(axes):
            if i >= n:
                ax.set_visible(False)
                continue
            mark_plot_area(ax, i + 1)
            _draw_content(ax, panels.plots[i], xlim, ylim, xticks, yticks)
            ax.set_title("\n".join(panels.titles[i]), y=1.0, pad=3, fontsize=8.5)
            ax.title.set_gid(f"{PANEL_TITLE_ID}-{i + 1}")
            ax.tick_params(labelsize=chartlayout.panel_tick_pt(narrow))
            if i + layout["cols"] >= n:    # the lowest panel of its column shows the x labels
                ax.xaxis.set_tick_params(labelbottom=True)
        height = layout["figsize"][1]
        title = "\n".join(textwrap.wrap(panels.title, NARROW_TITLE_CHARS)) if narrow \
            else panels.title
        fig.suptitle(title, y=1 - 0.1 / height, va="top", fontsize=10 if narrow else 11)
        fig.supxlabel(panels.xlabel, y=0.08 / height, va="bottom", fontsize=text_pt)
        fig.supylabel(panels.ylabel, x=0.06 / layout["figsize"][0], fontsize=text_pt)
    return fig
