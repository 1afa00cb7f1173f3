"""One meaning per number (issue 22), on the bundled pool-vs-virtual run.

Rates (docs/data-format.md, "Rates"): `throughput_rps` is every reply during the window per
second, `goodput_rps` the window's requests answered in time, counted through the drain. They
differ most for the pool of 20 threads at 200 req/s, whose throughput stays at its ceiling of
100 while its goodput, the window's answered requests over window seconds, reads 161. CPU: one
unit (percent of the machine) in every table of a page."""
from __future__ import annotations

import json
import re
import statistics

import pytest

from analysis.derive.analyse import analyse_run
from analysis.read.manifest import load_manifest
from analysis.vocabulary import SERIES_COLUMNS, SUMMARY_CSV_COLUMNS, TABLE_CSV_COLUMNS, fmt_rate
from analysis.corpus.cell_table import COLUMNS as CORPUS_COLUMNS
from analysis.write import datafiles, liquid_pages
from tests.conftest import REPO

RUN = "pool-vs-virtual"


@pytest.fixture(scope="module")
def analysed():
    run = analyse_run(load_manifest(REPO / "runs" / RUN), REPO)
    return run, datafiles.run_document(run)


def _table_cells(doc):
    return {(row["load"], c["system"]): c
            for row in doc["load_curve_table"]["rows"] for c in row["cells"]}


def test_past_the_ceiling_goodput_exceeds_throughput(analysed):
    run, doc = analysed
    cell = doc["cells"]["r200"]["pool20"]
    # from the generator's counts files directly: per repetition the window's requests
    # answered in time, and every reply in the window's intervals, over the window's seconds
    goodput, throughput = [], []
    for path in sorted((REPO / "runs" / RUN / "pool20").glob("r200.*.counts.json")):
        counts = json.loads(path.read_text())
        w = counts["window"]
        seconds = w["end_s"] - w["start_s"]
        goodput.append(w["completed"] / seconds)
        throughput.append(sum(iv["completed"] for iv in counts["intervals"]
                              if iv["phase"] == "window") / seconds)
    assert len(goodput) == 3
    assert cell["goodput_rps"] == round(statistics.median(goodput), 3) == 161.083
    assert cell["throughput_rps"] == round(statistics.median(throughput), 3) == 99.25
    assert cell["throughput_rps"] <= run.scenario.systems[0].predicted_ceiling_rps


def test_the_table_and_the_prose_print_one_throughput(analysed):
    """The load-curve table's rate column and stat.html's field="throughput" print the same
    text for every cell (the post once quoted 100.0 above a table showing 99.7)."""
    _, doc = analysed
    table = _table_cells(doc)
    for load, by_system in doc["cells"].items():
        for system, cell in by_system.items():
            shown = table[(load, system)]
            assert shown["throughput_rps"] == cell["throughput_rps"], (load, system)
            assert shown["throughput_text"] == cell["throughput_text"] \
                == fmt_rate(cell["throughput_rps"]), (load, system)
    assert doc["cells"]["r100"]["pool20"]["throughput_text"] == "99.7"
    assert table[("r200", "pool20")]["throughput_text"] == "99.2"


def test_no_page_shows_a_goodput_under_a_throughput_heading(analysed):
    _, doc = analysed
    html = liquid_pages.render_page(REPO, "report", {"run": RUN, "title": "t"}, RUN, doc)
    table = html[html.index('id="load-curve-pool-vs-virtual"'):]
    table = table[:table.index("</table>")]
    headers = re.findall(r'<th scope="col">([a-z ]+)<br><small>req/s</small>', table)
    assert headers == ["throughput", "throughput"]
    goodput = doc["cells"]["r200"]["pool20"]["goodput_text"]
    assert goodput == "161.1" and goodput not in table
    assert "achieved" not in html.lower()


def test_no_data_key_csv_column_or_include_says_achieved(analysed):
    _, doc = analysed

    def keys(node):
        if isinstance(node, dict):
            for k, v in node.items():
                yield str(k)
                yield from keys(v)
        elif isinstance(node, list):
            for v in node:
                yield from keys(v)

    assert not [k for k in keys(doc) if "achieved" in k or "server_completion" in k]
    for columns in (SERIES_COLUMNS, TABLE_CSV_COLUMNS, SUMMARY_CSV_COLUMNS, CORPUS_COLUMNS):
        assert "throughput_rps" in columns and not [c for c in columns if "achieved" in c]
    for include in sorted((REPO / "_includes").glob("*.html")):
        assert "achieved" not in include.read_text(encoding="utf-8"), include.name


