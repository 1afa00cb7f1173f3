"""The JMH reader (analysis/read/jmh.py) and `python -m analysis jmh` (issue 13).

Real files from JMH 1.37 (tests/fixtures/jmh/README.md says how each was made): the harness's
short CI mode (bench/jmh/run.sh --short), and one `-bm all` run per result format. Hand-made
edge cases are derived from the real entries (old field names, NaN, holes, damage) so that
their shape stays JMH's. Expected values are computed here from the raw JSON, not by the
reader's helpers.
"""
from __future__ import annotations

import copy
import json
import statistics
import subprocess
import sys

import pytest

from analysis.errors import LoadcurveError
from analysis.read.jmh import read_jmh
from analysis.read.jmh.results import JmhError
from tests.conftest import REPO

FIXTURES = REPO / "tests" / "fixtures" / "jmh"
ALL_MODES = FIXTURES / "all-modes.json"
SHORT_RING = FIXTURES / "short-ring.json"
SHORT_PIPELINE = FIXTURES / "short-pipeline.json"


def raw(path):
    return json.loads(path.read_text(encoding="utf-8"))


def write(tmp_path, entries, name="r.json"):
    path = tmp_path / name
    path.write_text(json.dumps(entries, indent=4, ensure_ascii=False), encoding="utf-8")
    return path


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "analysis", "jmh", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


# ---- real JMH 1.37 output ---------------------------------------------------------------------

def test_all_modes_json_reads_every_field():
    jmh = read_jmh(ALL_MODES)
    assert jmh.format == "json" and jmh.warnings == []
    assert [(r.benchmark.rsplit(".", 1)[1], r.mode) for r in jmh.results] == [
        (b, m) for m in ("thrpt", "avgt", "sample", "ss") for b in ("javaStream", "mapAsync")]
    for r, entry in zip(jmh.results, raw(ALL_MODES)):
        pm = entry["primaryMetric"]
        assert r.params == entry.get("params", {})
        assert (r.score, r.error, r.unit) == (pm["score"], pm["scoreError"], pm["scoreUnit"])
        assert r.primary.confidence == tuple(pm["scoreConfidence"])
        # JMH's interval is score ± error: the reader took the right fields
        assert r.primary.confidence[0] == pytest.approx(r.score - r.error)
        s = r.settings
        assert (s.jmh_version, s.threads, s.forks) == ("1.37", 1, 2)
        assert (s.warmup_iterations, s.measurement_iterations) == (0, 2)
        assert s.measurement_time == "200 ms"
        assert s.jdk_version == entry["jdkVersion"] and s.vm_name == entry["vmName"]
        assert s.jvm == entry["jvm"] and s.jvm_args == entry["jvmArgs"]
        assert r.source.startswith(f"{ALL_MODES}:")
        names = {n for n in entry["secondaryMetrics"] if not n.startswith("p")}
        assert set(r.secondary_metrics) == names and "gc.alloc.rate.norm" in names
        norm = entry["secondaryMetrics"]["gc.alloc.rate.norm"]
        assert r.secondary["gc.alloc.rate.norm"] == norm["score"]
        assert r.secondary_metrics["gc.alloc.rate.norm"].unit == "B/op"
        # the per-fork means, computed here from the raw data
        if r.mode == "sample":
            hist = pm["rawDataHistogram"]
            expected = [sum(v * c for it in fork for v, c in it)
                        / sum(c for it in fork for _, c in it) for fork in hist]
            assert r.primary.samples == sum(c for fork in hist for it in fork for _, c in it)
            assert len(r.primary.raw_histogram) == 2
        else:
            expected = [sum(fork) / len(fork) for fork in pm["rawData"]]
            assert r.primary.raw_data == pm["rawData"]
            assert r.primary.samples == 4
        assert r.forks == pytest.approx(expected)
        assert len(r.forks) == 2
        if r.mode in ("thrpt", "avgt", "ss"):
            # equal iterations per fork: JMH's score is the mean of the fork means
            assert statistics.fmean(r.forks) == pytest.approx(r.score)


def test_sample_mode_percentiles_come_from_the_primary_metric():
    sample = [r for r in read_jmh(ALL_MODES).results if r.mode == "sample"]
    entry = [e for e in raw(ALL_MODES) if e["mode"] == "sample"][0]
    assert sample[0].primary.percentiles == entry["primaryMetric"]["scorePercentiles"]
    assert not any(n.startswith("p0") or n.startswith("p1") for n in sample[0].secondary_metrics)


