"""The analysis side of issue 36's second row: adding one run to a kept scale corpus, then
`python -m analysis build --runs runs` (what `make site` runs first), with this tree's code and,
turn by turn, with the code before a change. Jekyll is not run (scripts/, jekyll36's side).

    .venv/bin/python bench/perf/site_scale.py --runs 1000 --keep DIR      (once: the corpus)
    .venv/bin/python bench/perf/add_run_cost.py DIR [--before SRC] [--turns 2] [--corpus-step N]

--before SRC: a tree of the code before (`git archive main | tar -x -C SRC`). Each code gets its
own copy of the corpus (DIR for this tree, DIR-before for SRC, `cp -al`: the runs' files and
outputs hard-linked; every output is replaced by a rename, so neither copy writes into the
other's), because the runs' cache key holds the code digest: each copy is first rebuilt by its
own code once (not timed), then the turns alternate (this, before, before, this, ...). A turn:
add one run (site_scale.add_run), build; a no-change build; remove the run, build. Each build's
wall and CPU seconds (its processes and their workers), the load average before and after, and
its phases (the build's last progress line) are printed. Both trees are compiled to bytecode
first: where PYTHONDONTWRITEBYTECODE is set every build would compile the modules it imports
again, which no user's second build does.

--corpus-step N: then N turns of each code of the reduce step alone (corpus_step_cost.py: one
other run's tables written again), its CPU seconds: the step's share of an add, without the
added run's own analysis, whose spread on a shared machine is larger than the step.
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import site_scale  # noqa: E402  (add_run: the corpus's way of making a run)

REPO = Path(__file__).resolve().parents[2]
PY = sys.executable


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def build(site: Path, source: Path) -> tuple[float, float, str]:
    """(wall s, CPU s, the build's last progress line) of one analysis build of `site`."""
    env = {**os.environ, "PYTHONPATH": str(source)}
    cpu, started = children_cpu(), time.perf_counter()
    proc = subprocess.run([PY, "-m", "analysis", "build", "--runs", "runs"], cwd=site, env=env,
                          capture_output=True, text=True)
    wall, cpu = time.perf_counter() - started, children_cpu() - cpu
    if proc.returncode != 0:
        sys.stdout.write(proc.stderr[-3000:])
        raise SystemExit(f"error: the build of {site} with {source} exited {proc.returncode}")
    last = [line for line in proc.stderr.splitlines() if line.startswith("built ")]
    return wall, cpu, last[-1] if last else ""


def phases(line: str) -> str:
    """The phases of the build's last line, without its run counts."""
    return re.sub(r"^built .*? in [0-9.]+ s; ", "", line)


def next_id(site: Path) -> int:
    ids = [int(p.name.split("-")[1]) for p in (site / "runs").iterdir()
           if p.name.startswith("scale-")]
    return max(ids, default=0) + 1


def turn(name: str, site: Path, source: Path) -> None:
    run_dir = site / "runs" / site_scale.add_run(site, next_id(site))
    try:
        for step in ("add one run", "no-change", "remove it"):
            if step == "remove it":
                shutil.rmtree(run_dir)
            before = site_scale.load()
            wall, cpu, line = build(site, source)
            print(f"{name:<8} {step:<12} CPU {cpu:5.2f} s  wall {wall:5.2f} s  "
                  f"[{before} -> {site_scale.load()}]\n{'':<21} {phases(line)}", flush=True)
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, help="a corpus kept by site_scale.py --keep")
    parser.add_argument("--before", type=Path, metavar="SRC",
                        help="a tree of the code before, measured turn by turn on a copy")
    parser.add_argument("--turns", type=int, default=2, help="turns of each code (default 2)")
    parser.add_argument("--corpus-step", type=int, default=0, metavar="N",
                        help="then N turns of each code of the reduce step alone")
    args = parser.parse_args()
    site = args.corpus.resolve()
    if not (site / "runs").is_dir():
        raise SystemExit(f"error: {site} holds no runs/: build one with site_scale.py --keep")
    sides = [("this", site, REPO)]
    if args.before:
        copy = site.with_name(site.name + "-before")
        if not copy.exists():
            subprocess.run(["cp", "-al", str(site), str(copy)], check=True)
        # its own lock file: a hard-linked one would be held by the other copy's builds
        lock = Path(".cache", "loadcurve", "build.lock")
        if (copy / lock).exists() and (site / lock).exists() \
                and (copy / lock).samefile(site / lock):
            (copy / lock).unlink()
        sides.append(("before", copy, args.before.resolve()))
    for name, corpus, source in sides:
        subprocess.run([PY, "-m", "compileall", "-q", str(source / "analysis")], check=True,
                       stdout=subprocess.DEVNULL)
        wall, cpu, line = build(corpus, source)   # each copy rebuilt by its own code once
        print(f"{name:<8} {'warm-up':<12} CPU {cpu:5.2f} s  wall {wall:5.2f} s  ({line})",
              flush=True)
    for i in range(args.turns):   # (both orders: this, before, before, this, ...)
        for name, corpus, source in (sides if i % 2 == 0 else sides[::-1]):
            turn(name, corpus, source)
    for i in range(args.corpus_step):
        for name, corpus, source in (sides if i % 2 == 0 else sides[::-1]):
            before = site_scale.load()
            out = subprocess.run([PY, str(Path(__file__).with_name("corpus_step_cost.py")),
                                  str(corpus)], env={**os.environ, "PYTHONPATH": str(source)},
                                 capture_output=True, text=True)
            print(f"{name:<8} {out.stdout.strip() or out.stderr[-500:]}  "
                  f"[{before} -> {site_scale.load()}]", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
