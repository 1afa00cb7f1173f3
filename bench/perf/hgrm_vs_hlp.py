"""Speed and memory of `python -m analysis hgrm` against HistogramLogProcessor on a 24-hour log.

    .venv/bin/python bench/perf/hgrm_vs_hlp.py [--repeat N] [--one-core] [--numpy]

Generates bench/perf/out/day.hlog once (`genhlog day.hlog 86400 2000 1`: 86,400 one-second
intervals of 2,000 values, ~110 MB), then runs, side by side in this one run,

    python -m analysis hgrm -i day.hlog -o out/ours
    ../shared/oracle/hlp    -i day.hlog -o out/hlp

and prints wall time, CPU time and peak RSS of each (from wait4; for ours, the sum of its own
peak and its reader worker's, see WITH_RSS_REPORT), the speed ratio, whether the outputs are
identical, and the floor: base64 + zlib of the same payloads alone, in-process, with the
libraries hgrm uses (analysis/read/hdr/codec.py: pybase64 + isal when installed) and with the
stdlib. `--one-core` pins ours to CPU 0 (`taskset -c 0`: no read-ahead process), and
HistogramLogProcessor is left as it runs by default (issue 15's "x HLP on one core").
Without --one-core, ours forks its read-ahead worker only when the 1-minute load average
leaves half a CPU free (analysis/read/hdr/worker.py, BUSY_MARGIN): read the load beside it.
`--numpy`: ours without its compiled inner loops (LOADCURVE_NATIVE=0; analysis/read/hdr/native.py).
The two tools take turns (HLP, ours, HLP, ours, ...), and every timing is printed as it comes
with the 1-minute load average before and after it: on a shared machine, read the ratio of
the best runs beside the load they saw.
Targets: ours >= 8x faster than HistogramLogProcessor (wall; >= 6x with --one-core), peak
memory < 500 MB.
Exit status 1 when the outputs differ or the memory target is missed; the speed target is
reported, not enforced (it depends on the machine and its load).
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
SPEED_TARGET = 8.0
ONE_CORE_SPEED_TARGET = 6.0


# `python -m analysis ARGS`, plus, at exit, the peak RSS of the process itself and of its
# largest child (the reader worker it forks and waits for) written to the file in argv[1]:
# wait4 reports only the larger of the two, and both are alive at once.
WITH_RSS_REPORT = """
import atexit, resource, runpy, sys
report = sys.argv.pop(1)
def write():
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    with open(report, "w") as f:
        f.write(f"{own} {child}\\n")
