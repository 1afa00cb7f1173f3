"""Each chart kind described once, as a chartspec Plot built from a chart job's data
(charts.chart_plan): its lines, markers, error bars, rules, notes, legend entries and axes.
svgdraw writes it as SVG and charts.draw_chart draws it with matplotlib for the PNG, in
chartlayout's layout, so a chart's two files show the same thing."""
from __future__ import annotations

import math
import textwrap
from typing import Any, Callable, Sequence

from analysis.write.charts.plots import (OTHERS_GREY, panel_title, percent_label, plain_tick,
                                         spectrum_censored, spectrum_xy)
from analysis.write.charts.chartlayout import panel_layout, view_limits
from analysis.write.charts.chartspec import (Axis, Band, Bars, Entry, Note, Panels, Plot, Rule,
                                             Series, Style)
from analysis.write.charts.history_plot import history_plot
from analysis.write.charts.plots import NARROW_TITLE_CHARS
from analysis.write.charts.svgdraw import colour as svgdraw_colour
from analysis.write.charts.svgdraw import render_panels


def auto_y(label: str, values: Sequence[float | None]) -> Axis:
    """A log axis when the values span more than 20x (1-2-5 ticks below four
    decades), else linear from zero."""
    positive = [v for v in values if v is not None and v == v and v > 0]
    if positive and max(positive) / min(positive) > 20:
        subs = (1.0, 2.0, 5.0) if max(positive) / min(positive) < 1e4 else (1.0,)
        return Axis(label, "log", subs=subs, formatter=plain_tick)
    if positive:
        return Axis(label, limits=(0.0, None))
    return Axis(label)


def spectrum_axis(curves: Sequence[dict[str, Any]]) -> Axis:
    """1/(1-p) on a log axis from p0 to past the largest max, ticks
    at 0 %, 50 % and each decade (90 %, 99 %, ...)."""
    top = max([2.0] + [max(spectrum_xy(c)[0]) for c in curves if c["points"]])
    right = top * 1.5
    decades = [10.0 ** k for k in range(1, 19) if 10.0 ** k <= right]
    return Axis("percentile (log scale of 1/(1 − p))", "log", limits=(1.0, right),
                ticks=[1.0, 2.0] + decades, formatter=percent_label)


def _spectrum_curve(curve: dict[str, Any], color: str | None = None,
                    width: float = 1.6) -> tuple[list[Series], list[Entry]]:
    """Steps up to where the censored part starts, that part
    dotted (and thicker)."""
    xs, ys, first = spectrum_xy(curve)
    color = color or curve["color"]
    series, entries = [], []
    title = curve.get("title") or f"{curve['label']}: latency (ms) by percentile"
    if first > 0:
        solid = Style(color, width, curve.get("linestyle", "-"))
        end = min(first + 1, len(xs))
        series.append(Series(xs[:end], ys[:first] + ys[first:end], solid, steps=True,
                             title=title))
        entries.append(Entry(curve["label"], solid))
    if first < len(xs):
        dotted = Style(color, width + 0.8, ":")
        series.append(Series(xs[first:], ys[first:], dotted, steps=True,
                             title=f"{title}; from here on no answer within the timeout"))
        entries.append(Entry(f"{curve['label']}: no answer (> timeout)" if first > 0
                             else f"{curve['label']} (> timeout)", dotted))
    return series, entries


def spectrum(data: dict[str, Any]) -> Plot:
    """Each curve as steps up to its censored part, that part dotted at
    the timeout with a line and a note."""
    curves = data["curves"]
    plot = Plot(x=spectrum_axis(curves),
                y=auto_y(data.get("ylabel", "latency (ms)"),
                         [pt[1] for c in curves for pt in c["points"]]),
                title=data.get("title") or "", thin_x_ticks=True)
    for curve in curves:
        if curve["points"]:
            series, entries = _spectrum_curve(curve)
            plot.series += series
            plot.entries += entries
    timeout = data.get("timeout_ms")
    if spectrum_censored(curves) and timeout:
        plot.rules.append(Rule(timeout, False, Style("#000000", 0.8, "--")))
        plot.notes.append(Note(1.05, timeout, f"timeout: beyond it, > {timeout / 1000:g} s "
                                              f"(off the scale)"))
    if not curves:
        plot.legend = None
    return plot


