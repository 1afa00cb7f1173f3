"""Folded stacks (analysis/read/jfr/stacks.py, `python -m analysis jfr --folded`) against the
JDK's own reader: `jfr print --json` of the same events, aggregated here independently.

The recordings are tests/fixtures/jfr/split/ (README.md there): a workload with a known 3:1 CPU
split and known waits, recorded by OpenJDK 17, Temurin 25 and async-profiler 4.1.
"""
from __future__ import annotations

import calendar
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from analysis.errors import JfrError
from analysis.read.jfr.chunks import iter_chunks
from analysis.read.jfr.stacks import STACK_EVENTS, fold_jfr
from analysis.write.folded import folded_text

REPO = Path(__file__).resolve().parent.parent
SPLIT = REPO / "tests" / "fixtures" / "jfr" / "split"
# Each recording with the `jfr` tool of the JDK that made it.
RECORDINGS = {
    "jdk17-split.jfr": Path("/usr/lib/jvm/java-17-openjdk-amd64/bin/jfr"),
    "jdk25-split.jfr": Path("/usr/lib/jvm/temurin-25-jdk-amd64/bin/jfr"),
}


def jfr_print(recording: str, event: str) -> list[dict]:
    tool = RECORDINGS[recording]
    if not tool.exists():
        pytest.skip(f"needs {tool}")
    # --stack-depth: jfr print shows 5 frames unless told; the JVM records at most 64.
    out = subprocess.run([str(tool), "print", "--json", "--stack-depth", "64", "--events",
                          event, str(SPLIT / recording)],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    return [e["values"] for e in json.loads(out)["recording"]["events"] if e["type"] == event]


def epoch_ns(text: str) -> int:
    m = re.fullmatch(r"(\d+)-(\d+)-(\d+)T(\d+):(\d+):(\d+)(?:\.(\d+))?Z", text)
    y, mo, d, h, mi, s, frac = m.groups()
    whole = calendar.timegm((int(y), int(mo), int(d), int(h), int(mi), int(s)))
    return whole * 10 ** 9 + int((frac or "0").ljust(9, "0")[:9])


def duration_ns(text: str) -> int:
    m = re.fullmatch(r"PT(?:(\d+)M)?(\d+)(?:\.(\d+))?S", text)
    minutes, sec, frac = m.groups()
    return (int(minutes or 0) * 60 + int(sec)) * 10 ** 9 + int((frac or "0").ljust(9, "0"))


def stack_of(values: dict) -> tuple[str, ...]:
    """Root first; a frame is the method's class (binary name, '/' as '.') and name."""
    frames = values["stackTrace"]["frames"]
    return tuple(f"{f['method']['type']['name'].replace('/', '.')}.{f['method']['name']}"
                 for f in reversed(frames))


def aggregate(events: list[dict], weighed_by_duration: bool, window=None) -> Counter:
    out = Counter()
    for v in events:
        if window is not None and not window[0] <= epoch_ns(v["startTime"]) < window[1]:
            continue
        out[stack_of(v)] += duration_ns(v["duration"]) if weighed_by_duration else 1
    return out


CASES = [(rec, event) for rec in RECORDINGS
         for event in ("jdk.ExecutionSample", "jdk.ThreadPark", "jdk.ThreadSleep")]


@pytest.mark.jdk
@pytest.mark.parametrize("recording,event", CASES)
def test_folded_equals_jfr_print_sample_for_sample(recording, event):
    expected = aggregate(jfr_print(recording, event), event != "jdk.ExecutionSample")
    ours = fold_jfr(SPLIT / recording, event)
    assert len(expected) >= 1 and sum(expected.values()) > 0
    assert ours["stacks"] == dict(expected)
    assert ours["total"] == sum(expected.values())
    assert ours["unresolved"] == 0 and ours["truncated"] is False


@pytest.mark.jdk
@pytest.mark.parametrize("recording", list(RECORDINGS))
def test_off_cpu_lines_are_the_event_durations_in_ms(recording):
    """The printed weight of each stack is its events' summed duration in ms, to 0.5 us."""
    expected = aggregate(jfr_print(recording, "jdk.ThreadPark"), True)
    text = folded_text(fold_jfr(SPLIT / recording, "jdk.ThreadPark"))
    printed = {}
    for line in text.splitlines():
        stack, weight = line.rsplit(" ", 1)
        assert re.fullmatch(r"\d+\.\d{3}", weight), line
        printed[tuple(stack.split(";"))] = float(weight)
    assert printed.keys() == expected.keys()
    for stack, ns in expected.items():
        assert abs(printed[stack] - ns / 1e6) <= 0.0005 + 1e-9


@pytest.mark.jdk
@pytest.mark.parametrize("recording", list(RECORDINGS))
def test_window_keeps_the_events_that_start_inside_it(recording):
    events = jfr_print(recording, "jdk.ExecutionSample")
    times = sorted(epoch_ns(v["startTime"]) for v in events)
    window = (times[len(times) // 3], times[2 * len(times) // 3])
    expected = aggregate(events, False, window)
    ours = fold_jfr(SPLIT / recording, window=window)
    assert 0 < ours["total"] < len(events)
    assert ours["stacks"] == dict(expected)


@pytest.mark.parametrize("recording", list(RECORDINGS))
def test_window_in_seconds_is_from_the_first_chunks_start(recording):
    start = next(iter_chunks(SPLIT / recording)).header.start_nanos
    by_seconds = fold_jfr(SPLIT / recording, window_s=(2.5, 5.0))
    by_epoch = fold_jfr(SPLIT / recording, window=(start + 2_500_000_000, start + 5_000_000_000))
    assert by_seconds["stacks"] == by_epoch["stacks"]
    # 2.5 s of one thread sampled every 10 ms, give or take the scheduler
    assert 200 <= by_seconds["total"] <= 260


@pytest.mark.parametrize("recording", list(RECORDINGS))
def test_known_split_and_thresholds(recording):
    cpu = fold_jfr(SPLIT / recording)
    three = sum(w for s, w in cpu["stacks"].items() if "CpuSplit.three" in s)
    one = sum(w for s, w in cpu["stacks"].items() if "CpuSplit.one" in s)
    # 30 ms then 10 ms of the same loop, ~730 samples: 3:1 within 10 % of the ratio
    assert 2.7 <= three / one <= 3.3
    assert cpu["period_ms"] == 10.0 and cpu["threshold_ms"] is None
    for event in ("jdk.ThreadPark", "jdk.ThreadSleep"):
        off = fold_jfr(SPLIT / recording, event)
        assert off["unit"] == "ns" and off["threshold_ms"] == 10.0   # split.jfc's, not 20 ms
        assert off["events"] == 99
    # 99 parks of 50 ms each (parkNanos may return a little late, never early)
    park = fold_jfr(SPLIT / recording, "jdk.ThreadPark")
    assert 99 * 50e6 <= park["total"] <= 99 * 55e6


def test_async_profiler_recording_reads_the_same_way():
    f = fold_jfr(SPLIT / "async-profiler-4.1-jdk17-split.jfr")
    assert f["total"] == 401 and f["unresolved"] == 0 and f["truncated"] is False
    three = sum(w for s, w in f["stacks"].items() if "CpuSplit.three" in s)
    one = sum(w for s, w in f["stacks"].items() if "CpuSplit.one" in s)
    assert 2.7 <= three / one <= 3.3
    # native frames come with their library as the "class"
    assert any(fr.startswith("libjvm.so.") for s in f["stacks"] for fr in s)


KILLED = REPO / "tests" / "fixtures" / "jfr" / "jdk17-killed"   # a JVM killed mid-run


@pytest.mark.jdk
def test_killed_recording_folds_its_whole_chunks_exactly_and_what_is_whole_of_the_last():
    """Two whole chunks and one the JVM never finished: the whole ones fold as `jfr print`
    reads them, and the unfinished one adds the events it holds whole."""
    tool = shutil.which("jfr")
    if tool is None:
        pytest.skip("needs the JDK's jfr tool")
    files = sorted(KILLED.glob("*.jfr"))
    expected = Counter()
    for f in files[:2]:
        out = subprocess.run([tool, "print", "--json", "--stack-depth", "64", "--events",
                              "jdk.ExecutionSample", str(f)],
                             capture_output=True, text=True, timeout=300, check=True).stdout
        expected += aggregate([e["values"] for e in json.loads(out)["recording"]["events"]],
                              False)
    last = fold_jfr(files[2])
    assert last["truncated"] is True and last["total"] > 0
    expected += Counter(last["stacks"])
    ours = fold_jfr(KILLED)
    assert ours["truncated"] is True and files[2].name in ours["damage"]
    assert ours["stacks"] == dict(expected)


def test_cut_recording_says_what_it_left_out(tmp_path):
    # cut before the chunk's constant pools: the samples are there, their stacks are not
    ours = fold_jfr(REPO / "tests" / "fixtures" / "jfr" / "jdk17-default-cut.jfr")
    assert ours["truncated"] is True and ours["total"] == 0 and ours["unresolved"] == 37
    out = run_cli(REPO / "tests" / "fixtures" / "jfr" / "jdk17-default-cut.jfr", "--folded")
    assert out.returncode == 0 and out.stdout == ""
    assert "37 events without a readable stack left out" in out.stderr
    assert "TRUNCATED" in out.stderr
    # cut before its metadata (written at the chunk's end): nothing can be decoded
    data = (SPLIT / "jdk17-split.jfr").read_bytes()
    cut = tmp_path / "cut.jfr"
    cut.write_bytes(data[:len(data) * 2 // 3])
    out = run_cli(cut, "--folded")
    assert out.returncode == 1 and out.stderr.count("\n") == 1
    assert out.stderr.startswith(f"error: {cut}: no event could be read")


@pytest.mark.slow
def test_native_walk_and_python_reader_fold_alike():
    code = ("import json, sys; from analysis.read.jfr.stacks import fold_jfr; "
            "from analysis.write.folded import folded_text; "
            "sys.stdout.write(folded_text(fold_jfr(sys.argv[1], sys.argv[2])))")
    for event in ("jdk.ExecutionSample", "jdk.ThreadPark"):
        outs = [subprocess.run([sys.executable, "-c", code, str(SPLIT / "jdk25-split.jfr"),
                                event], cwd=REPO, capture_output=True, text=True, timeout=120,
                               check=True, env={**os.environ, "LOADCURVE_NATIVE": flag}).stdout
                for flag in ("0", "1")]
        assert outs[0] == outs[1] and outs[0].count("\n") >= 1


def test_folded_text_format():
    f = {"unit": "ns", "stacks": {("a", "b;c"): 1_234_500, ("a",): 999, ("x\ny",): 1}}
    assert folded_text(f) == "a 0.001\na;b:c 1.235\nx y 0.000\n"
    assert folded_text({"unit": "samples", "stacks": {("b",): 2, ("a", "z"): 5}}) == \
        "a;z 5\nb 2\n"


def test_folded_text_cleans_only_the_stacks_that_need_it(monkeypatch):
    """A frame holding a separator (a damaged recording) is cleaned; the others, every frame
    of a readable recording, are written as they are, without a replace per frame (the build
    writes ~10^5 frames a run: issue 25)."""
    from analysis.write import folded as folded_module
    cleaned = []
    inner = folded_module.frame_text
    monkeypatch.setattr(folded_module, "frame_text", lambda f: cleaned.append(f) or inner(f))
    f = {"unit": "samples", "stacks": {("a", "b", "c"): 3, ("a", "b;\rx"): 2, ("d",): 1,
                                       ("a", "b"): 4}}
    assert folded_text(f) == "a;b 4\na;b: x 2\na;b;c 3\nd 1\n"
    assert cleaned == ["a", "b;\rx"]


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "analysis", "jfr", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def test_cli_folded_prints_the_library_text_and_states_the_threshold():
    rec = SPLIT / "jdk25-split.jfr"
    out = run_cli(rec, "--folded", "--event", "jdk.ThreadSleep", "--start", "1", "--end", "6")
    assert out.returncode == 0, out.stderr
    assert out.stdout == folded_text(fold_jfr(rec, "jdk.ThreadSleep", window_s=(1, 6)))
    assert "threshold 10 ms: shorter ones are not in the recording" in out.stderr
    cpu = run_cli(rec, "--folded")
    assert cpu.stdout == folded_text(fold_jfr(rec)) and "period 10 ms" in cpu.stderr


@pytest.mark.parametrize("args,message", [
    (["--folded", "--event", "jdk.GarbageCollection"], "no stacks are folded for event"),
    (["--folded", "--start", "5", "--end", "2"], "expected 0 <= start < end"),
    (["--start", "1"], "choose the stacks of --folded or --flamegraph"),
    (["--diff", "x.jfr"], "give --flamegraph OUT.svg too"),
    (["--folded", "--json"], "choose one"),
    (["--flamegraph", "x.svg", "--app", "(unclosed"], "--app '(unclosed' is not a valid regex"),
])
def test_cli_errors_are_one_line(args, message):
    out = run_cli(SPLIT / "jdk17-split.jfr", *args)
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.startswith("error: ") and out.stderr.count("\n") == 1
    assert message in out.stderr


def test_cli_refuses_an_export_and_a_missing_file(tmp_path):
    export = REPO / "tests" / "fixtures" / "jfr" / "jdk17-default-export.json"
    out = run_cli(export, "--folded")
    assert out.returncode == 1 and "holds no stack pools" in out.stderr
    out = run_cli(tmp_path / "none.jfr", "--folded")
    assert out.returncode == 1 and "no such file" in out.stderr


def test_every_stack_event_is_offered():
    from analysis.commands import jfr as command
    assert tuple(STACK_EVENTS) == command.STACK_EVENTS
    with pytest.raises(JfrError, match="no stacks are folded"):
        fold_jfr(SPLIT / "jdk17-split.jfr", "jdk.CPULoad")


def test_help_names_every_stack_option():
    out = run_cli("--help")
    for option in ("--folded", "--flamegraph", "--diff", "--event", "--start", "--end", "--app"):
        assert option in out.stdout


@pytest.mark.jdk
def test_jfr_tool_of_this_machine_agrees_too():
    """The `jfr` on PATH (whatever JDK it is) reads the JDK 17 recording the same way."""
    tool = shutil.which("jfr")
    if tool is None:
        pytest.skip("needs the JDK's jfr tool")
    out = subprocess.run([tool, "print", "--json", "--stack-depth", "64", "--events",
                          "jdk.ExecutionSample", str(SPLIT / "jdk17-split.jfr")],
                         capture_output=True, text=True, timeout=300, check=True).stdout
    events = [e["values"] for e in json.loads(out)["recording"]["events"]]
    assert fold_jfr(SPLIT / "jdk17-split.jfr")["stacks"] == dict(aggregate(events, False))
