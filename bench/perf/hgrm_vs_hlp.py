"""Speed and memory of `python -m analysis hgrm` against HistogramLogProcessor on a 24-hour log.

    .venv/bin/python bench/perf/hgrm_vs_hlp.py [--repeat N] [--keep]

Generates bench/perf/out/day.hlog once (`genhlog day.hlog 86400 2000 1`: 86,400 one-second
intervals of 2,000 values, ~110 MB), then runs, side by side in this one run,

    python -m analysis hgrm -i day.hlog -o out/ours
    ../shared/oracle/hlp    -i day.hlog -o out/hlp

and prints wall time, CPU time and peak RSS of each (from wait4; for ours, the sum of its own
peak and its reader worker's, see WITH_RSS_REPORT), the speed ratio, whether the outputs are
identical, and the floor: base64 + zlib of the same payloads alone, in-process.
Targets: ours >= 4x faster than HistogramLogProcessor (wall), peak memory < 500 MB.
Exit status 1 when the outputs differ or the memory target is missed; the speed target is
reported, not enforced (it depends on the machine and its load).
"""
from __future__ import annotations

import argparse
import binascii
import os
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
SPEED_TARGET = 4.0


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


def run(cmd: list[str], rss_report: Path | None = None) -> dict:
    """Run cmd; wall seconds, CPU seconds (user + sys, with the processes it waited for) and
    peak RSS (MB), from wait4, of the process and everything it started. With rss_report (a
    file cmd writes "own-KB children-KB" to), peak RSS is the sum of the two peaks."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
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
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": rss_kb / 1024}


def floor_seconds(path: Path) -> tuple[float, int]:
    """base64 + zlib of every payload, nothing else: what any reader must at least do."""
    start = time.perf_counter()
    payloads = 0
    with open(path, "rb") as f:
        for line in f:
            if line[:1].isdigit() or line.startswith(b"Tag="):
                payload = line.rstrip().rsplit(b",", 1)[1]
                raw = binascii.a2b_base64(payload)
                zlib.decompress(raw[8:])
                payloads += 1
    return time.perf_counter() - start, payloads


def same_output(a: Path, b: Path) -> bool:
    date = re.compile(rb"^(#\[StartTime: [-0-9.]+ \(seconds since epoch\)), .*\]$", re.M)
    return date.sub(rb"\1]", a.read_bytes()) == date.sub(rb"\1]", b.read_bytes())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="runs of each tool (default 1)")
    args = parser.parse_args()
    if not (ORACLE / "hlp").exists():
        print(f"error: {ORACLE}/hlp not found (../shared must sit beside the repo)", file=sys.stderr)
        return 1
    OUT.mkdir(parents=True, exist_ok=True)
    if not DAY.exists():
        print(f"generating {DAY.relative_to(REPO)} (genhlog day.hlog 86400 2000 1) ...", flush=True)
        subprocess.run([str(ORACLE / "genhlog"), str(DAY), "86400", "2000", "1"], check=True)
    size_mb = DAY.stat().st_size / 2**20
    rss_report = OUT / "ours-rss.txt"
    ours_cmd = [sys.executable, "-c", WITH_RSS_REPORT, str(rss_report),
                "hgrm", "-i", str(DAY), "-o", str(OUT / "ours")]
    hlp_cmd = [str(ORACLE / "hlp"), "-i", str(DAY), "-o", str(OUT / "hlp")]
    results = {"ours": [], "hlp": []}
    for _ in range(args.repeat):
        # alternate, so both see the same machine load
        results["hlp"].append(run(hlp_cmd))
        results["ours"].append(run(ours_cmd, rss_report))
    floor, payloads = floor_seconds(DAY)
    best = {k: min(v, key=lambda r: r["wall"]) for k, v in results.items()}
    identical = same_output(OUT / "ours", OUT / "hlp") and \
        same_output(OUT / "ours.hgrm", OUT / "hlp.hgrm")
    ratio_wall = best["hlp"]["wall"] / best["ours"]["wall"]
    ratio_cpu = best["hlp"]["cpu"] / best["ours"]["cpu"]
    print(f"input: {DAY.relative_to(REPO)} ({size_mb:.0f} MB, {payloads} intervals); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{'':26s}{'wall s':>9s}{'CPU s':>9s}{'peak MB':>9s}")
    for name, label in (("hlp", "HistogramLogProcessor"), ("ours", "analysis hgrm")):
        r = best[name]
        print(f"{label:26s}{r['wall']:9.2f}{r['cpu']:9.2f}{r['rss_mb']:9.0f}")
    print(f"{'floor: base64 + zlib':26s}{floor:9.2f}")
    print(f"speed-up: {ratio_wall:.2f}x wall, {ratio_cpu:.2f}x CPU "
          f"(target {SPEED_TARGET:.0f}x: {'met' if ratio_wall >= SPEED_TARGET else 'NOT met'})")
    print(f"memory: {best['ours']['rss_mb']:.0f} MB (limit {MEMORY_LIMIT_MB} MB: "
          f"{'met' if best['ours']['rss_mb'] < MEMORY_LIMIT_MB else 'NOT met'})")
    print(f"outputs identical to HistogramLogProcessor's: {'yes' if identical else 'NO'}")
    return 0 if identical and best["ours"]["rss_mb"] < MEMORY_LIMIT_MB else 1


if __name__ == "__main__":
    sys.exit(main())
