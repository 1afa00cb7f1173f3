"""A recording read in parts by forked processes (analysis/read/jfr/parallel.py) against the same
recording read chunk after chunk: the same record, field for field, for recordings of one JVM,
of several joined, cut short, with a chunk whose metadata is unreadable, with damaged events and
chunk headers (whose notes name the file and byte); the serial read when a child fails; and
the CLI's summary with one process or two."""
from __future__ import annotations

import json
import os
import struct
import subprocess
import sys

import pytest

from analysis.derive.jvm_summary import jvm_summary
from analysis.read.jfr import parallel, read_jfr
from analysis.read.jfr.summary import Summary
from tests.conftest import REPO
from tests.helpers import ENV, JFR_FIXTURES

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
PROFILE17 = (JFR_FIXTURES / "jdk17-profile.jfr").read_bytes()        # two chunks
DEFAULT17 = (JFR_FIXTURES / "jdk17-default.jfr").read_bytes()
DEFAULT25 = (JFR_FIXTURES / "jdk25-default.jfr").read_bytes()
CUT17 = (JFR_FIXTURES / "jdk17-default-cut.jfr").read_bytes()       # one unfinished chunk


def without_metadata(chunk: bytes) -> bytes:
    """The chunk with its metadata event's type id changed: it has no metadata of its own."""
    at = struct.unpack_from(">q", chunk, 24)[0]
    p = at
    while chunk[p] & 0x80:      # the event's size
        p += 1
    assert chunk[p + 1] == 0    # the metadata event's type id
    return chunk[:p + 1] + bytes([99]) + chunk[p + 2:]


def with_bad_first_event(chunk: bytes) -> bytes:
    """The chunk with its first event claiming one byte: reading the chunk stops there."""
    return chunk[:68] + bytes([1]) + chunk[69:]


def record(summary: Summary) -> dict:
    fields = dict(vars(summary))
    del fields["cpu_log"]       # (kept by the parts only, for merging)
    if summary.warmup is not None:
        fields["warmup"] = record(summary.warmup)
    return fields


RECORDINGS = {
    "one JVM": PROFILE17,
    "joined JVMs": DEFAULT17 + DEFAULT25 + PROFILE17,
    "joined, the last cut short": DEFAULT17 + PROFILE17 + DEFAULT25 + CUT17,
    "a chunk without metadata": PROFILE17 + without_metadata(DEFAULT17) + DEFAULT25,
    "two chunks without metadata": DEFAULT25 + without_metadata(DEFAULT17)
    + without_metadata(DEFAULT17) + PROFILE17,
    "a damaged event, then cut short": with_bad_first_event(DEFAULT17) + PROFILE17 + CUT17,
    "a damaged event in a later part": PROFILE17 + DEFAULT25 + with_bad_first_event(DEFAULT17),
    "garbage after the chunks": PROFILE17 + DEFAULT25 + b"not a chunk header" * 8,
    "a later header of an unknown format": PROFILE17 + DEFAULT17[:4] + b"\0\x09"
    + DEFAULT17[6:],
}


@needs_fork
@pytest.mark.parametrize("jobs", [2, 3, 5])
@pytest.mark.parametrize("name", sorted(RECORDINGS))
def test_read_in_parts_gives_the_serial_record(tmp_path, name, jobs):
    path = tmp_path / "recording.jfr"
    path.write_bytes(RECORDINGS[name])
    serial = read_jfr(path)
    summary = Summary()
    assert parallel.read_in_parts(path, summary, jobs)     # (read in parts, not serially)
    summary.close_chunks()
    assert record(summary) == record(serial)
    assert record(read_jfr(path, jobs=jobs)) == record(serial)
    assert jvm_summary(read_jfr(path, jobs=jobs)) == jvm_summary(serial)


