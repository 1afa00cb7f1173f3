"""vegeta's encode and report files (issue 23). Golden numbers: vegeta's own report of the same
results.bin (report.json/report.txt), and nearest-rank percentiles over the raw latency column
read here with the csv module."""
from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

from analysis.errors import ResultsError

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
    ("report.txt", "vegeta-text"), ("v12.8.4-report.txt", "vegeta-text"),
    ("handmade-v12.5-report.txt", "vegeta-text"),
    ("handmade-v12.5-report.json", "vegeta-report")])
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


def _printed_ms(ns: int) -> float:
    """What vegeta v12.6+ prints for a duration of NS (lib/reporters.go `round`): rounded, half
    away from zero, to the unit below its own (1.000342501s -> 1s, 4.852039ms -> 4.852ms)."""
    step = next((s for floor, s in ((10**9, 10**6), (10**6, 10**3), (10**3, 1))
                 if ns >= floor), 1)
    return (ns + step // 2) // step * step / 1e6


@pytest.mark.parametrize("text, json_report", [
    ("report.txt", "report.json"),                      # vegeta v12.13.0
    ("v12.8.4-report.txt", "v12.8.4-report.json")])     # vegeta v12.8.4
def test_text_report_holds_the_numbers_of_the_json_report(text, json_report):
    r = _read(text)
    m = json.loads((DIR / json_report).read_text())
    lat = m["latencies"]
    assert r.info.format == "vegeta-text" and r.info.load_model == "open"
    assert r.requests == m["requests"]
    assert r.errors == sum(n for code, n in m["status_codes"].items()
                           if not 200 <= int(code) < 400)
    assert r.rate_rps == round(m["rate"], 2)
    assert r.duration_s == _printed_ms(m["duration"]) / 1000
    assert r.percentiles_ms == {p: _printed_ms(lat[key]) for p, key in
                                ((50.0, "50th"), (90.0, "90th"), (95.0, "95th"),
                                 (99.0, "99th"))}
    assert (r.min_ms, r.mean_ms, r.max_ms) == tuple(_printed_ms(lat[k])
                                                    for k in ("min", "mean", "max"))


def test_text_report_before_v12_6_reads_its_own_fields():
    # "Requests [total, rate]" and "Latencies [mean, 50, 95, 99, max]", unrounded Go durations
    # ("1.000342501s"): the numbers of v12.8.4-report.json laid out as v12.5.1 prints them
    r = _read("handmade-v12.5-report.txt")
    m = json.loads((DIR / "v12.8.4-report.json").read_text())
    lat = m["latencies"]
    assert (r.requests, r.errors, r.rate_rps) == (250, 16, round(m["rate"], 2))
    assert r.duration_s == m["duration"] / 1e9
    assert r.percentiles_ms == {50.0: lat["50th"] / 1e6, 95.0: lat["95th"] / 1e6,
                                99.0: lat["99th"] / 1e6}
    assert (r.min_ms, r.mean_ms, r.max_ms) == (None, lat["mean"] / 1e6, lat["max"] / 1e6)


def test_json_report_before_v12_6_has_no_min_90th_or_throughput():
    r = _read("handmade-v12.5-report.json")
    m = json.loads((DIR / "v12.8.4-report.json").read_text())
    assert (r.requests, r.errors, r.min_ms) == (250, 16, None)
    assert r.percentiles_ms == {50.0: m["latencies"]["50th"] / 1e6,
                                95.0: m["latencies"]["95th"] / 1e6,
                                99.0: m["latencies"]["99th"] / 1e6}
    assert r.max_ms == m["latencies"]["max"] / 1e6 and r.duration_s == m["duration"] / 1e9


@pytest.mark.parametrize("duration, ms", [
    ("1.234567ms", 1.234567), ("12.5\u00b5s", 0.0125), ("1m2.3s", 62300.0), ("0s", 0.0),
    ("1h0m0.5s", 3600500.0), ("750ns", 0.00075)])
def test_go_durations(duration, ms, tmp_path):
    path = tmp_path / "report.txt"
    path.write_text("Requests      [total, rate]            1, 1.00\n"
                    f"Latencies     [mean, 50, 95, 99, max]  {duration}, {duration}, "
                    f"{duration}, {duration}, {duration}\n"
                    "Status Codes  [code:count]             200:1  \nError Set:\n",
                    encoding="utf-8")
    r = vegeta.read(str(path), "vegeta-text", {})
    assert r.percentiles_ms[50.0] == r.max_ms == ms


def test_text_report_with_a_bad_duration_names_the_line(tmp_path):
    path = tmp_path / "report.txt"
    path.write_text((DIR / "report.txt").read_text().replace("4.983ms", "4.983 ms"))
    with pytest.raises(ResultsError) as e:
        vegeta.read(str(path), "vegeta-text", {})
    assert e.value.line == 3 and "not a Go duration" in str(e.value)


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
    ("report.json", "vegeta-report"), ("report.hdrplot", "vegeta-hdrplot"),
    ("report.txt", "vegeta-text")])
def test_unusable_files_give_one_clear_error(name, fmt, tmp_path):
    no_commas = ("wrong_delimiter",) if fmt in ("hey-text", "vegeta-hdrplot") else ()
    assert_each_unusable_variant_fails(vegeta, DIR / name, fmt, tmp_path, skip=no_commas)