def spectrum_panels(data: dict[str, Any], narrow: bool = False) -> str:
    """The small multiples' SVG text (spectrum_panels_plot on svgdraw.render_panels)."""
    return render_panels(*spectrum_panels_plot(data, narrow), narrow)


def spectrum_panels_plot(data: dict[str, Any], narrow: bool = False) -> tuple[Panels, dict]:
    """Small multiples of the percentile spectrum, with their grid (chartlayout.panel_layout): one
    panel per system, its curve in colour over the others in grey, on shared axes; a system
    without samples keeps its panel, titled so."""
    curves = data["curves"]
    title = data["title"]
    lines = textwrap.wrap(title, NARROW_TITLE_CHARS) if narrow else [title]
    layout = panel_layout(len(curves), narrow, len(lines))
    drawn = [c for c in curves if c["points"]]
    timeout = data.get("timeout_ms")
    censored = spectrum_censored(drawn) and timeout
    x = spectrum_axis(drawn or curves)
    if drawn:
        decades = [t for t in x.ticks if t >= 10]
        every = max(1, math.ceil(len(decades) / max(1, layout["max_ticks"] - 1)))
        x.ticks = [1.0] + decades[::-1][::every][::-1]
    values = [pt[1] for c in drawn for pt in c["points"]]
    y = auto_y("latency (ms)", values)
    positive = [v for v in values if v is not None and v > 0]
    if y.scale == "log" and max(positive) / min(positive) >= 100:
        y.subs = (1.0,)     # decades only: 1-2-5 steps crowd a 1.3-inch panel
    plots, titles = [], []
    for own in curves:
        plot = Plot(x=x, y=y, legend=None)
        for other in drawn:
            if other is not own:
                plot.series += _spectrum_curve(other, OTHERS_GREY, 0.9)[0]
        if censored:
            plot.rules.append(Rule(timeout, False, Style("#000000", 0.7, "--")))
        if own["points"]:
            plot.series += _spectrum_curve(own, width=1.8)[0]
        plots.append(plot)
        label = own["label"] if own["points"] else f"{own['label']} (no samples)"
        titles.append(panel_title(label, layout["title_chars"]).split("\n"))
    xlabel = ("percentile (log of 1/(1 − p));\nits system in colour, others grey" if narrow else
              "percentile (log scale of 1/(1 − p)); each panel: one system in colour, the "
              "others grey")
    return Panels(plots, titles, title, xlabel, "latency (ms)"), layout


WINDOW_END = Style("#000000", 1.0, ":")


def _window_end(plot: Plot, data: dict[str, Any]) -> None:
    """A dotted line where the measured window ends (schema 2): the lines after it are the
    drain's, the window's requests still being answered."""
    end = data.get("window_end_s")
    if end is not None:
        plot.rules.append(Rule(end, True, WINDOW_END))
        plot.entries.append(Entry("end of the window (the drain follows)", WINDOW_END))


def _time_label(data: dict[str, Any], event: str) -> str:
    return f"{event} (s since {data.get('origin') or 'the first interval'})"


TRANSIENT_ALPHA = 0.15     # a band light enough that the lines over it read as on white


def _tint(color: str, alpha: float) -> str:
    """The colour a band of `color` at `alpha` shows over white, as one opaque colour (for its
    legend handle: the PNG's legend draws handles opaque)."""
    rgb = svgdraw_colour(color).lstrip("#")
    mixed = [round(alpha * int(rgb[i:i + 2], 16) + (1 - alpha) * 255) for i in (0, 2, 4)]
    return "#" + "".join(f"{v:02x}" for v in mixed)