def test_csv_and_text_carry_the_same_results_as_json():
    def shape(path):
        return [(r.benchmark.rsplit(".", 2)[-2:], r.mode, r.params, r.unit,
                 sorted(r.secondary_metrics)) for r in read_jmh(path).results]

    assert shape(FIXTURES / "all-modes.csv") == shape(ALL_MODES)
    assert shape(FIXTURES / "all-modes.txt") == shape(ALL_MODES)
    csv_results = read_jmh(FIXTURES / "all-modes.csv").results
    assert all(r.settings.threads == 1 for r in csv_results)
    thrpt = csv_results[0]
    assert thrpt.primary.samples == 4 and thrpt.score > 0 and thrpt.error > 0
    sample = [r for r in read_jmh(FIXTURES / "all-modes.txt").results if r.mode == "sample"][0]
    assert list(sample.primary.percentiles) == ["0.0", "50.0", "90.0", "95.0", "99.0", "99.9",
                                                "99.99", "100.0"]
    assert sample.primary.samples > 100
    # gc.count with "≈ 0" and no error: a score without an error bar
    assert sample.secondary_metrics["gc.count"].error is None


def test_console_output_gives_settings_and_forks_of_the_same_run():
    """all-modes-console.txt is JMH's console output of the run that wrote all-modes.json."""
    console = read_jmh(FIXTURES / "all-modes-console.txt").results
    json_results = read_jmh(ALL_MODES).results
    assert len(console) == len(json_results) == 8
    for c, j in zip(console, json_results):
        assert (c.benchmark, c.mode, c.params, c.unit) == (j.benchmark, j.mode, j.params, j.unit)
        assert c.settings.blackhole_mode == "compiler"
        for name in ("jmh_version", "jdk_version", "vm_name", "vm_version", "jvm", "jvm_args",
                     "threads", "forks", "warmup_iterations", "measurement_iterations"):
            assert getattr(c.settings, name) == getattr(j.settings, name), name
        if c.mode in ("thrpt", "avgt"):
            assert c.settings.measurement_time == j.settings.measurement_time == "200 ms"
        if c.mode == "sample":
            assert c.forks == [] and c.primary.percentiles.keys() <= j.primary.percentiles.keys()
        elif not c.primary.approximate:
            # the console prints 3 decimals
            assert c.forks == pytest.approx(j.forks, rel=2e-3, abs=1e-3)
            assert c.score == pytest.approx(j.score, rel=1e-3)


def test_text_reads_jmh_s_rounded_tiny_values():
    results = read_jmh(FIXTURES / "tiny-values.txt").results
    avgt = [r for r in results if r.mode == "avgt"]
    assert avgt[0].score == 1e-08 and avgt[0].primary.approximate and avgt[0].error is None
    assert avgt[1].score == 1e-05
    gc_count = results[0].secondary_metrics["gc.count"]
    assert gc_count.score == 0.0 and gc_count.approximate
    assert results[0].score == 63690871.076 and results[0].error == 17900172.225


@pytest.mark.parametrize("path", [SHORT_RING, SHORT_PIPELINE])
def test_short_ci_mode_output(path):
    jmh = read_jmh(path)
    assert jmh.warnings == []
    for r in jmh.results:
        assert r.score > 0 and r.error is None          # one iteration: JMH writes NaN
        assert r.settings.forks == 1 and r.settings.measurement_iterations == 1
        assert len(r.forks) == 1 and r.forks[0] == pytest.approx(r.score)
        assert r.secondary["gc.alloc.rate.norm"] > 0
    names = [r.benchmark.rsplit(".", 1)[1] for r in jmh.results]
    if path == SHORT_RING:
        assert names == ["executorActors", "pekkoActors", "platformThreads", "virtualThreads"]
        assert {r.unit for r in jmh.results} == {"us/op"}
        assert all(r.params == {"messages": "1000", "ringSize": "16"} for r in jmh.results)
    else:
        assert sorted(set(names)) == ["asyncBoundaries", "batched", "fused", "javaStream",
                                      "mapAsync"]
        assert [r.params["parallelism"] for r in jmh.results if "parallelism" in r.params] == \
            ["1", "4", "16"]
        assert {r.unit for r in jmh.results} == {"ops/s"}


# ---- hand-made: old versions, NaN, empty, holes ------------------------------------------------

