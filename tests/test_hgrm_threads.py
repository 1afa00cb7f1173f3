"""hgrm's second core: the groups of lines read and decoded ahead by two threads while the
caller adds them up in file order (ahead.py, log.iter_batches(threads=2)). Whatever the
threads do, the output, the warnings, the errors and the header state are the serial ones."""
from __future__ import annotations

import contextlib
import io
import random
import sys
import threading
import time

import pytest

from analysis.cli import main
from analysis.read.hdr import ahead, log
from tests.conftest import REPO
from tests.helpers import HLOG_FIXTURES, write_log

pytestmark = pytest.mark.slow     # (make check leaves it out; make test runs it)

CORPUS = REPO / "tests" / "fuzz" / "corpus" / "hlog"


def hgrm(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["hgrm", *args])
    return code, out.getvalue(), err.getvalue()


def _ahead_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("hlog-ahead")]


@pytest.fixture
def small_groups(monkeypatch):
    """Groups of 7 lines instead of 512, so that small logs make many groups."""
    from analysis.read.hdr import processor
    monkeypatch.setattr(processor, "BATCH_LINES", 7)


@pytest.fixture
def shuffled_decoding(monkeypatch):
    """Each group's decoding held up for a random moment, so that the two threads finish
    their groups out of file order."""
    original = log._decoded
    pick = random.Random(36)

    def slow(*args, **kwargs):
        time.sleep(pick.choice((0, 0, 0.002, 0.01)))
        return original(*args, **kwargs)
    monkeypatch.setattr(log, "_decoded", slow)


def _hgrm_both_ways(monkeypatch, tmp_path, source, flags=()):
    """(serial result, threaded result): exit code, stdout, stderr and the files written,
    with the second core forced off and on; checks that the threads ran (with the compiled
    kernels) and that none is left."""
    from analysis.read.hdr import processor
    results = []
    for parallel in (False, True):
        started = []
        original = log.decoded_ahead

        def counting(*args, _original=original, _started=started):
            _started.append(args[-1])
            yield from _original(*args)
        monkeypatch.setattr(log, "decoded_ahead", counting)
        monkeypatch.setattr(processor, "use_worker", lambda path, text, p, _on=parallel: _on)
        out = tmp_path / f"out-{parallel}"
        code, stdout, stderr = hgrm("-i", str(source), *flags, "-o", str(out))
        files = [p.read_bytes() if p.exists() else None for p in (out, tmp_path / f"{out}.hgrm")]
        results.append((code, stdout, stderr.replace(str(out), "OUT"), files))
        assert bool(started) == (parallel and processor.native.get() is not None)
        assert set(started) <= {2}
        monkeypatch.setattr(log, "decoded_ahead", original)
    assert not _ahead_threads()
    return tuple(results)


@pytest.mark.parametrize("flags", [(), ("-csv",), ("-tag", "read"),
                                   ("-start", "3", "-end", "40")])
@pytest.mark.parametrize("fixture", sorted(p.name for p in HLOG_FIXTURES.glob("*.hlog")))
def test_two_threads_give_the_serial_output(monkeypatch, tmp_path, small_groups,
                                            shuffled_decoding, fixture, flags):
    """Every fixture (valid, tagged, Double, broken), with several flags: same files, same
    warnings, same errors, same exit code, with the second core or without."""
    serial, threaded = _hgrm_both_ways(monkeypatch, tmp_path, HLOG_FIXTURES / fixture, flags)
    assert threaded == serial


def test_two_threads_give_the_serial_output_of_a_plain_log(monkeypatch, tmp_path,
                                                           shuffled_decoding):
    """Plain logs, tagged, with a window; groups from 1 line to more than the log."""
    from analysis.read.hdr import processor
    for size in (1, 2, 3, 7, 1000):
        monkeypatch.setattr(processor, "BATCH_LINES", size)
        for fixture, flags in (("gen-ns-plain.hlog", ()),
                               ("gen-us-tagged.hlog", ("-tag", "read")),
                               ("gen-ns-plain.hlog", ("-start", "3", "-end", "20", "-csv"))):
            serial, threaded = _hgrm_both_ways(monkeypatch, tmp_path, HLOG_FIXTURES / fixture,
                                               flags)
            assert threaded == serial and serial[0] == 0, (size, fixture, flags)


@pytest.mark.parametrize("name", sorted(p.name for p in CORPUS.glob("*")))
def test_two_threads_give_the_serial_result_on_the_fuzz_corpus(monkeypatch, tmp_path,
                                                               small_groups, name):
    serial, threaded = _hgrm_both_ways(monkeypatch, tmp_path, CORPUS / name)
    assert threaded == serial


