"""A JMH run (`kind: jmh`, issue 13): run.yml checks, the comparisons (speed-up by the mode's
direction, ≈ where the intervals overlap, the best), the golden data of the fixture run checked
against JMH's own numbers (tests/golden/jmh/expected.json, read with the standard library), the
report page's front matter, and a damaged file failing the run with one error line."""
from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest
import yaml

from analysis.derive import jmh_report as jr
from analysis.errors import LoadcurveError, ManifestError
from analysis.read.manifest import load_manifest
from analysis.write import jmh_views
from analysis.paths import find_data
from tests.conftest import REPO
from tests.golden.jmh.golden_data import check_against_expected
from tests.helpers import build, snapshot

pytestmark = pytest.mark.slow     # (make check leaves it out; make test runs it)

FIXTURE = REPO / "tests" / "fixtures" / "runs" / "jmh-short"
GOLDEN = REPO / "tests" / "golden" / "jmh"


def copy_run(tmp_path: Path, run_yml: str | None = None) -> Path:
    run = tmp_path / "site" / "runs" / "jmh-short"
    shutil.copytree(FIXTURE, run)
    if run_yml is not None:
        (run / "run.yml").write_text(textwrap.dedent(run_yml))
    return run


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    run = copy_run(tmp_path_factory.mktemp("jmh"))
    site = run.parents[1]
    out = build(site, "--jobs", "1")
    assert out.returncode == 0, out.stderr
    return site


def test_golden_data_file(built):
    ours = find_data(built, "jmh-short").read_text()
    assert ours == (GOLDEN / "jmh-short.yml").read_text(), \
        "data differs from the golden; if intended, run `make golden`"
    csv_text = (built / "assets" / "data" / "jmh-short" / "jmh.csv").read_text()
    assert csv_text == (GOLDEN / "jmh-short.csv").read_text()


def test_numbers_equal_jmhs_own(built):
    """Every score, error, -prof gc figure and percentile as JMH wrote it, and every speed-up
    and relation as record.py recomputed them without our code."""
    expected = json.loads((GOLDEN / "expected.json").read_text())
    assert {e["relation"] for e in expected} >= {"baseline", "same", "faster", "slower"}
    doc = yaml.safe_load(find_data(built, "jmh-short").read_text())
    csv_text = (built / "assets" / "data" / "jmh-short" / "jmh.csv").read_text()
    assert check_against_expected(doc, csv_text, expected) == []


def test_report_page_charts_and_second_build(built, tmp_path):
    page = (built / "_reports" / "jmh-short.html").read_text()
    front = yaml.safe_load(page.split("---")[1])
    # the body is _layouts/jmh-report.html's HTML, rendered by the analysis (liquid_pages.py)
    assert front["layout"] == "default" and front["generated_by"] == "loadcurve"
    assert '<h2 id="jmh-' in page
    assert (built / front["image"].lstrip("/")).is_file()
    doc = yaml.safe_load(find_data(built, "jmh-short").read_text())
    for chart in doc["charts"].values():
        for key in ("svg", "narrow_svg"):
            assert (built / chart[key]).is_file(), chart[key]
    # no post names the run: its og:image chart is its only PNG (analysis/write/charts/png_use.py)
    assert [c["png"] for c in doc["charts"].values() if "png" in c] == [front["image"][1:]]
    assert list(doc["jmh_sweeps"]["pipeline"]) == ["parallelism"]
    assert "modes" in doc["jmh_percentiles"] and "ring" in doc["jmh_memory"]
    # same inputs, byte-identical outputs (charts included)
    again = copy_run(tmp_path).parents[1]
    assert build(again, "--jobs", "1").returncode == 0
    assert snapshot(again) == snapshot(built)