def old_style(entry):
    """A JMH 1.19-style entry: no version or VM fields, "·"-prefixed secondary metrics."""
    old = copy.deepcopy(entry)
    for key in ("jmhVersion", "jdkVersion", "vmName", "vmVersion"):
        old.pop(key, None)
    old["secondaryMetrics"] = {"\u00b7" + k: v for k, v in old["secondaryMetrics"].items()}
    old["secondaryMetrics"]["\u00b7gc.churn.PS_Eden_Space.norm"] = \
        old["secondaryMetrics"]["\u00b7gc.alloc.rate.norm"]
    return old


def test_old_version_field_names(tmp_path):
    entries = raw(ALL_MODES)
    path = write(tmp_path, [old_style(e) for e in entries])
    for new, old in zip(read_jmh(ALL_MODES).results, read_jmh(path).results):
        assert old.settings.jmh_version is None and old.settings.jdk_version is None
        assert old.secondary["gc.alloc.rate.norm"] == new.secondary["gc.alloc.rate.norm"]
        assert "gc.churn.PS_Eden_Space.norm" in old.secondary
        assert (old.score, old.error, old.forks) == (new.score, new.error, new.forks)
        assert old.primary.percentiles == new.primary.percentiles


def test_old_text_names_sample_percentiles_with_the_method(tmp_path):
    text = (FIXTURES / "all-modes.txt").read_text(encoding="utf-8")
    old = (text.replace("javaStream:p", "javaStream:javaStream\u00b7p")
               .replace("mapAsync:p", "mapAsync:mapAsync\u00b7p")
               .replace(":gc.", ":\u00b7gc."))
    assert old != text
    path = tmp_path / "old.txt"
    path.write_text(old, encoding="utf-8")
    new_results = read_jmh(FIXTURES / "all-modes.txt").results
    old_results = read_jmh(path).results
    for new, o in zip(new_results, old_results):
        assert o.primary.percentiles == new.primary.percentiles
        assert o.secondary == new.secondary


def test_nan_and_missing_scores(tmp_path):
    entry = raw(SHORT_RING)[0]
    nan_string, nan_bare, missing = (copy.deepcopy(entry) for _ in range(3))
    nan_string["primaryMetric"]["score"] = "NaN"
    nan_bare["primaryMetric"]["scoreError"] = float("nan")
    nan_bare["params"] = {"messages": "1000", "ringSize": "17"}
    del missing["primaryMetric"]["score"]
    missing["params"] = {"messages": "1000", "ringSize": "18"}
    missing["secondaryMetrics"]["gc.count"]["score"] = "NaN"
    nan_string["params"] = {"messages": "1000", "ringSize": "19"}
    r1, r2, r3 = read_jmh(write(tmp_path, [nan_string, nan_bare, missing])).results
    assert r1.score is None and r1.primary.confidence is None
    assert r2.score == entry["primaryMetric"]["score"] and r2.error is None
    assert r3.score is None and r3.secondary["gc.count"] is None
    assert r3.forks == pytest.approx([entry["primaryMetric"]["rawData"][0][0]])


def test_empty_array_and_empty_arrays_inside(tmp_path):
    assert read_jmh(write(tmp_path, [])).results == []
    entry = copy.deepcopy(raw(SHORT_RING)[0])
    entry["primaryMetric"]["rawData"] = []
    entry["secondaryMetrics"] = {}
    entry["params"] = {}
    (r,) = read_jmh(write(tmp_path, [entry], "e.json")).results
    assert r.forks == [] and r.secondary == {} and r.primary.samples is None


def test_holes_in_a_parameter_grid_are_reported(tmp_path):
    entries = raw(SHORT_PIPELINE)
    no_p4 = [e for e in entries if e.get("params", {}).get("parallelism") != "4"]
    jmh = read_jmh(write(tmp_path, no_p4))
    # three values seen would be needed for a hole in a one-param grid: none here
    assert jmh.warnings == []
    ring = raw(SHORT_RING)[0]
    combos = [("16", "1000"), ("16", "10000"), ("1024", "1000")]
    grid = []
    for size, messages in combos:
        e = copy.deepcopy(ring)
        e["params"] = {"ringSize": size, "messages": messages}
        grid.append(e)
    (warning,) = read_jmh(write(tmp_path, grid, "g.json")).warnings
    assert "1 of 4 parameter combinations have no result" in warning
    assert "messages=10000 ringSize=1024" in warning
    dup = read_jmh(write(tmp_path, grid + grid[:1], "d.json")).warnings
    assert any("1 duplicate" in w for w in dup)


