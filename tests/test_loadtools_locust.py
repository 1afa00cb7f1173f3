"""Locust's CSV statistics (analysis/read/loadtools/locust.py) against the real files in
tests/fixtures/loadtools/locust/; the expected numbers are the files' own, read here with the
csv module."""
from __future__ import annotations

import csv

import pytest

from analysis.errors import ResultsError
from analysis.read.loadtools import locust
from tests.conftest import REPO

FIXTURES = REPO / "tests" / "fixtures" / "loadtools" / "locust"


def _rows(name):
    with open(FIXTURES / name, newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("name", ["locust_stats.csv", "locust-full_stats.csv"])
def test_stats_summary_is_the_aggregated_row(name):
    row = next(r for r in _rows(name) if r["Name"] == "Aggregated")
    got = locust.read(str(FIXTURES / name), "locust-stats", {})
    assert got.requests == int(row["Request Count"])
    assert got.errors == int(row["Failure Count"])
    assert got.rate_rps == float(row["Requests/s"])
    assert (got.mean_ms, got.min_ms, got.max_ms) == (
        float(row["Average Response Time"]), float(row["Min Response Time"]),
        float(row["Max Response Time"]))
    assert got.percentiles_ms == {float(k[:-1]): float(v) for k, v in row.items()
                                  if k.endswith("%")}
    # the failures are the /err requests (HTTP 500), every one of them
    err = next(r for r in _rows(name) if r["Name"] == "/err")
    assert got.errors == int(err["Request Count"]) > 0
    assert (got.info.load_model, got.info.load_model_evidence) == \
        ("closed", "Locust users (closed loop)")


@pytest.mark.parametrize("name", ["locust_stats_history.csv", "locust-full_stats_history.csv"])
def test_history_rows_are_the_aggregated_rows_over_time(name):
    rows = [r for r in _rows(name) if r["Name"] == "Aggregated"]
    got = locust.read(str(FIXTURES / name), "locust-history", {})
    assert len(got.intervals) == len(rows)
    first = int(rows[0]["Timestamp"])
    for interval, row in zip(got.intervals, rows):
        assert interval["t_s"] == int(row["Timestamp"]) - first
        assert interval["users"] == int(row["User Count"])
        assert interval["rate_rps"] == float(row["Requests/s"])
        assert interval["errors_rps"] == float(row["Failures/s"])
        for column, key in (("50%", "p50_ms"), ("99%", "p99_ms"), ("100%", "max_ms")):
            assert interval[key] == (None if row[column] == "N/A" else float(row[column]))
        assert interval["requests"] == int(row["Total Request Count"])
    last = rows[-1]
    assert got.requests == int(last["Total Request Count"])
    assert got.errors == int(last["Total Failure Count"])
    assert got.max_ms == float(last["Total Max Response Time"])
    assert got.percentiles_ms == {50.0: float(last["Total Median Response Time"])}
    assert got.duration_s == int(last["Timestamp"]) - first
    counts = [i["requests"] for i in got.intervals]
    assert counts == sorted(counts)


def test_the_stats_and_the_history_of_one_run_end_on_the_same_totals():
    stats = locust.read(str(FIXTURES / "locust_stats.csv"), "locust-stats", {})
    history = locust.read(str(FIXTURES / "locust_stats_history.csv"), "locust-history", {})
    assert (stats.requests, stats.errors) == (history.requests, history.errors)
    assert stats.mean_ms == history.mean_ms


def _write(tmp_path, data: bytes) -> str:
    path = tmp_path / "x.csv"
    path.write_bytes(data)
    return str(path)


def test_a_truncated_last_row_is_skipped_and_reported(tmp_path):
    data = (FIXTURES / "locust_stats_history.csv").read_bytes()
    path = _write(tmp_path, data[:-40])
    got = locust.read(path, "locust-history", {})
    rows = data.decode().splitlines()
    assert len(got.intervals) == len(rows) - 2
    assert got.skipped == 1
    assert got.warnings[0].startswith(f"{path}:{len(rows)}: ")


def test_a_non_number_is_skipped_with_its_column(tmp_path):
    text = (FIXTURES / "locust_stats_history.csv").read_text().splitlines(keepends=True)
    fields = text[3].split(",")
    fields[1] = "many"
    text[3] = ",".join(fields)
    path = _write(tmp_path, "".join(text).encode())
    got = locust.read(path, "locust-history", {})
    assert got.warnings == [f"{path}:4: not a number: User Count is 'many' (skipped)"]


@pytest.mark.parametrize("data,fmt,message", [
    (b"", "locust-stats", "the file is empty"),
    (b"Type,Name,Request Count\n\0\0", "locust-stats", "binary data"),
    (b"Type,Name\nGET,/\n", "locust-stats", "no column 'Request Count'"),
    (None, "locust-stats", "no 'Aggregated' row"),
    (b"Timestamp,User Count\n", "locust-history", "no column 'Type'"),
])
def test_unusable_files_are_one_clear_error(tmp_path, data, fmt, message):
    if data is None:    # the stats without their Aggregated row
        data = b"".join(line for line in (FIXTURES / "locust_stats.csv").read_bytes()
                        .splitlines(keepends=True) if b"Aggregated" not in line)
    with pytest.raises(ResultsError, match=message):
        locust.read(_write(tmp_path, data), fmt, {})