def _steadiness(plot: Plot, s: dict[str, Any], named: bool) -> str | None:
    """Issue 32, one system's drawn repetition: a warm-up's transient (or what came before a
    slowdown) shaded from the window's start to `steady_from_s`, on the series' own time axis
    (the window's start is its 0), and a dashed line there, labelled; a repetition with no
    steady state said in the chart's remarks (a legend label that long would take the legend
    to one column). Returns the shaded class, if any. `named`: more than one system is drawn,
    so the texts name theirs."""
    st = s.get("steady")
    if not st:
        return None
    who = f"{s['label']}: " if named else ""
    at = st.get("from_s")
    if st["class"] in ("warmup", "slowdown") and at is not None:
        if st["class"] == "warmup":
            line = f"{who}steady from {at:g} s"
            title = (f"{s['label']}: the warm-up transient, from the window's start to {at:g} s, "
                     f"where the steady part starts")
            if st.get("not_steady"):
                line += ", too late: not steady"
                title += "; too short a steady part: not steady"
        else:
            line = f"{who}slower from {at:g} s"
            title = (f"{s['label']}: before the slowdown, from the window's start to {at:g} s; "
                     f"from there on it is slower")
        plot.bands.append(Band(0.0, at, s["color"], TRANSIENT_ALPHA, title))
        plot.rules.append(Rule(at, True, Style(s["color"], 1.0, "--"), label=line))
        return st["class"]
    if st["class"] == "no-steady-state":
        # a queue that grows to the end is the saturation: one statement, not two alarms
        plot.remarks.append(f"{who}no steady state" + (" (saturated: the queue grew)"
                                                       if st.get("saturated") else ""))
    return None


SHADED_ENTRIES = {"warmup": "shaded: warm-up transient", "slowdown": "shaded: before a slowdown"}


def latency_over_time(data: dict[str, Any]) -> Plot:
    """Per interval p99 (solid) and max (thin) per system, GC
    pauses as ticks along the bottom, the legend below; where the drawn repetition was not
    flat (issue 32), its transient shaded and where its steady part starts marked
    (_steadiness). Intervals hold the requests completed
    in them, so the x axis is the time of completion: a system that answers no window request
    in time until its backlog clears starts late, which the axis label says."""
    plot = Plot(x=Axis(_time_label(data, "time of completion")), y=Axis(""),
                title=data.get("title") or "", legend="below")
    values: list[float] = []
    shaded: dict[str, str] = {}        # class -> the first shaded system's colour
    for s in data["systems"]:
        none = "" if any(v is not None for v in s["p99_ms"]) else " (no request answered)"
        p99 = Style(s["color"], 1.6, s.get("linestyle", "-"))
        top = Style(s["color"], 0.8, alpha=0.7)
        titles = s.get("titles") or {}
        plot.series += [Series(s["t_s"], s["p99_ms"], p99, steps=True, title=titles.get("p99")),
                        Series(s["t_s"], s["max_ms"], top, steps=True, title=titles.get("max"))]
        plot.entries += [Entry(f"{s['label']} p99{none}", p99), Entry(f"{s['label']} max", top)]
        values += [v for v in list(s["p99_ms"]) + list(s["max_ms"]) if v is not None]
        cls = _steadiness(plot, s, len(data["systems"]) > 1)
        if cls:
            shaded.setdefault(cls, s["color"])
    plot.y = auto_y("latency per interval (ms)", values)
    for cls, text in SHADED_ENTRIES.items():
        if cls in shaded:
            plot.entries.append(Entry(text, Style(_tint(shaded[cls], TRANSIENT_ALPHA), 0,
                                                  marker="s", marker_size=9), line=False))
    pauses = data.get("gc_pauses")
    if pauses:
        tick = Style("#000000", 1.0)
        plot.rules += [Rule(p["t_s"], True, tick, (0.0, 0.04)) for p in pauses]
        plot.entries.append(Entry("GC pause", tick))
    _window_end(plot, data)
    if not plot.entries:
        plot.legend = None
    return plot


def throughput_over_time(data: dict[str, Any]) -> Plot:
    """Throughput (every reply, requests/s) per interval per system against
    the offered rate (dashed; a closed loop offers none)."""
    offered = data["offered_rate"]
    top = offered or 0.0
    offered_style = Style("#000000", 1.0, "--")
    plot = Plot(x=Axis(_time_label(data, "time")), y=Axis("throughput (requests/s)"),
                rules=[Rule(offered, False, offered_style)] if offered is not None else [],
                entries=[Entry(f"offered ({offered:,.0f}/s)", offered_style)]
                if offered is not None else [],
                title=data.get("title") or "",
                legend="below" if data.get("legend") == "below" else "inside", legend_size=8)
    for s in data["systems"]:
        style = Style(s["color"], 1.4, s.get("linestyle", "-"))
        plot.series.append(Series(s["t_s"], s["throughput_rps"], style, steps=True,
                                  title=s.get("title")))
        plot.entries.append(Entry(s["label"], style))
        top = max([top] + [v for v in s["throughput_rps"] if v is not None])
    _window_end(plot, data)
    plot.y.limits = (0.0, top * 1.15)
    return plot


