"""Issue 34: the pictures of a run with several systems or scenarios, read back from the bundled
runs' committed outputs (a rebuild leaves `git status` clean, so they are the code's): the
summary panels of runs/many-servers, the comparison load curve of runs/fanout-curve, the load
its summary compares at, and a <title> on every point of every chart. Each value a chart shows
is checked against the run's cell table (assets/data/<run>/cells.csv: one row per repetition),
whose medians the test takes itself."""
from __future__ import annotations

import csv
import re
import statistics
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO

CHARTS = REPO / "assets" / "charts"
# a point's <title> (run_jobs.point_title): who, the load, the statistic and its value in ms
POINT = re.compile(r"^(?P<who>.+) at (?P<load>[\d,]+) requests/s offered: (?P<stat>p50|p99) "
                   r"(?P<value>> )?(?P<ms>[\d,.]+) ms")
MARKER = re.compile(r'<path [^>]*class="pt"[^>]*?(/>|><title>(?P<title>[^<]*)</title>)')


def data_doc(run: str) -> dict:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)    # many-servers' is 34,000 lines
    return yaml.load((REPO / "_data" / "runs" / f"{run}.yml").read_text(), Loader=loader)


def cell_table(run: str) -> list[dict[str, str]]:
    with open(REPO / "assets" / "data" / run / "cells.csv", newline="") as f:
        return list(csv.DictReader(f))


def median_ms(rows: list[dict[str, str]], stat: str) -> float:
    """The cell's statistic: the median of its repetitions' (model.Cell)."""
    values = [float(r[f"{stat}_ms"] or r[f"{stat}_at_least_ms"]) for r in rows]
    assert values
    return statistics.median(values)


def unescape(text: str) -> str:
    return (text.replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">")
            .replace("&amp;", "&"))


def point_titles(svg: Path) -> list[str]:
    """Every data point's <title>, in drawing order; fails on a point without one."""
    out = []
    for m in MARKER.finditer(svg.read_text()):
        assert m.group("title"), f"{svg.name}: a point without a <title>: {m.group(0)[:120]}"
        out.append(unescape(m.group("title")))
    return out


def close_to_printed(printed: str, value: float) -> bool:
    """A value printed with about three significant figures (vocabulary.fmt_ms)."""
    return abs(float(printed.replace(",", "")) - value) <= max(0.006 * value, 0.0011)


@pytest.fixture(scope="module")
def history_charts(tmp_path_factory) -> Path:
    """A series' history charts, as the build's reduce step draws them (no bundled run is in a
    series): tests/series_gen.py's 30 versions of 8 cells, one version censored, one host-busy."""
    from tests import series_gen
    work = tmp_path_factory.mktemp("history-charts")
    rows = series_gen.cell_rows(3)
    rows[0]["p99_at_least_ms"], rows[0]["p99_ms"] = 15000.0, None
    rows[1]["host_busy"] = True
    step = series_gen.reduced(work, rows)
    assert not step.errors and step.drawn == len(series_gen.SYSTEMS) * len(series_gen.LOADS)
    return work / "assets" / "history"


def site_charts(history_charts: Path) -> list[Path]:
    """Every SVG chart the site builds: the runs' charts, the comparison pages' (both
    committed) and the series histories'."""
    return sorted(CHARTS.rglob("*.svg")) + sorted((REPO / "assets" / "comparisons").rglob("*.svg")) + \
        sorted(history_charts.rglob("*.svg"))


def test_every_point_of_every_chart_has_a_title_with_its_unit(history_charts):
    svgs = site_charts(history_charts)
    kinds = {re.sub(r"-(r\d+|narrow).*", "", p.stem).split("-")[-1] for p in svgs}
    assert {"curve", "spectrum", "latency", "throughput", "tail"} <= kinds
    assert {"comparisons", "history"} <= {p.parents[1].name for p in svgs}
    counted = 0
    for svg in svgs:
        if "flame" in svg.name:
            continue        # flame graphs' frames have their own <title> (flamegraph.py)
        # a chart without markers (a spectrum) titles its lines: every chart says on hover
        # what it shows
        assert "<title>" in svg.read_text(), f"{svg}: no <title> at all"
        for title in point_titles(svg):
            counted += 1
            assert re.search(r"\b(ms|requests/s|ops/s|s/op|ms/op|us/op|ns/op|µs/op)\b|\(.*/.*\)",
                             title), f"{svg.name}: no unit in {title!r}"
    assert counted > 1000


