"""The JMeter .jtl readers against real JMeter 2.13 and 5.6.3 output (tests/fixtures/loadtools/
jmeter/README.md). Golden numbers come from JMeter itself (its summariser line printed with the
same run, the -e -o dashboard's statistics.json) or from the raw columns read here with the csv
module and ElementTree, never from the reader's own output."""
from __future__ import annotations

import csv
import json
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from analysis.errors import ResultsError
from analysis.read.loadtools import detect_format, read_results
from analysis.read.loadtools import gatling, jmeter
from tests.loadtools_fixtures import (FIXTURES, assert_each_unusable_variant_fails,
                                      assert_one_clear_error, assert_reads_or_raises,
                                      damaged, nearest_rank)

JM = FIXTURES / "jmeter"
CSV_FILES = ["jmeter213-noheader", "jmeter213-header", "jmeter5-default", "jmeter5-noheader",
             "jmeter5-reduced", "jmeter5-reduced-noheader"]
XML_FILES = ["jmeter213", "jmeter5"]
# JMeter 5.6.3 with jmeter.save.saveservice.timestamp_format (README): the run.yml options each
# needs (the JVM's zone was UTC but for the Kolkata run, +05:30)
DATE_FILES = {"jmeter5-date-seconds": {}, "jmeter5-date-ms": {},
              "jmeter5-date-us": {"timestamp_format": "MM/dd/yyyy HH:mm:ss.SSS"},
              "jmeter5-date-kolkata": {"utc_offset": "+05:30"}}
PYTHON_FORMATS = {"jmeter5-date-seconds": ("%Y/%m/%d %H:%M:%S", 0),
                  "jmeter5-date-ms": ("%Y/%m/%d %H:%M:%S.%f", 0),
                  "jmeter5-date-us": ("%m/%d/%Y %H:%M:%S.%f", 0),
                  "jmeter5-date-kolkata": ("%Y-%m-%d %H:%M:%S.%f", 330)}
# the columns of each headerless fixture, as JMeter's jmeter.properties of that run had them
HEADERLESS = {
    "jmeter213-noheader": jmeter.DEFAULT_COLUMNS_2,
    "jmeter5-noheader": jmeter.DEFAULT_COLUMNS_3,
    "jmeter5-reduced-noheader": ("timeStamp", "elapsed", "label", "responseCode", "success",
                                 "failureMessage", "Latency"),
}
SUMMARY = re.compile(r"^summary =\s+(\d+) in .*Avg:\s+(\d+) Min:\s+(\d+) Max:\s+(\d+) "
                     r"Err:\s+(\d+)", re.MULTILINE)


def raw_rows(name: str) -> list[dict]:
    """The fixture's rows as dicts, by its header or by the column list above."""
    with open(JM / f"{name}.jtl", newline="") as f:
        if name in HEADERLESS:
            return [dict(zip(HEADERLESS[name], row)) for row in csv.reader(f)]
        return list(csv.DictReader(f))


def raw_xml(name: str) -> list[dict]:
    return [dict(e.attrib) for e in ET.parse(JM / f"{name}.xml.jtl").getroot()
            if e.tag in ("httpSample", "sample")]


def summariser(name: str) -> dict:
    count, avg, low, high, errors = map(int, SUMMARY.search(
        (JM / f"{name}.summariser.txt").read_text()).groups())
    return dict(count=count, avg=avg, min=low, max=high, errors=errors)


def commons_math_percentile(values, p: float) -> float:
    """Apache Commons Math's Percentile (its default estimation), which JMeter's dashboard
    uses for statistics.json."""
    ordered = sorted(values)
    n = len(ordered)
    pos = p * (n + 1) / 100
    if pos < 1:
        return float(ordered[0])
    if pos >= n:
        return float(ordered[-1])
    lower = ordered[int(pos) - 1]
    return lower + (pos - int(pos)) * (ordered[int(pos)] - lower)


def ms(result) -> np.ndarray:
    return result.latency_ns // 1_000_000


