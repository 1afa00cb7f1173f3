"""The .hlog writer and record.py against HdrHistogram's own Java code (issue 23).

tests/oracle/RecordSamples.java records the same samples with Histogram(3).recordValue (or
recordValueWithExpectedInterval) per second and writes them with HistogramLogWriter; our log
of the same samples must be the same bytes, and HistogramLogProcessor must read it, each tag.
Round trips through read_hlog check the writer against the reader.
"""
from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.read.hdr.histogram import Histogram
from analysis.read.hdr.log import read_hlog
from analysis.read.loadtools.record import JAVA_LAYOUT, java_layout, record_samples
from analysis.read.loadtools.results import RequestSamples, ToolInfo
from analysis.read.hdr.log_writer import (encode_histogram, hlog_text, java_date_utc,
                                        write_hlog, zigzag_leb128)
from tests.helpers import oracle_program, zigzag_leb128 as scalar_zigzag_leb128

pytestmark = pytest.mark.slow     # (make check leaves it out; make test runs it)

T0 = 1_700_000_000_000.0
UNITS_PER_MS = {"ns": 1e6, "us": 1e3, "ms": 1.0}
CLASSES = ("", "error", "timeout")


def make_samples(start_ms, latency_ns, classes, native_unit="ns", epoch=True):
    classes = np.asarray(classes)
    return RequestSamples(path="in.csv", info=ToolInfo("csv", "test"),
                          start_ms=np.asarray(start_ms, np.float64),
                          latency_ns=np.asarray(latency_ns, np.int64),
                          ok=classes == 0, timed_out=classes == 2, native_unit=native_unit,
                          epoch=epoch)