def load_curve(data: dict[str, Any]) -> Plot:
    """P99 (solid, circles) and p50 (dashed, squares) against offered
    load, the repetitions' range as error bars, saturated points ringed, censored points as
    triangles at the timeout, each system's predicted ceiling dotted. A closed loop's data
    (issue 23) has its own `x_label` (throughput) and `point_labels` (connections) by p99.
    Issue 32: a cell that is not steady is drawn hollow; `steady_notes` give a point its
    <title> (not steady, or figures from the steady part)."""
    x_label = data.get("x_label", "offered load (requests/s)")
    plot = Plot(x=Axis(x_label), y=Axis(""),
                title=data.get("title") or "", legend="below")
    all_x: list[float] = []
    all_y: list[float] = []
    censored_any = saturated_any = ranged_any = unsteady_any = False
    hollow: list[Series] = []
    rings: list[Series] = []
    marks: list[Series] = []
    for s in data["systems"]:
        n = len(s["offered"])
        pts = [i for i in range(n) if s["p99_ms"][i] is not None]
        if not pts:
            continue
        xs = [s["offered"][i] for i in pts]
        all_x += xs
        unsteady = s.get("not_steady") or [False] * n
        notes = s.get("steady_notes") or [None] * n
        for key, width, dash, marker, size in (("p99", 1.8, s.get("linestyle", "-"), "o", 6),
                                                ("p50", 1.2, "--", "s", 4)):
            values = s[f"{key}_ms"]
            ys = [values[i] for i in pts]
            all_y += [y for y in ys if y is not None]
            style = Style(s["color"], width, dash, marker=marker, marker_size=size)
            # issue 34: every point's values on hover, with its steadiness note (issue 32)
            point_titles = s.get(f"{key}_titles") or [None] * n
            full = [_joined(point_titles[i], notes[i]) for i in range(n)]
            titles = [full[i] for i in pts]
            plot.series.append(Series(xs, ys, style,
                                      titles=titles if any(titles) else None))
            plot.entries.append(Entry(f"{s['label']} {key}", style))
            ranges = s.get(f"{key}_range") or [None] * n
            ranged = [(s["offered"][i], values[i], ranges[i]) for i in pts
                      if ranges[i] is not None and values[i] is not None]
            if ranged:
                ranged_any = True
                plot.bars.append(Bars([x for x, _, _ in ranged],
                                      [min(r[0], y) for _, y, r in ranged],
                                      [max(r[1], y) for _, y, r in ranged], s["color"]))
                all_y += [r[0] for _, _, r in ranged] + [r[1] for _, _, r in ranged]
            open_ = [i for i in pts if unsteady[i] and values[i] is not None]
            if open_:
                unsteady_any = True
                hollow.append(Series([s["offered"][i] for i in open_], [values[i] for i in open_],
                                     Style(s["color"], 0, marker=marker, marker_size=size,
                                           face="#ffffff", edge_width=1.2),
                                     titles=[full[i] for i in open_]))
            flags = s.get(f"{key}_censored") or [False] * n
            cens = [i for i in pts if flags[i]]
            if cens:
                censored_any = True
                marks.append(Series([s["offered"][i] for i in cens], [values[i] for i in cens],
                                    Style(s["color"], 0, marker="^", marker_size=math.sqrt(70),
                                          edge="#000000", edge_width=0.8),
                                    titles=_titles(full, cens)))
            if key == "p99":
                p99_full = full
        sat = [i for i in pts if s["saturated"][i]]
        if sat:
            saturated_any = True
            rings.append(Series([s["offered"][i] for i in sat], [s["p99_ms"][i] for i in sat],
                                Style("#000000", 0, marker="o", marker_size=math.sqrt(110),
                                      face="none", edge_width=1.2),
                                titles=_titles(p99_full, sat)))
        for i, text in enumerate(s.get("point_labels") or []):
            if i in pts and s["p99_ms"][i] is not None:
                plot.notes.append(Note(s["offered"][i], s["p99_ms"][i], text))
    plot.series += hollow + rings + marks    # drawn over the lines, as plots.py's zorder has them
    for s in data["systems"]:
        if s.get("ceiling_rps"):
            style = Style(s["color"], 1.4, ":")
            plot.rules.append(Rule(s["ceiling_rps"], True, style))
            plot.entries.append(Entry(f"{s['label']} predicted ceiling "
                                      f"({s['ceiling_rps']:,.0f}/s)", style))
            all_x.append(s["ceiling_rps"])
    if all_x and max(all_x) / max(min(all_x), 1e-9) > 20:
        plot.x = Axis(x_label, "log", subs=(1.0, 2.0, 5.0), formatter=plain_tick)
    plot.y = auto_y("latency (ms)", all_y)
    timeout = data.get("timeout_ms")
    if censored_any and timeout:
        plot.rules.append(Rule(timeout, False, Style("#000000", 0.8, "--")))
        plot.entries.append(Entry(f"> {timeout / 1000:g} s: no answer within the timeout "
                                  f"(drawn at it)",
                                  Style("grey", 0, marker="^", marker_size=8, edge="#000000"),
                                  line=False))
    if unsteady_any:
        plot.entries.append(Entry("hollow: not steady (transient)",
                                  Style("grey", 0, marker="o", marker_size=6, face="#ffffff",
                                        edge_width=1.2), line=False))
    if saturated_any:
        plot.entries.append(Entry("saturated (see the table's rules)",
                                  Style("#000000", 0, marker="o", marker_size=9, face="none"),
                                  line=False))
    if ranged_any:
        plot.entries.append(Entry("bars: range of the repetitions",
                                  Style("grey", 1.0, marker="|", marker_size=8)))
    if not plot.entries:
        plot.legend = None
    return plot


