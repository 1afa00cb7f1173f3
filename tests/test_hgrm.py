"""`python -m analysis hgrm` against HistogramLogProcessor's own output (tests/golden/hgrm).

The expected files were recorded by tests/golden/hgrm/regen with ../shared/oracle/hlp
(HdrHistogram 2.2.2); each case lists its flags in cases.tsv. Outputs must be byte-identical,
except the local-time date text inside the `#[StartTime: ...]` comment.
"""
from __future__ import annotations

import contextlib
import io
import math
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis.cli import main
from analysis.read.hdr.histogram import Histogram, layout_for
from analysis.read.hdr.log import read_hlog
from tests.conftest import REPO
from tests.helpers import (HGRM_GOLDEN, HLOG_FIXTURES, encode, hgrm_cases, log_line,
                           normalise_start_time, summary_by_batches, summary_by_histograms,
                           write_log)

pytestmark = pytest.mark.slow     # (make check leaves it out; make test runs it)


def hgrm(*args: str) -> tuple[int, str, str]:
    """Run the command in-process (fast); returns (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["hgrm", *args])
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("name,fixture,flags", list(hgrm_cases()))
def test_output_is_byte_identical_to_histogram_log_processor(tmp_path, name, fixture, flags):
    if name == "ycsb-default":
        # HistogramLogProcessor silently drops the interval before #[StartTime]; with the same
        # window made explicit we must produce its exact output.
        flags = ["-start", "0", *flags]
    source = HLOG_FIXTURES / fixture
    if name.endswith("-stdout"):
        code, out, err = hgrm("-i", str(source), *flags)
        assert code == 0, err
        assert normalise_start_time(out) == normalise_start_time((HGRM_GOLDEN / "expected" / f"{name}.stdout").read_text())
        return
    code, out, err = hgrm("-i", str(source), *flags, "-o", str(tmp_path / "out"))
    assert code == 0, err
    assert out == ""
    assert normalise_start_time((tmp_path / "out").read_text()) == \
        normalise_start_time((HGRM_GOLDEN / "expected" / f"{name}.log").read_text())
    assert normalise_start_time((tmp_path / "out.hgrm").read_text()) == \
        normalise_start_time((HGRM_GOLDEN / "expected" / f"{name}.hgrm").read_text())


def test_start_time_line_matches_java_in_utc(tmp_path, monkeypatch):
    """With TZ=UTC (the oracle's zone here) even the date text is Java's Date.toString()."""
    monkeypatch.setenv("TZ", "UTC")
    import time
    time.tzset()
    try:
        code, out, _ = hgrm("-i", str(HLOG_FIXTURES / "gen-ns-plain.hlog"), "-outputValueUnitRatio",
                            "1000")
    finally:
        monkeypatch.undo()
        time.tzset()
    assert code == 0
    expected = (HGRM_GOLDEN / "expected" / "gen-ns-stdout.stdout").read_text()
    assert out.splitlines()[0] == expected.splitlines()[0]
    assert "Tue Nov 14 22:13:20 UTC 2023" in out.splitlines()[0]


def test_trailing_blank_line_is_read_like_the_file_without_it(tmp_path):
    """HistogramLogProcessor fails on the corpus file's trailing blank line ("line appears to
    be malformed", exit 1); we read all 11 intervals and print what Java prints without it."""
    code, _, err = hgrm("-i", str(HLOG_FIXTURES / "c-hiccup.140623.1028.10646.hlog"),
                        "-o", str(tmp_path / "out"))
    assert code == 0, err
    assert err == ""
    assert (tmp_path / "out.hgrm").read_text() == \
        (HGRM_GOLDEN / "expected" / "hiccup-trimmed.hgrm").read_text()
    assert (tmp_path / "out").read_text() == (HGRM_GOLDEN / "expected" / "hiccup-trimmed.log").read_text()


def test_intervals_before_start_time_are_kept_and_reported(tmp_path):
    """ycsb's first interval starts 5 ms before #[StartTime]; Java drops it silently."""
    code, _, err = hgrm("-i", str(HLOG_FIXTURES / "java-ycsb.logV1.hlog"), "-o", str(tmp_path / "o"))
    assert code == 0
    assert "java-ycsb.logV1.hlog:5: 1 interval(s) start before #[StartTime]" in err
    hgrm_text = (tmp_path / "o.hgrm").read_text()
    java_without = (HGRM_GOLDEN / "expected" / "ycsb-default.hgrm").read_text()
    java_with = (HGRM_GOLDEN / "expected" / "ycsb-all.hgrm").read_text()
    assert "Total count    =       299719" in java_without
    assert "Total count    =       300056" in hgrm_text
    # same numbers as Java's output when Java is told to keep the interval
    assert hgrm_text.splitlines()[2:] == java_with.splitlines()[2:]
    assert hgrm_text.startswith("#[Overall percentile distribution between -0.005 and <Infinite>")


def test_basetime_window_java_cannot_select_counts_from_the_first_interval(tmp_path):
    """In a log with #[BaseTime] and no #[StartTime], Java's offsets are about BaseTime, so
    -start 3 -end 9.5 selects nothing (HistogramLogProcessor throws). We count the window from
    the first interval's absolute start instead: exactly what Java prints when that start is
    the log's StartTime (the golden basetime-late-window, recorded from such a copy)."""
    flags = ["-start", "3", "-end", "9.5", "-outputValueUnitRatio", "1000"]
    code, _, err = hgrm("-i", str(HLOG_FIXTURES / "basetime-late.hlog"), *flags,
                        "-o", str(tmp_path / "out"))
    assert code == 0 and err == ""
    for suffix in ("log", "hgrm"):
        ours = (tmp_path / ("out" if suffix == "log" else "out.hgrm")).read_text()
        java = (HGRM_GOLDEN / "expected" / f"basetime-late-window.{suffix}").read_text()
        assert normalise_start_time(ours) == normalise_start_time(java)
    rows = (tmp_path / "out").read_text().count(": I:")
    assert rows == 7            # the untagged intervals 3, 4, ... 9 s after the first


def test_basetime_window_read_twice_warns_once(tmp_path):
    """The second reading (window on the first interval's axis) reports a bad line once."""
    lines = (HLOG_FIXTURES / "basetime-only.hlog").read_text().splitlines(keepends=True)
    lines[8] = "not a histogram line\n"
    bad = tmp_path / "bad.hlog"
    bad.write_text("".join(lines))
    code, out, err = hgrm("-i", str(bad), "-start", "2", "-end", "6")
    assert code == 0
    assert err == f"warning: {bad}:9: expected 'start,length,max,payload', found 1 field(s); " \
                  "line skipped\n"
    # intervals 2..6 s after the first, less the one on line 9 (timestamp 4.000)
    assert "Total count    =" in out and out.startswith("#[StartTime: 1795306954.757 ")
    log = read_hlog(bad)
    assert out.splitlines()[-2].endswith(f"{log.merged(None, 2, 6).total_count:13d}]")


def test_basetime_window_selecting_everything_on_javas_axis_is_javas_output(tmp_path):
    """-start 5 alone selects every interval on Java's axis (offsets about BaseTime): Java's
    output (golden basetime-only-start-all), and a warning naming the axis."""
    code, _, err = hgrm("-i", str(HLOG_FIXTURES / "basetime-only.hlog"), "-start", "5",
                        "-o", str(tmp_path / "out"))
    assert code == 0
    assert (tmp_path / "out.hgrm").read_text() == \
        (HGRM_GOLDEN / "expected" / "basetime-only-start-all.hgrm").read_text()
    assert "selects all 24 untagged intervals (times are seconds since the first interval's " \
           "bare timestamp, as HistogramLogProcessor counts them" in err


def test_unparsable_line_is_skipped_with_a_warning_and_reading_goes_on(tmp_path):
    lines = (HLOG_FIXTURES / "java-jHiccup-2.0.7S.logV2.hlog").read_text().splitlines(keepends=True)
    lines[10] = "this is not a histogram line\n"   # Java stops reading here, exit 0
    lines[20] = lines[20].replace("HISTF", "HISTX")  # corrupt payload
    bad = tmp_path / "bad.hlog"
    bad.write_text("".join(lines))
    code, out, err = hgrm("-i", str(bad))
    assert code == 0
    warnings = err.splitlines()
    assert len(warnings) == 2
    assert warnings[0].startswith(f"warning: {bad}:11: ")
    assert warnings[1].startswith(f"warning: {bad}:21: ")
    assert "not valid base64" in warnings[1] or "cookie" in warnings[1]
    # every other interval is read: 62 - 2
    from analysis.read.hdr.log import read_hlog
    log = read_hlog(bad)
    assert len(log.intervals) == 60
    assert f"Total count    = {log.merged().total_count:12d}" in out


@pytest.mark.parametrize("flags,message", [
    (["-tag", "nosuchtag"], "no interval with tag 'nosuchtag'"),
    (["-start", "1000"], "no untagged interval starting between 1000.0 and inf s"),
    (["-end", "-5"], "no untagged interval starting between -inf and -5.0 s"),
])
def test_nothing_matching_is_one_error_line_and_exit_1(tmp_path, flags, message):
    """Java throws a NullPointerException and exits 0 here."""
    code, out, err = hgrm("-i", str(HLOG_FIXTURES / "java-jHiccup-2.0.7S.logV2.hlog"), *flags,
                          "-o", str(tmp_path / "o"))
    assert code == 1
    assert err.count("\n") == 1 and err.startswith("error: ") and message in err
    assert not (tmp_path / "o").exists()


def test_file_with_nothing_usable_warns_per_line_then_fails(tmp_path):
    code, out, err = hgrm("-i", str(HLOG_FIXTURES / "c-regression-bucket-config-shift-overflow.hlog"))
    assert code == 1
    lines = err.splitlines()
    assert [line.split(": ")[0] for line in lines] == ["warning", "warning", "error"]
    assert "overflow.hlog:4: invalid histogram header" in lines[0]
    assert "overflow.hlog:5: unknown payload cookie" in lines[1]
    assert "no usable histogram interval" in lines[2]


@pytest.mark.parametrize("flags,message", [
    (["-outputValueUnitRatio", "0"], "-outputValueUnitRatio must be a positive number"),
    (["-percentilesOutputTicksPerHalf", "0"], "-percentilesOutputTicksPerHalf must be at least 1"),
])
def test_invalid_settings_are_refused(flags, message):
    code, _, err = hgrm("-i", str(HLOG_FIXTURES / "gen-ns-plain.hlog"), *flags)
    assert code == 1 and message in err


def test_missing_input_file_is_an_error_not_a_traceback(tmp_path):
    code, _, err = hgrm("-i", str(tmp_path / "nope.hlog"))
    assert code == 1
    assert err.startswith("error: ") and "no such file" in err


def test_listtags():
    code, out, _ = hgrm("-i", str(HLOG_FIXTURES / "c-jHiccup-2.0.7S.logV3.hlog"), "-listtags")
    assert code == 0
    assert out.splitlines()[:2] == ["Tags found in input file:", "[NO TAG (default)]"]
    assert "a1.134a" in out.splitlines()


def test_reads_standard_input_like_the_processor():
    source = HLOG_FIXTURES / "java-jHiccup-2.0.7S.logV2.hlog"
    done = subprocess.run([sys.executable, "-m", "analysis", "hgrm"], cwd=REPO,
                          stdin=source.open("rb"), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    expected = (HGRM_GOLDEN / "expected" / "v2-stdout.stdout").read_text()
    assert normalise_start_time(done.stdout) == normalise_start_time(expected)


def test_help_names_every_processor_flag():
    done = subprocess.run([sys.executable, "-m", "analysis", "hgrm", "--help"], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0
    for flag in ("-i FILE", "-o OUT", "-csv", "-tag TAG", "-start SEC", "-end SEC",
                 "-outputValueUnitRatio R", "-percentilesOutputTicksPerHalf N"):
        assert flag in done.stdout


def test_single_dash_flags_are_not_split_by_argparse(tmp_path):
    # "-csv" must not parse as "-c sv"; "-start -1" must take the negative number.
    code, _, err = hgrm("-i", str(HLOG_FIXTURES / "java-ycsb.logV1.hlog"), "-csv", "-start", "-1",
                        "-o", str(tmp_path / "o"))
    assert code == 0, err
    log_lines = (tmp_path / "o").read_text().splitlines()
    hgrm_lines = (tmp_path / "o.hgrm").read_text().splitlines()
    assert log_lines[0].startswith("#[Interval percentile log between -1.000 and <Infinite>")
    assert log_lines[2].startswith('"Timestamp","Int_Count"')
    assert hgrm_lines[2] == '"Value","Percentile","TotalCount","1/(1-Percentile)"'
    assert hgrm_lines[-1].endswith(",1.000000000000,300056,Infinity")


def test_golden_files_come_from_the_java_tools():
    regen = (HGRM_GOLDEN / "regen").read_text()
    assert '"$oracle/hlp"' in regen and '"$oracle/javastats"' in regen
    assert "analysis" not in regen.replace("analysis hgrm", "")


@pytest.mark.oracle
def test_fresh_log_against_live_histogram_log_processor(oracle, tmp_path):
    """A log no golden has seen (other seed, us unit, tags), both tools run now."""
    log = tmp_path / "fresh.hlog"
    subprocess.run([str(oracle / "genhlog"), str(log), "12", "3000", "20261122", "us", "tagged"],
                   check=True, capture_output=True, timeout=300)
    flags = ["-tag", "write", "-outputValueUnitRatio", "1000", "-percentilesOutputTicksPerHalf", "7"]
    subprocess.run([str(oracle / "hlp"), "-i", str(log), *flags, "-o", str(tmp_path / "java")],
                   check=True, capture_output=True, timeout=300)
    code, _, err = hgrm("-i", str(log), *flags, "-o", str(tmp_path / "ours"))
    assert code == 0, err
    for suffix in ("", ".hgrm"):
        assert normalise_start_time((tmp_path / f"ours{suffix}").read_text()) == \
            normalise_start_time((tmp_path / f"java{suffix}").read_text())


# -- the vectorised interval summary against the plain Histogram statistics -------------------


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(st.one_of(st.integers(0, 3000), st.integers(0, 10**9)), max_size=60),
                min_size=1, max_size=30),
       st.integers(1, 9), st.sampled_from([1 << 21, 64]))
def test_running_percentiles_equal_the_histograms_statistics(tmp_path, monkeypatch, intervals,
                                                             batch_size, fine_cells):
    """Batches of several sizes (so strides differ between batches), leading empty intervals,
    and a tiny per-index grid limit (so runs of rows are split) give Histogram's numbers."""
    from analysis.read.hdr import running as hgrm_module
    monkeypatch.setattr(hgrm_module, "FINE_CELLS", fine_cells)
    layout = layout_for(1, 10**12, 3)
    histograms = [Histogram.from_values(layout, values) for values in intervals]
    path = tmp_path / f"run-{batch_size}.hlog"
    write_log(path, [log_line(encode(h), float(k)) for k, h in enumerate(histograms)])
    assert summary_by_batches(path, batch_size) == summary_by_histograms(histograms)


def test_running_percentiles_on_a_generated_day_slice():
    """A realistic log (genhlog, 2,000 values a second) across many batches of 256."""
    path = HLOG_FIXTURES / "gen-ns-plain.hlog"
    log = read_hlog(path)
    histograms = [iv.histogram for iv in log.intervals if iv.tag is None]
    assert summary_by_batches(path, 256) == summary_by_histograms(histograms)
    assert summary_by_batches(path, 5) == summary_by_histograms(histograms)


# -- the interval log's time column -------------------------------------------------------------

@settings(max_examples=300, deadline=None)
# (times of a log lie within +-9.2e15 s: lines.MAX_ABS_SECONDS)
@given(st.lists(st.one_of(st.floats(-1e16, 1e16), st.sampled_from([math.inf, -math.inf, math.nan]),
                          st.integers(-10**9, 10**9).map(lambda n: n / 1000.0),
                          st.integers(-10**7, 10**7).map(lambda n: n / 10000.0)),
                max_size=40),
       st.sampled_from([0, 4]))
def test_time_column_shortcut_is_java_format_fixed(times, width):
    """The interval log's time column ('%.3f' where no rounding tie can occur) is Java's
    %W.3f text, ties (x.xxx5) and exponents included."""
    from analysis.read.hdr.distribution import java_format_fixed
    from analysis.read.hdr.processor import _times_text
    times += [0.0015, 1.0005, -0.0005, 2.5e-4, 1e16, 1.5e17, 12.3455]
    assert _times_text(times, width) == [java_format_fixed(t, 3, width) for t in times]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.integers(-10**15, 10**15).map(lambda n: n / 1000.0),
                          st.integers(-10**9, 10**9).map(lambda n: n / 1000.0),
                          st.floats(-1e16, 1e16), st.floats(-1e-3, 1e-3),
                          st.sampled_from([1e-4, -1e-4, 9.9995e14, 1e15, 0.0, -0.0, 0.0005])),
                min_size=1, max_size=3),
       st.sampled_from([0, 4]))
def test_time_column_of_whole_milliseconds_is_java_format_fixed(times, width):
    """Short lists, so that every value of many of them passes the vectorised test (a list
    that does is formatted without any per-value check)."""
    from analysis.read.hdr.distribution import java_format_fixed
    from analysis.read.hdr.processor import _times_text
    assert _times_text(times, width) == [java_format_fixed(t, 3, width) for t in times]


def test_time_column_of_a_time_past_2_to_the_43_is_javas():
    """The double nearest 70368744177664.38 is ...664.375 exactly: '%.3f' printed .375, Java's
    Formatter (from the shortest decimal) .380 (found by the test above)."""
    from analysis.read.hdr.distribution import java_format_fixed
    from analysis.read.hdr.processor import _times_text
    for t in (70368744177664.38, 2.0 ** 43 + 0.38, -(2.0 ** 45) - 0.07):
        assert _times_text([t], 0) == [java_format_fixed(t, 3, 0)]
        assert _times_text([t, math.nan], 4) == [java_format_fixed(t, 3, 4),
                                                 java_format_fixed(math.nan, 3, 4)]
