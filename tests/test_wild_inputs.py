"""Inputs from outside projects (issue 14): each class of problem a check on real files found,
on small real or hand-made files - `jfr print --json` exports in any time zone, JDK labels of
every vendor form, recordings joined from chunks of different times, JFR format 1.0, hlogs with
#[BaseTime] but no #[StartTime], tagged intervals going backwards, files that are no interval log
at all, and per-interval CSV times at the log's precision."""
from __future__ import annotations

import contextlib
import io
import re
from datetime import datetime, timedelta, timezone

import pytest

from analysis.cli import main
from analysis.errors import HlogError, JfrError
from analysis.read.hdr.log import read_hlog
from analysis.derive.jvm_summary import summarize_jfr
from analysis.read.jfr.metadata import ClassInfo, Metadata
from analysis.read.jfr.summary import jdk_label
from analysis.write import datafiles
from tests.conftest import REPO

JFR = REPO / "tests" / "fixtures" / "jfr"
HLOG = REPO / "tests" / "fixtures" / "hlog"


def hgrm(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["hgrm", *args])
    return code, out.getvalue(), err.getvalue()


# -- jfr print --json made outside UTC ---------------------------------------------------------

_Z = re.compile(r'"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?Z"')


def _in_zone(text: str, hours: int, minutes: int = 0) -> str:
    """Every instant of an export rewritten as `jfr print --json` writes it in another zone."""
    offset = timedelta(hours=hours, minutes=minutes)
    sign = "+" if offset >= timedelta(0) else "-"
    a = abs(offset)
    zone = f"{sign}{a.seconds // 3600:02d}:{a.seconds % 3600 // 60:02d}"

    def local(m):
        t = datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S") + offset
        return f'"{t:%Y-%m-%dT%H:%M:%S}{m.group(2) or ""}{zone}"'
    return _Z.sub(local, text)


@pytest.mark.parametrize("hours,minutes", [(1, 0), (-5, 0), (5, 30), (-9, -30), (0, 0)])
def test_export_made_in_any_time_zone_reads_like_the_utc_one(tmp_path, hours, minutes):
    utc = summarize_jfr(JFR / "jdk17-default-export.json")
    text = _in_zone((JFR / "jdk17-default-export.json").read_text(), hours, minutes)
    assert "Z\"" not in text or (hours, minutes) == (0, 0)
    path = tmp_path / "local.json"
    path.write_text(text)
    local = summarize_jfr(path)
    assert local == utc


def test_export_instant_forms():
    from analysis.read.jfr.export import instant_ns
    base = int(datetime(2024, 3, 1, 10, 15, tzinfo=timezone.utc).timestamp()) * 10**9
    assert instant_ns("2024-03-01T10:15:00Z") == base
    assert instant_ns("2024-03-01T11:15+01:00") == base          # seconds left out when 0
    assert instant_ns("2024-03-01T05:15:00.5-05:00") == base + 500_000_000
    assert instant_ns("2024-03-01T10:15:00.123456789+00:00") == base + 123_456_789
    assert instant_ns("2024-03-01T10:15:00") is None            # no offset: not an instant
    assert instant_ns("2024-13-01T10:15:00Z") is None


# -- JDK labels ----------------------------------------------------------------------------------

BUILT = "for linux-amd64 JRE ({v}), built on 2025-04-16T00:00:00Z by \"x\" with gcc 12.2.0"


