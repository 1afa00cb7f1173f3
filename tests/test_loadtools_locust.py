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


# ---------------------------------------------------------------- other versions (issue 33)

def _console(name):
    """The summary rows ("Total" up to Locust 0.11, "Aggregated" since) that Locust printed at
    the end of the run, from the row's name on: (request table row, percentile table row)."""
    tables, table = ({}, {}), None
    for line in (FIXTURES / name).read_text().splitlines():
        fields = line.split()
        if "reqs" in fields:
            table = tables[1] if "50%" in fields else tables[0]
        for label in ("Total", "Aggregated"):
            if table is not None and label in fields[:2]:
                table[label] = fields[fields.index(label):]
    return tables


def _summary_row(name, label):
    return next(r for r in _rows(name) if r["Name"] == label)


def test_locust_0_11_requests_and_distribution_read_the_total_row_and_join(tmp_path):
    requests, distribution = _console("locust-0.11.0.console-summary.txt")
    total, spread = requests["Total"], distribution["Total"]
    file_row = _summary_row("locust-0.11.0_requests.csv", "Total")
    levels = [50, 66, 75, 80, 90, 95, 98, 99, 100]
    for name in ("locust-0.11.0_requests.csv", "locust-0.11.0_distribution.csv"):
        head = (FIXTURES / name).read_bytes()
        assert locust.sniff(head) == "locust-" + name[:-4].rsplit("_", 1)[1]
        got = locust.read(str(FIXTURES / name), locust.sniff(head), {})
        assert (got.requests, got.errors) == (int(total[1]), int(total[2].split("(")[0]))
        assert got.percentiles_ms == {float(p): float(v) for p, v in zip(levels, spread[2:])}
        assert got.rate_rps == float(file_row["Requests/s"])
        assert (got.mean_ms, got.min_ms, got.max_ms) == (
            float(file_row["Average response time"]), float(file_row["Min response time"]),
            float(file_row["Max response time"]))
        assert got.warnings == []
    # each file alone holds what it holds
    for name in ("locust-0.11.0_requests.csv", "locust-0.11.0_distribution.csv"):
        (tmp_path / name).write_bytes((FIXTURES / name).read_bytes())
        fmt = locust.sniff((FIXTURES / name).read_bytes())
        alone = locust.read(str(tmp_path / name), fmt, {})
        (tmp_path / name).unlink()
        if "requests" in name:
            assert alone.percentiles_ms == {50.0: float(file_row["Median response time"])}
            assert alone.errors == int(total[2].split("(")[0])
        else:
            assert (alone.errors, alone.rate_rps, alone.mean_ms) == (None, None, None)
            assert alone.percentiles_ms[99.0] == float(spread[-2])


def test_locust_0_14_stats_reads_its_quoted_0x_columns():
    requests, distribution = _console("locust-0.14.6.console-summary.txt")
    row = _summary_row("locust-0.14.6_stats.csv", "Aggregated")
    got = locust.read(str(FIXTURES / "locust-0.14.6_stats.csv"), "locust-stats", {})
    printed = requests["Aggregated"]
    assert (got.requests, got.errors) == (int(printed[1]), int(printed[2].split("(")[0]))
    assert got.rate_rps == float(printed[-2]) == float(row["Requests/s"])
    assert got.max_ms == float(printed[5])
    levels = [50, 66, 75, 80, 90, 95, 98, 99, 99.9, 99.99, 100]
    assert {lv: got.percentiles_ms[lv] for lv in levels} == \
        {float(lv): float(v) for lv, v in zip(levels, distribution["Aggregated"][2:])}
    assert got.percentiles_ms[99.999] == float(row["99.999"])


@pytest.mark.parametrize("name", ["locust-1.1.1_stats_history.csv",
                                  "locust-0.14.6_stats_history.csv"])
def test_quoted_histories_are_detected_and_read(name):
    from analysis.read.loadtools import detect_format
    assert detect_format(FIXTURES / name) == "locust-history"
    rows = [r for r in _rows(name) if r["Name"] == "Aggregated"]
    got = locust.read(str(FIXTURES / name), "locust-history", {})
    count = "Total Request Count" if "1.1.1" in name else "# requests"
    assert [i["requests"] for i in got.intervals] == [int(r[count]) for r in rows]
    assert got.intervals[-1]["p99_ms"] == float(rows[-1]["99%"])
    # the run's console summary: the same final totals
    requests, _ = _console(name.replace("_stats_history.csv", ".console-summary.txt"))
    printed = requests["Aggregated"]
    assert (got.requests, got.errors) == (int(printed[1]), int(printed[2].split("(")[0]))
    users = [i["users"] for i in got.intervals]
    if "1.1.1" in name:
        assert users == [int(r["User Count"]) for r in rows]
    else:    # 0.14 writes no user count, and all-0 percentiles before the first window
        assert users == [None] * len(rows)
        assert got.intervals[0]["p50_ms"] is None and rows[0]["50%"] == "0"


def test_a_legacy_code_page_name_is_replaced_and_the_numbers_read(tmp_path):
    raw = (FIXTURES / "handmade-cp1252_stats.csv").read_bytes()
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")
    got = locust.read(str(FIXTURES / "handmade-cp1252_stats.csv"), "locust-stats", {})
    utf8 = locust.read(str(FIXTURES / "locust-1.1.1_stats.csv"), "locust-stats", {})
    assert (got.requests, got.errors, got.rate_rps, got.percentiles_ms) == \
        (utf8.requests, utf8.errors, utf8.rate_rps, utf8.percentiles_ms)
    line = raw.split(b"\n").index(next(x for x in raw.split(b"\n") if b"caf\xe9" in x)) + 1
    assert len(got.warnings) == 1
    assert got.warnings[0].startswith(f"{FIXTURES / 'handmade-cp1252_stats.csv'}:{line}: "
                                      "not UTF-8")
    assert "U+FFFD" in got.warnings[0]


@pytest.mark.parametrize("name", ["locust-1.1.1_failures.csv", "locust-0.14.6_failures.csv"])
def test_a_failures_csv_is_refused_naming_the_file_to_give(name):
    from analysis.read.loadtools import detect_format, read_results
    with pytest.raises(ResultsError, match=r"PREFIX_failures\.csv.*PREFIX_stats\.csv"):
        detect_format(FIXTURES / name)
    with pytest.raises(ResultsError, match=r"PREFIX_failures\.csv.*PREFIX_stats\.csv"):
        read_results(FIXTURES / name, format="locust-stats")
