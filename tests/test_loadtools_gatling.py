"""The Gatling simulation.log reader against real Gatling 2.3.1, 3.12.0 and 3.14.9 output
(tests/fixtures/loadtools/gatling/README.md). Golden numbers: Gatling's own js/global_stats.json
and console summary of the same run, and nearest-rank percentiles over the log's raw columns
split here, never the reader's own output."""
from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from analysis.errors import ResultsError
from analysis.read.loadtools import detect_format, read_results
from analysis.read.loadtools import gatling, jmeter
from tests.loadtools_fixtures import (FIXTURES, assert_each_unusable_variant_fails,
                                      assert_one_clear_error, assert_reads_or_raises,
                                      damaged, nearest_rank)

GA = FIXTURES / "gatling"
TEXT_RUNS = {"gatling-2.3.1": None, "gatling-3.12.0-open": "3.12.0",
             "gatling-3.12.0-closed": "3.12.0"}
# REQUEST fields of each layout: start, end, status (Gatling's LogFileDataWriter)
RAW_FIELDS = {"gatling-2.3.1": (5, 6, 7), "gatling-3.12.0-open": (3, 4, 5),
              "gatling-3.12.0-closed": (3, 4, 5)}


def raw_requests(run: str, log: str | None = None) -> list[tuple[int, int, str]]:
    begin, end, status = RAW_FIELDS[run]
    out = []
    for line in (GA / (log or f"{run}.simulation.log")).read_text().splitlines():
        fields = line.split("\t")
        if fields[0] == "REQUEST":
            out.append((int(fields[begin]), int(fields[end]) - int(fields[begin]),
                        fields[status]))
    return out


def console_errors(run: str, pattern: str) -> int:
    text = (GA / f"{run}.console-summary.txt").read_text()
    return sum(int(m) for m in re.findall(pattern + r".*?\s(\d+) \(\s*[\d.]+%\)", text))


