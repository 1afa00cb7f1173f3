"""Benchmark: loadcurve's JFR summary vs the JDK's `jfr print --json`, side by side.

Makes (once, cached in bench/perf/out/) recordings with profile settings from the fixture
workload in tests/fixtures/jfr/src/, then times, each in its own process, on each recording:
  - ours: `python -m analysis jfr FILE --json` (the whole summary: GC, CPU, allocation, locks,
          hot methods), as a user runs it;
  - JDK:  `jfr print --json --stack-depth 64 --events <the event types the summary reads>`
          with its output read through a pipe and counted (not kept), i.e. only the decoding
          a pipeline would have to start from;
  - with --before REV: ours at git revision REV (a `git archive` of it), turn by turn with ours;
  - with --jobs-rows: ours with `--jobs 1` and `--jobs 2` too (a recording's chunks read in one
    process, and in parts by two: analysis/read/jfr/parallel.py; ours alone takes 2 on this
    machine unless two other tasks are running as it starts).
Both trees' Python is compiled to bytecode first (`compileall`), as Python's first run of a
checkout leaves it: where PYTHONDONTWRITEBYTECODE is set (this workplace sets it) every run
would compile the modules it imports again (~0.07 CPU s here), which no user's second run does.
The recordings (--kind, repeatable):
  - mixed: a ~40 MB recording of a GC-heavy service (64 MB heap, allocation unthrottled, two
    compute threads): samples, parks and GC events, and its first chunks (about half);
  - gc: a ~44 MB recording whose events are mostly GC phases (a 16 MB heap and a young
    generation of 1 MB: hundreds of tiny collections a second, each ~20 GC phase events that
    no report reads), the recording issue 36 measures.
Peak memory (max RSS of each process) is shown too, to see that ours does not grow with the
recording; CPU seconds (user + system of the process) beside the wall time.

    .venv/bin/python bench/perf/jfr_vs_jdk.py [--kind mixed --kind gc] [--repeat 3]
                                              [--before main] [--jobs-rows] [--jdk JAVA_HOME]

Needs a JDK (java, javac, jcmd, jfr in --jdk, JAVA_HOME or on PATH). Target (issue 36): >= 10x
on any recording.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "bench" / "perf" / "out"
WORKLOAD = REPO / "tests" / "fixtures" / "jfr" / "src" / "Workload.java"
sys.path.insert(0, str(REPO))

from analysis.read.jfr.chunks import HEADER  # noqa: E402
from analysis.read.jfr.plan import EVENT_FIELDS  # noqa: E402

# kind -> (target MB, JVM heap options, workload arguments after SECONDS)
KINDS = {
    "mixed": (40, ["-Xmx64m", "-Xms64m"], ["0", "2"]),
    "gc": (44, ["-Xmx16m", "-Xms16m", "-Xmn1m"], ["0", "0"]),
}
JDK_HOME: str | None = None


def tool(name: str) -> str:
    for home in (JDK_HOME, os.environ.get("JAVA_HOME")):
        if home and (Path(home) / "bin" / name).exists():
            return str(Path(home) / "bin" / name)
    found = shutil.which(name)
    if not found:
        sys.exit(f"error: {name} not found (give --jdk, set JAVA_HOME or put the JDK's bin/ "
                 f"on PATH)")
    return found


def jdk_feature() -> str:
    out = subprocess.run([tool("java"), "-version"], capture_output=True, text=True).stderr
    version = out.split('"')[1] if '"' in out else "unknown"
    return version.split(".")[0]


def make_recording(kind: str) -> Path:
    target_mb, heap, workload_args = KINDS[kind]
    path = OUT / f"profile-{kind}-{target_mb}mb-jdk{jdk_feature()}.jfr"
    if path.exists():
        return path
    OUT.mkdir(parents=True, exist_ok=True)
    classes = OUT / "classes"
    subprocess.run([tool("javac"), "-d", str(classes), "--release", "11", str(WORKLOAD)],
                   check=True)
    repo = OUT / f"repository-{kind}"
    shutil.rmtree(repo, ignore_errors=True)
    print(f"recording ~{target_mb} MB ({kind}) with settings=profile (once; cached as {path})"
          f" ...", flush=True)
    jvm = subprocess.Popen([tool("java"), *heap, "-XX:+UseG1GC",
                            f"-XX:FlightRecorderOptions=repository={repo}",
                            "-XX:StartFlightRecording=name=bench,settings=profile",
                            "-cp", str(classes), "Workload", "3600", *workload_args],
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


def measure(cmd: list[str], cwd: Path | None = None) -> tuple[float, float, float, int]:
    """(wall seconds, CPU seconds, peak RSS MiB, bytes written to stdout) of one child process.

    The output is read and counted here in 1 MiB blocks, never kept: Linux carries a process's
    peak RSS across exec, so a parent holding a big buffer when it forks would inflate every
    child's figure."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=cwd)
    out_bytes = 0
    while block := proc.stdout.read(1 << 20):
        out_bytes += len(block)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} exited with {proc.returncode}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out_bytes


