"""Speed and memory of `python -m analysis hgrm` against HistogramLogProcessor on a 24-hour log.

    .venv/bin/python bench/perf/hgrm_vs_hlp.py [--repeat N] [--one-core] [--numpy] [--before DIR]

Generates bench/perf/out/day.hlog once (`genhlog day.hlog 86400 2000 1`: 86,400 one-second
intervals of 2,000 values, ~110 MB), then runs, taking turns (HLP, ours on both cores, ours on
one core, HLP, ...), so that each sees the same machine load,

    ../shared/oracle/hlp    -i day.hlog -o out/hlp
    python -m analysis hgrm -i day.hlog -o out/ours            (2 cores: its second thread)
    taskset -c 0 python -m analysis hgrm -i day.hlog -o out/ours-1    (pinned to CPU 0)

and prints wall time, CPU time and peak RSS of each (from wait4; for ours, the sum of its own
peak and that of a second process, which a tree before the threads forked, see WITH_RSS_REPORT;
a 2-core run that used no second core, neither threads decoding ahead nor a forked process, is
marked ONE CORE and counted), each turn's one core / 2 cores wall ratio, the speed ratios the
issue's table asks for (HLP / ours on 2 cores, HLP / ours on one, one core / 2 cores), whether
the outputs are
identical, and the floor: base64 + zlib of the same payloads alone, in-process, with the
libraries hgrm uses (analysis/read/hdr/codec.py: pybase64 + isal when installed) and with the
stdlib. `--one-core` leaves out the 2-core runs. Ours uses its second core only when the
1-minute load average or the threads runnable at that instant leave half a CPU free
(analysis/read/hdr/worker.py, BUSY_MARGIN; a tree before 16dc9f0 looks at the average alone,
which HistogramLogProcessor's run just before can hold over 1.5): the runs that did not are
marked, or give `--ignore-load`. `--before DIR`: the same runs of ours from another tree too
(`git archive REV | tar -x -C DIR`), in the same turns. `--numpy`: ours without its compiled
inner loops (LOADCURVE_NATIVE=0; analysis/read/hdr/native.py).
Targets (issue 36): ours >= 12x faster than HistogramLogProcessor on 2 cores and >= 8x on one
(wall), 2 cores >= 1.6x one core, peak memory < 500 MB.
Exit status 1 when the outputs differ or the memory target is missed; the speed targets are
reported, not enforced (they depend on the machine and its load).
"""
from __future__ import annotations

import argparse
import binascii
import shutil
import os
import statistics
import re
import subprocess
import sys
import time
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("LOADCURVE_SHARED", REPO.parent / "shared"))
ORACLE = SHARED / "oracle"
OUT = REPO / "bench" / "perf" / "out"
DAY = OUT / "day.hlog"
MEMORY_LIMIT_MB = 500
SPEED_TARGET = 12.0
ONE_CORE_SPEED_TARGET = 8.0
CORES_TARGET = 1.6       # ours on 2 cores against ours on one


# `python -m analysis ARGS`, plus, at exit, the peak RSS of the process itself and of its
# largest child (the second process a tree before ahead.py's threads forks and waits for) and
# how many threads it started, written to the file in argv[1]: wait4 reports only the larger
# of the two peaks, and both processes are alive at once.
WITH_RSS_REPORT = """
import atexit, os, resource, runpy, sys, threading
report = sys.argv.pop(1)
if os.environ.get("HGRM_IGNORE_LOAD"):     # (--ignore-load: both cores whatever the load)
    import analysis.read.hdr.worker as worker
    worker._load = lambda: 0.0
started = [0]
plain_start = threading.Thread.start
def counted_start(self, *args, **kwargs):
    started[0] += 1
    return plain_start(self, *args, **kwargs)
threading.Thread.start = counted_start
def write():
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    with open(report, "w") as f:
        f.write(f"{own} {child} {started[0]}\\n")
atexit.register(write)
sys.argv[0] = "analysis"
runpy.run_module("analysis", run_name="__main__", alter_sys=True)
"""


