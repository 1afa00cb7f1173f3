"""Issue 11's charts for many systems: one colour per system across every chart of a run, the
percentile spectrum as small multiples above chartset.MANY_SYSTEMS, legends that never cover a
plot area (checked in the written SVG, by the ids plots.py gives the plot areas and legends, and
with matplotlib's own bounding boxes), GC pause against tail with its computed statement.

The 12-system run is synthetic: one genhlog log (HdrHistogram's own writer) per system, built
by the real reader and model (load_manifest + analyse_run)."""
from __future__ import annotations

import re
import subprocess
from types import SimpleNamespace

import pytest

from analysis.derive.gc_tail import (GcTailPoint, gc_tail, gc_tail_points, gc_tail_statement,
                                     longest_window_pause)
from analysis.derive.summary_load import summary_points
from analysis.model import Jvm, JvmWindow, Percentile
from analysis.write.charts import chartset, plots, render, run_jobs, svgcharts
from tests.helpers import spectrum_curves

pytestmark = pytest.mark.slow     # (make check leaves it out; make test runs it)

SYSTEMS = 12


# --- the 12-system run ----------------------------------------------------------------------

MANIFEST = """\
title: "Twelve systems (synthetic: tests/test_charts_many.py, not a measurement)"
date: 2026-11-24
description: "One genhlog log per system."
tags: [synthetic]
value_unit: us
systems:
{systems}
load_points:
  - {{id: r500, offered_rate: 500, duration_s: 4}}
cells:
{cells}
"""


def label(i: int) -> str:
    # long labels on purpose: panel titles and legends must wrap or sit outside, not overlap
    return f"Server {i + 1:02d} " + ("with virtual threads" if i % 2 else "with a thread pool")


@pytest.fixture(scope="module")
def many_run(tmp_path_factory, oracle):
    """A 12-system run analysed in memory (one load point, one repetition per cell), and the
    site folder it belongs to."""
    from analysis.derive.analyse import analyse_run
    from analysis.read.manifest import load_manifest
    site = tmp_path_factory.mktemp("many")
    run_dir = site / "runs" / "many"
    (run_dir / "logs").mkdir(parents=True)
    for i in range(SYSTEMS):
        subprocess.run([str(oracle / "genhlog"), str(run_dir / "logs" / f"s{i:02d}.hlog"), "4",
                        "500", str(4200 + i), "us", "plain"], check=True, capture_output=True)
    (run_dir / "run.yml").write_text(MANIFEST.format(
        systems="\n".join(f'  - {{id: s{i:02d}, label: "{label(i)}"}}' for i in range(SYSTEMS)),
        cells="\n".join(f"  - {{system: s{i:02d}, load: r500, hlog: logs/s{i:02d}.hlog}}"
                        for i in range(SYSTEMS))))
    run = analyse_run(load_manifest(run_dir, site / "runs"), site)
    return run, site


def with_jfr(run, pauses: dict[str, float]):
    """The run with a JFR window of the given longest pause (ms) on each named system's cell."""
    for cell in run.cells():
        for rep in cell.repetitions:
            rep.jvm = None
            if cell.system in pauses:
                rep.jvm = Jvm(source="synthetic.jfr", summary={},
                              window=JvmWindow(gc_pause_max_ms=pauses[cell.system]))
    for scenario in run.scenarios:     # what build_run derives from the windows
        scenario.gc_tail = gc_tail(scenario)
    return run


# --- reading the written SVG back -----------------------------------------------------------

def _box(d: str) -> tuple[float, float, float, float]:
    numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", d)]
    xs, ys = numbers[0::2], numbers[1::2]
    return min(xs), min(ys), max(xs), max(ys)


def svg_boxes(svg: str) -> dict[str, tuple[float, float, float, float]]:
    """Group id -> the box (x0, y0, x1, y1, SVG units) of the group's first path: for a plot
    area its background patch, for a legend its frame (invisible when the legend has none)."""
    out = {}
    for m in re.finditer(r'<g id="((?:plot-area|legend)[\w-]*)">\s*(?:<g id="[\w-]+">\s*)?'
                         r'<path d="([^"]+)"', svg):
        out[m.group(1)] = _box(m.group(2))
    return out


def overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def assert_no_legend_on_plot_areas(svg: str, name: str) -> int:
    boxes = svg_boxes(svg)
    areas = {k: v for k, v in boxes.items() if k.startswith("plot-area")}
    assert areas, f"{name}: no plot area id in the SVG"
    assert "legend-inside" not in boxes, f"{name}: a legend inside the axes"
    if "legend" in boxes:
        for area, box in areas.items():
            assert not overlap(boxes["legend"], box), (name, area, boxes["legend"], box)
    return len(areas)