@pytest.mark.parametrize("name", CSV_FILES)
def test_csv_matches_the_raw_columns_and_jmeters_summariser(name):
    path = JM / f"{name}.jtl"
    result = read_results(path)
    rows = raw_rows(name)
    elapsed = [int(r["elapsed"]) for r in rows]
    summary = summariser(name)
    assert result.info.format == "jmeter-jtl" and result.info.tool == "JMeter"
    assert len(result) == len(rows) == summary["count"]
    assert int((~result.ok).sum()) == sum(r["success"] == "false" for r in rows) \
        == summary["errors"]
    assert ms(result).min() == min(elapsed) == summary["min"]
    assert ms(result).max() == max(elapsed) == summary["max"]
    assert int(ms(result).sum()) // len(result) == summary["avg"]    # JMeter's long division
    for p in (50, 90, 99, 99.9):
        assert nearest_rank(sorted(ms(result)), p) == nearest_rank(sorted(elapsed), p)
    assert result.start_ms.tolist() == [float(r["timeStamp"]) for r in rows]
    assert ms(result).tolist() == elapsed
    assert result.timed_out.sum() == sum("SocketTimeoutException" in r["responseCode"]
                                         for r in rows) == 4
    assert result.status.tolist() == [int(r["responseCode"]) if r["responseCode"].isdigit()
                                      else 0 for r in rows]
    assert result.labels.tolist() == [r["label"] for r in rows]
    assert result.native_unit == "ms" and result.epoch
    assert result.info.load_model == "unknown" and result.skipped == 0


def test_the_dashboard_statistics_of_the_same_run():
    stats = json.loads((JM / "jmeter5-default.statistics.json").read_text())["Total"]
    result = read_results(JM / "jmeter5-default.jtl")
    values = ms(result).tolist()
    assert len(result) == stats["sampleCount"]
    assert int((~result.ok).sum()) == stats["errorCount"]
    assert min(values) == stats["minResTime"]
    assert max(values) == stats["maxResTime"]
    assert np.mean(values) == pytest.approx(stats["meanResTime"], rel=1e-12)
    for p, key in ((50, "medianResTime"), (90, "pct1ResTime"), (95, "pct2ResTime"),
                   (99, "pct3ResTime")):
        assert commons_math_percentile(values, p) == pytest.approx(stats[key], abs=1e-9)


def test_headerless_default_columns_say_nothing_and_other_counts_warn():
    assert read_results(JM / "jmeter5-noheader.jtl").warnings == []
    assert read_results(JM / "jmeter213-noheader.jtl").warnings == []
    reduced = read_results(JM / "jmeter5-reduced-noheader.jtl")
    assert len(reduced.warnings) == 1
    assert "no header line, and 7 columns" in reduced.warnings[0]
    assert "success (column 5" in reduced.warnings[0] and "responseCode" in reduced.warnings[0]
    with_header = read_results(JM / "jmeter5-reduced.jtl")
    assert with_header.warnings == []


@pytest.mark.parametrize("name", XML_FILES)
def test_xml_matches_elementtree_and_the_summariser(name):
    result = read_results(JM / f"{name}.xml.jtl")
    samples = raw_xml(name)
    elapsed = [int(s["t"]) for s in samples]
    summary = summariser(name.replace("jmeter213", "jmeter213-xml").replace(
        "jmeter5", "jmeter5-xml"))
    assert result.info.format == "jmeter-xml"
    assert len(result) == len(samples) == summary["count"]
    assert int((~result.ok).sum()) == sum(s["s"] == "false" for s in samples) \
        == summary["errors"]
    assert ms(result).tolist() == elapsed
    assert (ms(result).min(), ms(result).max()) == (summary["min"], summary["max"])
    assert result.start_ms.tolist() == [float(s["ts"]) for s in samples]
    assert int(result.timed_out.sum()) == sum("timed out" in s["rm"] for s in samples) == 4
    assert {"debug", "home", "api-error", "slow", "refused", "missing"} == set(result.labels)
    assert result.first_error == "500 Internal Server Error"