# ---- damaged files: one JmhError naming file and position ------------------------------------

def test_truncated_json_names_file_line_and_column(tmp_path):
    text = SHORT_RING.read_text(encoding="utf-8")
    for cut in (1, 50, len(text) // 3, len(text) // 2, len(text.rstrip()) - 1):
        path = tmp_path / f"cut{cut}.json"
        path.write_text(text[:cut], encoding="utf-8")
        with pytest.raises(JmhError) as info:
            read_jmh(path)
        lines = text[:cut].count("\n") + 1
        message = str(info.value)
        assert message.startswith(f"{path}:")
        line, column = info.value.line, info.value.column
        assert 1 <= line <= lines and column >= 1
        assert "truncated" in message


def test_bad_json_token_position(tmp_path):
    text = SHORT_RING.read_text(encoding="utf-8")
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if '"threads"' in line)
    lines[at] = lines[at].replace(": 1,", ": 1 x,")
    path = tmp_path / "bad.json"
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(JmhError) as info:
        read_jmh(path)
    assert info.value.line == at + 1
    assert info.value.column == lines[at].index("x") + 1
    assert str(info.value).startswith(f"{path}:{at + 1}:{info.value.column}: invalid JSON")


@pytest.mark.parametrize("change, expected", [
    (lambda e: e.update(mode="fast"), "mode: expected one of thrpt, avgt, sample, ss"),
    (lambda e: e["primaryMetric"].update(score="fast"), "primaryMetric.score: expected a number"),
    (lambda e: e.pop("primaryMetric"), "primaryMetric: missing"),
    (lambda e: e.update(threads="1"), "threads: expected a whole number"),
    (lambda e: e["primaryMetric"].update(rawData=[1.0]),
     "primaryMetric.rawData[0]: expected an array"),
    (lambda e: e["secondaryMetrics"].update(x=[]), "secondaryMetrics.x: expected an object"),
])
def test_wrong_types_name_the_entry_and_its_position(tmp_path, change, expected):
    entries = raw(SHORT_RING)
    change(entries[2])
    path = write(tmp_path, entries)
    with pytest.raises(JmhError) as info:
        read_jmh(path)
    text = path.read_text(encoding="utf-8")
    third = [i for i, line in enumerate(text.splitlines()) if line == "    {"][2]
    assert str(info.value).startswith(f"{path}:{third + 1}:5: entry 3: {expected}")


@pytest.mark.parametrize("content, expected", [
    ("", "empty file"),
    ("   \n", "empty file"),
    ('{"benchmark": "x"}', "neither a JMH JSON array"),
    ("[1, 2]", "entry 1: expected an object"),
    ('[] []', "extra data after the top-level array"),
    ('"Benchmark","Mode"\n', "CSV header lacks"),
])
def test_not_jmh_results(tmp_path, content, expected):
    path = tmp_path / "x.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(JmhError, match=expected):
        read_jmh(path)


def test_damaged_csv_and_text_name_the_line(tmp_path):
    lines = (FIXTURES / "all-modes.csv").read_text(encoding="utf-8").splitlines()
    path = tmp_path / "cut.csv"
    path.write_text("\n".join(lines[:5] + [lines[5][:30]]), encoding="utf-8")
    with pytest.raises(JmhError, match=r"cut\.csv:6: .*columns.*truncated"):
        read_jmh(path)
    lines = (FIXTURES / "all-modes.txt").read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3].replace("0.", "zero.", 1)
    path = tmp_path / "bad.txt"
    path.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(JmhError, match=r"bad\.txt:4: expected a score"):
        read_jmh(path)


def test_not_utf8(tmp_path):
    path = tmp_path / "b.json"
    path.write_bytes(b"[\xff]")
    with pytest.raises(LoadcurveError, match="not UTF-8"):
        read_jmh(path)


# ---- the command --------------------------------------------------------------------------------

