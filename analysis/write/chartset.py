"""Which charts a run has - kind, file name, load point, alt text - derived from the run model.

Both the chart drawer (charts.chart_plan: what to draw) and the data file (datafiles: the
`charts:` block the pages print) ask this module, so neither reads the other's output. Pure and
free of matplotlib: the data file does not wait for the plotting library to load.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from analysis.model import LoadPoint, Run, Scenario
from analysis.vocabulary import CHART_TITLES, load_label, plain
from analysis.write.paths import chart_path


@dataclass(frozen=True)
class Chart:
    kind: str                   # charts.CHART_KINDS
    name: str                   # file name without extension
    alt: str
    load: LoadPoint | None = None
    scenario: str | None = None     # the scenario's id (None: the implicit one)

    def files(self, run_id: str) -> dict[str, str]:
        """The chart's files: SVG and PNG at 700 px, and `narrow_svg`, the same chart laid out
        for a phone (charts.NARROW), which the page serves below 36rem."""
        return {"svg": chart_path(run_id, self.name, "svg"),
                "png": chart_path(run_id, self.name, "png"),
                "narrow_svg": chart_path(run_id, self.name + "-narrow", "svg")}


def load_text(lp: LoadPoint) -> str:
    return f"{lp.offered_rate:,g} requests/s offered"


def chart_set(run: Run) -> list[Chart]:
    """The run's charts in drawing order, per scenario (named `<scenario-id>-...` when it has
    an id): the load curve, then per load point with any cell its spectrum, latency over time
    and throughput over time."""
    charts = []
    for scenario in run.scenarios:
        pre, sid = ("" if scenario.id is None else f"{scenario.id}-"), scenario.id
        names = ", ".join(s.label for s in scenario.systems)
        charts.append(Chart("load_curve", f"{pre}load-curve",
                            f"Load curve: p50 and p99 latency (ms) against offered load "
                            f"(requests/s) for {names}, with predicted ceilings where known.",
                            scenario=sid))
        for lp, row in scenario.grid():
            if not any(c for _, c in row):
                continue
            text = load_text(lp)
            charts += [
                Chart("spectrum", f"{pre}spectrum-{lp.id}",
                      f"Percentile spectrum at {text}: latency (ms) from p0 to the max, for "
                      f"{names}.", lp, sid),
                Chart("latency_over_time", f"{pre}latency-{lp.id}",
                      f"Latency over time at {text}: p99 and max per interval (ms) against "
                      f"seconds since the start of measurement, for {names}.", lp, sid),
                Chart("throughput_over_time", f"{pre}throughput-{lp.id}",
                      f"Throughput over time at {text}: achieved requests/s per interval "
                      f"against the offered rate, for {names}.", lp, sid)]
    return charts


def caption(kind: str, lp: LoadPoint) -> str:
    """'Percentile spectrum at 25 req/s offered (5 × 5/s)': the caption under a chart of one
    load point (the clients × rate only when the run gave clients)."""
    text = f"{CHART_TITLES[kind]} at {plain(lp.offered_rate)} req/s offered"
    return text + (f" ({load_label(lp.offered_rate, lp.clients)})" if lp.clients else "")


def chart_section(run: Run, sizes: dict[str, tuple[int, int]] | None = None,
                  scenario: Scenario | None = None) -> dict[str, Any]:
    """The data file's `charts:` block of one scenario (default: the run's only one): the
    load curve, per kind a list by load point (each with its caption), and the spectra again
    keyed by load point (percentile-plot.html). `sizes` (charts.pixel_sizes: png path ->
    pixels) gives each entry its width and height."""
    sid = scenario.id if scenario is not None else run.scenario.id
    section: dict[str, Any] = {"spectrum": [], "latency_over_time": [], "throughput_over_time": []}
    for chart in (c for c in chart_set(run) if c.scenario == sid):
        entry = {**chart.files(run.id), "alt": chart.alt}
        if sizes and entry["png"] in sizes:
            entry["width"], entry["height"] = sizes[entry["png"]]
        if chart.load is None:
            section[chart.kind] = entry
        else:
            section[chart.kind].append({"load": chart.load.id, **entry,
                                        "caption": caption(chart.kind, chart.load)})
    by_load = {e["load"]: dict(e) for e in section["spectrum"]}
    return {"load_curve": section.pop("load_curve"), **section, "spectrum_by_load": by_load}