def test_xml_sub_results_are_not_samples(tmp_path):
    # hand-made: a redirect followed inside one sample, as JMeter nests it
    path = tmp_path / "nested.jtl"
    path.write_text('<?xml version="1.0" encoding="UTF-8"?>\n<testResults version="1.2">\n'
                    '<httpSample t="30" ts="1000" s="true" lb="a" rc="200" rm="OK">\n'
                    '  <httpSample t="10" ts="1000" s="true" lb="a-0" rc="302" rm="Found"/>\n'
                    '  <httpSample t="20" ts="1010" s="true" lb="a-1" rc="200" rm="OK"/>\n'
                    '</httpSample>\n'
                    '<sample t="5" ts="1040" s="false" lb="b" rc="500" rm="x"/>\n'
                    '</testResults>\n')
    result = read_results(path)
    assert ms(result).tolist() == [30, 5] and result.labels.tolist() == ["a", "b"]
    assert result.ok.tolist() == [True, False]


def test_an_xml_sample_without_times_is_skipped_with_its_line(tmp_path):
    lines = (JM / "jmeter213.xml.jtl").read_text().splitlines(keepends=True)
    lines[4] = lines[4].replace(' t="', ' t="x')
    path = tmp_path / "bad.xml.jtl"
    path.write_text("".join(lines))
    result = read_results(path)
    assert len(result) == 175 and result.skipped == 1
    assert result.warnings[0].startswith(f"{path}:5: sample without whole-ms t and ts")


def test_every_fixture_is_claimed_by_the_right_reader_only():
    for path in sorted(JM.glob("*.jtl")):
        head = path.read_bytes()[:65536]
        expected = "jmeter-xml" if path.name.endswith(".xml.jtl") else "jmeter-jtl"
        assert jmeter.sniff(head) == expected, path.name
        assert gatling.sniff(head) is None, path.name
        assert detect_format(path) == expected
    for path in sorted(JM.glob("*")):
        if path.suffix in (".txt", ".json", ".py", ".sh", ".jmx", ".md"):
            assert jmeter.sniff(path.read_bytes()[:65536]) is None, path.name
    for path in sorted((FIXTURES / "gatling").iterdir()):
        assert jmeter.sniff(path.read_bytes()[:65536]) is None, path.name


def test_timestamp_at_the_end_gives_start_as_end_minus_elapsed():
    path = JM / "jmeter5-default.jtl"
    rows = raw_rows("jmeter5-default")
    result = read_results(path, options={"timestamp": "end"})
    assert result.start_ms.tolist() == [float(int(r["timeStamp"]) - int(r["elapsed"]))
                                        for r in rows]


def test_the_fast_and_the_row_by_row_reader_agree(monkeypatch):
    monkeypatch.setattr(jmeter, "CHUNK_ROWS", 37)    # many chunks, categories that differ
    for name in CSV_FILES + list(DATE_FILES):
        path = str(JM / f"{name}.jtl")
        layout = jmeter._csv_layout(path, DATE_FILES.get(name, {}))
        fast = jmeter._read_csv_fast(path, layout)
        rows, skipped = jmeter._read_csv_rows(path, layout)
        assert skipped.count == 0
        for a, b in zip(fast, rows):
            assert (a == b).all() if isinstance(a, np.ndarray) else a == b, name


# ---------------------------------------------------------------------------- damage

def test_a_line_cut_in_the_middle_is_skipped_and_named(tmp_path):
    text = (JM / "jmeter5-default.jtl").read_text()
    path = tmp_path / "cut.jtl"
    path.write_text(text[:text.rindex("\n", 0, len(text) - 1) + 20])
    result = read_results(path)
    assert len(result) == 415 and result.skipped == 1
    assert result.warnings == [f"{path}:417: 3 fields of 17 (skipped)"]


def test_bad_rows_are_counted_listed_and_capped(tmp_path):
    lines = (JM / "jmeter5-default.jtl").read_text().splitlines(keepends=True)
    for i in range(5, 55):     # 50 bad rows: elapsed not a number
        fields = lines[i].split(",")
        fields[1] = "x"
        lines[i] = ",".join(fields)
    path = tmp_path / "bad.jtl"
    path.write_text("".join(lines))
    result = read_results(path)
    assert len(result) == 416 - 50 and result.skipped == 50
    assert result.warnings[0] == f"{path}:6: elapsed 'x' is not a whole number of ms (skipped)"
    assert len(result.warnings) == 21 and result.warnings[-1] == "... and 30 more"