def test_the_throughput_chart_plots_every_reply(analysed):
    """Per interval, the series' throughput is every reply (the counts file), so over the
    window it averages to the cell's throughput, not to the window's answered requests (which
    for the pool begin 5 s into the window: the first replies go to warm-up requests)."""
    run, _ = analysed
    rep = run.scenario.cell("r200", "pool20").repetitions[0]
    window = [row for row in rep.series if row["t_s"] < 12.0]
    assert len(window) == 12
    mean = sum(row["throughput_rps"] for row in window) / len(window)
    assert mean == pytest.approx(rep.throughput_rps)
    assert window[0]["count"] == 0 and window[0]["throughput_rps"] == 100.0


def test_a_schema_1_run_has_one_rate_its_throughput():
    run = analyse_run(load_manifest(REPO / "tests/fixtures/runs/oracle-demo"), REPO)
    doc = datafiles.run_document(run)
    cells = [c for by_system in doc["cells"].values() for c in by_system.values()]
    assert cells and all("goodput_rps" not in c and c["goodput_text"] == "–" for c in cells)
    duration = {lp.id: lp.duration_s for lp in run.scenario.load_points}
    for cell in run.scenario.measured():
        recorded = [r.stats.count / duration[cell.load] for r in cell.repetitions]
        assert cell.goodput_rps is None
        assert cell.throughput_rps == pytest.approx(statistics.median(recorded))
    rules = " ".join(doc["load_curve_table"]["rules"])
    assert "throughput: the replies the log recorded during the window, per second" in rules


def test_summary_column_is_throughput():
    from analysis.write.summary import COLUMNS
    assert COLUMNS[0][:2] == ("throughput", "throughput")


def test_data_format_defines_both_rates():
    text = (REPO / "docs" / "data-format.md").read_text(encoding="utf-8")
    rates = text[text.index("### Rates"):text.index("### Schema versions")]
    assert "**`throughput_rps`**" in rates and "**`goodput_rps`**" in rates
    assert "- 5 (issue 22)" in text and "schema_version: 5" in text
    assert datafiles.SCHEMA_VERSION == 5


def _report(doc) -> str:
    return liquid_pages.render_page(REPO, "report", {"run": RUN, "title": "t"}, RUN, doc)


def _table(html: str, css_class: str) -> str:
    start = html.index(f'<table class="{css_class}">')
    return html[start:html.index("</table>", start)]


def test_every_cpu_figure_on_the_page_is_a_percentage(analysed):
    """The JFR table once printed CPU as fractions (0.025) under the host-health table's
    percentages (4.4 %)."""
    run, doc = analysed
    html = _report(doc)
    jvm = _table(html, "jvm")
    rows = re.findall(r"<tr><th scope=\"row\">.*?</tr>", jvm, re.S)
    assert len(rows) == len(doc["jvm_table"]["rows"]) == 12
    percent = r"\d+\.\d %"
    for row in rows:
        cells = re.findall(r"<td>(.*?)</td>", row, re.S)
        jvm_cpu, machine_cpu = cells[5].strip(), cells[6].strip()
        assert re.fullmatch(f"{percent} / {percent}", jvm_cpu), jvm_cpu
        assert re.fullmatch(percent, machine_cpu), machine_cpu
    # the same figure in both units would read 100 times apart: the first cell's, by hand
    first = run.scenario.cell("r25", "pool20").jvm.summary["cpu"]
    assert doc["jvm_table"]["rows"][0]["cpu_machine_text"] == f"{first['machine'] * 100:.1f} %"
    host = _table(html, "host")
    assert re.findall(r"<td>(\d+\.\d %)</td>", host)
    assert "100 % = every core busy" in html and "(1 = every core busy)" not in html


def _chart(run, kind: str, load: str) -> dict:
    from analysis.write.charts import run_jobs
    return next(j for j in run_jobs.chart_plan(run)
                if j["kind"] == kind and j["svg"].endswith(f"-{load}.svg"))


def test_latency_over_time_says_its_lines_start_at_completion(analysed):
    """Past the knee the pool's line starts 5 s in: intervals hold requests by completion
    time, and the pool answers no window request in time before its backlog of warm-up
    requests clears. The axis says so, and the window's end is drawn (the drain follows)."""
    from analysis.write.charts import svgcharts, svgdraw
    run, _ = analysed
    job = _chart(run, "latency_over_time", "r200")
    pool = next(s for s in job["data"]["systems"] if s["label"].startswith("Fixed pool"))
    first = next(t for t, v in zip(pool["t_s"], pool["p99_ms"]) if v is not None)
    assert first == 5.0
    plot = svgcharts.latency_over_time(job["data"])
    assert plot.x.label == "time of completion (s since the window's start)"
    assert [r.at for r in plot.rules if r.span == (0.0, 1.0)] == [12.0]
    assert plot.entries[-1].label == "end of the window (the drain follows)"
    for narrow in (False, True):
        svg = svgdraw.render_svg(plot, narrow=narrow)
        assert "time of completion (s since the window's start)" in svg
    throughput = svgcharts.throughput_over_time(_chart(run, "throughput_over_time", "r200")["data"])
    assert throughput.x.label == "time (s since the window's start)"
