"""Summarise one JFR recording: GC pauses, safepoints, CPU, allocation, locks, hot methods.

FILE is a .jfr, a .jfr.gz, a JFR repository folder (the chunk files a JVM killed mid-run
leaves), or a small `jfr print --json` export. No JDK is needed. A recording cut short is read
up to its last whole event and reported as truncated.

With --folded it prints the stacks of one event type instead, in Brendan Gregg's folded format
(`root;...;leaf weight` per distinct stack, which flamegraph.pl and speedscope read): execution
samples by default, or an off-CPU event's durations in ms. With --flamegraph OUT.svg it draws
them as a flame graph; with --diff BASE.jfr as well, a differential one (BASE as A, FILE as B).
What the recording's settings left out (its threshold or sampling period) goes to stderr.

Exit status: 0 the summary was printed (also for a truncated recording), 1 the file cannot be
read as JFR (one `error: FILE: byte N: ...` line).
"""
from __future__ import annotations

import os
import re
import sys

from analysis.derive.jvm_summary import jvm_summary
from analysis.errors import JfrError

# The events --event takes (analysis/read/jfr/stacks.py STACK_EVENTS; not imported here so that
# --help stays cheap).
STACK_EVENTS = ("jdk.ExecutionSample", "jdk.ThreadPark", "jdk.JavaMonitorEnter",
                "jdk.ThreadSleep", "jdk.SocketRead")


def add_arguments(parser) -> None:
    parser.add_argument("file", metavar="FILE", help="recording: .jfr, .jfr.gz, repository "
                        "folder or `jfr print --json` export")
    parser.add_argument("--json", action="store_true",
                        help="print the summary as one JSON object (the fields listed in "
                             "analysis/read/jfr/__init__.py)")
    parser.add_argument("--attribute", metavar="REGEX=LABEL", action="append", default=[],
                        help="attribute samples whose frame (pkg.Class.method, leaf to root) "
                             "fully matches REGEX to LABEL; repeat, first pattern wins")
    parser.add_argument("--top", type=int, default=10, metavar="N",
                        help="hot methods to list in the text summary (default 10)")
    parser.add_argument("--jobs", type=int, metavar="N",
                        help="processes reading the summary of a recording file of several "
                             "chunks, part by part (default: the CPUs this process may use, "
                             "or 1 while as many other tasks are running)")
    stacks = parser.add_argument_group("stacks and flame graphs")
    stacks.add_argument("--folded", action="store_true",
                        help="print the folded stacks of --event: `root;...;leaf weight` per "
                             "distinct stack, lines in text order; weight = samples, or ms "
                             "(3 decimals, rounded half up) for the off-CPU events")
    stacks.add_argument("--flamegraph", metavar="OUT.svg",
                        help="write the flame graph of --event to OUT.svg (root at the bottom; "
                             "a frame's tooltip gives its samples or ms and share)")
    stacks.add_argument("--diff", metavar="BASE.jfr",
                        help="with --flamegraph: a differential flame graph, laid out by FILE "
                             "(B) and coloured by the change of each frame's share from BASE (A)")
    stacks.add_argument("--event", default=STACK_EVENTS[0], metavar="NAME", help="the event whose stacks are read: "
                        + ", ".join(STACK_EVENTS) + f" (default {STACK_EVENTS[0]})")
    stacks.add_argument("--start", type=float, metavar="S",
                        help="only events starting at or after S seconds from the recording's "
                             "start (its first chunk's start time)")
    stacks.add_argument("--end", type=float, metavar="S",
                        help="only events starting before S seconds from the recording's start")
    stacks.add_argument("--app", metavar="REGEX", action="append", default=[],
                        help="flame graph frames (pkg.Class.method) that fully match REGEX are "
                             "coloured as the application; repeat (default: loadcurve\\..*)")


