"""The .hlog reader: every corpus file (what must be read from it), header and time rules.

Each corpus file (../shared/corpus/hlog/SOURCES.md, copied into tests/fixtures/hlog) has a row
stating what must be read and which lines must be reported.
"""
from __future__ import annotations

import pytest

from analysis.errors import HlogError
from analysis.read.hdr.double import DoubleHistogram
from analysis.read.hdr.histogram import Histogram
from analysis.read.hdr.log import read_hlog
from tests.conftest import REPO

FIXTURES = REPO / "tests" / "fixtures" / "hlog"

# file, tag, intervals with that tag, their total count, warnings as (line, words in reason)
CORPUS = [
    ("java-jHiccup-2.0.1.logV0.hlog", None, 81, 61256, []),
    ("java-jHiccup-2.0.6.logV1.hlog", None, 88, 65964, []),
    ("java-jHiccup-2.0.7S.logV2.hlog", None, 62, 48761, []),
    ("java-tagged-Log.logV2.hlog", "A", 21, 16145, []),
    ("java-tagged-Log.logV2.hlog", None, 21, 16145, []),
    # HistogramLogProcessor keeps 299,719 values: it drops the interval before StartTime
    ("java-ycsb.logV1.hlog", None, 602, 300056, [(5, "start before #[StartTime]")]),
    # its one interval starts before StartTime: HistogramLogProcessor throws and exits 0
    ("py-raphael.hlog", None, 1, 140003, [(4, "start before #[StartTime]")]),
    ("c-jHiccup-2.0.7S.logV3.hlog", None, 58, 45750, []),
    # HistogramLogProcessor fails on the trailing blank line; all 11 intervals are readable
    ("c-hiccup.140623.1028.10646.hlog", None, 11, 51715, []),
    ("js-jHiccup-no-header-2.0.7S.logV2.hlog", None, 62, 48761, []),
    # BaseTime: HistogramLogProcessor throws; 62 intervals, 48,761 values are readable
    ("js-jHiccup-with-basetime-2.0.7S.logV2.hlog", None, 62, 48761,
     [(6, "62 interval(s) start before #[StartTime]")]),
    ("js-bug-whitespace.hlog", "bo-global-http", 1, None, []),
    # fuzzer finds from the C port: the readable part, each bad line named
    ("c-regression-log-start-time-overflow.hlog", None, 62, 48761, []),
    ("c-regression-log-timestamp-overflow.hlog", None, 1, 749,
     [(5, "out of any plausible range")]),
]

UNREADABLE = [
    ("c-regression-bucket-config-shift-overflow.hlog",
     [(4, "cannot be represented in 63 bits"), (5, "unknown payload cookie")]),
    ("c-regression-start-time-huge.hlog", [(3, "StartTime 1e300 is not a usable time")]),
    ("c-regression-start-time-nonfinite.hlog", [(3, "StartTime nan is not a usable time")]),
]


@pytest.mark.parametrize("name,tag,intervals,total,warnings", CORPUS,
                         ids=[f"{c[0]}-{c[1]}" for c in CORPUS])
def test_corpus_file_reads_what_it_must(name, tag, intervals, total, warnings):
    path = FIXTURES / name
    log = read_hlog(path)
    chosen = log.select(tag)
    assert len(chosen) == intervals
    if total is not None:
        assert log.merged(tag=tag).total_count == total
        assert sum(iv.total_count for iv in chosen) == total
    assert len(log.warnings) == len(warnings)
    for text, (line, words) in zip(log.warnings, warnings):
        assert text.startswith(f"{path}:{line}: ")
        assert words in text


@pytest.mark.parametrize("name,warnings", UNREADABLE, ids=[u[0] for u in UNREADABLE])
def test_corpus_file_without_usable_interval_is_one_clear_error(name, warnings):
    path = FIXTURES / name
    with pytest.raises(HlogError) as raised:
        read_hlog(path)
    assert str(raised.value).startswith(f"{path}: no usable histogram interval")
    assert len(raised.value.warnings) == len(warnings)
    for text, (line, words) in zip(raised.value.warnings, warnings):
        assert text.startswith(f"{path}:{line}: ") and words in text


def test_whitespace_file_interval():
    log = read_hlog(FIXTURES / "js-bug-whitespace.hlog")
    assert log.tags() == ["bo-global-http"]
    (iv,) = log.intervals
    assert iv.tag == "bo-global-http" and iv.length_s == 40.807
    assert iv.histogram.total_count == 0     # an empty histogram, as javastats reads it too


def test_tags_and_api_shape():
    log = read_hlog(FIXTURES / "c-jHiccup-2.0.7S.logV3.hlog")
    assert log.tags()[0] is None
    assert log.tags()[1:] == sorted(log.tags()[1:]) and len(log.tags()) == 5
    iv = log.intervals[0]
    assert (iv.line, iv.tag) == (5, None)
    assert iv.start_s == pytest.approx(0.127)
    assert iv.length_s == 1.007
    assert isinstance(iv.histogram, Histogram)
    assert iv.histogram.total_count == iv.total_count


def test_time_window_selects_on_interval_start_like_the_processor():
    log = read_hlog(FIXTURES / "java-jHiccup-2.0.7S.logV2.hlog")
    window = log.select(None, 10, 30.5)
    assert all(10 <= iv.start_s <= 30.5 for iv in window)
    outside = [iv for iv in log.intervals if iv not in window]
    assert all(iv.start_s < 10 or iv.start_s > 30.5 for iv in outside)
    assert len(window) == 20 and round(window[0].start_s, 3) == 10.883
    assert log.merged(start_s=10, end_s=30.5).total_count == sum(iv.total_count for iv in window)
    with pytest.raises(HlogError, match="no interval with untagged lines between 1000"):
        log.merged(start_s=1000)
    with pytest.raises(HlogError, match="tags in the log: untagged"):
        log.merged(tag="nope")