def test_numbers_beyond_int64_nanoseconds_are_skipped_not_a_traceback(tmp_path):
    lines = (JM / "jmeter5-default.jtl").read_text().splitlines(keepends=True)
    for i, huge in ((3, "17095724850583"), (4, "99999999999999999999999")):
        fields = lines[i].split(",")
        fields[1] = huge
        lines[i] = ",".join(fields)
    path = tmp_path / "huge.jtl"
    path.write_text("".join(lines))
    result = read_results(path)
    assert len(result) == 414 and result.skipped == 2
    assert result.warnings[0].startswith(f"{path}:4: elapsed 17095724850583 ")
    assert (result.latency_ns >= 0).all()


def test_another_delimiter_reads_the_same(tmp_path):
    rows = list(csv.reader(open(JM / "jmeter5-default.jtl", newline="")))
    path = tmp_path / "tab.jtl"
    with open(path, "w", newline="") as f:
        csv.writer(f, delimiter="\t").writerows(rows)
    a, b = read_results(JM / "jmeter5-default.jtl"), read_results(path)
    assert (a.latency_ns == b.latency_ns).all() and (a.ok == b.ok).all()


@pytest.mark.parametrize("name, fmt", [("jmeter5-default.jtl", "jmeter-jtl"),
                                       ("jmeter213-noheader.jtl", "jmeter-jtl"),
                                       ("jmeter5.xml.jtl", "jmeter-xml")])
def test_the_shared_unusable_variants_fail_clearly(tmp_path, name, fmt):
    # JMeter writes any delimiter it is told to: a .jtl with ';' is a good file
    assert_each_unusable_variant_fails(jmeter, JM / name, fmt, tmp_path,
                                       skip=("wrong_delimiter",))


@pytest.mark.parametrize("content, what", [
    (b"", "empty"),
    (b"\x00\x01\x02binary\x00" * 100, "NUL bytes"),
    (b"hello,world\n1,2\n", "neither a header"),
    (b"timeStamp,elapsed,success\n01/02/2024 10:00:00.000,12,true\n",
     "day and month in an order the file does not say"),
    (b"timeStamp,elapsed,success\n2024.01.01 at 10:00,12,true\n", "timestamp_format"),
])
def test_unusable_files_give_one_clear_error(tmp_path, content, what):
    assert_one_clear_error(tmp_path / "x.jtl", content, "jmeter-jtl", what)


