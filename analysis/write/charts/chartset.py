"""Which charts a run has - kind, file name, load point, alt text - derived from the run model.

Both the chart drawer (run_jobs.chart_plan: what to draw) and the data file (datafiles: the
`charts:` block the pages print) ask this module, so neither reads the other's output. Pure and
free of matplotlib: the data file does not wait for the plotting library to load.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from analysis.model import LoadPoint, Run, Scenario, System
from analysis.vocabulary import (CHART_TITLES, has_closed_loads, load_label, load_point_text,
                                 plain, r3)
from analysis.paths import chart_path

# Above this many systems with a cell at a load point, its percentile spectrum is small
# multiples (one panel per system, kind "spectrum_panels") and its throughput chart's legend
# goes under the axes (charts._throughput_data): a dozen lines and a legend inside one plot
# area cover each other.
MANY_SYSTEMS = 6
# The kind a chart is listed under in the data file's `charts:` block (the page's lists)
SECTION_KIND = {"spectrum_panels": "spectrum"}


@dataclass(frozen=True)
class Chart:
    kind: str                   # charts.CHART_KINDS
    name: str                   # file name without extension
    alt: str
    load: LoadPoint | None = None
    scenario: str | None = None  # Scenario.id: None for a run without scenarios
    narrow: bool = True          # False: the chart is phone-sized already (a summary panel)

    def files(self, run_id: str) -> dict[str, str]:
        """The chart's files: SVG and PNG at 700 px, and `narrow_svg`, the same chart laid out
        for a phone (chartlayout.NARROW), which the page serves below 36rem."""
        return {"svg": chart_path(run_id, self.name, "svg"),
                "png": chart_path(run_id, self.name, "png"),
                "narrow_svg": chart_path(run_id, self.name + "-narrow", "svg")
                if self.narrow else None}


def load_text(lp: LoadPoint) -> str:
    return load_point_text(lp, lambda rate: f"{rate:,g}", "requests/s offered")


def scenario_suffix(scenario: Scenario) -> str:
    """' (JSON, no wait)': which scenario a chart shows, for its title and alt text; '' for
    the implicit scenario of a run without scenarios."""
    return f" ({scenario.label or scenario.id})" if scenario.id else ""


def chart_set(run: Run) -> list[Chart]:
    """The run's charts in drawing order: the summary charts at the top of its report
    (summary_charts), then scenario by scenario (scenario_charts)."""
    return summary_charts(run) + [chart for scenario in run.scenarios
                                  for chart in scenario_charts(scenario)]


def compared_lines(run: Run) -> list[tuple[Scenario, System]]:
    """The lines of a run's comparison load curve (issue 34): every (scenario, system) of a
    run with scenarios, when some scenario has more than one load point and there are at most
    MANY_SYSTEMS lines (futures and Pekko on one set of axes); [] otherwise (many-servers' 35
    would be a tangle: its summary panels and each scenario's own load curve compare it)."""
    if not run.has_scenarios or all(len(sc.load_points) < 2 for sc in run.scenarios):
        return []
    lines = [(sc, s) for sc in run.scenarios for s in sc.systems]
    return lines if 1 < len(lines) <= MANY_SYSTEMS else []


def summary_charts(run: Run) -> list[Chart]:
    """Issue 34: what a run with scenarios shows above its summary table. With several
    targets, one dot-plot panel per scenario (kind summary_dot: p99 and p50 of every target at
    the summary table's load point, the targets in one order in every panel), each an SVG of
    a phone's width, so that the panels wrap; the comparison load curve (compared_lines) when
    the run has one. Nothing for a run without scenarios: its load curve is its comparison."""
    if not run.has_scenarios:
        return []
    systems = run.scenarios[0].systems
    charts = []
    if len(systems) > 1:
        points, _ = run.summary_load
        names = "; ".join(s.label for s in systems)
        for sc in run.scenarios:
            lp = points[sc.id][0]
            if lp is None:
                continue
            charts.append(Chart(
                "summary_dot", f"summary-{sc.id}",
                f"{sc.label or sc.id} at {load_text(lp)}: each target's p99 latency (circle) "
                f"and p50 (square) in ms, with the range of the repetitions; targets in the "
                f"same order in every panel: {names}.", lp, sc.id, narrow=False))
    lines = compared_lines(run)
    if lines:
        what = "; ".join(line_label(sc, s, len(systems) > 1) for sc, s in lines)
        charts.append(Chart(
            "compare_curve", "compare-load-curve",
            f"Comparison load curve: p50 and p99 latency (ms) against offered load "
            f"(requests/s), one line per {'scenario and target' if len(systems) > 1 else 'scenario'}"
            f" on the same axes ({what}), with predicted ceilings where known."))
    return charts


def line_label(sc: Scenario, s: System, with_system: bool) -> str:
    """A comparison line's name: the scenario's, and the target's where there are several."""
    name = sc.label or sc.id
    return f"{name}, {s.label}" if with_system else name


def scenario_charts(scenario: Scenario) -> list[Chart]:
    """A scenario's charts: the load curve, then per load point with any cell its spectrum
    (small multiples above MANY_SYSTEMS systems), latency over time and throughput over time,
    then GC pause against tail when some cell has a JFR window. A scenario with an id prefixes
    its file names with `<id>-`; the implicit one (id None) keeps the names of a run without
    scenarios."""
    sid = scenario.id
    prefix = f"{sid}-" if sid else ""
    of = scenario_suffix(scenario)
    names = ", ".join(s.label for s in scenario.systems)
    against = ("the throughput achieved (requests/s) at each number of connections, points "
               "joined in order of connections" if has_closed_loads(scenario.load_points)
               else "offered load (requests/s)")
    # issue 32: said only where some cell is not steady, so other runs' text stays as it was
    hollow = (" Hollow points: cells that are not steady (their windows measured a transient)."
              if any(c.not_steady for c in scenario.measured()) else "")
    charts = [Chart("load_curve", f"{prefix}load-curve",
                    f"Load curve{of}: p50 and p99 latency (ms) against {against} for {names}, "
                    f"with predicted ceilings where known.{hollow}", scenario=sid)]
    for lp, row in scenario.grid():
        present = [s.label for s, c in row if c and drawn_in(c, "spectrum")]
        over_time = [s.label for s, c in row if c and drawn_in(c, "latency_over_time")]
        text = load_text(lp)
        if not present:
            pass
        elif len(present) > MANY_SYSTEMS:
            spectrum = Chart("spectrum_panels", f"{prefix}spectrum-{lp.id}",
                             f"Percentile spectrum{of} at {text}: one panel per system "
                             f"({', '.join(present)}), each drawing its system's latency (ms) "
                             f"from p0 to the max in colour over the other systems in grey, on "
                             f"shared axes.", lp, sid)
        else:
            spectrum = Chart("spectrum", f"{prefix}spectrum-{lp.id}",
                             f"Percentile spectrum{of} at {text}: latency (ms) from p0 to the "
                             f"max, for {', '.join(present)}.", lp, sid)
        if present:
            charts.append(spectrum)
        if not over_time:
            continue
        names_t = ", ".join(over_time)
        charts += [
            Chart("latency_over_time", f"{prefix}latency-{lp.id}",
                  f"Latency over time{of} at {text}: p99 and max per interval (ms) against "
                  f"the time the requests completed, for {names_t}.", lp, sid),
            Chart("throughput_over_time", f"{prefix}throughput-{lp.id}",
                  f"Throughput over time{of} at {text}: replies per second per interval"
                  f"{'' if lp.closed else ' against the offered rate'}, for {names_t}.",
                  lp, sid)]
    if scenario.gc_tail is not None:
        charts.append(Chart("gc_tail", f"{prefix}gc-tail",
                            f"GC pause against tail{of}: each cell's longest GC pause inside "
                            f"the measured window (ms) against its p99.9 and max latency (ms), "
                            f"for {names}.", scenario=sid))
    return charts


def drawn_in(c, kind: str) -> bool:
    """Whether a cell has the data a chart kind draws: a cell read from a load tool's summary
    (issue 23) may have no spectrum or no per-interval rows; every other cell has both."""
    if getattr(c, "imported", None) is None:
        return True
    if kind in ("spectrum", "spectrum_panels"):
        return bool(c.spectrum)
    if kind in ("latency_over_time", "throughput_over_time"):
        return bool(c.repetitions[0].series)
    return True


def chart_gaps(scenario: Scenario) -> dict[str, list[str]]:
    """Per chart kind, a sentence for each cell a chart leaves out because its file does not
    hold that data (a load tool's summary): the page says so instead of drawing nothing."""
    what = {"spectrum": "percentile spectrum", "latency_over_time": "per-interval latencies",
            "throughput_over_time": "per-interval counts"}
    gaps: dict[str, list[str]] = {kind: [] for kind in what}
    for lp, row in scenario.grid():
        for s, c in row:
            if c is None or c.imported is None:
                continue
            for kind, data in what.items():
                if not drawn_in(c, kind):
                    gaps[kind].append(f"{s.label} at {load_text(lp)}: not drawn, the "
                                      f"{c.imported.tool} file ({c.imported.format}) holds no "
                                      f"{data}.")
    return gaps


def caption(kind: str, lp: LoadPoint, row: list | None = None) -> str:
    """'Percentile spectrum at 25 req/s offered (5 × 5/s)': the caption under a chart of one
    load point (the clients × rate only when the run gave clients). A latency-over-time chart
    whose drawn repetitions were not all flat then says what its shading and marks mean
    (steadiness_caption; `row`: the load point's (system, cell) pairs)."""
    text = f"{CHART_TITLES[kind]} at {load_point_text(lp, plain)}"
    text += f" ({load_label(lp.offered_rate, lp.clients)})" if lp.clients else ""
    more = steadiness_caption(row) if kind == "latency_over_time" and row else ""
    return f"{text}. {more}" if more else text


# steadiness classes (model.STEADY_CLASSES, and aggregate.steadiness's "not known") as a
# caption prints them
STEADY_WORDS = {"flat": "flat", "warmup": "warm-up", "slowdown": "slowdown",
                "no-steady-state": "no steady state", "not known": "not known"}


def steadiness_caption(row: list) -> str:
    """Issue 32: what the latency-over-time chart marks of each drawn repetition (each
    system's first) that was not flat, in the classification's own sentence, and what the
    shading means; for a system with any repetition not flat, how its repetitions divide into
    classes (the chart draws only the first). '' when every repetition was flat or not known,
    so the caption stays as it was."""
    parts, shaded = [], set()
    for s, c in row:
        if c is None or not drawn_in(c, "latency_over_time"):
            continue
        if all(r.steady is None or r.steady.cls in (None, "flat") for r in c.repetitions):
            continue
        st = c.repetitions[0].steady
        drawn = st is not None and st.cls not in (None, "flat")
        if drawn and st.cls in ("warmup", "slowdown") and st.steady_from_s is not None:
            shaded.add(st.cls)
        text = f"{s.label}, repetition 1 (drawn), " + (
            st.sentence if drawn else STEADY_WORDS[(st and st.cls) or "not known"])
        if len(c.repetitions) > 1:
            counts = ", ".join(f"{n} {STEADY_WORDS.get(name, name)}"
                               for name, n in c.steady_counts.items())
            text += f"; its {len(c.repetitions)} repetitions: {counts}"
        parts.append(text + ".")
    if shaded:
        what = " or ".join(w for cls, w in (("warmup", "warm-up transient"),
                                            ("slowdown", "part before its slowdown"))
                           if cls in shaded)
        parts.insert(0, f"Shaded from the window's start to the dashed line: the drawn "
                        f"repetition's {what}.")
    return " ".join(parts)


def summary_chart_section(run: Run, sizes: dict[str, tuple[int, int]] | None = None
                          ) -> dict[str, Any] | None:
    """The data file's `summary_charts` block (summary-charts.html), None when the run has no
    summary chart: `load_curve`, the comparison load curve; `panels`, one summary panel per
    scenario (each with its caption), and `panels_note`, what the panels share and what not."""
    charts = summary_charts(run)
    if not charts:
        return None
    out: dict[str, Any] = {}
    for chart in charts:
        entry = {k: v for k, v in chart.files(run.id).items() if v}
        entry["alt"] = chart.alt
        if sizes and entry["png"] in sizes:
            entry["width"], entry["height"] = sizes[entry["png"]]
        if chart.kind == "compare_curve":
            out["load_curve"] = entry
        else:
            out.setdefault("panels", []).append({"scenario": chart.scenario, **entry})
    if "panels" in out:
        _, same = run.summary_load
        out["panels_note"] = (
            "One panel per scenario, at the load of the table below"
            + (" (the same in every scenario)" if same else
               " (the scenarios' loads differ: compare targets within a panel)")
            + "; the targets in the same order in every panel, each panel on its own latency "
              "scale. With a mouse, each point shows its values on hover; the table below "
              "prints them all.")
    return out


def chart_section(run: Run, sizes: dict[str, tuple[int, int]] | None = None,
                  scenario: Scenario | None = None) -> dict[str, Any]:
    """The data file's `charts:` block of one scenario (default: the run's only one): the load
    curve, per kind a list by load point (each with its caption), and the spectra again keyed
    by load point (percentile-plot.html); small multiples are listed as spectra. When some
    cell has a JFR window, `gc_tail`: the GC-pause-against-tail chart with its `statement`
    (Scenario.gc_tail's: `text` and the numbers). `sizes` (run_jobs.pixel_sizes: png
    path -> pixels) gives each entry its width and height."""
    scenario = scenario if scenario is not None else run.scenario
    section: dict[str, Any] = {"spectrum": [], "latency_over_time": [], "throughput_over_time": []}
    rows = {lp.id: row for lp, row in scenario.grid()}
    for chart in scenario_charts(scenario):
        entry = {**chart.files(run.id), "alt": chart.alt}
        if sizes and entry["png"] in sizes:
            entry["width"], entry["height"] = sizes[entry["png"]]
        kind = SECTION_KIND.get(chart.kind, chart.kind)
        if chart.kind == "gc_tail":
            entry["statement"] = _rounded(scenario.gc_tail.statement)
        if chart.load is None:
            section[kind] = entry
        else:
            section[kind].append({"load": chart.load.id, **entry,
                                  "caption": caption(kind, chart.load, rows[chart.load.id])})
    by_load = {e["load"]: dict(e) for e in section["spectrum"]}
    gaps = chart_gaps(scenario)
    out = {"load_curve": section.pop("load_curve"), **section, "spectrum_by_load": by_load}
    if any(gaps.values()):
        out["gaps"] = gaps
    return out


def _rounded(value: Any) -> Any:
    """The statement's numbers as the data file gives ms: to 3 decimals."""
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return r3(value) if isinstance(value, float) else value