atexit.register(write)
sys.argv[0] = "analysis"
runpy.run_module("analysis", run_name="__main__", alter_sys=True)
"""


def run(cmd: list[str], rss_report: Path | None = None, env: dict | None = None) -> dict:
    """Run cmd; wall seconds, CPU seconds (user + sys, with the processes it waited for) and
    peak RSS (MB), from wait4, of the process and everything it started, and the load average
    before and after. With rss_report (a file cmd writes "own-KB children-KB" to), peak RSS is
    the sum of the two peaks."""
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, **(env or {})})
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    stderr = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} exited {proc.returncode}:\n{stderr}")
    rss_kb = usage.ru_maxrss
    if rss_report is not None:
        own, child = (int(x) for x in rss_report.read_text().split())
        rss_kb = max(rss_kb, own + child)
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": rss_kb / 1024,
            "load": (load_before, os.getloadavg()[0])}


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
    parser.add_argument("--repeat", type=int, default=1, help="runs of each tool (default 1)")
    parser.add_argument("--one-core", action="store_true",
                        help="pin ours to CPU 0 (taskset -c 0): no read-ahead process")
    parser.add_argument("--numpy", action="store_true",
                        help="ours without its compiled inner loops (LOADCURVE_NATIVE=0)")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from analysis.read.hdr import native
    ours_env = {"LOADCURVE_NATIVE": "0"} if args.numpy else {}
    if not args.numpy:
        native.get()      # (built now if need be, not inside a timed run)
    path = "numpy (--numpy)" if args.numpy else native.describe()
    if args.one_core and not shutil.which("taskset"):
        print("error: --one-core needs taskset (util-linux)", file=sys.stderr)
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
    ours_cmd = (["taskset", "-c", "0"] if args.one_core else []) + [sys.executable, "-c", WITH_RSS_REPORT, str(rss_report),
                "hgrm", "-i", str(DAY), "-o", str(OUT / "ours")]
    hlp_cmd = [str(ORACLE / "hlp"), "-i", str(DAY), "-o", str(OUT / "hlp")]
    results = {"ours": [], "hlp": []}
    print(f"inner loops of ours: {path}", flush=True)
    for k in range(args.repeat):
        # alternate, so both see the same machine load
        for name, r in (("hlp", run(hlp_cmd)), ("ours", run(ours_cmd, rss_report, ours_env))):
            results[name].append(r)
            print(f"  run {k + 1} {name:4s} {r['wall']:7.2f} s wall {r['cpu']:7.2f} s CPU  "
                  f"({load_text(r)})", flush=True)
    floor_load = os.getloadavg()[0]
    floor, payloads = floor_seconds(DAY, fast=True)
    floor_stdlib, _ = floor_seconds(DAY, fast=False)
    floor_load = f"load {floor_load:.2f} -> {os.getloadavg()[0]:.2f}"
    from analysis.read.hdr.codec import NAMES
    target = ONE_CORE_SPEED_TARGET if args.one_core else SPEED_TARGET
    best = {k: min(v, key=lambda r: r["wall"]) for k, v in results.items()}
    median = {k: statistics.median(r["wall"] for r in v) for k, v in results.items()}
    identical = same_output(OUT / "ours", OUT / "hlp") and \
        same_output(OUT / "ours.hgrm", OUT / "hlp.hgrm")
    ratio_wall = best["hlp"]["wall"] / best["ours"]["wall"]
    ratio_cpu = best["hlp"]["cpu"] / best["ours"]["cpu"]
    print(f"input: {DAY.relative_to(REPO)} ({size_mb:.0f} MB, {payloads} intervals); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"
          f"{'; ours pinned to CPU 0' if args.one_core else ''}")
    print(f"best of {args.repeat}:{'':15s}{'wall s':>9s}{'CPU s':>9s}{'peak MB':>9s}"
          f"{'median s':>10s}")
    for name, label in (("hlp", "HistogramLogProcessor"), ("ours", "analysis hgrm")):
        r = best[name]
        print(f"{label:26s}{r['wall']:9.2f}{r['cpu']:9.2f}{r['rss_mb']:9.0f}"
              f"{median[name]:10.2f}  ({load_text(r)})")
    print(f"{'floor: ' + NAMES:26s}{floor:9.2f}{'':28s}({floor_load})")
    print(f"{'floor: binascii + zlib':26s}{floor_stdlib:9.2f}")
    print(f"speed-up: {ratio_wall:.2f}x wall (best runs), {median['hlp'] / median['ours']:.2f}x "
          f"(medians), {ratio_cpu:.2f}x CPU (target {target:.0f}x: "
          f"{'met' if ratio_wall >= target else 'NOT met'}); ours is "
          f"{best['ours']['wall'] / floor:.1f}x the decode floor")
    print(f"memory: {best['ours']['rss_mb']:.0f} MB (limit {MEMORY_LIMIT_MB} MB: "
          f"{'met' if best['ours']['rss_mb'] < MEMORY_LIMIT_MB else 'NOT met'})")
    print(f"outputs identical to HistogramLogProcessor's: {'yes' if identical else 'NO'}")
    return 0 if identical and best["ours"]["rss_mb"] < MEMORY_LIMIT_MB else 1


if __name__ == "__main__":
    sys.exit(main())