@pytest.mark.parametrize("name,version,label", [
    # OpenJDK as Debian builds it
    ("OpenJDK 64-Bit Server VM", "OpenJDK 64-Bit Server VM (17.0.15+6-Debian-1deb12u1) "
     + BUILT.format(v="17.0.15+6-Debian-1deb12u1"),
     "OpenJDK 64-Bit Server VM 17.0.15+6-Debian-1deb12u1"),
    # Eclipse Temurin: the same VM name, its own version text
    ("OpenJDK 64-Bit Server VM", "OpenJDK 64-Bit Server VM (21.0.5+11-LTS) "
     + BUILT.format(v="21.0.5+11-LTS"), "OpenJDK 64-Bit Server VM 21.0.5+11-LTS"),
    # Oracle: "(TM)" comes before the version's parentheses
    ("Java HotSpot(TM) 64-Bit Server VM", "Java HotSpot(TM) 64-Bit Server VM (21.0.1+12-LTS-29) "
     + BUILT.format(v="21.0.1+12-LTS-29"), "Java HotSpot(TM) 64-Bit Server VM 21.0.1+12-LTS-29"),
    (None, "Java HotSpot(TM) 64-Bit Server VM (21.0.1+12-LTS-29) "
     + BUILT.format(v="21.0.1+12-LTS-29"), "Java HotSpot(TM) 64-Bit Server VM 21.0.1+12-LTS-29"),
    # Azul Zulu: two parenthesised groups after "JRE"
    ("OpenJDK 64-Bit Server VM", "OpenJDK 64-Bit Server VM (17.0.8.1+1-LTS) for linux-amd64 JRE "
     "(Zulu17.44+53-CA) (17.0.8.1+1-LTS), built on Aug 17 2023",
     "OpenJDK 64-Bit Server VM 17.0.8.1+1-LTS"),
    # async-profiler: java.vm.version alone, with or without java.vm.name
    ("OpenJDK 64-Bit Server VM", "17.0.9+9", "OpenJDK 64-Bit Server VM 17.0.9+9"),
    (None, "17.0.9+9", "JVM 17.0.9+9"),
    ("", "  ", None),
    ("OpenJDK 64-Bit Server VM", None, "OpenJDK 64-Bit Server VM"),
    (None, None, None),
])
def test_jdk_label_is_built_from_the_fields_that_exist(name, version, label):
    assert jdk_label(name, version) == label


def test_recordings_give_the_vm_name_and_version():
    assert summarize_jfr(JFR / "jdk17-default.jfr")["jdk"].startswith(
        "OpenJDK 64-Bit Server VM 17.")


# -- chunks of different times ---------------------------------------------------------------------

def _chunk_offsets(data: bytes) -> list[int]:
    offsets, pos = [], 0
    while pos < len(data):
        offsets.append(pos)
        pos += int.from_bytes(data[pos + 8:pos + 16], "big")
    return offsets


def _shifted(data: bytes, seconds: int) -> bytes:
    """The recording as if made `seconds` later: every chunk header's start time moved."""
    out = bytearray(data)
    for pos in _chunk_offsets(data):
        start = int.from_bytes(out[pos + 32:pos + 40], "big")
        out[pos + 32:pos + 40] = (start + seconds * 10**9).to_bytes(8, "big")
    return bytes(out)


def test_chunks_of_different_times_count_their_spans_and_report_the_gap(tmp_path):
    one = (JFR / "jdk17-default.jfr").read_bytes()
    alone = summarize_jfr(JFR / "jdk17-default.jfr")
    path = tmp_path / "joined.jfr"
    path.write_bytes(one + _shifted(one, 86_400))
    joined = summarize_jfr(path)
    assert joined["duration_s"] == pytest.approx(2 * alone["duration_s"], abs=1e-5)
    assert len(joined["gaps"]) == 1
    gap_start, gap_end = joined["gaps"][0]
    assert gap_start == pytest.approx(alone["covered_until"], abs=1e-5)
    assert gap_end - gap_start == pytest.approx(86_400 - alone["duration_s"], abs=1e-3)
    assert any("recordings joined?" in w for w in joined["warnings"])
    assert joined["gc"]["count"] == 2 * alone["gc"]["count"]
    # every rate is over the covered time, not the 24 hours between
    assert joined["allocation_rate_mb_s"] == pytest.approx(alone["allocation_rate_mb_s"],
                                                           rel=1e-3)
    # the order of the chunks in the file does not matter
    path.write_bytes(_shifted(one, 86_400) + one)
    assert summarize_jfr(path)["duration_s"] == joined["duration_s"]


def test_a_continuous_recording_has_no_gap():
    for name in ("jdk17-profile.jfr", "jdk17-killed"):
        s = summarize_jfr(JFR / name)
        assert s["gaps"] == [] and s["duration_s"] == pytest.approx(
            s["covered_until"] - s["start_epoch_s"], abs=1e-5)