def stroke_colours(svg: str) -> set[str]:
    return set(re.findall(r"stroke: (#[0-9a-f]{6})", svg))


# --- colours --------------------------------------------------------------------------------

def test_twelve_distinct_colours_then_dashes():
    colours = [plots.color(i) for i in range(SYSTEMS)]
    assert len(set(colours)) == SYSTEMS
    assert plots.OTHERS_GREY not in colours and "#f0e442" not in [c.lower() for c in colours]
    assert {plots.linestyle(i) for i in range(SYSTEMS)} == {"-"}
    assert plots.color(SYSTEMS) == plots.color(0) and plots.linestyle(SYSTEMS) != "-"
    # the two-system charts keep their colours (Okabe-Ito blue and vermillion)
    assert colours[:2] == ["#0072B2", "#D55E00"]


def test_one_style_per_system_by_its_place_in_the_run(many_run):
    run, _ = many_run
    styles = run_jobs.system_styles(run)
    assert list(styles) == [f"s{i:02d}" for i in range(SYSTEMS)]
    assert [s["color"] for s in styles.values()] == [plots.color(i) for i in range(SYSTEMS)]


# --- the 12-system charts -------------------------------------------------------------------

def test_many_systems_get_small_multiples_and_legends_outside(many_run, tmp_path):
    run, _ = many_run
    jobs = run_jobs.chart_plan(run)
    kinds = [j["kind"] for j in jobs]
    assert kinds == ["load_curve", "spectrum_panels", "latency_over_time", "throughput_over_time"]
    for job in jobs:
        assert render.render_job(job, str(tmp_path)) == []
        for key in ("svg", "narrow_svg"):
            svg = (tmp_path / job[key]).read_text()
            areas = assert_no_legend_on_plot_areas(svg, job[key])
            if job["kind"] == "spectrum_panels":
                assert areas == SYSTEMS and 'id="legend' not in svg   # panel titles instead
                for i in range(SYSTEMS):       # every system names its panel
                    assert f"Server {i + 1:02d}" in svg
            else:
                assert areas == 1 and 'id="legend"' in svg
    # the data file lists the small multiples as the load point's spectrum
    section = chartset.chart_section(run, run_jobs.pixel_sizes(jobs))
    (spectrum,) = section["spectrum"]
    assert spectrum["svg"].endswith("/spectrum-r500.svg") and "one panel per system" in spectrum["alt"]
    assert section["spectrum_by_load"]["r500"]["svg"] == spectrum["svg"]
    assert "gc_tail" not in section                      # no JFR: no chart, no statement
    png = (tmp_path / spectrum["png"]).read_bytes()
    assert (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")) == \
        (spectrum["width"], spectrum["height"])


def test_panel_titles_and_legends_clear_the_plot_areas_in_matplotlibs_own_boxes(many_run):
    run, _ = many_run
    jobs = {j["kind"]: j for j in run_jobs.chart_plan(run)}
    for narrow in (False, True):
        fig = render.draw_panels(jobs["spectrum_panels"], narrow=narrow)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        axes = [ax for ax in fig.axes if ax.get_visible()]
        assert len(axes) == SYSTEMS
        areas = [ax.patch.get_window_extent(renderer) for ax in axes]
        titles = [ax.title.get_window_extent(renderer) for ax in axes]
        for ax, title in zip(axes, titles):
            assert not any(title.overlaps(a) for a in areas), (narrow, ax.get_title())
            assert 0 <= title.x0 and title.x1 <= fig.bbox.x1, ax.get_title()
        for text in (fig._suptitle, fig._supxlabel, fig._supylabel):
            box = text.get_window_extent(renderer)
            assert not any(box.overlaps(a) for a in areas + titles), (narrow, text.get_text())
            assert fig.bbox.contains(box.x0, box.y0) and fig.bbox.contains(box.x1, box.y1)
    for kind in ("load_curve", "latency_over_time", "throughput_over_time"):
        fig, ax = render.new_figure(legend_below=True)
        render.draw_chart(fig, ax, jobs[kind])
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        legend = ax.get_legend().get_window_extent(renderer)
        assert not legend.overlaps(ax.patch.get_window_extent(renderer)), kind
        assert legend.y0 >= 0, f"{kind}: the legend runs off the figure"
        render.plt.close(fig)


def test_same_system_same_colour_in_every_chart(many_run, tmp_path):
    run, _ = many_run
    jobs = {j["kind"]: j for j in run_jobs.chart_plan(run)}
    panels, _ = svgcharts.spectrum_panels_plot(jobs["spectrum_panels"]["data"])
    own = [plot.series[-1].style.color for plot in panels.plots]     # its own curve, on top
    by_label = {e.label: e.style.color
                for e in svgcharts.load_curve(jobs["load_curve"]["data"]).entries}
    throughput = {e.label: e.style.color
                  for e in svgcharts.throughput_over_time(jobs["throughput_over_time"]["data"]).entries}
    for i in range(SYSTEMS):
        assert own[i] == by_label[f"{label(i)} p99"] == throughput[label(i)] \
            == plots.color(i)
    # the PNG's drawing (matplotlib) uses them too
    fig, ax = render.new_figure(legend_below=True)
    render.draw_chart(fig, ax, jobs["load_curve"])
    drawn = {line.get_color() for line in ax.get_lines()}
    render.plt.close(fig)
    assert {plots.color(i) for i in range(SYSTEMS)} <= drawn
    # and in the files: every system's colour is drawn in both
    for kind in ("load_curve", "spectrum_panels"):
        render.render_job(jobs[kind], str(tmp_path))
    for kind in ("load_curve", "spectrum_panels"):
        drawn = stroke_colours((tmp_path / jobs[kind]["svg"]).read_text())
        assert {plots.color(i).lower() for i in range(SYSTEMS)} <= drawn, kind


def test_many_system_charts_are_byte_identical_across_runs(many_run, tmp_path):
    run, _ = many_run
    run = with_jfr(run, {f"s{i:02d}": 1.0 + i for i in range(SYSTEMS)})
    try:
        jobs = run_jobs.chart_plan(run)
        for out in ("a", "b"):
            for job in jobs:
                render.render_job(job, str(tmp_path / out))
        files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*.*"))
        assert len(files) == 3 * len(jobs)
        for rel in files:
            assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel
    finally:
        with_jfr(run, {})


# --- GC pause against tail ------------------------------------------------------------------

def point(pause, p999, mx, censored=()):
    def pct(name, v):
        return Percentile(at_least_ms=v) if name in censored else Percentile(value_ms=v)
    return GcTailPoint("s", "r", pause, pct("p999", p999), pct("max", mx))


def test_gc_statement_on_hand_made_numbers():
    got = gc_tail_statement([point(10.0, 12.0, 50.0), point(20.0, 15.0, 25.0),
                             point(5.0, 100.0, 400.0)])
    assert got["text"] == ("In 2 of 3 cells the p99.9 exceeds the longest in-window GC pause, by "
                           "2.00–95.0 ms (median 48.5 ms); the max exceeds it in 3 of 3, by "
                           "5.00–395 ms (median 40.0 ms).")
    assert got["p999"] == {"cells": 3, "exceeding": 2, "censored": 0, "by_min_ms": 2.0,
                           "by_max_ms": 95.0, "by_median_ms": 48.5}
    assert got["max"]["exceeding"] == 3 and got["max"]["by_median_ms"] == 40.0
    # no causal wording
    assert not re.search(r"caus|because|due to|explain", got["text"])


def test_gc_statement_edge_cases():
    none = gc_tail_statement([point(50.0, 12.0, 40.0)])
    assert none["text"] == ("In 0 of 1 cells the p99.9 exceeds the longest in-window GC pause; "
                            "the max exceeds it in 0 of 1.")
    one = gc_tail_statement([point(1.0, 3.0, 2000.0, censored=("max",))])
    assert one["text"] == ("In 1 of 1 cells the p99.9 exceeds the longest in-window GC pause, "
                           "by 2.00 ms; the max exceeds it in 1 of 1 (it is censored at the "
                           "timeout: no answer within it).")
    mixed = gc_tail_statement([point(1.0, 3.0, 9.0), point(1.0, 2.0, 5.0),
                               point(1.0, 4.0, 2000.0, censored=("max",))])
    assert mixed["text"].endswith("the max exceeds it in 3 of 3, by 4.00–8.00 ms (median 6.00 "
                                  "ms; 1 censored at the timeout, left out of these figures).")
    assert one["max"]["by_min_ms"] is None and one["max"]["censored"] == 1
    unknown = gc_tail_statement([point(1.0, None, None)])
    assert unknown["p999"]["cells"] == 0 and "in 0 of 0" in unknown["text"]
    assert gc_tail_statement([]) is None                  # no JFR: nothing to say


def test_longest_pause_is_over_the_repetitions_with_a_jfr_window():
    def rep(pause):
        if pause is ...:
            return SimpleNamespace(jvm=None)
        return SimpleNamespace(jvm=SimpleNamespace(window=SimpleNamespace(gc_pause_max_ms=pause)))
    assert longest_window_pause(SimpleNamespace(repetitions=[rep(...), rep(3.5), rep(None),
                                                             rep(7.25)])) == 7.25
    assert longest_window_pause(SimpleNamespace(repetitions=[rep(...), rep(None)])) is None


def test_gc_tail_chart_and_statement_from_the_run(many_run, tmp_path):
    run, _ = many_run
    pauses = {f"s{i:02d}": 0.5 * i for i in range(10)}     # two systems without JFR
    run = with_jfr(run, pauses)
    try:
        points = gc_tail_points(run.scenario)
        assert [p.system for p in points] == list(pauses)
        jobs = run_jobs.chart_plan(run)
        (job,) = [j for j in jobs if j["kind"] == "gc_tail"]
        assert job["svg"].endswith("/gc-tail.svg")
        assert [p["pause_ms"] for p in job["data"]["points"]] == list(pauses.values())
        assert [p["color"] for p in job["data"]["points"]] == [plots.color(i) for i in range(10)]
        assert render.render_job(job, str(tmp_path)) == []
        for key in ("svg", "narrow_svg"):
            assert_no_legend_on_plot_areas((tmp_path / job[key]).read_text(), job[key])
        section = chartset.chart_section(run, run_jobs.pixel_sizes(jobs))
        statement = section["gc_tail"]["statement"]
        tails = [(c.stats.get("p999").value_ms, pauses[c.system]) for c in run.cells()
                 if c.system in pauses]
        over = [tail - pause for tail, pause in tails if tail > pause]
        assert statement["cells"] == 10 and statement["p999"]["exceeding"] == len(over)
        assert statement["p999"]["by_max_ms"] == pytest.approx(max(over), abs=1e-3)
        assert statement["text"].startswith(f"In {len(over)} of 10 cells the p99.9 exceeds")
    finally:
        with_jfr(run, {})


# --- scenarios ------------------------------------------------------------------------------

def test_named_scenarios_prefix_their_charts_and_say_which(many_run):
    """A's model gives each scenario an id; chart_set loops run.scenarios and names each
    scenario's charts `<id>-...`, with the scenario on each Chart. Simulated here by naming the
    fixture's one scenario and adding a second with the first six systems."""
    import copy
    run, _ = many_run
    two = copy.copy(run)
    json_ = copy.copy(run.scenario)
    json_.id, json_.label = "json", "JSON, no wait"
    few = copy.copy(json_)
    few.id, few.label = "sleep", "100 ms sleep"
    few.systems = json_.systems[:6]
    two.scenarios = [json_, few]
    two.summary_load = summary_points(two)      # as build_run derives it
    sets = chartset.chart_set(two)
    assert [(c.scenario, c.name, c.kind) for c in sets] == [
        ("json", "summary-json", "summary_dot"),            # issue 34: the report's panels
        ("sleep", "summary-sleep", "summary_dot"),
        ("json", "json-load-curve", "load_curve"),
        ("json", "json-spectrum-r500", "spectrum_panels"),
        ("json", "json-latency-r500", "latency_over_time"),
        ("json", "json-throughput-r500", "throughput_over_time"),
        ("sleep", "sleep-load-curve", "load_curve"),
        ("sleep", "sleep-spectrum-r500", "spectrum"),       # six systems: one panel
        ("sleep", "sleep-latency-r500", "latency_over_time"),
        ("sleep", "sleep-throughput-r500", "throughput_over_time")]
    assert "(JSON, no wait)" in sets[2].alt
    jobs = run_jobs.chart_plan(two)
    assert jobs[2]["data"]["title"].endswith("(JSON, no wait)")
    # the same system keeps its colour in both scenarios
    assert jobs[6]["data"]["systems"][3]["color"] == jobs[2]["data"]["systems"][3]["color"]
    # both panels have every target's row, in one order; the six-system scenario says which
    # targets it did not measure
    rows = [[r["label"] for r in job["data"]["rows"]] for job in jobs[:2]]
    assert rows[0] == rows[1] == [s.label for s in json_.systems]
    assert [r["measured"] for r in jobs[1]["data"]["rows"]] == \
        [i < 6 for i in range(len(json_.systems))]
    section = chartset.chart_section(two, scenario=few)
    assert section["load_curve"]["svg"].endswith("/sleep-load-curve.svg")
    with pytest.raises(ValueError):                      # which scenario? say it
        chartset.chart_section(two)


def test_the_svg_check_sees_a_legend_on_the_plot_area():
    """The check above can fail: a legend marked as outside but drawn in the middle of the
    axes is caught in the written SVG."""
    from analysis.write.charts import svgdraw
    text = svgdraw.render_svg(svgcharts.spectrum({"title": "t", "curves": spectrum_curves()}))
    assert 'id="legend-inside"' in text
    with pytest.raises(AssertionError, match="plot-area"):
        assert_no_legend_on_plot_areas(text.replace('id="legend-inside"', 'id="legend"'), "c.svg")