def test_every_version_of_a_history_chart_has_its_values_on_hover(history_charts):
    """Issue 34 on the history pages: a point per version whose <title> names the version, its
    run, the median with its unit, the repetitions' range and the flags."""
    from tests import series_gen
    for svg in sorted(history_charts.rglob("*.svg")):
        titles = point_titles(svg)
        versions = [series_gen.version_name(v) for v in range(1, series_gen.VERSIONS + 1)]
        medians = [t for t in titles if not re.search(r"censored|host busy", t)]
        assert [t.split(" (run ")[0] for t in titles[:len(versions)]] == \
            [f"version {v}" for v in versions], svg.name
        for t in medians:
            assert re.fullmatch(r"version [\d.]+ \(run \S+\): p99 [\d,.]+ ms, median of 3 "
                                r"repetitions \(range [\d,.]+–[\d,.]+ ms\)"
                                r"(; a (regression|improvement) of [+-][\d.]+ % starts here)?",
                                t), t
    # version 0.1 of pool at r50 is both: its point on the line and each flag's mark say so
    first = [t for t in point_titles(history_charts / "synthetic" / "pool-r50.svg")
             if t.startswith("version 0.1 ")]
    assert len(first) == 3 and all("; censored: a lower bound; host busy" in t for t in first)
    regression = [t for t in point_titles(history_charts / "synthetic" / "pool-r200.svg")
                  if "starts here" in t]
    assert regression and regression[0].startswith("version 0.12 ")


def test_fanout_curve_draws_futures_and_pekko_on_one_chart_from_the_cell_table():
    svg = CHARTS / "fanout-curve" / "compare-load-curve.svg"
    rows = cell_table("fanout-curve")
    labels = {"Fan-out, futures": "fanout-futures", "Fan-out, Pekko Streams": "fanout-pekko"}
    seen = set()
    for title in point_titles(svg):
        m = POINT.match(title)
        assert m, title
        scenario, load = labels[m["who"]], float(m["load"].replace(",", ""))
        cell = [r for r in rows if r["scenario"] == scenario and float(r["offered_rate"]) == load]
        assert len(cell) == 3
        assert close_to_printed(m["ms"], median_ms(cell, m["stat"])), title
        seen.add((scenario, load, m["stat"]))
    assert len(seen) == 2 * 7 * 2     # both scenarios, every load, p50 and p99
    page = (REPO / "_reports" / "fanout-curve.html").read_text()
    assert page.index("compare-load-curve.svg") < page.index('<table class="summary">')


def test_fanout_curve_summary_compares_both_scenarios_at_one_load_in_one_table():
    doc = data_doc("fanout-curve")
    st = doc["summary_table"]
    assert {s["point_text"] for s in st["scenarios"]} == {"3,000 req/s"}
    assert len(st["orders"]) == 1     # one target: one table, not the same row four times
    # 3,000 is the highest offered rate at which no repetition of either scenario saturated or
    # was unsteady (computed here from the cell table)
    rows = cell_table("fanout-curve")
    calm = {rate for rate in {float(r["offered_rate"]) for r in rows}
            if all(r["saturated"] == "False" and r["not_steady"] == "False"
                   for r in rows if float(r["offered_rate"]) == rate)}
    assert max(calm) == 3000.0
    assert "Every load&#39;s own graphs are above" not in \
        (REPO / "_reports" / "fanout-curve.html").read_text()


def test_many_servers_summary_panels_show_every_target_in_one_order_from_the_cell_table():
    manifest = yaml.safe_load((REPO / "runs" / "many-servers" / "run.yml").read_text())
    labels = [s["label"] for s in manifest["systems"]]
    by_label = {s["label"]: s["id"] for s in manifest["systems"]}
    rows = cell_table("many-servers")
    doc = data_doc("many-servers")
    panels = doc["summary_charts"]["panels"]
    assert [p["scenario"] for p in panels] == [s["id"] for s in manifest["scenarios"]]
    points = {s["id"]: s["point_text"] for s in doc["summary_table"]["scenarios"]}
    for panel in panels:
        titles = [POINT.match(t) for t in point_titles(REPO / panel["svg"])]
        assert all(titles)
        order = list(dict.fromkeys(m["who"] for m in titles))
        assert order == labels, panel["scenario"]          # the same rows in every panel
        for m in titles:
            assert f"{m['load']} req/s" == points[panel["scenario"]]   # the table's load
            cell = [r for r in rows if r["scenario"] == panel["scenario"]
                    and r["system"] == by_label[m["who"]]
                    and float(r["offered_rate"]) == float(m["load"].replace(",", ""))]
            assert close_to_printed(m["ms"], median_ms(cell, m["stat"])), m.string
        # a saturated target is drawn so: ringed, and its row's label says it
        block = doc["scenarios"][panel["scenario"]]["cells"]
        load = next(lp for lp, cells in block.items()
                    if f"{float(lp[1:]):,.0f} req/s" == points[panel["scenario"]])
        saturated = {s for s, c in block[load].items() if c["saturated"]}
        text = (REPO / panel["svg"]).read_text()
        for label, sid in by_label.items():
            assert (f">{label} (saturated)</text>" in text) == (sid in saturated)
    page = (REPO / "_reports" / "many-servers.html").read_text()
    assert page.index("summary-sleep.svg") < page.index("<table")


@pytest.mark.parametrize("run", ["pool-vs-virtual", "vegeta-vs-hey"])
def test_a_run_without_scenarios_shows_its_load_curve_before_its_table(run):
    page = (REPO / "_reports" / f"{run}.html").read_text()
    assert page.index("load-curve.svg") < page.index("<table")