def _joined(*parts: str | None) -> str | None:
    """A point's <title> from its parts: '; '-joined, None when it has none."""
    shown = [p for p in parts if p]
    return "; ".join(shown) if shown else None


def _titles(titles: Sequence[str | None], picked: Sequence[int]) -> list[str | None] | None:
    """The <title>s of the picked points, None when none has one."""
    out = [titles[i] for i in picked]
    return out if any(out) else None


def gc_tail(data: dict[str, Any]) -> Plot:
    """Each cell's longest GC pause against its p99.9 (filled circle) and
    max (hollow diamond), joined by a thin line; y = x dashed for reference; censored values at
    the timeout with a black edge."""
    points = data["points"]
    plot = Plot(x=Axis("longest GC pause in the window (ms)"), y=Axis(""),
                title=data.get("title") or "", legend="below")
    by_system: dict[str, list[dict[str, Any]]] = {}
    for pt in points:
        by_system.setdefault(pt["label"], []).append(pt)
    xs = [pt["pause_ms"] for pt in points]
    ys = [v for pt in points for v in (pt["p999_ms"], pt["max_ms"]) if v is not None]
    censored = False
    joins: list[Series] = []
    dots: list[Series] = []
    for label, pts in by_system.items():
        colour = pts[0]["color"]
        for pt in pts:
            pair = [v for v in (pt["p999_ms"], pt["max_ms"]) if v is not None]
            if len(pair) == 2:
                joins.append(Series([pt["pause_ms"]] * 2, pair, Style(colour, 0.8, alpha=0.7)))
        for key, marker, size, filled in (("p999", "o", 30, True), ("max", "D", 26, False)):
            shown = [pt for pt in pts if pt[f"{key}_ms"] is not None]
            if not shown:
                continue
            edges = ["#000000" if pt[f"{key}_censored"] else colour for pt in shown]
            censored = censored or any(pt[f"{key}_censored"] for pt in shown)
            style = Style(colour, 0, marker=marker, marker_size=math.sqrt(size),
                          face=None if filled else "none", edge_width=1.2)
            dots.append(Series([pt["pause_ms"] for pt in shown],
                               [pt[f"{key}_ms"] for pt in shown], style, edges=edges,
                               titles=[pt.get("title") for pt in shown]))
            if key == "p999":
                plot.entries.append(Entry(label, style, line=False))
    positive = [x for x in xs if x > 0]
    diagonal: list[Series] = []
    if positive:
        lo, hi = min(positive), max(positive)
        style = Style("grey", 0.9, "--")
        diagonal.append(Series([lo, hi], [lo, hi], style))
        plot.entries.append(Entry("latency = longest pause", style))
    plot.series = diagonal + joins + dots
    right = max(xs, default=0) * 1.08 or 1.0
    plot.x.limits = (-0.03 * right, right)
    plot.y = auto_y("latency (ms)", ys)
    plot.entries.append(Entry("p99.9 (filled)", Style("grey", 0, marker="o", marker_size=5),
                              line=False))
    plot.entries.append(Entry("max (hollow)", Style("grey", 0, marker="D", marker_size=5,
                                                    face="none"), line=False))
    if censored:
        plot.entries.append(Entry("black edge: no answer within the timeout (drawn at it)",
                                  Style("grey", 0, marker="o", marker_size=5, edge="#000000"),
                                  line=False))
    if not points:
        plot.legend = None
    return plot