def test_xml_cut_short_reads_the_whole_samples_and_says_so(tmp_path):
    text = (JM / "jmeter5.xml.jtl").read_text()
    path = tmp_path / "cut.xml.jtl"
    path.write_text(text[:text.index("<httpSample", len(text) // 2) + 30])
    result = read_results(path)
    assert 0 < len(result) < 176
    assert len(result) == text[:text.index("<httpSample", len(text) // 2)].count(
        "</httpSample>") + text[:text.index("<httpSample", len(text) // 2)].count("<sample ")
    assert "ends before </testResults>" in result.warnings[0]


def test_xml_damaged_in_the_middle_is_an_error_with_its_line(tmp_path):
    lines = (JM / "jmeter5.xml.jtl").read_text().splitlines(keepends=True)
    lines[10] = "<httpSample t=>\n"
    path = tmp_path / "bad.xml.jtl"
    path.write_text("".join(lines))
    with pytest.raises(ResultsError) as err:
        read_results(path)
    assert err.value.line == 11 and "unreadable XML" in str(err.value)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
@pytest.mark.parametrize("name", ["jmeter5-default.jtl", "jmeter213-noheader.jtl",
                                  "jmeter5.xml.jtl"])
def test_damaged_files_read_or_raise_results_error(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(damaged(data, (JM / name).read_bytes()[:6000]))
    assert_reads_or_raises(path, "jmeter-xml" if "xml" in name else "jmeter-jtl")


# ---------------------------------------------------------------------------- dates (issue 33)

def _run_window_ms(name: str) -> tuple[int, int]:
    """The epoch ms JMeter printed as the test's start and its tidying up, the same run."""
    text = (JM / f"{name}.summariser.txt").read_text()
    start = int(re.search(r"Starting standalone test @ .*\((\d+)\)", text)[1])
    end = int(re.search(r"Tidying up .*\((\d+)\)", text)[1])
    return start, end


@pytest.mark.parametrize("name", sorted(DATE_FILES))
def test_date_timestamps_read_like_epoch_ms(name):
    from datetime import datetime, timedelta, timezone
    path = JM / f"{name}.jtl"
    assert detect_format(path) == "jmeter-jtl"
    result = read_results(path, options=DATE_FILES[name])
    rows = raw_rows(name)
    elapsed = [int(r["elapsed"]) for r in rows]
    summary = summariser(name)
    assert len(result) == len(rows) == summary["count"]
    assert int((~result.ok).sum()) == summary["errors"]
    assert (ms(result).min(), ms(result).max()) == (summary["min"], summary["max"])
    for p in (50, 90, 99):
        assert nearest_rank(sorted(ms(result)), p) == nearest_rank(sorted(elapsed), p)
    # the dates, parsed here by Python's strptime in the zone JMeter's JVM ran in
    pattern, minutes = PYTHON_FORMATS[name]
    zone = timezone(timedelta(minutes=minutes))
    expected = [round(datetime.strptime(r["timeStamp"], pattern).replace(tzinfo=zone)
                      .timestamp() * 1000) for r in rows]
    assert result.start_ms.tolist() == expected
    # and inside the run as JMeter's own clock printed it (a date in whole seconds: from
    # the start of the second the test started in)
    start, end = _run_window_ms(name)
    assert start // 1000 * 1000 <= result.start_ms.min() and result.start_ms.max() <= end
    assert result.skipped == 0 and result.warnings == []


def test_a_wrong_zone_moves_every_send_time_by_its_offset_only():
    name = "jmeter5-date-kolkata"
    right = read_results(JM / f"{name}.jtl", options=DATE_FILES[name])
    as_utc = read_results(JM / f"{name}.jtl")
    shift = as_utc.start_ms - right.start_ms
    assert (shift == 330 * 60_000).all()
    # the sends relative to the first, and so the one-second intervals, do not change
    assert ((as_utc.start_ms - as_utc.start_ms.min())
            == (right.start_ms - right.start_ms.min())).all()


def test_an_ambiguous_date_asks_for_its_pattern():
    with pytest.raises(ResultsError) as err:
        read_results(JM / "jmeter5-date-us.jtl")
    message = str(err.value)
    assert "jmeter5-date-us.jtl:2: timeStamp '11/29/2026" in message
    assert "day and month" in message and "timestamp_format" in message


@pytest.mark.parametrize("options, what", [
    ({"timestamp_format": "yyyy/MM/dd hh:mm a"}, "'hh' is not a pattern letter"),
    ({"timestamp_format": "yyyy-MM-dd HH:mm:ss"}, "is not a date of timestamp_format"),
    ({"utc_offset": "CET"}, "utc_offset 'CET'"),
])
def test_a_wrong_pattern_or_offset_is_one_clear_error(options, what):
    with pytest.raises(ResultsError, match=re.escape(what)):
        read_results(JM / "jmeter5-date-ms.jtl", options=options)


def test_a_row_whose_date_does_not_fit_is_skipped_with_its_line(tmp_path):
    lines = (JM / "jmeter5-date-ms.jtl").read_text().splitlines(keepends=True)
    lines[5] = lines[5].replace("2026/", "2026-", 1)
    path = tmp_path / "x.jtl"
    path.write_text("".join(lines))
    result = read_results(path)
    assert len(result) == len(lines) - 2 and result.skipped == 1
    assert result.warnings == [f"{path}:6: timeStamp {lines[5].split(',')[0]!r} is not a "
                               "date of the pattern 'yyyy/MM/dd HH:mm:ss.SSS' (skipped)"]