@needs_fork
def test_parts_with_a_window_and_attribution_give_the_serial_record(tmp_path):
    path = tmp_path / "recording.jfr"
    path.write_bytes(PROFILE17 + PROFILE17)
    first = read_jfr(path)
    start, end = first.start_ns, first.covered_until_ns
    window = (start + (end - start) // 3, start + 2 * (end - start) // 3)
    attribution = [(r"java\..*", "JDK"), (r".*Workload.*", "workload")]
    serial = read_jfr(path, attribution, window)
    parted = read_jfr(path, attribution, window, jobs=2)
    assert parted.warmup.sample_count > 0 and parted.sample_count > 0
    assert record(parted) == record(serial)
    assert jvm_summary(parted) == jvm_summary(serial)


@needs_fork
def test_a_damaged_chunk_in_a_later_part_is_named_by_file_and_offset(tmp_path):
    path = tmp_path / "recording.jfr"
    path.write_bytes(PROFILE17 + with_bad_first_event(DEFAULT17))
    summary = read_jfr(path, jobs=2)
    assert summary.damage_note == f"{path}: byte {len(PROFILE17) + 68}: event claims 1 bytes, " \
                                  f"impossible here"
    path.write_bytes(PROFILE17 + DEFAULT17 + b"FLR\0\0\x09" + DEFAULT17[6:])
    summary = read_jfr(path, jobs=2)
    assert summary.damage_note.startswith(f"{path}: byte {len(PROFILE17) + len(DEFAULT17)}: "
                                          f"JFR format 9.")
    assert record(summary) == record(read_jfr(path))


@needs_fork
def test_a_failing_child_leaves_the_summary_to_the_serial_read(tmp_path, monkeypatch):
    path = tmp_path / "recording.jfr"
    path.write_bytes(DEFAULT17 + PROFILE17)
    parent = os.getpid()
    read_part = parallel._read_part

    def fails_in_children(*args):
        if os.getpid() != parent:
            raise RuntimeError("a child's failure")
        return read_part(*args)

    monkeypatch.setattr(parallel, "_read_part", fails_in_children)
    summary = Summary()
    assert not parallel.read_in_parts(path, summary, 2)
    assert record(summary) == record(Summary())
    assert record(read_jfr(path, jobs=2)) == record(read_jfr(path))


def test_one_chunk_or_a_gzip_is_not_parted(tmp_path):
    assert not parallel.read_in_parts(JFR_FIXTURES / "jdk17-default.jfr", Summary(), 2)
    assert not parallel.read_in_parts(JFR_FIXTURES / "jdk25-profile.jfr.gz", Summary(), 2)
    assert not parallel.read_in_parts(JFR_FIXTURES / "jdk17-profile.jfr", Summary(), 1)


def test_parts_are_cut_at_chunk_starts_into_equal_shares():
    starts = [0, 10, 20, 30, 40]
    assert parallel.part_bounds(starts, 40, 2) == [0, 20]
    assert parallel.part_bounds(starts, 40, 4) == [0, 10, 20, 30]
    assert parallel.part_bounds(starts, 40, 9) == [0, 10, 20, 30]
    assert parallel.part_bounds([0, 10, 100], 100, 2) == [0, 10]
    assert parallel.part_bounds([0, 100], 100, 2) == [0]


def test_merge_refuses_a_summary_without_its_cpu_values():
    with pytest.raises(ValueError):
        Summary().merge(Summary())


def test_merge_knows_every_field_of_a_summary():
    # A field merge does not take in would be lost for the chunks read in a child: add it to
    # Summary.merge, then here.
    assert set(vars(Summary(window=(0, 1)))) == {
        "attribution", "window", "names_methods", "warmup", "gc_count", "gc_pause_total_ns",
        "gc_pause_max_ns", "gc_events", "phase_pauses", "heap_after_max", "heap_after_sum",
        "heap_after_count",
        "_heap_pending", "safepoint_count", "safepoint_total_ns", "cpu_n", "cpu_sums",
        "allocation_weight", "allocation_events", "park_ns", "park_count", "monitor_ns",
        "monitor_count", "thresholds", "periods", "enabled", "sample_count",
        "samples_unresolved", "samples_truncated", "self_counts", "total_counts",
        "label_counts", "_label_cache", "jvm_name", "jvm_version", "start_ns",
        "covered_until_ns", "truncated", "chunks", "spans", "merged_spans", "export_types",
        "warnings", "warning_count", "damage_note", "damage_note_unless_earlier", "cpu_log"}


@needs_fork
def test_the_cli_summary_is_the_same_with_one_process_or_two(tmp_path):
    path = tmp_path / "recording.jfr"
    path.write_bytes(DEFAULT17 + PROFILE17 + DEFAULT25)
    outs = [subprocess.run([sys.executable, "-m", "analysis", "jfr", str(path), "--json",
                            "--jobs", jobs], cwd=REPO, env=ENV, capture_output=True, text=True,
                           check=True).stdout for jobs in ("1", "2")]
    assert outs[0] == outs[1]
    assert outs[0] == json.dumps(jvm_summary(read_jfr(path)), sort_keys=True, indent=1) + "\n"
    bad = subprocess.run([sys.executable, "-m", "analysis", "jfr", str(path), "--json",
                          "--jobs", "0"], cwd=REPO, env=ENV, capture_output=True, text=True)
    assert bad.returncode == 1 and "--jobs 0" in bad.stderr


def test_the_parts_metadata_is_parsed_once_before_the_children_are_forked(tmp_path,
                                                                          monkeypatch):
    from analysis.read.jfr import metadata
    from analysis.read.jfr.chunks import iter_chunks
    from analysis.read.jfr.reader import ChunkReader

    path = tmp_path / "recording.jfr"
    path.write_bytes(DEFAULT25 + PROFILE17)
    monkeypatch.setattr(metadata, "_metadata_cache", type(metadata._metadata_cache)())
    parsed = []
    parse = metadata.parse_metadata
    monkeypatch.setattr(metadata, "parse_metadata", lambda *a: parsed.append(a) or parse(*a))
    parallel._prepare_metadata(str(path), [len(DEFAULT25)])
    assert len(parsed) == 1
    second = list(iter_chunks(path))[1]
    ChunkReader(Summary()).read(second)
    assert len(parsed) == 1         # (the prepared metadata, not parsed again)


@needs_fork
def test_an_error_in_this_process_part_stops_and_reaps_the_children(tmp_path, monkeypatch):
    path = tmp_path / "recording.jfr"
    path.write_bytes(DEFAULT17 + PROFILE17 + DEFAULT25)
    parent = os.getpid()
    read_part, fork_part = parallel._read_part, parallel._fork_part
    forked = []

    def fails_here(*args):
        if os.getpid() == parent:
            raise KeyboardInterrupt
        return read_part(*args)

    monkeypatch.setattr(parallel, "_read_part", fails_here)
    monkeypatch.setattr(parallel, "_fork_part", lambda *a: forked.append(fork_part(*a))
                        or forked[-1])
    with pytest.raises(KeyboardInterrupt):
        parallel.read_in_parts(path, Summary(), 3)
    assert len(forked) == 2
    for pid, _fd in forked:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)     # (reaped already)