def test_window_coverage_leaves_the_gap_out(tmp_path):
    one = (JFR / "jdk17-default.jfr").read_bytes()
    path = tmp_path / "joined.jfr"
    path.write_bytes(one + _shifted(one, 3_600))
    s = summarize_jfr(path)
    start = int(s["start_epoch_s"] * 1e9)
    end = start + 7_200 * 10**9
    windowed = summarize_jfr(path, window=(start, end))
    assert windowed["window"]["covered_s"] == pytest.approx(s["duration_s"], abs=1e-5)


# -- JFR format 1.0 (JDK 9 and 10) ---------------------------------------------------------------

def _as_version(data: bytes, major: int, minor: int, compressed: bool = True) -> bytes:
    out = bytearray(data)
    for pos in _chunk_offsets(data):
        out[pos + 4:pos + 8] = major.to_bytes(2, "big") + minor.to_bytes(2, "big")
        out[pos + 67] = (out[pos + 67] | 1) if compressed else (out[pos + 67] & ~1)
    return bytes(out)


def test_format_1_0_reads_like_2_0_with_the_same_encoding(tmp_path):
    """The JDK's `jfr` reads 1.0 with its 2.0 code: same header layout, same LEB128 integers
    (bit 0 of the header's features). This recording is a 2.0 one relabelled 1.0: no JDK 9 or
    10 recording was at hand; their com.oracle.jdk.* type names are tested below."""
    data = (JFR / "jdk17-default.jfr").read_bytes()
    path = tmp_path / "v1.jfr"
    path.write_bytes(_as_version(data, 1, 0))
    assert summarize_jfr(path) == summarize_jfr(JFR / "jdk17-default.jfr")
    path.write_bytes(_as_version(data, 1, 0, compressed=False))
    with pytest.raises(JfrError, match="format 1.0 with uncompressed integers"):
        summarize_jfr(path)
    path.write_bytes(_as_version(data, 0, 9))
    with pytest.raises(JfrError, match="format 0.9 is not supported.*JDK 9 and later"):
        summarize_jfr(path)


def test_jdk9_type_names_are_found_under_their_jdk11_names():
    gc = ClassInfo(200, "com.oracle.jdk.GarbageCollection", "jdk.jfr.Event")
    trace = ClassInfo(201, "com.oracle.jdk.types.StackTrace", None)
    new = ClassInfo(202, "jdk.CPULoad", "jdk.jfr.Event")
    md = Metadata({200: gc, 201: trace, 202: new})
    assert md.by_name["jdk.GarbageCollection"] is gc
    assert md.by_name["jdk.types.StackTrace"] is trace
    assert md.by_name["jdk.CPULoad"] is new and md.by_name[gc.name] is gc


# -- hlogs: BaseTime without StartTime -------------------------------------------------------------

def _data_lines():
    return [ln for ln in (HLOG / "java-jHiccup-2.0.7S.logV2.hlog").read_text().splitlines()
            if ln[:1].isdigit()]


BASE = 1441812123.123


def _basetime_log(tmp_path):
    path = tmp_path / "base.hlog"
    path.write_text("\n".join([f"#[BaseTime: {BASE:.3f} (seconds since epoch)]",
                               '"StartTimestamp","Interval_Length","Interval_Max",'
                               '"Interval_Compressed_Histogram"'] + _data_lines()) + "\n")
    return path


def test_basetime_without_starttime_counts_from_the_first_interval(tmp_path):
    path = _basetime_log(tmp_path)
    log = read_hlog(path)
    first = float(_data_lines()[0].split(",")[0])
    assert log.intervals[0].start_s == 0.0
    assert log.start_time_s == pytest.approx(BASE + first)
    assert log.intervals[0].start_ms == round((BASE + first) * 1000)
    # a window in seconds since the first interval selects what it says
    chosen = log.select(None, 0.0, 10.0)
    assert 9 <= len(chosen) <= 11 and chosen[0] is log.intervals[0]
    code, out, err = hgrm("-i", str(path), "-start", "0", "-end", "10")
    assert code == 0, err
    assert "Total count    =" in out and "selects all" not in err