@pytest.mark.parametrize("run", sorted(TEXT_RUNS))
def test_text_logs_match_gatlings_own_statistics(run):
    result = read_results(GA / f"{run}.simulation.log")
    stats = json.loads((GA / f"{run}.global_stats.json").read_text())
    raw = raw_requests(run)
    values = (result.latency_ns // 1_000_000)
    assert result.info.format == "gatling-log" and result.info.tool == "Gatling"
    assert result.info.version == TEXT_RUNS[run]
    assert len(result) == len(raw) == stats["numberOfRequests"]["total"]
    assert int(result.ok.sum()) == stats["numberOfRequests"]["ok"]
    assert int((~result.ok).sum()) == stats["numberOfRequests"]["ko"]
    assert values.min() == stats["minResponseTime"]["total"]
    assert values.max() == stats["maxResponseTime"]["total"]
    assert values[result.ok].max() == stats["maxResponseTime"]["ok"]
    assert round(values.mean()) == stats["meanResponseTime"]["total"]
    assert round(values.std()) == stats["standardDeviation"]["total"]
    for p in (50, 90, 99, 99.9):
        assert nearest_rank(sorted(values), p) == nearest_rank(sorted(r[1] for r in raw), p)
    assert result.start_ms.tolist() == [float(r[0]) for r in raw]
    assert result.ok.tolist() == [r[2] == "OK" for r in raw]
    assert int(result.timed_out.sum()) == console_errors(run, "Request timeout") > 0
    assert result.status is None and result.native_unit == "ms" and result.epoch
    assert result.info.load_model == "unknown" and result.info.load_model_evidence is None
    assert set(result.labels) == {"home", "api-error", "checkout / cart", "checkout / pay",
                                  "slow", "refused", "missing"}
    assert result.skipped == 0 and result.warnings == []


@pytest.mark.parametrize("run", ["gatling-2.3.1", "gatling-3.12.0-open"])
def test_records_that_end_at_ok_ko_are_read(run):
    """The real log with its trailing whitespace trimmed: every request without a message ends
    right after OK/KO (README); Gatling's own statistics of the run still hold."""
    log = f"{run}-trimmed.simulation.log"
    assert sum(line.endswith("\tOK") for line in (GA / log).read_text().splitlines()) > 200
    result = read_results(GA / log)
    stats = json.loads((GA / f"{run}.global_stats.json").read_text())
    raw = raw_requests(run, log)
    assert len(result) == len(raw) == stats["numberOfRequests"]["total"]
    assert int(result.ok.sum()) == stats["numberOfRequests"]["ok"]
    values = sorted(result.latency_ns // 1_000_000)
    assert values[-1] == stats["maxResponseTime"]["total"]
    for p in (50, 99):
        assert nearest_rank(values, p) == nearest_rank(sorted(r[1] for r in raw), p)
    assert result.skipped == 0 and result.warnings == []


@pytest.mark.parametrize("run", ["gatling-2.3.1", "gatling-3.12.0-open"])
@pytest.mark.parametrize("with_run_record", [True, False])
def test_a_log_made_only_of_records_without_a_message(tmp_path, run, with_run_record):
    lines = [line for line in (GA / f"{run}-trimmed.simulation.log").read_text().splitlines()
             if line.endswith("\tOK") or (with_run_record and line.startswith("RUN"))]
    path = tmp_path / "simulation.log"
    path.write_text("\n".join(lines) + "\n")
    result = read_results(path, format="gatling-log")
    stats = json.loads((GA / f"{run}.global_stats.json").read_text())
    assert len(result) == int(result.ok.sum()) == stats["numberOfRequests"]["ok"]
    assert (result.latency_ns // 1_000_000).max() == stats["maxResponseTime"]["ok"]
    assert result.skipped == 0
    assert ("Gatling 2.2-2.3" if "2.3.1" in run else "Gatling 3.4-3.12") in result.info.measure


def test_layouts_are_named_in_the_measure():
    old = read_results(GA / "gatling-2.3.1.simulation.log")
    new = read_results(GA / "gatling-3.12.0-open.simulation.log")
    assert "Gatling 2.2-2.3" in old.info.measure and "Gatling 3.4-3.12" in new.info.measure
    assert old.first_error.startswith("status.find.in(")


def test_a_binary_log_is_one_clear_error_naming_its_version():
    path = GA / "gatling-3.14.9-binary.simulation.log"
    assert detect_format(path) == "gatling-log"
    with pytest.raises(ResultsError) as err:
        read_results(path)
    message = str(err.value)
    assert "binary simulation.log (Gatling 3.14.9)" in message
    assert "3.13.0" in message and "Gatling 3.12.0 or older" in message
    assert str(path) in message


def test_every_fixture_is_claimed_by_the_right_reader_only():
    for path in sorted(GA.iterdir()):
        head = path.read_bytes()[:65536]
        expected = "gatling-log" if path.name.endswith(".simulation.log") else None
        assert gatling.sniff(head) == expected, path
        assert jmeter.sniff(head) is None, path
    for path in sorted((GA.parent / "jmeter").iterdir()):
        assert gatling.sniff(path.read_bytes()[:65536]) is None, path


def _as_layout_3_0(text: str) -> str:
    """The 3.12.0 fixture rewritten into the 3.0-3.3 layout (a user id after REQUEST, the RUN
    record's version 3.3.1): hand-made, from Gatling 3.3.1's LogFileDataWriter."""
    out = []
    for line in text.splitlines():
        fields = line.split("\t")
        if fields[0] == "RUN":
            fields[-1] = "3.3.1"
        if fields[0] == "REQUEST":
            fields.insert(1, "7")
        out.append("\t".join(fields))
    return "\n".join(out) + "\n"


def test_the_3_0_to_3_3_layout(tmp_path):
    original = GA / "gatling-3.12.0-open.simulation.log"
    path = tmp_path / "simulation.log"
    path.write_text(_as_layout_3_0(original.read_text()))
    a, b = read_results(original), read_results(path)
    assert b.info.version == "3.3.1" and "Gatling 3.0-3.3" in b.info.measure
    assert (a.latency_ns == b.latency_ns).all() and (a.ok == b.ok).all()
    assert a.labels.tolist() == b.labels.tolist()


def test_the_2_0_to_2_1_layout(tmp_path):
    # hand-made from Gatling 2.1.7's FileDataWriter: the record type third, four timestamps
    path = tmp_path / "simulation.log"
    path.write_text(
        "Sim\tsim\tRUN\t1000\t \t2.0\n"
        "browse\t1\tUSER\tSTART\t1000\t0\n"
        "browse\t1\tREQUEST\t\thome\t1000\t1001\t1030\t1042\tOK\t \n"
        "browse\t1\tREQUEST\tshop\tcart\t1050\t1051\t1060\t1070\tKO\tj.u.c.TimeoutException: "
        "Request timeout to /127.0.0.1:1 after 500 ms\n"
        "browse\t1\tUSER\tEND\t1000\t1071\n")
    result = read_results(path)
    assert (result.latency_ns // 1_000_000).tolist() == [42, 20]
    assert result.start_ms.tolist() == [1000.0, 1050.0]
    assert result.ok.tolist() == [True, False] and result.timed_out.tolist() == [False, True]
    assert result.labels.tolist() == ["home", "shop / cart"]
    assert result.info.version is None and "Gatling 2.0-2.1" in result.info.measure


def test_bad_records_are_skipped_counted_and_named(tmp_path):
    lines = (GA / "gatling-3.12.0-open.simulation.log").read_text().splitlines(True)
    requests = [i for i, line in enumerate(lines) if line.startswith("REQUEST")]
    lines[requests[0]] = lines[requests[0]].replace("\tKO\t", "\tMAYBE\t").replace(
        "\tOK\t", "\tMAYBE\t")
    lines[requests[1]] = "garbage line\n"
    path = tmp_path / "simulation.log"
    path.write_text("".join(lines) + "REQUEST\t\thome\t17957248")     # cut mid-line
    result = read_results(path)
    assert len(result) == 329 - 2 and result.skipped == 3
    assert result.warnings[0] == (f"{path}:{requests[0] + 1}: REQUEST status 'MAYBE' is "
                                  "neither OK nor KO (skipped)")
    assert result.warnings[1] == f"{path}:{requests[1] + 1}: not a Gatling record " \
                                 "('garbage line') (skipped)"
    assert result.warnings[2].endswith("REQUEST record with 4 fields, Gatling 3.4-3.12 writes "
                                       "7, the line is cut off (skipped)")


def test_a_latency_beyond_int64_nanoseconds_is_skipped(tmp_path):
    # found by the damage test below: a digit inserted into an end time overflowed latency_ns
    path = tmp_path / "simulation.log"
    path.write_text("RUN\tSim\tsim\t1000\t \t3.12.0\n"
                    "REQUEST\t\thome\t1795724849977\t17095724850583\tOK\t \n"
                    "REQUEST\t\thome\t1795724849977\t1795724850583\tOK\t \n")
    result = read_results(path)
    assert (result.latency_ns // 1_000_000).tolist() == [606] and result.skipped == 1
    assert "more than any latency can" in result.warnings[0]


@pytest.mark.parametrize("run", ["gatling-2.3.1", "gatling-3.12.0-open"])
def test_the_shared_unusable_variants_fail_clearly(tmp_path, run):
    # the log is tab-separated: commas (in messages) turned to ';' leave a good file
    assert_each_unusable_variant_fails(gatling, GA / f"{run}.simulation.log", "gatling-log",
                                       tmp_path, skip=("wrong_delimiter",))


@pytest.mark.parametrize("content, what", [
    (b"", "empty"),
    (b"\x00\x00garbage\x00", "NUL bytes"),
    (b"RUN\tSim\tsim\t1000\t \t3.12.0\nUSER\tbrowse\tSTART\t1000\n", "no usable REQUEST"),
])
def test_unusable_files_give_one_clear_error(tmp_path, content, what):
    assert_one_clear_error(tmp_path / "simulation.log", content, "gatling-log", what)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
@pytest.mark.parametrize("run", ["gatling-2.3.1", "gatling-3.12.0-open",
                                 "gatling-3.14.9-binary"])
def test_damaged_logs_read_or_raise_results_error(tmp_path, run, data):
    path = tmp_path / "simulation.log"
    path.write_bytes(damaged(data, (GA / f"{run}.simulation.log").read_bytes()[:5000]))
    assert_reads_or_raises(path, "gatling-log")