@needs_fork
def test_a_ctrl_c_while_collecting_leaves_no_child_and_no_pipe_closed_twice(tmp_path,
                                                                           monkeypatch):
    path = tmp_path / "recording.jfr"
    path.write_bytes(DEFAULT17 + PROFILE17 + DEFAULT25)
    parent = os.getpid()
    loads, calls = parallel.pickle.loads, []

    def interrupted_at_the_last_child(data):
        if os.getpid() == parent:
            calls.append(1)
            if len(calls) == 3:     # (this process's part's copy, then each child's result)
                raise KeyboardInterrupt
        return loads(data)

    monkeypatch.setattr(parallel.pickle, "loads", interrupted_at_the_last_child)
    with pytest.raises(KeyboardInterrupt):
        parallel.read_in_parts(path, Summary(), 3)


@needs_fork
def test_a_summary_given_by_the_caller_is_read_into_serially(tmp_path):
    path = tmp_path / "recording.jfr"
    path.write_bytes(DEFAULT17 + PROFILE17)
    earlier = JFR_FIXTURES / "jdk25-default.jfr"
    given_summary = read_jfr(path, summary=read_jfr(earlier), jobs=2)
    assert record(given_summary) == record(read_jfr(path, summary=read_jfr(earlier)))


def test_the_cli_reads_in_one_process_while_no_cpu_is_idle(monkeypatch):
    from analysis.commands import jfr as command

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(command, "_other_running_tasks", lambda: 1)
    assert command.default_jobs() == 2
    monkeypatch.setattr(command, "_other_running_tasks", lambda: 2)
    assert command.default_jobs() == 1


def test_the_running_tasks_are_read_as_linux_writes_them(tmp_path):
    from analysis.commands import jfr as command

    loadavg = tmp_path / "loadavg"
    loadavg.write_text("1.52 0.90 0.41 3/286 12345\n")
    assert command._other_running_tasks(str(loadavg)) == 2
    loadavg.write_text("not the kernel's\n")
    assert command._other_running_tasks(str(loadavg)) == 0
    assert command._other_running_tasks(str(tmp_path / "absent")) == 0