def test_command_table():
    out = run_cli(ALL_MODES)
    assert out.returncode == 0 and out.stderr == ""
    lines = out.stdout.splitlines()
    assert lines[0].startswith(f"{ALL_MODES}: JMH json, 8 results, JMH 1.37, JDK 25")
    assert "forks 2, no warm-up" in lines[0] and "measurement 2 x 200 ms" in lines[0]
    assert lines[1].split() == ["Benchmark", "Params", "Mode", "Score", "Error", "Units",
                                "Forks", "Fork", "min", "median", "max"]
    entry = [e for e in raw(ALL_MODES) if e["mode"] == "avgt" and e.get("params")][0]
    pm = entry["primaryMetric"]
    means = sorted(sum(f) / len(f) for f in pm["rawData"])
    row = [line for line in lines if line.startswith("PipelineBenchmark.mapAsync")
           and " avgt " in line][0]
    assert row.split() == ["PipelineBenchmark.mapAsync", "parallelism=4", "avgt",
                           f"{pm['score']:.3f}", "±", f"{pm['scoreError']:.3f}", "ns/op", "2",
                           f"{means[0]:.3f}", f"{statistics.median(means):.3f}",
                           f"{means[1]:.3f}"]
    assert any(line.split()[:2] == [":gc.alloc.rate.norm", "avgt"] for line in lines)
    sample_rows = [line.split()[0] for line in lines if " sample " in line]
    assert ":p99.9" in sample_rows and ":p50" in sample_rows
    assert not any(line.split()[0] == ":p50" and " avgt " in line for line in lines)


