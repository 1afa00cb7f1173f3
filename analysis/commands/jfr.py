"""Summarise one JFR recording: GC pauses, safepoints, CPU, allocation, locks, hot methods.

FILE is a .jfr, a .jfr.gz, a JFR repository folder (the chunk files a JVM killed mid-run
leaves), or a small `jfr print --json` export. No JDK is needed. A recording cut short is read
up to its last whole event and reported as truncated.

Exit status: 0 the summary was printed (also for a truncated recording), 1 the file cannot be
read as JFR (one `error: FILE: byte N: ...` line).
"""
from __future__ import annotations

import json
import sys
from datetime import datetime, timezone

from analysis.errors import JfrError
from analysis.read.jfr import summarize_jfr


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


def run(args) -> int:
    summary = summarize_jfr(args.file, attribution=_attribution(args.attribute))
    if args.json:
        sys.stdout.write(json.dumps(summary, sort_keys=True, indent=1) + "\n")
    else:
        sys.stdout.write(render_text(args.file, summary, args.top))
    return 0
