"""hey's CSV and text summary (issue 23). Golden numbers: nearest-rank over the raw
response-time column read here with the csv module, and the numbers hey printed."""
from __future__ import annotations

import csv
import math
from decimal import Decimal

import numpy as np
import pytest

from analysis.read.loadtools import hey, read_results
from tests.loadtools_fixtures import (FIXTURES, assert_each_unusable_variant_fails,
                                      garbage_line, nearest_rank, read_fixture,
                                      truncated_mid_line)

DIR = FIXTURES / "hey"
ROWS = list(csv.DictReader((DIR / "requests.csv").open()))
# seconds with 4 decimals -> ns, exactly
RAW_NS = sorted(int(Decimal(r["response-time"]) * 10**9) for r in ROWS)


def _read(name):
    return read_fixture(hey, DIR / name)


@pytest.mark.parametrize("name, fmt", [
    ("requests.csv", "hey-csv"), ("summary.txt", "hey-text"),
    ("summary-ok-rate-limited.txt", "hey-text"), ("README.md", None)])
def test_sniff_names_each_file(name, fmt):
    assert hey.sniff((DIR / name).read_bytes()[:65536]) == fmt


def test_csv_rows_against_the_raw_column():
    s = _read("requests.csv")
    assert len(s) == len(ROWS) == 396
    ordered = np.sort(s.latency_ns)
    for p in (50, 90, 99, 99.9, 100):
        assert ordered[math.ceil(p / 100 * len(ordered)) - 1] == nearest_rank(RAW_NS, p)
    assert s.latency_ns.min() == RAW_NS[0] and s.latency_ns.max() == RAW_NS[-1]
    codes = [int(r["status-code"]) for r in ROWS]
    assert np.array_equal(s.status, codes)
    assert s.ok.sum() == sum(c < 400 for c in codes) == 374
    assert s.first_error == "status 500"
    # offsets are seconds since hey started, so the starts are relative
    assert not s.epoch
    assert np.array_equal(s.start_ms, [float(Decimal(r["offset"]) * 1000) for r in ROWS])
    assert s.native_unit == "us" and s.skipped == 0


def test_csv_has_no_timeouts_because_hey_leaves_them_out():
    s = _read("requests.csv")
    assert not s.timed_out.any()
    assert (s.latency_ns < 1_000_000_000).all()   # no row reached the 1 s timeout
    assert (s.info.tool, s.info.version, s.info.load_model) == ("hey", None, "closed")
    assert "-c" in s.info.load_model_evidence


def test_text_summary_holds_heys_numbers():
    r = _read("summary.txt")
    assert (r.requests, r.errors, r.timeouts) == (400, 27, 5)   # 373 + 22 + 5 timeouts
    assert (r.duration_s, r.rate_rps) == (2.273, 175.9824)
    assert (r.min_ms, r.max_ms, r.mean_ms) == (1.3, 21.6, 5.3)
    assert r.percentiles_ms == {10.0: 1.5, 25.0: 2.7, 50.0: 4.7, 75.0: 6.7, 90.0: 8.7,
                                95.0: 11.4, 99.0: 16.6}
    assert r.info.load_model == "closed"


BOOM = FIXTURES / "boom" / "handmade-boom-2016-03.txt"


def test_boom_summary_reads_as_hey_text_with_its_progress_bar_and_secs_dot():
    assert hey.sniff(BOOM.read_bytes()) == "boom-text"
    assert read_results(str(BOOM)).info.format == "boom-text"    # not a JMeter CSV either
    r = read_fixture(hey, BOOM)
    assert (r.info.tool, r.info.format, r.info.load_model) == ("boom", "boom-text", "closed")
    # as printed: "Total: 2.2730 secs.", "[200] 373 responses", "[500] 22 responses", one
    # error line "[5] ... Client.Timeout exceeded ...", "99% in 0.0166 secs."
    assert (r.requests, r.answered, r.errors, r.timeouts) == (400, 395, 27, 5)
    assert (r.duration_s, r.rate_rps) == (2.273, 175.9824)
    assert (r.min_ms, r.max_ms, r.mean_ms) == (1.3, 21.6, 5.3)
    assert r.percentiles_ms == {10.0: 1.5, 25.0: 2.7, 50.0: 4.7, 75.0: 6.7, 90.0: 8.7,
                                95.0: 11.4, 99.0: 16.6}


def test_text_summary_without_errors():
    r = _read("summary-ok-rate-limited.txt")
    assert (r.requests, r.errors, r.timeouts) == (200, 0, 0)
    assert r.percentiles_ms[99.0] == 13.8 and r.max_ms == 13.9


def test_a_line_cut_in_the_middle_is_skipped_and_named(tmp_path):
    cut = tmp_path / "requests.csv"
    line = truncated_mid_line(DIR / "requests.csv", cut)
    s = hey.read(str(cut), "hey-csv", {})
    assert len(s) == 395 and s.skipped == 1
    assert s.warnings == [f"{cut}:{line}: 4 fields, expected 8 (skipped)"]


def test_a_junk_line_is_skipped_and_named(tmp_path):
    bad = tmp_path / "requests.csv"
    line = garbage_line(DIR / "requests.csv", bad)
    s = hey.read(str(bad), "hey-csv", {})
    assert len(s) == 396 and s.skipped == 1 and s.warnings[0].startswith(f"{bad}:{line}: ")


def test_many_bad_lines_are_all_counted_and_some_listed(tmp_path):
    lines = (DIR / "requests.csv").read_text().splitlines()
    bad = tmp_path / "requests.csv"
    bad.write_text("\n".join(lines[:2] + ["x,y"] * 50 + lines[2:]) + "\n")
    s = hey.read(str(bad), "hey-csv", {})
    assert s.skipped == 50 and len(s.warnings) == 21
    assert s.warnings[-1] == "... and 30 more"


@pytest.mark.parametrize("name, fmt", [("requests.csv", "hey-csv"), ("summary.txt", "hey-text")])
def test_unusable_files_give_one_clear_error(name, fmt, tmp_path):
    no_commas = ("wrong_delimiter",) if fmt in ("hey-text", "vegeta-hdrplot") else ()
    assert_each_unusable_variant_fails(hey, DIR / name, fmt, tmp_path, skip=no_commas)