# a summary panel's rows (data units: a row is 1): the row's label above its p99, its p50 below
DOT_LABEL_Y, DOT_P50_Y = 0.26, -0.2
GREY_KEY = "#808080"


def summary_dot(data: dict[str, Any]) -> Plot:
    """Issue 34, one scenario's summary panel: a row per target, in the same order in every
    panel (first at the top), its name above; its p99 a circle and its p50 a square just under
    it, each with the repetitions' range as a line with caps; a censored value at the timeout
    as a triangle pointing right, black-edged; a saturated target's p99 ringed and its name
    saying so; a cell that is not steady hollow. Every mark has its <title>."""
    rows = data["rows"]
    n = len(rows)
    plot = Plot(x=Axis("latency (ms)"), y=Axis("", limits=(-0.6, n - 0.4), ticks=[]),
                title=data.get("title") or "", legend="below", panel_rows=n)
    values: list[float] = []
    used = set()
    ranges: list[Series] = []
    dots: list[Series] = []
    for i, r in enumerate(rows):
        y = n - 1 - i
        label = r["label"] + ("" if r["measured"] else " (not measured)") + (
            " (saturated)" if r.get("saturated") else "")
        plot.notes.append(Note(0.0, y + DOT_LABEL_Y, label, dy=0))
        if not r["measured"]:
            continue
        for key, dy, marker, size in (("p99", 0.0, "o", 7.0), ("p50", DOT_P50_Y, "s", 5.5)):
            v, title = r[f"{key}_ms"], r[f"{key}_title"]
            if v is None:
                continue
            values.append(v)
            rng = r[f"{key}_range"]
            if rng:
                used.add("range")
                values += rng
                ranges.append(Series(rng, [y + dy] * 2, Style(r["color"], 1.2, alpha=0.6,
                                                              marker="|", marker_size=5),
                                     titles=[title, title]))
            censored = r[f"{key}_censored"]
            hollow = r.get("not_steady")
            used |= {"censored"} if censored else set()
            used |= {"hollow"} if hollow else set()
            dots.append(Series([v], [y + dy], Style(
                r["color"], 0, marker=">" if censored else marker, marker_size=size,
                face="#ffffff" if hollow else None, edge="#000000" if censored else None,
                edge_width=1.2 if hollow else 0.8), titles=[title]))
            if key == "p99" and r.get("saturated"):
                used.add("saturated")
                dots.append(Series([v], [y], Style("#000000", 0, marker="o", marker_size=11,
                                                   face="none", edge_width=1.1), titles=[title]))
    plot.series = ranges + dots
    plot.x = auto_y("latency (ms)", values)
    positive = [v for v in values if v > 0]
    if plot.x.scale == "log" and max(positive) / min(positive) >= 100:
        plot.x.subs = (1.0,)    # decades only: 1-2-5 steps crowd a phone-wide panel
    elif plot.x.scale == "linear":
        # a dot marks a position, not a length: the axis spans the data (Cleveland's dot
        # plots need no zero), so that 100.2 and 103.9 ms are told apart
        plot.x.limits = (None, None)
    lo, hi = view_limits(plot.x, values)
    plot.x.limits = (lo, hi)
    inset = lo * (hi / lo) ** 0.012 if plot.x.scale == "log" else lo + 0.012 * (hi - lo)
    for note in plot.notes:
        note.x = inset
    plot.entries = [Entry("p99", Style(GREY_KEY, 0, marker="o", marker_size=7), line=False),
                    Entry("p50", Style(GREY_KEY, 0, marker="s", marker_size=5.5), line=False)]
    if "range" in used:
        plot.entries.append(Entry("lines: range of the repetitions",
                                  Style(GREY_KEY, 1.2, marker="|", marker_size=5)))
    if "saturated" in used:
        plot.entries.append(Entry("ringed: saturated (see the table's rules)",
                                  Style("#000000", 0, marker="o", marker_size=9, face="none"),
                                  line=False))
    if "censored" in used:
        timeout = data.get("timeout_ms")
        plot.entries.append(Entry(f"black-edged triangle: no answer within the timeout"
                                  f"{f' (> {timeout / 1000:g} s)' if timeout else ''}, drawn at it",
                                  Style(GREY_KEY, 0, marker=">", marker_size=7, edge="#000000"),
                                  line=False))
    if "hollow" in used:
        plot.entries.append(Entry("hollow: not steady (transient)",
                                  Style(GREY_KEY, 0, marker="o", marker_size=7, face="#ffffff",
                                        edge_width=1.2), line=False))
    return plot