def sample_sets():
    """name -> (samples, unit, expected interval in ms or None)."""
    rng = np.random.default_rng(20260523)
    n = 3000
    start = T0 + np.sort(rng.uniform(0, 12_000, n))
    classes = rng.choice(3, n, p=[0.93, 0.05, 0.02])
    lat_ms = rng.integers(0, 900, n) * 1_000_000
    lat_ns = rng.lognormal(np.log(2e6), 1.2, n).astype(np.int64)
    gap = (start < T0 + 4000) | (start >= T0 + 5000)          # second 4 has no request
    stall_start = np.concatenate([start, [T0 + 12_500]])        # one request stalled 10 s
    stall_lat = np.concatenate([lat_ms, [10_000_000_000]])
    huge = lat_ns.copy()
    huge[::50] = rng.integers(10**10, 10**13, huge[::50].size)   # hours, in ns: resizes
    shuffled = rng.permutation(n)
    return {
        "ms ints": (make_samples(start, lat_ms, classes, "ms"), "ms", None),
        "ns values": (make_samples(start, lat_ns, classes), "ns", None),
        "ns recorded in us": (make_samples(start, lat_ns, classes), "us", None),
        "empty second in the middle": (make_samples(start[gap], lat_ms[gap], classes[gap],
                                                    "ms"), "ms", None),
        "10 s stall": (make_samples(stall_start, stall_lat, np.append(classes, 0), "ms"), "ms",
                       None),
        "values over the initial range": (make_samples(start, huge, classes), "ns", None),
        "unordered, relative times": (make_samples(start[shuffled] - T0 + 333.0,
                                                   lat_ms[shuffled], classes[shuffled], "ms",
                                                   epoch=False), "ms", None),
        "correction on": (make_samples(stall_start, stall_lat, np.append(classes, 0), "ms"),
                          "ms", 5.0),
        "correction on, us": (make_samples(start, lat_ns // 1000 * 1000, classes, "us"), "us",
                              0.25),
    }


@pytest.fixture(scope="module")
def oracle_classes(oracle, tmp_path_factory) -> dict[str, list[str]]:
    """The java command lines that run RecordSamples and HlpBatch (compiled here against the
    oracle's jar), by class name."""
    classes = tmp_path_factory.mktemp("oracle-classes")
    return {name: oracle_program(oracle, classes, name) for name in ("RecordSamples", "HlpBatch")}


@pytest.fixture(scope="module")
def java_recorder(oracle_classes) -> list[str]:
    return oracle_classes["RecordSamples"]


def java_job(samples: RequestSamples, unit: str, expected_ms, comment, out: Path) -> list[str]:
    """RecordSamples' arguments for `samples`, their CSV written beside `out`."""
    ns_per = {"ns": 1, "us": 1_000, "ms": 1_000_000}
    per_unit = ns_per[unit]
    # in a unit coarser than the file's, record.py rounds half up (its docstring)
    half = per_unit // 2 if per_unit > ns_per[samples.native_unit] else 0
    values = (samples.latency_ns + half) // per_unit
    classes = np.where(samples.timed_out, 2, np.where(samples.ok, 0, 1))
    rows = [f"{s!r},{v},{CLASSES[c]}\n" for s, v, c in
            zip(samples.start_ms.tolist(), values.tolist(), classes.tolist())]
    csv = out.with_suffix(".csv")
    csv.write_text("".join(rows))
    expected = 0 if expected_ms is None else int(expected_ms * 1_000_000 // per_unit)
    return [str(csv), str(out), repr(UNITS_PER_MS[unit]), str(expected), comment]


def java_hlog(command, samples: RequestSamples, unit: str, expected_ms, comment, out: Path):
    subprocess.run([*command, *java_job(samples, unit, expected_ms, comment, out)], check=True)
    return out.read_bytes()


def in_one_jvm(command: list[str], jobs: list[list[str]], listing: Path) -> None:
    """`command LISTING`, LISTING holding each job's arguments, a line each, tab-separated."""
    listing.write_text("".join("\t".join(job) + "\n" for job in jobs), encoding="utf-8")
    subprocess.run([*command, str(listing)], check=True, capture_output=True,
                   env={**os.environ, "TZ": "UTC"})


def comment_of(name: str) -> str:
    return f"[loadcurve oracle test: {name}]"


@pytest.fixture(scope="module")
def java_logs(oracle_classes, tmp_path_factory) -> dict[str, tuple[Path, dict]]:
    """Each sample set's log as RecordSamples writes it, and what HistogramLogProcessor prints
    for it, by tag ("" the untagged histograms): {name: (log, {tag: (summary, hgrm)})}. All of
    them in two JVMs, one per program: a JVM per log and per tag was most of the cases' time
    (~2 CPU s each)."""
    folder = tmp_path_factory.mktemp("java-logs")
    logs = {name: folder / f"set-{i}.hlog" for i, name in enumerate(sample_sets())}
    in_one_jvm([*oracle_classes["RecordSamples"], "--batch"],
               [java_job(samples, unit, expected_ms, comment_of(name), logs[name])
                for name, (samples, unit, expected_ms) in sample_sets().items()],
               folder / "record-jobs.tsv")
    printed: dict[str, dict] = {name: {} for name in logs}
    jobs = []
    for name, (_, unit, _) in sample_sets().items():
        text = logs[name].read_text(encoding="utf-8")
        for tag in [""] + [t for t in ("error", "timeout") if f"Tag={t}," in text]:
            out = logs[name].with_name(f"{logs[name].stem}-{tag or 'untagged'}.out")
            printed[name][tag] = out
            jobs.append(["-i", str(logs[name]), "-outputValueUnitRatio", repr(UNITS_PER_MS[unit]),
                         *(["-tag", tag] if tag else []), "-o", str(out)])
    in_one_jvm(oracle_classes["HlpBatch"], jobs, folder / "hlp-jobs.tsv")
    return {name: (logs[name],
                   {tag: (out.read_bytes(), Path(str(out) + ".hgrm").read_bytes())
                    for tag, out in printed[name].items()})
            for name in logs}


@pytest.mark.oracle
@pytest.mark.parametrize("name", list(sample_sets()))
def test_our_log_is_javas_byte_for_byte(name, java_logs):
    samples, unit, expected_ms = sample_sets()[name]
    log, printed = java_logs[name]
    java = log.read_bytes()
    rec = record_samples(samples, unit, expected_interval_ms=expected_ms)
    intervals = rec.corrected if expected_ms else rec.intervals
    ours = hlog_text(intervals, UNITS_PER_MS[unit], comment=comment_of(name)).encode()
    assert ours == java
    # HistogramLogProcessor read Java's log, each tag of it: the same bytes as ours (equal
    # above), so what it printed for that log is what it prints for ours
    for tag in [""] + [t for t in ("error", "timeout") if f"Tag={t}," in ours.decode()]:
        summary, hgrm = printed[tag]
        assert summary and hgrm


@pytest.mark.oracle
def test_one_jvm_prints_what_the_hlp_script_prints(java_logs, oracle, tmp_path):
    """HlpBatch's outputs are HistogramLogProcessor's as the `hlp` oracle script gives them
    (a JVM a log), for a tag of a log with every tag: the cases above take them on that trust.
    (All 27 of the module's runs compared equal once; one here keeps it to one more JVM.)"""
    log, printed = java_logs["ms ints"]
    assert sorted(printed) == ["", "error", "timeout"]
    out = tmp_path / "script.out"
    subprocess.run([str(oracle / "hlp"), "-i", str(log), "-outputValueUnitRatio", "1.0",
                    "-tag", "timeout", "-o", str(out)], check=True, capture_output=True,
                   env={**os.environ, "TZ": "UTC"})
    assert (out.read_bytes(), Path(str(out) + ".hgrm").read_bytes()) == printed["timeout"]


@pytest.mark.oracle
def test_java_date_text_is_javas_in_utc(oracle, java_recorder, tmp_path):
    for millis in (0, 1_700_000_000_000, 951_782_400_000, 4_102_444_800_000):
        samples = make_samples([millis + 1.0], [1_000_000], [0], "ms")
        java = java_hlog(java_recorder, samples, "ms", None, "[d]", tmp_path / "d.hlog")
        assert java_date_utc(millis) in java.decode()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(0, 2**62), max_size=30), min_size=1, max_size=6),
       st.sampled_from([None, "error", "timeout"]), st.sampled_from(["ms", "us", "ns"]))