def test_two_threads_keep_warnings_in_line_order_across_groups(monkeypatch, tmp_path,
                                                               small_groups, shuffled_decoding):
    lines = (HLOG_FIXTURES / "java-jHiccup-2.0.7S.logV2.hlog").read_text().splitlines(keepends=True)
    lines[1] = "#[StartTime: soon (seconds since epoch)]\n"
    for k in (10, 11, 25, 40):
        lines[k] = "this is not a histogram line\n"
    lines[20] = lines[20].replace("HISTF", "HISTX")
    lines[33] = lines[33][:-40] + "\n"          # truncated payload
    bad = tmp_path / "bad.hlog"
    bad.write_text("".join(lines) + "\n\n")
    serial, threaded = _hgrm_both_ways(monkeypatch, tmp_path, bad)
    assert threaded == serial
    assert serial[0] == 0 and serial[2].count("warning: ") == 7


def test_two_threads_read_standard_input(monkeypatch, small_groups):
    from analysis.read.hdr import processor
    data = (HLOG_FIXTURES / "gen-us-tagged.hlog").read_bytes()
    outputs = []
    for parallel in (False, True):
        monkeypatch.setattr(processor, "use_worker", lambda path, text, p, _on=parallel: _on)
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
        outputs.append(hgrm("-tag", "read"))
    assert outputs[0] == outputs[1] and outputs[0][0] == 0


def test_an_error_after_plain_lines_is_the_serial_one(monkeypatch, tmp_path, small_groups):
    """A DoubleHistogram line after 30 integer ones: the same error, from the same line."""
    plain = [line for line in (HLOG_FIXTURES / "gen-ns-plain.hlog").read_text().splitlines()
             if line[:1].isdigit()][:30]
    double = [line for line in (HLOG_FIXTURES / "gen-ms-double.hlog").read_text().splitlines()
              if line[:1].isdigit()][:40]
    mixed = tmp_path / "mixed.hlog"
    write_log(mixed, plain + double)
    serial, threaded = _hgrm_both_ways(monkeypatch, tmp_path, mixed)
    assert threaded == serial
    assert serial[0] == 1 and "they cannot be added" in serial[2]


def test_a_multi_group_log_comes_in_file_order_however_the_threads_finish(monkeypatch):
    """Groups decoded out of order (the later ones first) still reach the caller in file
    order, each with the header state as it was once that group was read."""
    monkeypatch.setattr(ahead, "AHEAD", 6)
    read_upto = []

    def read_groups(own):
        for number in range(20):
            own.start_time = float(number)      # (what the reading sets, group by group)
            read_upto.append(number)
            yield number, []

    def decode(number, warnings):
        time.sleep(0.02 if number % 3 == 0 else 0)     # (its neighbours finish first)
        return number * 10

    from analysis.read.hdr.lines import HeaderState
    state = HeaderState()
    seen = []
    for value in ahead.decoded_ahead(read_groups, state, decode, 2):
        time.sleep(0.005)                        # (the reading runs ahead meanwhile)
        seen.append((value, state.start_time))
    assert seen == [(10 * k, float(k)) for k in range(20)]
    assert max(read_upto) == 19 and state.start_time == 19.0
    assert not _ahead_threads()


@pytest.mark.parametrize("where", ["reading", "decoding"])
def test_an_error_in_a_thread_is_raised_where_its_group_would_come(where):
    """Groups before the one that fails are handed out, then its error; no thread is left,
    and none reads on after the caller stops."""
    from analysis.read.hdr.lines import HeaderState

    def read_groups(own):
        for number in range(12):
            if where == "reading" and number == 5:
                raise ValueError(f"group {number}")
            yield number, []

    def decode(number, warnings):
        if where == "decoding" and number == 5:
            raise ValueError(f"group {number}")
        return number

    got = []
    with pytest.raises(ValueError, match="group 5"):
        for value in ahead.decoded_ahead(read_groups, HeaderState(), decode, 2):
            got.append(value)
    assert got == [0, 1, 2, 3, 4]
    assert not _ahead_threads()


def test_a_caller_that_stops_early_leaves_no_thread():
    from analysis.read.hdr.lines import HeaderState
    read = []

    def read_groups(own):
        for number in range(1000):
            read.append(number)
            yield number, []
    groups = ahead.decoded_ahead(read_groups, HeaderState(), lambda n, w: n, 2)
    assert [next(groups) for _ in range(3)] == [0, 1, 2]
    groups.close()
    assert not _ahead_threads()
    assert len(read) <= 3 + ahead.AHEAD + 2


def test_no_second_thread_without_the_compiled_kernels(monkeypatch, tmp_path):
    """Without them every group goes the general way, Python all along: a second thread
    would only take turns with the first."""
    from analysis.read.hdr import native, processor
    if native.get() is None:
        pytest.skip("needs the compiled kernels, to take them away")
    monkeypatch.setattr(processor, "use_worker", lambda path, text, p: True)
    threads = []
    original = log.decoded_ahead

    def counting(*args):
        threads.append(args[-1])
        yield from original(*args)
    monkeypatch.setattr(log, "decoded_ahead", counting)
    expected = hgrm("-i", str(HLOG_FIXTURES / "gen-ns-plain.hlog"))
    assert threads == [2]
    monkeypatch.setattr(native, "get", lambda: None)
    assert hgrm("-i", str(HLOG_FIXTURES / "gen-ns-plain.hlog")) == expected
    assert threads == [2]