def test_methodology_warns_of_single_forks_and_wide_errors(built):
    meth = yaml.safe_load(find_data(built, "jmh-short").read_text())[
        "jmh_methodology"]
    kinds = {w["id"]: w for w in meth["warnings"]}
    assert set(kinds) == {"single_fork", "wide_errors", "no_error"}
    # the short mode's 11 results are single-fork and single-iteration; every mode's has 2 forks
    assert len(kinds["single_fork"]["items"]) == 11 == len(kinds["no_error"]["items"])
    assert any("Every mode: mapAsync (parallelism 4) (average time): ± " in item
               for item in kinds["wide_errors"]["items"])
    modes = next(f for f in meth["files"] if f["id"] == "modes")
    settings = {s["label"]: s["value"] for s in modes["settings"]}
    assert settings["Blackhole mode"] == "compiler"
    assert settings["JMH version"] == "1.37"


def test_speed_up_follows_the_mode():
    from analysis.read.jmh.results import JmhResult
    fast = JmhResult("b.x", "thrpt", score=200.0)
    slow = JmhResult("b.y", "thrpt", score=100.0)
    assert jr.speed_up(fast, slow) == 2.0
    assert jr.speed_up(JmhResult("b.x", "avgt", score=50.0),
                       JmhResult("b.y", "avgt", score=100.0)) == 2.0
    assert jmh_views.speed_text(2.0) == "2.00× faster"
    assert jmh_views.speed_text(0.5) == "2.00× slower"
    assert jmh_views.speed_text(1 / 3285.75) == "3,286× slower"
    assert jmh_views.speed_text(12.44) == "12.4× faster"
    assert jr.overlap((1.0, 3.0), (2.9, 5.0)) and not jr.overlap((1.0, 2.0), (2.1, 3.0))


@pytest.mark.parametrize("entry, message", [
    ("  baseline: nosuch\n", "line 10: jmh[0].baseline: 'nosuch' is not a column"),
    ("  sweeps: [nosuch]\n", "line 10: jmh[0].sweeps: 'nosuch' is not a param"),
    ("  columns: nosuch\n", "line 9: jmh[0].columns: 'nosuch' is neither"),
])
def test_a_layout_naming_nothing_is_one_error_with_its_line(tmp_path, entry, message):
    run = copy_run(tmp_path, "kind: jmh\ntitle: t\ndate: 2026-11-24\ndescription: d\n"
                   "jmh:\n- id: ring\n  file: ring.json\n  title: x\n" + (
                       "  columns: benchmark\n" if "columns" not in entry else "") + entry)
    manifest = load_manifest(run, run.parent)
    with pytest.raises(ManifestError) as err:
        jr.build_report(manifest, run.parents[1])
    assert message in str(err.value) and str(err.value).startswith(str(run / "run.yml"))


@pytest.mark.parametrize("text, message", [
    ("kind: jmhh\n", "line 1: kind: must be load or jmh"),
    ("kind: jmh\ntitle: t\ndate: 2026-11-24\ndescription: d\njmh:\n- id: a\n  file: ../x.json\n",
     "line 7: jmh[0].file: '../x.json' leaves the run folder"),
    ("kind: jmh\ntitle: t\ndate: 2026-11-24\ndescription: d\njmh:\n- id: a\n  file: gone.json\n",
     "line 7: jmh[0].file: 'gone.json' is not a file"),
    ("kind: jmh\ntitle: t\ndate: 2026-11-24\ndescription: d\njmh:\n- id: a\n  file: ring.json\n"
     "  value_unit: us\n", "line 8: jmh[0].value_unit: unknown key"),
    ("kind: jmh\ntitle: t\ndate: 2026-11-24\ndescription: d\n", "jmh: required (a list"),
])
def test_manifest_problems_name_their_line(tmp_path, text, message):
    run = copy_run(tmp_path, text)
    with pytest.raises(ManifestError) as err:
        load_manifest(run, run.parent)
    assert message in str(err.value), str(err.value)


