"""vegeta's encode and report files (issue 23). Golden numbers: vegeta's own report of the same
results.bin (report.json/report.txt), and nearest-rank percentiles over the raw latency column
read here with the csv module."""
from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

from analysis.read.loadtools import vegeta
from tests.loadtools_fixtures import (FIXTURES, assert_each_unusable_variant_fails,
                                      garbage_line, nearest_rank, read_fixture,
                                      truncated_mid_line)

DIR = FIXTURES / "vegeta"
REPORT = json.loads((DIR / "report.json").read_text())
RAW = list(csv.reader((DIR / "results.csv").open()))
RAW_LATENCY = sorted(int(row[2]) for row in RAW)


def _read(name):
    return read_fixture(vegeta, DIR / name)


@pytest.mark.parametrize("name, fmt", [
    ("results.csv", "vegeta-csv"), ("results.json", "vegeta-json"),
    ("report.json", "vegeta-report"), ("report.hdrplot", "vegeta-hdrplot"),
    ("report.txt", None)])
def test_sniff_names_each_file(name, fmt):
    assert vegeta.sniff((DIR / name).read_bytes()[:65536]) == fmt


@pytest.mark.parametrize("name", ["results.csv", "results.json"])
def test_samples_match_vegetas_own_report(name):
    s = _read(name)
    assert len(s) == REPORT["requests"] == 250
    codes = {str(c): int(n) for c, n in zip(*np.unique(s.status, return_counts=True))}
    assert codes == REPORT["status_codes"] == {"0": 3, "200": 232, "500": 15}
    assert s.ok.sum() == round(REPORT["success"] * REPORT["requests"])
    assert s.latency_ns.min() == REPORT["latencies"]["min"]
    assert s.latency_ns.max() == REPORT["latencies"]["max"]
    assert s.latency_ns.sum() == REPORT["latencies"]["total"]
    # vegeta's percentiles are t-digest estimates: between the neighbours of the exact rank
    ordered = np.sort(s.latency_ns)
    for p, key in ((50, "50th"), (90, "90th"), (95, "95th"), (99, "99th")):
        rank = math.ceil(p / 100 * len(ordered))
        assert ordered[rank - 1] == nearest_rank(RAW_LATENCY, p)
        assert ordered[rank - 2] <= REPORT["latencies"][key] <= ordered[rank]


@pytest.mark.parametrize("name", ["results.csv", "results.json"])
def test_timeouts_starts_and_what_the_tool_measured(name):
    s = _read(name)
    # the three code-0 results are the requests that outran -timeout=1s
    assert s.timed_out.sum() == 3
    assert np.array_equal(s.timed_out, s.status == 0)
    assert s.latency_ns[s.timed_out].min() >= 1_000_000_000
    starts_ns = [int(row[0]) for row in RAW]
    assert s.epoch and np.allclose(s.start_ms, np.array(starts_ns) / 1e6, rtol=0, atol=1e-3)
    assert s.native_unit == "ns" and s.skipped == 0 and s.warnings == []
    assert s.first_error == "500 500 Internal Server Error"
    assert set(s.labels) == {"http://127.0.0.1:18923/"}
    assert s.info.tool == "vegeta" and s.info.version is None
    assert (s.info.load_model, s.info.load_model_evidence) == (
        "open", "vegeta attack (constant rate)")


def test_the_csv_and_json_encodings_of_one_run_agree():
    a, b = _read("results.csv"), _read("results.json")
    assert np.array_equal(a.latency_ns, b.latency_ns)
    assert np.array_equal(a.start_ms, b.start_ms)
    assert np.array_equal(a.timed_out, b.timed_out)


def test_report_json_holds_vegetas_numbers():
    r = _read("report.json")
    lat = REPORT["latencies"]
    assert (r.requests, r.errors, r.timeouts) == (250, 18, None)
    assert r.percentiles_ms == {50.0: lat["50th"] / 1e6, 90.0: lat["90th"] / 1e6,
                                95.0: lat["95th"] / 1e6, 99.0: lat["99th"] / 1e6}
    assert (r.min_ms, r.max_ms, r.mean_ms) == (1.696181, 1001.056383, 17.453504)
    assert r.duration_s == pytest.approx(4.978602227) and r.rate_rps == REPORT["rate"]
    assert r.info.load_model == "open"


def test_report_text_and_json_agree_on_the_headline():
    # report.txt is vegeta's own text of the same run: "Latencies [min, mean, 50, 90, 95, 99,
    # max]  1.696ms, 17.454ms, 4.983ms, 9.454ms, 11.847ms, 1s, 1.001s"
    text = (DIR / "report.txt").read_text()
    r = _read("report.json")
    assert f"{r.min_ms:.3f}ms" in text and f"{r.percentiles_ms[50.0]:.3f}ms" in text
    assert "0:3  200:232  500:15" in text


def test_hdrplot_is_a_full_spectrum():
    r = _read("report.hdrplot")
    lines = (DIR / "report.hdrplot").read_text().splitlines()[1:]
    assert len(r.spectrum) == len(lines) == 94
    assert r.requests == 250 and r.spectrum[-1].total_count == 250
    first, last = lines[0].split(), lines[-1].split()
    assert (r.spectrum[0].value_ms, r.spectrum[0].percentile) == (float(first[0]), 0.0)
    assert (r.spectrum[-1].value_ms, r.spectrum[-1].percentile) == (float(last[0]), 100.0)
    # the same estimator as report.json
    assert r.percentiles_ms[50.0] == REPORT["latencies"]["50th"] / 1e6
    assert r.min_ms == REPORT["latencies"]["min"] / 1e6
    assert r.max_ms == REPORT["latencies"]["max"] / 1e6
    assert [p.percentile for p in r.spectrum] == sorted(p.percentile for p in r.spectrum)


@pytest.mark.parametrize("name", ["results.csv", "results.json"])
def test_a_line_cut_in_the_middle_is_skipped_and_named(name, tmp_path):
    cut = tmp_path / name
    line = truncated_mid_line(DIR / name, cut)
    s = vegeta.read(str(cut), vegeta.sniff(cut.read_bytes()), {})
    assert len(s) == 249 and s.skipped == 1
    assert s.warnings[0].startswith(f"{cut}:{line}: ") and s.warnings[0].endswith("(skipped)")


@pytest.mark.parametrize("name", ["results.csv", "results.json"])
def test_a_junk_line_is_skipped_and_named(name, tmp_path):
    bad = tmp_path / name
    line = garbage_line(DIR / name, bad)
    s = vegeta.read(str(bad), vegeta.sniff(bad.read_bytes()), {})
    assert len(s) == 250 and s.skipped == 1 and s.warnings[0].startswith(f"{bad}:{line}: ")


@pytest.mark.parametrize("name, fmt", [
    ("results.csv", "vegeta-csv"), ("results.json", "vegeta-json"),
    ("report.json", "vegeta-report"), ("report.hdrplot", "vegeta-hdrplot")])
def test_unusable_files_give_one_clear_error(name, fmt, tmp_path):
    no_commas = ("wrong_delimiter",) if fmt in ("hey-text", "vegeta-hdrplot") else ()
    assert_each_unusable_variant_fails(vegeta, DIR / name, fmt, tmp_path, skip=no_commas)