def run(cmd: list[str], rss_report: Path | None = None, env: dict | None = None,
        cwd: Path = REPO) -> dict:
    """Run cmd; wall seconds, CPU seconds (user + sys, with the processes it waited for) and
    peak RSS (MB), from wait4, of the process and everything it started, and the load average
    before and after. With rss_report (a file cmd writes "own-KB children-KB" to), peak RSS is
    the sum of the two peaks."""
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, **(env or {})})
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    stderr = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} exited {proc.returncode}:\n{stderr}")
    rss_kb = usage.ru_maxrss
    one_core = False
    if rss_report is not None:
        own, child, threads = (int(x) for x in rss_report.read_text().split())
        rss_kb = max(rss_kb, own + child)
        # (neither a child nor a thread: hgrm read the log on one core, see worker.use_worker)
        one_core = child == 0 and threads == 0
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": rss_kb / 1024,
            "load": (load_before, os.getloadavg()[0]), "one_core": one_core}


def load_text(r: dict) -> str:
    return f"load {r['load'][0]:.2f} -> {r['load'][1]:.2f}"


def floor_seconds(path: Path, fast: bool) -> tuple[float, int]:
    """base64 + zlib of every payload, nothing else: what any reader must at least do (the
    payload texts are read first, untimed). fast: with hgrm's libraries, else the stdlib."""
    sys.path.insert(0, str(REPO))
    from analysis.read.hdr import codec
    with open(path, "r", encoding="latin-1") as f:
        texts = [line.rstrip().rsplit(",", 1)[1] for line in f
                 if line[:1].isdigit() or line.startswith("Tag=")]
    a2b, inflate = ((codec.a2b_base64, codec.inflate) if fast else
                    (lambda t: binascii.a2b_base64(t, strict_mode=True), zlib.decompress))
    start = time.perf_counter()
    for text in texts:
        inflate(memoryview(a2b(text))[8:])
    return time.perf_counter() - start, len(texts)