def _v2_lines():
    return (FIXTURES / "java-jHiccup-2.0.7S.logV2.hlog").read_text().splitlines()


def test_crlf_blank_lines_and_comments_change_nothing(tmp_path):
    lines = _v2_lines()
    mangled = lines[:6] + ["", "# a comment", "   "] + lines[6:] + ["", ""]
    path = tmp_path / "crlf.hlog"
    path.write_bytes("\r\n".join(mangled).encode())
    original = read_hlog(FIXTURES / "java-jHiccup-2.0.7S.logV2.hlog")
    log = read_hlog(path)
    assert log.warnings == []
    assert [iv.start_s for iv in log.intervals] == [iv.start_s for iv in original.intervals]
    assert log.merged() == original.merged()


def test_relative_and_absolute_timestamps_and_base_time(tmp_path):
    lines = _v2_lines()
    data = [line for line in lines if line[0].isdigit()]
    start = 1441812279.474
    # absolute timestamps, no BaseTime: start_s is measured from StartTime
    absolute = [f"{float(d.split(',')[0]) + start:.3f}," + d.split(",", 1)[1] for d in data]
    path = tmp_path / "abs.hlog"
    path.write_text("\n".join(lines[:4] + absolute) + "\n")
    log = read_hlog(path)
    assert log.base_time_s == 0.0
    assert log.intervals[0].start_s == pytest.approx(0.127, abs=1e-3)
    assert log.intervals[0].start_ms == round((start + 0.127) * 1000)
    # relative timestamps with an explicit BaseTime ten seconds after StartTime
    path = tmp_path / "base.hlog"
    path.write_text("\n".join(lines[:3] + [f"#[BaseTime: {start + 10:.3f} (seconds since epoch)]"]
                              + lines[3:]) + "\n")
    log = read_hlog(path)
    assert log.intervals[0].start_s == pytest.approx(10.127, abs=1e-3)
    # no header at all: the first timestamp is the start time
    log = read_hlog(FIXTURES / "js-jHiccup-no-header-2.0.7S.logV2.hlog")
    assert log.start_time_s == 0.127 and log.intervals[0].start_s == 0.0


def test_double_histogram_payloads():
    log = read_hlog(FIXTURES / "gen-ms-double.hlog")
    assert all(iv.is_double for iv in log.intervals)
    h = log.intervals[0].histogram
    assert isinstance(h, DoubleHistogram)
    assert 0.01 < h.value_at_percentile(50) < 1.0      # ms recorded as doubles
    assert log.merged().total_count == sum(iv.total_count for iv in log.intervals)


def test_zero_count_intervals_are_intervals():
    log = read_hlog(FIXTURES / "gen-us-withempty.hlog")
    empty = [iv for iv in log.intervals if iv.total_count == 0]
    assert len(empty) == 3
    h = empty[0].histogram
    assert (h.total_count, h.min, h.max, h.mean, h.value_at_percentile(99)) == (0, 0, 0, 0.0, 0)


def test_lazy_histograms_equal_kept_ones(monkeypatch):
    """Beyond KEEP_DECODED_ENTRIES the reader keeps payloads and decodes on access."""
    import analysis.read.hdr.log as hlog
    kept = read_hlog(FIXTURES / "gen-ns-plain.hlog")
    monkeypatch.setattr(hlog, "KEEP_DECODED_ENTRIES", 0)
    lazy = read_hlog(FIXTURES / "gen-ns-plain.hlog")
    assert lazy.intervals[3]._histogram is None
    assert [iv.histogram for iv in lazy.intervals] == [iv.histogram for iv in kept.intervals]
    assert lazy.merged() == kept.merged()


def test_not_an_hlog_is_an_error_naming_the_file(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("hello\nworld\n")
    with pytest.raises(HlogError) as raised:
        read_hlog(path)
    # not an interval log at all: one error naming its first line, no warning per line
    assert str(raised.value).startswith(f"{path}: not an HdrHistogram interval log: no "
                                        "histogram line or log header in it; line 1: expected")
    assert raised.value.warnings == []
    with pytest.raises(HlogError, match="no such file"):
        read_hlog(tmp_path / "missing.hlog")
    with pytest.raises(HlogError, match="directory"):
        read_hlog(tmp_path)


def test_bad_lines_after_the_first_batch_are_all_reported(tmp_path):
    """Reading goes in batches of 256 lines; a line-level warning (unparsable line, bad
    StartTime) in a later batch used to be appended to an already-delivered list and lost."""
    data = [line for line in _v2_lines() if line[:1].isdigit()]
    lines = _v2_lines()[:6] + data * 12          # ~700 histogram lines, 3 batches
    for k in (10, 300, 301, 650):
        lines[k] = "this is not a histogram line"
    lines[520] = "#[StartTime: soon]"
    lines[600] = lines[600].replace("HISTF", "HISTX")
    path = tmp_path / "many.hlog"
    path.write_text("\n".join(lines) + "\n")
    log = read_hlog(path)
    *per_line, repeated = log.warnings     # (the data repeated: its times go back)
    assert [int(w.split(":")[1]) for w in per_line] == [11, 301, 302, 521, 601, 651]
    assert repeated.startswith(f"{path}:7: ") and "(times go backwards)" in repeated
    assert len(log.intervals) == sum(line[:1].isdigit() for line in lines) - 1
