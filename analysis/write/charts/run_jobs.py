"""A run's charts as jobs: what each chart (chartset.chart_set) shows, taken from the run model
into plain picklable data (chart_plan), and each chart's pixel size (pixel_sizes). No
matplotlib here: render.py draws the jobs.
"""
from __future__ import annotations

from typing import Any

from analysis.model import Cell, LoadPoint, Repetition, Run, Scenario, System
from analysis.vocabulary import (closed_load_text, fmt_censored, fmt_ms, fmt_rate,
                                 has_closed_loads, load_order)
from analysis.write.charts import svgcharts
from analysis.write.charts.chartlayout import figure_size_in, panel_layout
from analysis.write.charts.chartset import (MANY_SYSTEMS, chart_set, compared_lines, drawn_in,
                                            line_label, load_text, scenario_suffix)
from analysis.write.charts.plots import PNG_DPI, system_style


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
        if chart.kind == "compare_curve":
            jobs.append({"kind": chart.kind, "data": _compare_data(run, styles),
                         **chart.files(run.id)})
            continue
        scenario = scenarios[chart.scenario]
        of = scenario_suffix(scenario)     # charts of a named scenario say which
        if chart.kind == "summary_dot":
            data = _summary_dot_data(run, scenario, chart.load, styles)
        elif chart.kind == "load_curve":
            data = _load_curve_data(scenario, styles, of)
        elif chart.kind == "gc_tail":
            data = _gc_tail_data(scenario, styles, of)
        else:
            present = [(s, c) for s, c in rows[(scenario.id, chart.load.id)]
                       if c and drawn_in(c, chart.kind)]
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
    """Latency against offered load; for a closed loop (issue 23) against the throughput each
    point achieved, the points joined in order of connections and labelled with them."""
    closed = has_closed_loads(scenario.load_points)
    systems = [_curve_line(scenario, s, s.label, styles[s.id], closed) for s in scenario.systems]
    timeout = next((c.timeout_ms for c in scenario.measured() if c.timeout_ms), None)
    return {"systems": systems, "timeout_ms": timeout,
            "title": f"Latency vs {'throughput' if closed else 'offered load'}{of}",
            **({"x_label": "throughput (requests/s)"} if closed else {})}


def _curve_line(scenario: Scenario, s: System, label: str, style: dict[str, Any],
                closed: bool) -> dict[str, Any]:
    """One line of a load curve: a system in a scenario, at each load point it has a cell."""
    loads = sorted(scenario.load_points, key=load_order) if closed else scenario.load_points
    row = [(lp, c) for lp in loads if (c := scenario.cell(lp.id, s.id))]
    entry = {"label": label, **style,
             "offered": [c.throughput_rps if closed else lp.offered_rate for lp, c in row],
             **({"point_labels": [closed_load_text(lp) for lp, _ in row]} if closed else {}),
             "saturated": [c.saturation.saturated for _, c in row],
             "not_steady": [c.not_steady for _, c in row],
             "steady_notes": [_steady_note(c) for _, c in row],
             "ceiling_rps": s.predicted_ceiling_rps}
    for name in ("p50", "p99"):
        points = [_at_timeout(c, name) for _, c in row]
        entry[f"{name}_ms"] = [v for v, _ in points]
        entry[f"{name}_censored"] = [k for _, k in points]
        entry[f"{name}_range"] = [_range(c, name) for _, c in row]
        entry[f"{name}_titles"] = [point_title(label, lp, c, name) for lp, c in row]
    return entry