def jmh_sweep(data: dict[str, Any]) -> Plot:
    """A JMH score against one param, a line per variant with JMH's 99.9 %
    confidence interval as error bars, ticks at the param's values."""
    plot = Plot(x=Axis(data["xlabel"]), y=Axis(data["ylabel"]), title=data.get("title") or "",
                legend="below")
    values: list[float] = []
    xs_all: set[float] = set()
    for line in data["lines"]:
        xs_all.update(line["x"])
        style = Style(line["color"], 1.6, marker="o", marker_size=5)
        plot.series.append(Series(line["x"], line["y"], style, titles=[
            _sweep_title(data, line["label"], x, y, e)
            for x, y, e in zip(line["x"], line["y"], line["error"])]))
        plot.entries.append(Entry(line["label"], style))
        bars = [(x, y, e) for x, y, e in zip(line["x"], line["y"], line["error"])
                if y is not None and e is not None]
        if bars:
            # a bar reaching below zero stops just above it (a log axis has no zero)
            low = [min(e, y * 0.99) if y > 0 else e for _, y, e in bars]
            plot.bars.append(Bars([x for x, _, _ in bars], [y - lo for (_, y, _), lo in
                                                             zip(bars, low)],
                                  [y + e for _, y, e in bars], line["color"]))
            values += [y - lo for (_, y, _), lo in zip(bars, low)] + [y + e for _, y, e in bars]
        values += [y for y in line["y"] if y is not None]
    plot.x = Axis(data["xlabel"], "log" if data.get("log_x") else "linear",
                  ticks=sorted(xs_all), formatter=plain_tick)
    plot.y = auto_y(data["ylabel"], values)
    if plot.bars:
        plot.entries.append(Entry("bars: JMH's 99.9 % confidence interval",
                                  Style("grey", 1.0, marker="|", marker_size=8)))
    if not plot.entries:
        plot.legend = None
    return plot


def _sweep_title(data: dict[str, Any], label: str, x: float, y: float | None,
                 error: float | None) -> str | None:
    """A JMH sweep point's <title>: the variant, the param's value, the score in the axis's
    unit, JMH's 99.9 % error."""
    if y is None:
        return None
    unit = data["ylabel"]
    return (f"{label}, {data['xlabel'].replace(' (log scale)', '')} = {x:g}: {y:,.4g} ({unit})"
            + (f" ± {error:,.3g} (JMH's 99.9 % confidence interval)" if error is not None
               else ""))


BUILDERS: dict[str, Callable[[dict[str, Any]], Plot]] = {
    "spectrum": spectrum, "latency_over_time": latency_over_time,
    "throughput_over_time": throughput_over_time, "load_curve": load_curve, "gc_tail": gc_tail,
    "compare_curve": load_curve, "summary_dot": summary_dot,
    "jmh_sweep": jmh_sweep, "jmh_spectrum": spectrum, "history": history_plot}