def test_command_json_matches_the_file():
    out = run_cli(ALL_MODES, "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["format"] == "json" and doc["warnings"] == []
    for r, entry in zip(doc["results"], raw(ALL_MODES)):
        pm = entry["primaryMetric"]
        assert (r["score"], r["error"]) == (pm["score"], pm["scoreError"])
        assert r["unit"] == pm["scoreUnit"]
        if "rawData" in pm:
            means = [sum(f) / len(f) for f in pm["rawData"]]
            assert r["forks"]["min"] == pytest.approx(min(means))
            assert r["forks"]["max"] == pytest.approx(max(means))
        assert r["settings"]["jmh_version"] == "1.37"
        assert r["secondary"]["gc.alloc.rate.norm"]["unit"] == "B/op"
    assert run_cli(ALL_MODES, "--json").stdout == out.stdout


def test_command_reads_csv_and_text():
    for name in ("all-modes.csv", "all-modes.txt"):
        out = run_cli(FIXTURES / name)
        assert out.returncode == 0, out.stderr
        assert "PipelineBenchmark.mapAsync" in out.stdout


def test_command_errors_are_one_line(tmp_path):
    cut = tmp_path / "cut.json"
    cut.write_text(SHORT_RING.read_text(encoding="utf-8")[:700], encoding="utf-8")
    empty = write(tmp_path, [], "empty.json")
    for path, expected in ((cut, f"error: {cut}:"),
                           (empty, f"error: {empty}: no benchmark results"),
                           (tmp_path / "absent.json", "error: ")):
        out = run_cli(path)
        assert out.returncode == 1
        assert out.stderr.count("\n") == 1 and out.stderr.startswith(expected), out.stderr
        assert "Traceback" not in out.stderr and out.stdout == ""


def test_command_warns_about_holes(tmp_path):
    ring = raw(SHORT_RING)[0]
    grid = []
    for size, messages in (("16", "1000"), ("16", "10000"), ("1024", "1000")):
        e = copy.deepcopy(ring)
        e["params"] = {"ringSize": size, "messages": messages}
        grid.append(e)
    out = run_cli(write(tmp_path, grid))
    assert out.returncode == 0
    assert out.stderr.startswith("warning: ") and "parameter combinations" in out.stderr


# ---- failed benchmarks (issue 22): real console output of FlakyBenchmark.java -------------------

FAILED_ITERATIONS = FIXTURES / "failed-iterations-console.txt"
FLAKY = "loadcurve.jmhfail.FlakyBenchmark"


def test_console_output_with_failed_iterations_reads_every_result():
    """JMH's table has the four benchmarks that finished (failsInSecondIteration size=64 from
    the one iteration before it threw), as the JSON of the same run has them; the two
    alwaysFails runs have neither a row nor an entry."""
    jmh = read_jmh(FAILED_ITERATIONS)
    assert jmh.format == "text"
    entries = raw(FIXTURES / "failed-iterations.json")
    got = [(r.benchmark, r.params, r.score, r.primary.raw_data) for r in jmh.results]
    assert got == [(e["benchmark"], e["params"], round(e["primaryMetric"]["score"], 3),
                    [[round(v, 3) for v in fork] for fork in e["primaryMetric"]["rawData"]])
                   for e in entries]
    assert [len(fork) for r in jmh.results for fork in r.primary.raw_data] == [2, 1, 2, 2]
    assert {r.settings.measurement_iterations for r in jmh.results} == {2}
    # the JSON alone cannot name the failures: it has no entry for alwaysFails
    assert read_jmh(FIXTURES / "failed-iterations.json").failures == []


def test_failed_benchmarks_are_named_with_iteration_and_exception():
    jmh = read_jmh(FAILED_ITERATIONS)
    failed = [(f.benchmark, f.params, f.line, f.iteration, f.fork, f.exception, f.has_result)
              for f in jmh.failures]
    assert failed == [
        (f"{FLAKY}.alwaysFails", {"size": "8"}, 16, "warm-up iteration 1", 1,
         "java.lang.UnsupportedOperationException: not implemented for size 8", False),
        (f"{FLAKY}.alwaysFails", {"size": "64"}, 51, "warm-up iteration 1", 1,
         "java.lang.UnsupportedOperationException: not implemented for size 64", False),
        (f"{FLAKY}.failsInSecondIteration", {"size": "64"}, 112, "iteration 2", 1,
         "java.lang.IllegalStateException: iteration 3 of size 64 broke", True)]
    assert jmh.warnings == [
        f"line 16: {FLAKY}.alwaysFails size=8 (avgt) failed in warm-up iteration 1 of fork 1: "
        "java.lang.UnsupportedOperationException: not implemented for size 8; it has no result",
        f"line 51: {FLAKY}.alwaysFails size=64 (avgt) failed in warm-up iteration 1 of fork 1: "
        "java.lang.UnsupportedOperationException: not implemented for size 64; it has no "
        "result",
        f"line 112: {FLAKY}.failsInSecondIteration size=64 (avgt) failed in iteration 2 of "
        "fork 1: java.lang.IllegalStateException: iteration 3 of size 64 broke; JMH's result "
        "for it comes from the iterations before the failure"]


def test_command_on_failed_iterations_prints_the_results_and_a_warning_per_failure():
    out = run_cli(FAILED_ITERATIONS)
    assert out.returncode == 0, out.stderr
    warnings = out.stderr.splitlines()
    assert len(warnings) == 3 and all(w.startswith(f"warning: {FAILED_ITERATIONS}: line ")
                                      for w in warnings)
    assert [w.split(": ")[3].split()[0] for w in warnings] == [
        f"{FLAKY}.alwaysFails", f"{FLAKY}.alwaysFails", f"{FLAKY}.failsInSecondIteration"]
    rows = [line.split()[:4] for line in out.stdout.splitlines()[2:]]
    assert rows == [[e["benchmark"].removeprefix("loadcurve.jmhfail."),
                     f"size={e['params']['size']}", "avgt",
                     f"{e['primaryMetric']['score']:.3f}"]
                    for e in raw(FIXTURES / "failed-iterations.json")]
    doc = json.loads(run_cli(FAILED_ITERATIONS, "--json").stdout)
    assert [f["line"] for f in doc["failures"]] == [16, 51, 112]


def test_a_run_where_every_benchmark_failed_is_one_error_after_the_warnings():
    """JMH prints the table's header and no row, and exits 0."""
    path = FIXTURES / "all-failed-console.txt"
    out = run_cli(path)
    assert out.returncode == 1 and out.stdout == ""
    lines = out.stderr.splitlines()
    assert [line.split(": ")[0] for line in lines] == ["warning", "warning", "error"]
    assert "alwaysFails size=8 (avgt) failed in warm-up iteration 1" in lines[0]
    assert "alwaysFails size=64 (avgt) failed in warm-up iteration 1" in lines[1]
    assert lines[2] == f"error: {path}: no benchmark results: every benchmark failed (2, each " \
                       "in a warning)"


def test_output_stopped_by_fail_on_error_names_the_failure():
    """-foe true: JMH stops at the first failure, without a table, and exits 1."""
    path = FIXTURES / "fail-on-error-console.txt"
    out = run_cli(path)
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.count("\n") == 1
    assert out.stderr.startswith(
        f"error: {path}:16: JMH's console output stops before its results table: "
        f"{FLAKY}.alwaysFails size=8 (avgt) failed in warm-up iteration 1 of fork 1: "
        "java.lang.UnsupportedOperationException: not implemented for size 8"), out.stderr