def ours(path: Path, *options: str) -> list[str]:
    # Native helpers are built before timing (a first run would include the compile).
    return [sys.executable, "-m", "analysis", "jfr", str(path), "--json", *options]


def prepare(tree: Path) -> Path:
    """`tree` with its native helpers built and its Python compiled to bytecode."""
    subprocess.run([sys.executable, "-m", "analysis.read.jfr.native"], cwd=tree, check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([sys.executable, "-m", "compileall", "-q", "analysis"], cwd=tree,
                   check=True, stdout=subprocess.DEVNULL)
    return tree


def jdk(path: Path) -> list[str]:
    return [tool("jfr"), "print", "--json", "--stack-depth", "64", "--events",
            ",".join(sorted(EVENT_FIELDS)), str(path)]


def tree_of(rev: str, into: Path) -> Path:
    """A `git archive` of `rev` (the code before a change), prepared."""
    subprocess.run(f"git -C {REPO} archive {rev} | tar -x -C {into}", shell=True, check=True)
    return prepare(into)


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def main() -> int:
    global JDK_HOME
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kind", action="append", choices=sorted(KINDS),
                    help="recordings to time (repeatable; default: mixed and gc)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each; the median is shown")
    ap.add_argument("--before", metavar="REV", help="also time ours at git revision REV, "
                    "turn by turn")
    ap.add_argument("--jdk", metavar="JAVA_HOME", help="the JDK that records and prints")
    ap.add_argument("--jobs-rows", action="store_true",
                    help="also time ours with --jobs 1 and with --jobs 2")
    ap.add_argument("--record-only", action="store_true", help="make the recordings and stop")
    args = ap.parse_args()
    JDK_HOME = args.jdk
    kinds = args.kind or ["mixed", "gc"]
    recordings = []
    for kind in kinds:
        big = make_recording(kind)
        recordings += [first_chunks(big, 0.5), big] if kind == "mixed" else [big]
    if args.record_only:
        return 0
    prepare(REPO)
    with tempfile.TemporaryDirectory(prefix="jfr-before-") as tmp:
        before = tree_of(args.before, Path(tmp)) if args.before else None
        # who -> (working directory, options)
        sides = {"ours": (REPO, ()), **({"ours-j1": (REPO, ("--jobs", "1")),
                                         "ours-j2": (REPO, ("--jobs", "2"))}
                                        if args.jobs_rows else {}),
                 **({"before": (before, ())} if before else {})}
        rows = []
        for path in recordings:
            runs: dict[str, list] = {who: [] for who in [*sides, "jdk"]}
            loads = [load()]
            for turn in range(args.repeat):
                order = list(sides) if turn % 2 == 0 else list(sides)[::-1]
                for who in order:
                    tree, options = sides[who]
                    runs[who].append(measure(ours(path, *options), cwd=tree))
                runs["jdk"].append(measure(jdk(path)))
            loads.append(load())
            rows.append((path, runs, loads))
    med = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
    print(f"\n{'recording':40} {'size':>7} {'who':>7} {'wall':>7} {'CPU':>7} {'RSS':>6} "
          f"{'jfr print':>9} {'CPU':>7} {'wall x':>7} {'CPU x':>6}  load")
    for path, runs, loads in rows:
        mb = path.stat().st_size / 2**20
        j_wall = med([r[0] for r in runs["jdk"]])
        j_cpu = med([r[1] for r in runs["jdk"]])
        for who in [w for w in runs if w != "jdk"]:
            wall = med([r[0] for r in runs[who]])
            cpu = med([r[1] for r in runs[who]])
            rss = max(r[2] for r in runs[who])
            print(f"{path.name:40} {mb:5.1f}MB {who:>7} {wall:6.2f}s {cpu:6.2f}s {rss:4.0f}MB "
                  f"{j_wall:8.2f}s {j_cpu:6.2f}s {j_wall / wall:6.1f}x {j_cpu / cpu:5.1f}x  "
                  f"{loads[0]}->{loads[1]}")
    print(f"\nmedian of {args.repeat} runs each, one process per run (Python start-up and JVM "
          f"start-up included); JDK {jdk_feature()}. Target (issue 36): >= 10x on any "
          f"recording.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