def test_a_damaged_result_file_fails_the_run_with_one_error_line(tmp_path):
    run = copy_run(tmp_path)
    (run / "ring.json").write_text((FIXTURE / "ring.json").read_text()[:3000])
    out = build(run.parents[1], "--jobs", "1")
    assert out.returncode == 1
    errors = [line for line in out.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "runs/jmh-short/ring.json:" in errors[0], out.stderr
    assert "Traceback" not in out.stderr


def test_load_test_runs_still_load_with_or_without_kind(tmp_path):
    src = REPO / "tests" / "fixtures" / "runs" / "oracle-demo"
    run = tmp_path / "runs" / "oracle-demo"
    shutil.copytree(src, run)
    assert not hasattr(load_manifest(run, run.parent), "files")
    (run / "run.yml").write_text("kind: load\n" + (src / "run.yml").read_text())
    assert load_manifest(run, run.parent).run_id == "oracle-demo"


def test_an_injection_string_stays_a_string(tmp_path):
    evil = '<script>alert(1)</script> "><img src=x onerror=alert(1)> {{ site }}'
    run = copy_run(tmp_path)
    data = yaml.safe_load((run / "run.yml").read_text())
    data["title"] = evil
    data["jmh"][0]["labels"]["pekkoActors"] = evil
    (run / "run.yml").write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False))
    report = jr.build_report(load_manifest(run, run.parent), run.parents[1])
    doc = jmh_views.run_document(report)
    assert doc["title"] == evil
    assert doc["jmh_variants"]["ring"]["columns"][3]["label"] == evil
    assert yaml.safe_load(jmh_views.report_text(report, REPO, doc).split("---")[1])["title"] == evil


def test_no_results_at_all_is_an_error(tmp_path):
    run = copy_run(tmp_path, "kind: jmh\ntitle: t\ndate: 2026-11-24\ndescription: d\n"
                   "jmh:\n- id: a\n  file: empty.json\n")
    (run / "empty.json").write_text("[]\n")
    with pytest.raises(LoadcurveError, match="no JMH results"):
        jr.build_report(load_manifest(run, run.parent), run.parents[1])


def test_failed_benchmarks_are_reported_by_name_in_the_run(tmp_path):
    """A run of JMH's JSON with the console output of the same run (two benchmarks threw in
    every iteration, one in its second), and the console output alone as a result file: each
    failure is a build warning and an item of the methodology's warnings."""
    run = copy_run(tmp_path, """\
        kind: jmh
        title: t
        date: 2026-11-24
        description: d
        jmh:
        - id: flaky
          file: flaky.json
          console: flaky.txt
          title: Flaky
          columns: benchmark
          baseline: sums
        - id: text
          file: flaky.txt
          title: Flaky (console)
        """)
    jmh_fixtures = REPO / "tests" / "fixtures" / "jmh"
    shutil.copy(jmh_fixtures / "failed-iterations.json", run / "flaky.json")
    shutil.copy(jmh_fixtures / "failed-iterations-console.txt", run / "flaky.txt")
    report = jr.build_report(load_manifest(run, run.parent), run.parents[1])
    assert [len(t.results) for t in report.tables] == [4, 4]
    failed = [w for w in report.warnings if " failed in " in w]
    assert len(failed) == 3        # (the file is named twice: reported once)
    assert all(w.startswith("runs/jmh-short/flaky.txt: line ") for w in failed)
    warnings = jmh_views.methodology(report)["warnings"]
    assert warnings[0]["id"] == "failed"
    assert warnings[0]["text"].startswith("Failed: 3 benchmark(s) threw during the run. JMH has "
                                          "no result for 2 of them;")
    flaky = "loadcurve.jmhfail.FlakyBenchmark"
    assert warnings[0]["items"] == [
        f"{flaky}.alwaysFails size=8 (avgt) failed in warm-up iteration 1 of fork 1: "
        "java.lang.UnsupportedOperationException: not implemented for size 8 "
        "(runs/jmh-short/flaky.txt, line 16)",
        f"{flaky}.alwaysFails size=64 (avgt) failed in warm-up iteration 1 of fork 1: "
        "java.lang.UnsupportedOperationException: not implemented for size 64 "
        "(runs/jmh-short/flaky.txt, line 51)",
        f"{flaky}.failsInSecondIteration size=64 (avgt) failed in iteration 2 of fork 1: "
        "java.lang.IllegalStateException: iteration 3 of size 64 broke "
        "(runs/jmh-short/flaky.txt, line 112)"]