def same_output(a: Path, b: Path) -> bool:
    date = re.compile(rb"^(#\[StartTime: [-0-9.]+ \(seconds since epoch\)), .*\]$", re.M)
    return date.sub(rb"\1]", a.read_bytes()) == date.sub(rb"\1]", b.read_bytes())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="turns of each run (default 1)")
    parser.add_argument("--one-core", action="store_true",
                        help="only ours pinned to CPU 0 (taskset -c 0), no 2-core runs")
    parser.add_argument("--numpy", action="store_true",
                        help="ours without its compiled inner loops (LOADCURVE_NATIVE=0)")
    parser.add_argument("--before", type=Path, metavar="DIR",
                        help="also run ours from this tree (the code before a change)")
    parser.add_argument("--ignore-load", action="store_true",
                        help="ours on 2 cores uses its second core whatever the load "
                             "average (it does not when the load leaves no CPU free): for "
                             "turns on a busy machine")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from analysis.read.hdr import native
    ours_env = {"LOADCURVE_NATIVE": "0"} if args.numpy else {}
    if args.ignore_load:
        ours_env["HGRM_IGNORE_LOAD"] = "1"
    trees = {"ours": REPO}
    if args.before:
        trees["before"] = args.before.resolve()
    if not args.numpy:
        native.get()      # (built now if need be, not inside a timed run)
        for tree in trees.values():
            subprocess.run([sys.executable, "-m", "analysis.read.hdr.native"], cwd=tree,
                           check=True, stdout=subprocess.DEVNULL)
    path = "numpy (--numpy)" if args.numpy else native.describe()
    if not shutil.which("taskset"):
        print("error: the one-core runs need taskset (util-linux)", file=sys.stderr)
        return 1
    if not (ORACLE / "hlp").exists():
        print(f"error: {ORACLE}/hlp not found (../shared must sit beside the repo)", file=sys.stderr)
        return 1
    OUT.mkdir(parents=True, exist_ok=True)
    if not DAY.exists():
        print(f"generating {DAY.relative_to(REPO)} (genhlog day.hlog 86400 2000 1) ...", flush=True)
        subprocess.run([str(ORACLE / "genhlog"), str(DAY), "86400", "2000", "1"], check=True)
    size_mb = DAY.stat().st_size / 2**20
    rss_report = OUT / "ours-rss.txt"
    runs = {"hlp": ([str(ORACLE / "hlp"), "-i", str(DAY), "-o", str(OUT / "hlp")], REPO, None)}
    for name, tree in trees.items():
        for cores in ([1] if args.one_core else [2, 1]):
            label = f"{name}-{cores}"
            cmd = (["taskset", "-c", "0"] if cores == 1 else []) + [
                sys.executable, "-c", WITH_RSS_REPORT, str(rss_report), "hgrm", "-i", str(DAY),
                "-o", str(OUT / label)]
            runs[label] = (cmd, tree, rss_report)
    results = {name: [] for name in runs}
    print(f"inner loops of ours: {path}", flush=True)
    if not args.numpy:
        from analysis.read.hdr import group_inflate
        print(f"payloads' base64 and inflating: {group_inflate.describe()}", flush=True)
    for k in range(args.repeat):
        for name, (cmd, tree, report) in runs.items():
            r = run(cmd, report, ours_env if name != "hlp" else None, tree)
            results[name].append(r)
            alone = "  ONE CORE" if name.endswith("-2") and r["one_core"] else ""
            turn = ""
            if name.endswith("-1") and not args.one_core:
                two = results[f"{name[:-2]}-2"][k]["wall"]
                turn = f"  (this turn: 2 cores {r['wall'] / two:.2f}x one core)"
            print(f"  run {k + 1} {name:9s} {r['wall']:7.2f} s wall {r['cpu']:7.2f} s CPU  "
                  f"({load_text(r)}){alone}{turn}", flush=True)
    floor_load = os.getloadavg()[0]
    floor, payloads = floor_seconds(DAY, fast=True)
    floor_stdlib, _ = floor_seconds(DAY, fast=False)
    floor_load = f"load {floor_load:.2f} -> {os.getloadavg()[0]:.2f}"
    from analysis.read.hdr.codec import NAMES
    best = {k: min(v, key=lambda r: r["wall"]) for k, v in results.items()}
    median = {k: statistics.median(r["wall"] for r in v) for k, v in results.items()}
    identical = all(same_output(OUT / name, OUT / "hlp") and
                    same_output(OUT / f"{name}.hgrm", OUT / "hlp.hgrm")
                    for name in runs if name != "hlp")
    print(f"input: {DAY.relative_to(REPO)} ({size_mb:.0f} MB, {payloads} intervals); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"best of {args.repeat}:{'':15s}{'wall s':>9s}{'CPU s':>9s}{'peak MB':>9s}"
          f"{'median s':>10s}")
    labels = {"hlp": "HistogramLogProcessor", "ours-2": "analysis hgrm, 2 cores",
              "ours-1": "analysis hgrm, one core", "before-2": "before, 2 cores",
              "before-1": "before, one core"}
    for name in runs:
        r = best[name]
        print(f"{labels[name]:26s}{r['wall']:9.2f}{r['cpu']:9.2f}{r['rss_mb']:9.0f}"
              f"{median[name]:10.2f}  ({load_text(r)})")
    print(f"{'floor: ' + NAMES:26s}{floor:9.2f}{'':28s}({floor_load})")
    print(f"{'floor: binascii + zlib':26s}{floor_stdlib:9.2f}")
    for name in runs:
        if name == "hlp":
            continue
        target = ONE_CORE_SPEED_TARGET if name.endswith("-1") else SPEED_TARGET
        ratio = best["hlp"]["wall"] / best[name]["wall"]
        print(f"speed-up {name}: {ratio:.2f}x wall (best runs), "
              f"{median['hlp'] / median[name]:.2f}x (medians), "
              f"{best['hlp']['cpu'] / best[name]['cpu']:.2f}x CPU (target {target:.0f}x: "
              f"{'met' if ratio >= target else 'NOT met'}); "
              f"{best[name]['wall'] / floor:.1f}x the decode floor")
    for name in trees:
        if not args.one_core:
            two, one = best[f"{name}-2"]["wall"], best[f"{name}-1"]["wall"]
            print(f"{name}: 2 cores {one / two:.2f}x one core (best runs), "
                  f"{median[f'{name}-1'] / median[f'{name}-2']:.2f}x (medians) "
                  f"(target {CORES_TARGET}x: {'met' if one / two >= CORES_TARGET else 'NOT met'})")
    for name in runs:
        alone = sum(r["one_core"] for r in results[name])
        if name.endswith("-2") and alone:
            print(f"{name}: {alone} of {args.repeat} runs read the log on one core (the "
                  "load average left no CPU free when they started: --ignore-load)")
    peak = max(best[name]["rss_mb"] for name in runs if name != "hlp")
    print(f"memory: {peak:.0f} MB (limit {MEMORY_LIMIT_MB} MB: "
          f"{'met' if peak < MEMORY_LIMIT_MB else 'NOT met'})")
    print(f"outputs identical to HistogramLogProcessor's: {'yes' if identical else 'NO'}")
    return 0 if identical and peak < MEMORY_LIMIT_MB else 1


if __name__ == "__main__":
    sys.exit(main())