def test_read_hlog_gives_back_the_histograms_written(per_interval, tag, unit):
    intervals = record_samples(make_samples(
        [T0 + 1000 * i + 1 for i, values in enumerate(per_interval) for _ in values] or [T0],
        [v for values in per_interval for v in values] or [0],
        [CLASSES.index(tag or "")] * max(1, sum(map(len, per_interval)))), "ns").intervals
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.hlog"
        write_hlog(path, intervals, UNITS_PER_MS[unit], comment="[round trip]")
        log = read_hlog(path)
    assert log.warnings == []
    assert [(iv.tag, iv.start_s, iv.length_s, iv.start_ms, iv.end_ms) for iv in log.intervals] \
        == [(iv.tag, iv.start_s, iv.length_s, iv.start_ms, iv.end_ms) for iv in intervals]
    for read, written in zip(log.intervals, intervals):
        assert read.histogram == written.histogram      # layout (header) included


@given(st.lists(st.integers(-2**63, 2**63 - 1), max_size=50))
def test_zigzag_leb128_is_javas_putlong(values):
    assert zigzag_leb128(np.array(values, np.int64)) == \
        b"".join(scalar_zigzag_leb128(v) for v in values)


def test_an_empty_histogram_encodes_one_zero_count():
    import zlib
    payload = encode_histogram(Histogram.empty(JAVA_LAYOUT))
    raw = zlib.decompress(payload[8:])
    assert raw[4:8] == (1).to_bytes(4, "big") and raw[40:] == b"\x00"
    assert int.from_bytes(raw[24:32], "big") == 2        # new Histogram(3): highest trackable 2


def test_a_resized_histogram_writes_its_grown_header():
    import zlib
    h = Histogram.from_values(java_layout(int(JAVA_LAYOUT.index_of(np.array([5000]))[0])),
                              [5000])
    raw = zlib.decompress(encode_histogram(h)[8:])
    assert int.from_bytes(raw[24:32], "big") == 8191


def test_writing_is_atomic_and_skips_identical_bytes(tmp_path):
    intervals = record_samples(make_samples([T0], [1_000_000], [0], "ms")).intervals
    path = tmp_path / "out.hlog"
    assert write_hlog(path, intervals, 1.0) is True
    assert write_hlog(path, intervals, 1.0) is False
    assert [p.name for p in tmp_path.iterdir()] == ["out.hlog"]


def test_a_comment_with_a_line_break_stays_one_line():
    intervals = record_samples(make_samples([T0], [1_000_000], [0], "ms")).intervals
    text = hlog_text(intervals, 1.0, comment="[from a\nb.jtl]")
    assert text.splitlines()[0] == "#[from a b.jtl]"