def test_when_a_second_core_reads(monkeypatch, tmp_path):
    from analysis.read.hdr import worker as hlog
    small = HLOG_FIXTURES / "gen-ns-plain.hlog"
    if sys.platform.startswith("linux"):      # (this process at least is runnable)
        assert hlog._runnable_others() >= 0
    monkeypatch.setattr(hlog, "_load", lambda: 0.3)
    assert not hlog.use_worker(str(small), None, None)            # small: one core
    assert not hlog.use_worker(str(small), None, False)
    assert hlog.use_worker(str(small), None, True)
    monkeypatch.setattr(hlog, "PARALLEL_MIN_BYTES", small.stat().st_size)
    monkeypatch.setattr(hlog.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert hlog.use_worker(str(small), None, None)
    assert hlog.use_worker("-", "x" * small.stat().st_size, None)
    assert not hlog.use_worker("-", "x" * (small.stat().st_size - 1), None)
    assert not hlog.use_worker(str(tmp_path / "missing.hlog"), None, None)
    monkeypatch.setattr(hlog, "_runnable_others", lambda: 3.0)
    monkeypatch.setattr(hlog, "_load", lambda: 1.6)              # the other CPU is busy
    assert not hlog.use_worker(str(small), None, None)
    assert hlog.use_worker(str(small), None, True)
    # ... over the last minute, but no more: both CPUs are free now (the job that held the
    # load average up has ended)
    monkeypatch.setattr(hlog, "_runnable_others", lambda: 0.0)
    assert hlog.use_worker(str(small), None, None)
    monkeypatch.setattr(hlog, "_runnable_others", lambda: None)  # (no /proc/loadavg)
    assert not hlog.use_worker(str(small), None, None)
    monkeypatch.setattr(hlog, "_load", lambda: 0.3)              # busy now, not before
    monkeypatch.setattr(hlog, "_runnable_others", lambda: 3.0)
    assert hlog.use_worker(str(small), None, None)
    monkeypatch.setattr(hlog, "_load", lambda: 0.3)
    monkeypatch.setattr(hlog.os, "sched_getaffinity", lambda pid: {0}, raising=False)  # 1 CPU
    assert not hlog.use_worker(str(small), None, None)


def test_the_header_state_after_the_last_group_reaches_the_caller(monkeypatch, tmp_path,
                                                                 small_groups):
    """A #[StartTime] after the last interval, which ends a group: with the second core or
    without, the caller's header state ends the same (it words messages: 'seconds since
    #[StartTime]')."""
    from analysis.read.hdr import processor
    from analysis.read.hdr.lines import HeaderState
    lines = [line for line in (HLOG_FIXTURES / "gen-ns-plain.hlog").read_text().splitlines()
             if line[:1].isdigit()][:14]
    path = tmp_path / "late-start.hlog"
    path.write_text("\n".join(lines + ["#[StartTime: 5.000 (seconds since epoch)]"]) + "\n")
    states = []
    for parallel in (False, True):
        monkeypatch.setattr(processor, "use_worker", lambda p, text, wanted: wanted)
        state, warnings = HeaderState(), []
        out = processor._process(str(path), None, state, warnings, tag=None, start_s=None,
                                 end_s=None, ratio=1e6, ticks=5, csv=False,
                                 with_interval_log=True, parallel=parallel)
        states.append((out, warnings, state.__dict__))
    assert states[0][2]["explicit_start"]
    assert states[1] == states[0]


def test_a_start_time_between_intervals_counts_from_its_group_on(monkeypatch, tmp_path,
                                                                 small_groups,
                                                                 shuffled_decoding):
    """Intervals before 0 are reported only once a #[StartTime] line was read: a StartTime
    in the middle of the log, read by the thread ahead of the caller, must not count for
    the groups before it (the caller sees each group's own header state)."""
    lines = [line for line in (HLOG_FIXTURES / "gen-ns-plain.hlog").read_text().splitlines()
             if line[:1].isdigit()][:40]
    path = tmp_path / "mid-start.hlog"
    early = [line.replace(line.split(",")[0], "-" + line.split(",")[0], 1)
             for line in lines[:20]]
    path.write_text("\n".join(early + ["#[StartTime: 0.000 (seconds since epoch)]"]
                              + lines[20:]) + "\n")
    serial, threaded = _hgrm_both_ways(monkeypatch, tmp_path, path)
    assert threaded == serial