def point_title(who: str, lp: LoadPoint, c: Cell, name: str) -> str:
    """A point's <title> (issue 34: values on hover): who, the load, the statistic with its
    unit, the repetitions it is the median of and their range, saturation."""
    p = c.stats.get(name)
    text = f"{who} at {load_text(lp)}"
    if lp.closed:
        text += f" ({fmt_rate(c.throughput_rps)} requests/s achieved)"
    text += f": {name} {fmt_censored(p.value_ms, p.at_least_ms)} ms"
    n = len(c.repetitions)
    spread = c.spread.get(name)
    if n > 1:
        text += f", the median of {n} repetitions"
        if spread is not None and spread.min.known and spread.max.known:
            text += (f" (range {fmt_censored(spread.min.value_ms, spread.min.at_least_ms)} to "
                     f"{fmt_censored(spread.max.value_ms, spread.max.at_least_ms)} ms)")
    else:
        text += ", 1 repetition"
    if p.censored:
        text += "; censored: no answer within the timeout, a lower bound"
    if c.saturation.saturated:
        text += "; saturated"
    return text


def _compare_data(run: Run, styles: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Issue 34: the comparison load curve, one line per (scenario, system) of
    chartset.compared_lines on one set of axes, each with its scenario's predicted ceiling.
    With one system the lines take the system's colours by scenario (plots.system_style)."""
    lines = compared_lines(run)
    several = len({s.id for _, s in lines}) > 1
    closed = has_closed_loads([lp for sc, _ in lines for lp in sc.load_points])
    systems = [_curve_line(sc, s, line_label(sc, s, several),
                           styles[s.id] if several else system_style(i), closed)
               for i, (sc, s) in enumerate(lines)]
    timeout = next((c.timeout_ms for sc, _ in lines for c in sc.measured() if c.timeout_ms),
                   None)
    return {"systems": systems, "timeout_ms": timeout,
            "title": f"Every scenario: latency vs {'throughput' if closed else 'offered load'}",
            **({"x_label": "throughput (requests/s)"} if closed else {})}


def _summary_dot_data(run: Run, scenario: Scenario, lp: LoadPoint,
                      styles: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Issue 34: one summary panel, the scenario at its summary load point: per target (in
    run.yml's order, the same in every panel) its p50 and p99 at their bounds, the
    repetitions' ranges, whether censored, saturated, not steady, and each point's <title>."""
    rows = []
    own = {s.id for s in scenario.systems}
    for s in run.scenarios[0].systems:
        c = scenario.cell(lp.id, s.id) if s.id in own else None
        row: dict[str, Any] = {"label": s.label, "color": styles[s.id]["color"],
                               "measured": c is not None}
        if c is not None:
            row.update(saturated=c.saturation.saturated, not_steady=c.not_steady)
            for name in ("p50", "p99"):
                row[f"{name}_ms"], row[f"{name}_censored"] = _at_timeout(c, name)
                row[f"{name}_range"] = _range(c, name)
                row[f"{name}_title"] = point_title(s.label, lp, c, name)
        rows.append(row)
    return {"title": f"{scenario.label or scenario.id} at {load_text(lp)}", "rows": rows,
            "timeout_ms": next((c.timeout_ms for c in scenario.measured() if c.timeout_ms), None)}


def _steady_note(c: Cell) -> str | None:
    """What the load curve point's <title> (issue 32) adds, after its values (point_title),
    for a cell that is not steady, or whose figures are (some repetitions') steady parts';
    None for every other cell."""
    n = len(c.repetitions)
    if c.not_steady:
        k = sum(1 for r in c.repetitions if r.steady and r.steady.not_steady)
        return (f"not steady, {k} of {n} repetitions measured a transient, "
                f"not a steady state")
    k = sum(1 for r in c.repetitions if r.steady and r.steady.from_steady_part)
    if not k:
        return None
    whole = c.window_stats.get("p99") if c.window_stats is not None else None
    return (f"{k} of {n} repetitions warmed up inside the window; their "
            f"figures are their steady parts'" + (
                f" (over the whole windows, p99 {fmt_censored(whole.value_ms, whole.at_least_ms)}"
                f" ms)" if whole is not None and whole.known else ""))


def _gc_tail_data(scenario: Scenario, styles: dict[str, dict[str, Any]],
                  of: str = "") -> dict[str, Any]:
    """Scenario.gc_tail's points as plot_gc_tail's, systems in the run's order."""
    labels = {s.id: s.label for s in scenario.systems}
    loads = {lp.id: lp for lp in scenario.load_points}
    rank = {sid: i for i, sid in enumerate(styles)}
    points = sorted(scenario.gc_tail.points, key=lambda p: rank[p.system])
    return {"title": f"Longest GC pause in the window against the tail{of}",
            "points": [{"label": labels[p.system], "color": styles[p.system]["color"],
                        "pause_ms": p.pause_ms,
                        "p999_ms": p.p999.bound(), "p999_censored": p.p999.censored,
                        "max_ms": p.max.bound(), "max_censored": p.max.censored,
                        "title": (f"{labels[p.system]} at {load_text(loads[p.load])}: longest "
                                  f"GC pause in the window {fmt_ms(p.pause_ms)} ms; p99.9 "
                                  f"{fmt_censored(p.p999.value_ms, p.p999.at_least_ms)} ms, max "
                                  f"{fmt_censored(p.max.value_ms, p.max.at_least_ms)} ms (medians "
                                  f"of the repetitions)")}
                       for p in points]}


def _spectrum_data(lp: LoadPoint, present: list[tuple[System, Cell]],
                   styles: dict[str, dict[str, Any]], of: str = "") -> dict[str, Any]:
    return {"title": f"Latency by percentile at {load_text(lp)}{of}",
            "timeout_ms": next((c.timeout_ms for _, c in present if c.timeout_ms), None),
            "curves": [{"label": s.label, **styles[s.id],
                        "count": c.stats.count, "points": c.spectrum,
                        "title": _spectrum_title(s, lp, c)} for s, c in present]}


def _spectrum_title(s: System, lp: LoadPoint, c: Cell) -> str:
    """A spectrum line's <title> (issue 34): its load, samples, repetitions and three of its
    percentiles with their unit."""
    stats = ", ".join(f"{name} {fmt_censored(p.value_ms, p.at_least_ms)} ms"
                      for name in ("p50", "p99", "max") if (p := c.stats.get(name)).known)
    n = len(c.repetitions)
    return (f"{s.label} at {load_text(lp)}: latency by percentile, {c.stats.count:,} samples "
            f"from {n} repetition{'' if n == 1 else 's'}; {stats}")


def _time_axis(lp: LoadPoint, present: list[tuple[System, Cell]]) -> dict[str, Any]:
    """Where the series' time 0 is and the window's end. With counts (schema 2) the series
    start at the window's start and run on through the drain, so a line may begin late (no
    window request answered yet) or end late (answered in the drain): the end is drawn. A
    schema-1 log's first interval is the only origin known."""
    windowed = any(c.accounting.completed is not None for _, c in present)
    return {"origin": "the window's start" if windowed else "the first interval",
            "window_end_s": lp.duration_s if windowed else None}


def _latency_data(lp: LoadPoint, present: list[tuple[System, Cell]],
                  styles: dict[str, dict[str, Any]], of: str = "") -> dict[str, Any]:
    # the first repetition over time; JFR's pauses of the first system that has them (one JVM
    # per system)
    return {"title": f"Latency per interval at {load_text(lp)}{of}", **_time_axis(lp, present),
            "systems": [{"label": s.label, **styles[s.id],
                         "t_s": _step_times(c.repetitions[0].series),
                         "p99_ms": _step_values(c.repetitions[0].series, "p99_ms"),
                         "max_ms": _step_values(c.repetitions[0].series, "max_ms"),
                         "titles": {name: _series_title(s, lp, c, f"{name}_ms",
                                                        f"{name} per interval (ms)")
                                    for name in ("p99", "max")},
                         **_steady_data(c.repetitions[0])}
                        for s, c in present],
            "gc_pauses": next((c.gc_pauses for _, c in present if c.gc_pauses), None)}


def _steady_data(rep: Repetition) -> dict[str, Any]:
    """What the latency chart marks of a repetition's steadiness (issue 32): its class, where
    its steady part starts (seconds from the window's start: the series' own t_s axis, which
    the chart draws as it is), whether it is not steady or saturated; nothing for a flat one or
    one whose course is not known, so their charts stay as they were."""
    st = rep.steady
    if st is None or st.cls in (None, "flat"):
        return {}
    return {"steady": {"class": st.cls, "from_s": st.steady_from_s, "not_steady": st.not_steady,
                       "saturated": st.saturated_queue}}


def _throughput_data(lp: LoadPoint, present: list[tuple[System, Cell]],
                     styles: dict[str, dict[str, Any]], of: str = "") -> dict[str, Any]:
    return {"title": f"Throughput per interval at {load_text(lp)}{of}", **_time_axis(lp, present),
            "offered_rate": lp.offered_rate,     # None: a closed loop, no offered line
            # a legend of many systems inside the axes would cover their lines
            "legend": "below" if len(present) > MANY_SYSTEMS else "inside",
            "systems": [{"label": s.label, **styles[s.id],
                         "t_s": _step_times(c.repetitions[0].series),
                         "throughput_rps": _step_values(c.repetitions[0].series, "throughput_rps"),
                         "title": _series_title(s, lp, c, "throughput_rps",
                                                "replies per second per interval")}
                        for s, c in present]}


def _series_title(s: System, lp: LoadPoint, c: Cell, key: str, what: str) -> str:
    """An over-time line's <title> (issue 34): what it draws (the series column `key`) with
    its unit, the load, which repetition, how many intervals and their length, and the range
    of the values."""
    rows = c.repetitions[0].series
    unit = "ms" if key.endswith("_ms") else "requests/s"
    values = [r[key] for r in rows if r[key] is not None]
    span = (f"; from {min(values):,.4g} to {max(values):,.4g} {unit}" if values
            else "")
    length = f" of {rows[0]['length_s']:g} s" if rows else ""
    return (f"{s.label} at {load_text(lp)}: {what}, repetition 1 of {len(c.repetitions)}, "
            f"{len(rows)} intervals{length}{span}")


CHART_DATA = {"spectrum": _spectrum_data, "spectrum_panels": _spectrum_data,
              "latency_over_time": _latency_data, "throughput_over_time": _throughput_data}


def pixel_sizes(jobs: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """Each job's PNG size in pixels by its png path (the <img> width and height): the
    chart's layout (chartlayout), which both its SVG and its PNG follow."""
    sizes = {}
    for job in jobs:
        if job["kind"] == "spectrum_panels":
            width_in, height_in = panel_layout(len(job["data"]["curves"]), False)["figsize"]
        else:
            width_in, height_in = figure_size_in(svgcharts.BUILDERS[job["kind"]](job["data"]))
        # as the Agg canvas rounds the figure to whole pixels
        sizes[job["png"]] = (int(round(width_in * PNG_DPI)), int(round(height_in * PNG_DPI)))
    return sizes


def _step_times(rows) -> list[float]:
    """Interval starts plus the last interval's end, so steps-post draws every interval."""
    if not rows:
        return []
    return [r["t_s"] for r in rows] + [rows[-1]["t_s"] + rows[-1]["length_s"]]


def _step_values(rows, key: str) -> list:
    values = [r[key] for r in rows]
    return values + values[-1:]


CHART_KINDS = ("spectrum", "spectrum_panels", "load_curve", "latency_over_time",
               "throughput_over_time", "gc_tail", "compare_curve", "summary_dot",
               "jmh_sweep", "jmh_spectrum")    # jmh_*: a JMH run's (write/jmh_views.py)
# Charts of the reduce step (write/corpus_pages.py), drawn by render.render_job as the runs'
# are: a series cell's history (history_plot.py; one 700 px SVG, no phone variant)
CORPUS_CHART_KINDS = ("history",)


def legend_below(job: dict[str, Any]) -> bool:
    """Whether the job's chart has its legend under the axes (the taller layout), as its
    description (svgcharts) says."""
    return job["kind"] in svgcharts.BUILDERS and \
        svgcharts.BUILDERS[job["kind"]](job["data"]).legend == "below"