def default_jobs() -> int:
    """The CPUs this process may use; 1 while as many other tasks are running (a second
    process then only adds its start and the merge: 0.03-0.1 s of CPU on a 45 MB recording).
    Running now, not the load average: a minute's average still counts what just ended (a
    `jfr print` run beside this one)."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
        else os.cpu_count() or 1
    return 1 if _other_running_tasks() >= cpus else cpus


def _other_running_tasks(loadavg: str = "/proc/loadavg") -> int:
    """Runnable tasks but this one (Linux's /proc/loadavg: 'running/total'); 0 elsewhere."""
    try:
        with open(loadavg) as f:
            return int(f.read().split()[3].split("/")[0]) - 1
    except (OSError, IndexError, ValueError):
        return 0


def _attribution(specs: list[str]):
    out = []
    for spec in specs:
        pattern, sep, label = spec.rpartition("=")
        if not sep or not pattern or not label:
            raise JfrError(f"--attribute {spec!r}: expected REGEX=LABEL")
        out.append((pattern, label))
    return out or None


def _num(x, fmt="{:.1f}", none="not recorded"):
    return none if x is None else fmt.format(x)


def _when(epoch_s):
    from datetime import datetime, timezone     # (the text summary's only: --json's start-up)

    if epoch_s is None:
        return "?"
    return datetime.fromtimestamp(epoch_s, timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] \
        + " UTC"


def render_text(path: str, s: dict, top: int) -> str:
    gc, cpu, th, sp = s["gc"], s["cpu"], s["threads"], s["safepoint"]
    state = "complete"
    if s["truncated"]:
        state = f"TRUNCATED: data up to {_when(s['covered_until'])}"
        if s["damage"]:
            state += f" ({s['damage']})"
    lines = [
        f"recording    {path} (" + (f"{s['chunks']} chunk{'s' if s['chunks'] != 1 else ''}"
                                     if s["chunks"] else "`jfr print --json` export") + ")",
        f"JVM          {s['jdk'] or 'unknown (no jdk.JVMInformation event)'}",
        f"covers       {_when(s['start_epoch_s'])} + {_num(s['duration_s'], '{:.2f} s')}, "
        f"{state}" + (f"; {len(s['gaps'])} gap(s) between chunks left out (see warnings)"
                      if s.get("gaps") else ""),
        f"GC           {_num(gc['count'], '{}', 'n/a')} collections; pauses total "
        f"{_num(gc['pause_total_ms'], '{:.2f} ms', 'n/a')}, "
        f"max {_num(gc['pause_max_ms'], '{:.2f} ms', 'n/a')}, "
        f"p99 {_num(gc['pause_p99_ms'], '{:.2f} ms', 'n/a')}"
        f" ({gc['pause_count']} pauses from {gc['pause_source']})",
        f"heap         used after GC: max {_num(gc['heap_used_after_gc_max_mb'], '{:.1f} MiB')},"
        f" mean {_num(gc['heap_used_after_gc_mean_mb'], '{:.1f} MiB')}",
    ]
    missing = "not in the export" if s["source"] != "recording" else "not recorded"
    if sp["recorded"]:
        lines.append(f"safepoints   {sp['count']}, total {sp['total_ms']:.2f} ms (threshold "
                     f"{_num(sp['threshold_ms'], '{:g} ms', 'unknown')}: shorter ones not "
                     f"recorded)")
    else:
        lines.append("safepoints   not recorded (jdk.SafepointBegin off in these settings)"
                     if s["source"] == "recording" else f"safepoints   {missing}")
    if cpu["samples"]:
        lines.append(f"CPU          JVM user {cpu['jvm_user'] * 100:.1f} %, JVM system "
                     f"{cpu['jvm_system'] * 100:.1f} %, machine {cpu['machine'] * 100:.1f} % "
                     f"(mean of {cpu['samples']} jdk.CPULoad)")
    else:
        lines.append(f"CPU          {missing}")
    lines.append(f"allocation   {_num(s['allocation_rate_mb_s'], '{:.1f} MiB/s', missing)}"
                 + (f" ({s['allocation_samples']} weighted samples)"
                    if s['allocation_samples'] else ""))
    if th["park_events"] is None:
        lines.append(f"parked       {missing}")
    else:
        lines.append(f"parked       {th['parked_ms']:.1f} ms in {th['park_events']} events "
                     f"(threshold {_num(th['park_threshold_ms'], '{:g} ms', 'unknown')}: "
                     f"shorter parks not recorded)")
    if th["monitor_events"] is None:
        lines.append(f"monitors     {missing}")
    else:
        lines.append(f"monitors     {th['monitor_blocked_ms']:.1f} ms blocked in "
                     f"{th['monitor_events']} events (threshold "
                     f"{_num(th['monitor_threshold_ms'], '{:g} ms', 'unknown')})")
    smp = s["samples"]
    if smp["count"] is None:
        lines.append(f"samples      {missing}")
    else:
        lines.append(f"samples      {smp['count']} execution samples"
                     + (f", {smp['unresolved']} without a readable stack" if smp["unresolved"]
                        else ""))
    if s["hot_methods"] and top > 0:
        lines.append("hot methods   self %  total %  method")
        for h in s["hot_methods"][:top]:
            lines.append(f"             {h['self_pct']:6.1f}  {h['total_pct']:7.1f}  "
                         f"{h['method']}")
    if s["attribution"]:
        lines.append("where the time went")
        for a in s["attribution"]:
            lines.append(f"             {_num(a['pct'], '{:6.1f}', '   n/a')} %  "
                         f"{a['samples']:6d}  {a['label']}")
    if s["warning_count"]:
        lines.append(f"warnings     {s['warning_count']} (events or pools skipped)")
        lines += [f"             {w}" for w in s["warnings"]]
    return "\n".join(lines) + "\n"


def _window_s(args):
    if args.start is None and args.end is None:
        return None
    start = 0.0 if args.start is None else args.start
    end = float("inf") if args.end is None else args.end
    if not (0 <= start < end):
        raise JfrError(f"--start {start:g} --end {end:g}: expected 0 <= start < end (seconds "
                       f"from the recording's start)")
    return start, end


def _recording_note(path: str, f: dict) -> str:
    """What the folded stacks leave out, for stderr."""
    if f["unit"] == "samples":
        period = f["period_ms"]
        what = f"{f['total']} samples (period " + \
            ("unknown" if period is None else f"{period:g} ms") + ")"
    else:
        threshold = f["threshold_ms"]
        what = f"{f['events']} events, {f['total'] / 1e6:.3f} ms (threshold " + \
            ("unknown" if threshold is None else f"{threshold:g} ms") + \
            ": shorter ones are not in the recording)"
    notes = [f"{path}: {f['event']}: {what}"]
    if f["unresolved"]:
        notes.append(f"{f['unresolved']} events without a readable stack left out")
    if f["truncated"]:
        notes.append(f"recording TRUNCATED ({f['damage']}): folded up to its last whole event")
    return "; ".join(notes) + "\n"


def _application(patterns: list[str]) -> list[str]:
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise JfrError(f"--app {pattern!r} is not a valid regex: {exc}") from None
    return patterns


def run_stacks(args) -> int:
    from analysis import atomic
    from analysis.read.jfr.stacks import fold_jfr
    from analysis.write.folded import folded_text
    from analysis.write.charts.flamegraph import (DEFAULT_APPLICATION, diff_flamegraph_svg,
                                           flamegraph_svg)

    if args.diff and not args.flamegraph:
        raise JfrError("--diff BASE.jfr draws a differential flame graph: give "
                       "--flamegraph OUT.svg too")
    window_s = _window_s(args)
    application = _application(args.app) or DEFAULT_APPLICATION
    folded = fold_jfr(args.file, args.event, window_s=window_s)
    sys.stderr.write(_recording_note(args.file, folded))
    if args.folded:
        sys.stdout.write(folded_text(folded))
    if not args.flamegraph:
        return 0
    measure = "CPU samples" if folded["unit"] == "samples" else "off-CPU time"
    if args.diff:
        base = fold_jfr(args.diff, args.event, window_s=window_s)
        sys.stderr.write(_recording_note(args.diff, base))
        svg = diff_flamegraph_svg(base["stacks"], folded["stacks"], folded["unit"],
                                  f"{measure} ({args.event}): {args.file} (B) against "
                                  f"{args.diff} (A)")
    else:
        svg = flamegraph_svg(folded["stacks"], folded["unit"],
                             f"{measure} ({args.event}): {args.file}",
                             application=application)
    atomic.write_bytes(args.flamegraph, svg)
    return 0


def run(args) -> int:
    if args.folded or args.flamegraph or args.diff:
        if args.json:
            raise JfrError("--json prints the summary; --folded and --flamegraph print stacks: "
                           "choose one")
        return run_stacks(args)
    if args.start is not None or args.end is not None or args.app or \
            args.event != STACK_EVENTS[0]:
        raise JfrError("--event, --start, --end and --app choose the stacks of --folded or "
                       "--flamegraph: give one of those")
    from analysis.read.jfr import read_jfr

    if args.jobs is not None and args.jobs < 1:
        raise JfrError(f"--jobs {args.jobs}: expected 1 or more")
    jobs = args.jobs or default_jobs()
    summary = jvm_summary(read_jfr(args.file, _attribution(args.attribute), jobs=jobs))
    if args.json:
        from analysis.commands.indented_json import dumps_sorted_indented
        sys.stdout.write(dumps_sorted_indented(summary) + "\n")
    else:
        sys.stdout.write(render_text(args.file, summary, args.top))
    return 0
