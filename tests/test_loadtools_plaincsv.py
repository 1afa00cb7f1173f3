"""A plain CSV described by run.yml (analysis/read/loadtools/plaincsv.py). The fixtures are
hand-made (tests/fixtures/loadtools/csv/README.md): a plain CSV has no tool behind it. The
expected values are computed here from the raw columns with the csv module."""
from __future__ import annotations

import csv
from datetime import datetime

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.errors import ResultsError
from analysis.read.loadtools import plaincsv
from tests.conftest import REPO

FIXTURES = REPO / "tests" / "fixtures" / "loadtools" / "csv"
EPOCH = FIXTURES / "handmade-epoch-ms.csv"


def test_columns_by_header_name_with_units_from_options():
    got = plaincsv.read(str(EPOCH), "csv", {"timestamp_unit": "ms", "latency_unit": "ms"})
    rows = [r for r in csv.DictReader(open(EPOCH, newline="")) if r["elapsed"].isdigit()]
    assert got.latency_ns.tolist() == [int(r["elapsed"]) * 1_000_000 for r in rows]
    assert got.start_ms.tolist() == [float(r["ts"]) for r in rows]
    assert got.status.tolist() == [int(r["code"]) for r in rows]
    assert got.ok.tolist() == [0 < int(r["code"]) < 400 for r in rows]
    assert (got.native_unit, got.epoch, got.skipped) == ("ms", True, 1)
    assert got.warnings == [f"{EPOCH}:6: latency 'not-a-number' is not a number (skipped)"]
    assert got.first_error == "status 500"
    assert not got.timed_out.any()
    assert got.info.load_model == "unknown"


def test_iso_times_an_ok_column_and_another_delimiter():
    path = FIXTURES / "handmade-iso-ok-semicolon.csv"
    options = {"timestamp": "when", "timestamp_unit": "iso8601", "latency": "took_us",
               "latency_unit": "us", "ok": "success", "delimiter": ";"}
    got = plaincsv.read(str(path), "csv", options)
    rows = [r for r in csv.DictReader(open(path, newline=""), delimiter=";")
            if r["when"] != "yesterday"]
    assert got.start_ms.tolist() == [datetime.fromisoformat(r["when"]).timestamp() * 1000
                                     for r in rows]
    assert got.latency_ns.tolist() == [int(r["took_us"]) * 1000 for r in rows]
    assert got.ok.tolist() == [r["success"] in ("true", "yes", "1") for r in rows]
    assert got.status is None
    assert (got.native_unit, got.skipped) == ("us", 1)


def test_no_header_end_times_and_seconds():
    path = FIXTURES / "handmade-noheader-end-s.csv"
    got = plaincsv.read(str(path), "csv", {"timestamp": 0, "timestamp_unit": "s", "latency": 1,
                                           "latency_unit": "s", "status": 2,
                                           "timestamp_marks": "end"})
    rows = list(csv.reader(open(path, newline="")))
    assert got.latency_ns.tolist() == [round(float(r[1]) * 1e9) for r in rows]
    assert got.start_ms == pytest.approx([float(r[0]) * 1000 - float(r[1]) * 1000 for r in rows])
    assert got.epoch is False
    assert got.ok.tolist() == [True, True, True, False]


@pytest.mark.parametrize("options,message", [
    ({}, "the units of the timestamp and latency columns are not given"),
    ({"timestamp_unit": "ms", "latency_unit": "minutes"}, "are not given"),
    ({"timestamp_unit": "ms", "latency_unit": "ms", "latency": "took"}, "no column 'took'"),
    ({"timestamp_unit": "ms", "latency_unit": "ms", "status": 9}, "column 9 does not exist"),
    ({"timestamp_unit": "ms", "latency_unit": "ms", "delimiter": ";;"}, "one character"),
])
def test_what_run_yml_must_say_is_named(options, message):
    with pytest.raises(ResultsError, match=message) as e:
        plaincsv.read(str(EPOCH), "csv", options)
    assert "timestamp_unit: s|ms|us|ns|iso8601" in str(e.value)


def test_a_file_without_a_header_needs_column_indexes():
    with pytest.raises(ResultsError, match="no header line, give the column index"):
        plaincsv.read(str(FIXTURES / "handmade-noheader-end-s.csv"), "csv",
                      {"timestamp_unit": "s", "latency_unit": "s"})


@pytest.mark.parametrize("data,message", [
    (b"", "the file is empty"), (b"ts,latency\n1,\0\0\n", "binary data"),
    (b"ts,latency\nx,y\n", "no readable request row"), (b"ts,latency\n\xff\xfe\n", "not UTF-8"),
])
def test_unusable_files_are_one_clear_error(tmp_path, data, message):
    path = tmp_path / "x.csv"
    path.write_bytes(data)
    with pytest.raises(ResultsError, match=message):
        plaincsv.read(str(path), "csv", {"timestamp_unit": "ms", "latency_unit": "ms"})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10**12), st.integers(0, 10**9),
                          st.sampled_from([200, 302, 404, 500, 0])), min_size=1, max_size=40),
       st.sampled_from(["ns", "us", "ms"]))
def test_integer_latencies_are_exact_in_any_unit(tmp_path_factory, rows, unit):
    path = tmp_path_factory.mktemp("p") / "r.csv"
    path.write_text("time,latency,status\n" + "".join(f"{t},{v},{s}\n" for t, v, s in rows))
    got = plaincsv.read(str(path), "csv", {"timestamp_unit": "ms", "latency_unit": unit})
    scale = {"ns": 1, "us": 1000, "ms": 1_000_000}[unit]
    assert got.latency_ns.tolist() == [v * scale for _, v, _ in rows]
    assert got.latency_ns.dtype == np.int64
    whole = [u for u in ("ms", "us", "ns") if all(v * scale % {"ms": 10**6, "us": 1000,
                                                                 "ns": 1}[u] == 0 for _, v, _ in rows)]
    assert got.native_unit == whole[0]