def test_window_selecting_all_intervals_warns_and_none_is_an_error(tmp_path):
    path = _basetime_log(tmp_path)
    code, _, err = hgrm("-i", str(path), "-start", "-5", "-end", "1e6")
    assert code == 0
    assert re.search(r"warning: .*base\.hlog: the window -start -5.0 -end 1000000.0 selects all "
                     r"62 untagged intervals \(times are seconds since the first interval's "
                     r"start \(timestamp \+ #\[BaseTime\]\)\)", err), err
    # -start alone selects every interval on HistogramLogProcessor's axis (offsets about
    # BaseTime): its output, and a warning that says which axis that was
    code, _, err = hgrm("-i", str(path), "-start", "1e6")
    assert code == 0
    assert re.search(r"warning: .*base\.hlog: the window -start 1000000.0 -end inf selects all "
                     r"62 untagged intervals \(times are seconds since the first interval's "
                     r"bare timestamp, as HistogramLogProcessor counts them", err), err
    code, _, err = hgrm("-i", str(path), "-start", "1e10")
    assert code == 1
    assert "no untagged interval starting between 10000000000.0 and inf s after the first " \
           "interval's start (timestamp + #[BaseTime])" in err


# -- tagged intervals going backwards --------------------------------------------------------------

def test_negative_and_backward_times_are_reported_once_per_tag(tmp_path):
    data = _data_lines()
    lines = ["#[StartTime: 1441812279.474 (seconds since epoch)]"]
    lines += [f"Tag=A,{d}" for d in data[:5]]
    lines += [f"Tag=A,{d}" for d in data[2:4]]                # A goes back twice
    lines += [f"Tag=B,-{d}" for d in data[:3]]                # B negative (and backwards)
    lines += data[:3]                                        # untagged: in order
    path = tmp_path / "tagged.hlog"
    path.write_text("\n".join(lines) + "\n")
    log = read_hlog(path)
    notes = [w for w in log.warnings if "interval(s) (" in w]
    assert notes == [
        f"{path}:9: 3 interval(s) (tag 'B') have a negative timestamp; kept in file order",
        f"{path}:7: 2 interval(s) (tag 'A') start before an interval above them (times go "
        "backwards); kept in file order",
        f"{path}:10: 2 interval(s) (tag 'B') start before an interval above them (times go "
        "backwards); kept in file order"]
    code, _, err = hgrm("-i", str(path), "-tag", "A")
    assert code == 0 and err.count("times go backwards") == 2
    # the fixtures in order say nothing
    assert read_hlog(HLOG / "java-tagged-Log.logV2.hlog").warnings == []


# -- files that are not interval logs --------------------------------------------------------------

def test_a_file_that_is_not_an_interval_log_is_one_error(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("# A project\n\nSome text, with commas, here.\n\n- a list\n" * 20)
    code, out, err = hgrm("-i", str(readme))
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert f"{readme}: not an HdrHistogram interval log" in err and "; line 3: expected" in err
    with pytest.raises(HlogError) as raised:
        read_hlog(readme)
    assert raised.value.warnings == []


def test_bad_lines_before_the_first_log_line_are_reported_once_one_parses(tmp_path):
    path = tmp_path / "prefixed.hlog"
    path.write_text("some preamble, not a log line\n" + "\n".join(_data_lines()[:3]) + "\n")
    log = read_hlog(path)
    assert len(log.intervals) == 3
    assert [w.split(": ")[0] for w in log.warnings] == [f"{path}:1"]


# -- per-interval CSV times --------------------------------------------------------------------------

def test_series_csv_times_are_rounded_to_the_logs_precision():
    row = {"length_s": 1.0, "count": 1, "throughput_rps": 1.0, "p50_ms": 1.0, "p99_ms": 1.0,
           "max_ms": 1.0}
    ms = [{**row, "t_s": t} for t in (0.0, 0.01399993896484375, 1.0070002079010010,
                                      2.0129999999999910)]
    us = [{**row, "t_s": t} for t in (0.0, 0.0001230001449584961, 1.000456)]
    text = datafiles.series_csv([ms, us])
    times = [line.split(",")[1] for line in text.splitlines()[1:]]
    assert times == ["0.0", "0.014", "1.007", "2.013", "0.0", "0.000123", "1.000456"]


def test_series_csv_of_a_real_log_has_millisecond_times():
    from analysis.derive.aggregate import interval_series
    log = read_hlog(HLOG / "js-jHiccup-with-basetime-2.0.7S.logV2.hlog")
    text = datafiles.series_csv([interval_series(log.intervals, "ns")])
    for line in text.splitlines()[1:]:
        t = line.split(",")[1]
        assert len(t.split(".")[1]) <= 3, t
