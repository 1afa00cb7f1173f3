"""Benchmark: loadcurve's JFR summary vs the JDK's `jfr print --json`, side by side.

Makes (once, cached in bench/perf/out/) a ~40 MB recording with profile settings from the
fixture workload in tests/fixtures/jfr/src/, then times, each in its own process:
  - ours: `summarize_jfr(path)` (the whole summary: GC, CPU, allocation, locks, hot methods);
  - JDK:  `jfr print --json --stack-depth 64 --events <the event types the summary reads>`
          with its output read through a pipe and counted (not kept), i.e. only the decoding
          a pipeline would have to start from.
Peak memory (max RSS of each process) is measured on the whole recording and on its first
chunks (about half the size) to show that ours does not grow with the recording.

    .venv/bin/python bench/perf/jfr_vs_jdk.py [--size-mb 40] [--repeat 3]

Needs a JDK (java, javac, jcmd, jfr on PATH or JAVA_HOME). Targets: >= 5x faster, < 250 MB.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "bench" / "perf" / "out"
WORKLOAD = REPO / "tests" / "fixtures" / "jfr" / "src" / "Workload.java"
sys.path.insert(0, str(REPO))

from analysis.read.jfr.chunks import HEADER  # noqa: E402
from analysis.read.jfr.plan import EVENT_FIELDS  # noqa: E402


def tool(name: str) -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / name).exists():
        return str(Path(home) / "bin" / name)
    found = shutil.which(name)
    if not found:
        sys.exit(f"error: {name} not found (set JAVA_HOME or put the JDK's bin/ on PATH)")
    return found


def make_recording(target_mb: int) -> Path:
    path = OUT / f"profile-{target_mb}mb.jfr"
    if path.exists():
        return path
    OUT.mkdir(parents=True, exist_ok=True)
    classes = OUT / "classes"
    subprocess.run([tool("javac"), "-d", str(classes), "--release", "11", str(WORKLOAD)],
                   check=True)
    repo = OUT / "repository"
    shutil.rmtree(repo, ignore_errors=True)
    print(f"recording ~{target_mb} MB with settings=profile (once; cached as {path}) ...",
          flush=True)
    # Allocation unthrottled (0) and 2 compute threads: a GC-heavy service, the event mix a
    # latency benchmark's recording has (many GC events the summary skips, samples it decodes).
    jvm = subprocess.Popen([tool("java"), "-Xmx64m", "-Xms64m", "-XX:+UseG1GC",
                            f"-XX:FlightRecorderOptions=repository={repo}",
                            "-XX:StartFlightRecording=name=bench,settings=profile",
                            "-cp", str(classes), "Workload", "3600", "0", "2"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            time.sleep(2)
            size = sum(f.stat().st_size for f in repo.rglob("*.jfr"))
            if size >= target_mb << 20:
                break
            if jvm.poll() is not None:
                sys.exit("error: the workload JVM ended before the recording was big enough")
        subprocess.run([tool("jcmd"), str(jvm.pid), "JFR.stop", "name=bench",
                        f"filename={path}"], check=True, stdout=subprocess.DEVNULL)
    finally:
        jvm.kill()
        jvm.wait()
        shutil.rmtree(repo, ignore_errors=True)
    return path


def first_chunks(path: Path, fraction: float) -> Path:
    """The whole chunks making up about `fraction` of the file: a smaller valid recording."""
    out = path.with_name(path.stem + f"-first{int(fraction * 100)}pct.jfr")
    if out.exists():
        return out
    data = path.read_bytes()
    pos = 0
    while pos < len(data) * fraction:
        pos += HEADER.unpack_from(data, pos)[3]
    out.write_bytes(data[:pos])
    return out


def measure(cmd: list[str]) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MiB, bytes written to stdout) of one child process.

    The output is read and counted here in 1 MiB blocks, never kept: Linux carries a process's
    peak RSS across exec, so a parent holding a big buffer when it forks would inflate every
    child's figure."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out_bytes = 0
    while block := proc.stdout.read(1 << 20):
        out_bytes += len(block)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} exited with {proc.returncode}")
    return wall, usage.ru_maxrss / 1024, out_bytes


def ours(path: Path) -> list[str]:
    code = ("import sys; sys.path.insert(0, sys.argv[2]); "
            "from analysis.derive.jvm_summary import summarize_jfr;"
            "s = summarize_jfr(sys.argv[1]); print(s['gc']['count'], s['samples']['count'])")
    return [sys.executable, "-c", code, str(path), str(REPO)]


def jdk(path: Path) -> list[str]:
    return [tool("jfr"), "print", "--json", "--stack-depth", "64", "--events",
            ",".join(sorted(EVENT_FIELDS)), str(path)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=40)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each; the median is shown")
    args = ap.parse_args()
    big = make_recording(args.size_mb)
    half = first_chunks(big, 0.5)
    rows = []
    for path in (half, big):
        mb = path.stat().st_size / 2**20
        t_ours, m_ours, t_jdk, m_jdk = [], [], [], []
        for _ in range(args.repeat):
            w, m, _ = measure(ours(path))
            t_ours.append(w)
            m_ours.append(m)
            w, m, json_bytes = measure(jdk(path))
            t_jdk.append(w)
            m_jdk.append(m)
        med = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
        rows.append((path.name, mb, med(t_ours), max(m_ours), med(t_jdk), max(m_jdk),
                     json_bytes / 2**20))
    print(f"\n{'recording':34} {'size':>8} {'ours':>8} {'ours RSS':>9} {'jfr print':>10} "
          f"{'jfr RSS':>8} {'JSON':>9} {'speed-up':>8}")
    for name, mb, to, mo, tj, mj, js in rows:
        print(f"{name:34} {mb:6.1f}MB {to:7.2f}s {mo:7.0f}MB {tj:9.2f}s {mj:6.0f}MB "
              f"{js:7.0f}MB {tj / to:7.1f}x")
    (_, _, to, mo, tj, _, _), (_, _, to2, mo2, tj2, _, _) = rows
    print(f"\nmedian of {args.repeat} runs each, one process per run (Python start-up and "
          f"JVM start-up included).")
    print(f"speed-up on the full recording: {tj2 / to2:.1f}x (target >= 5x); peak memory "
          f"{mo:.0f} MB at {rows[0][1]:.0f} MB -> {mo2:.0f} MB at {rows[1][1]:.0f} MB "
          f"(target < 250 MB, flat)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
