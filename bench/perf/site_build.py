"""Speed of `python -m analysis build`: the demo corpus, a no-change rebuild, and a synthetic
corpus of 200 runs x 2 systems x 6 load points.

    .venv/bin/python bench/perf/site_build.py [--runs 200] [--skip-synthetic] [--skip-demo]

Targets (issue 3): a second build with no change spends < 1 s; the synthetic corpus builds in
< 5 min with _data/ < 5 MB. Everything is generated under bench/perf/out/ (gitignored); the
synthetic .hlog files come from ../shared/oracle/genhlog (HdrHistogram's own writer), a few
templates hard-linked into every run, so the analysis still reads and draws every run.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "bench" / "perf" / "out"
ORACLE = Path(os.environ.get("LOADCURVE_SHARED", REPO.parent / "shared")) / "oracle"
PY = sys.executable
# load point id -> (offered rate, samples/s recorded by the pool, by virtual threads)
LOAD_POINTS = {"r50": (50, 50, 50), "r100": (100, 100, 100), "r200": (200, 200, 200),
               "r400": (400, 300, 400), "r800": (800, 300, 800), "r1600": (1600, 300, 1500)}
INTERVALS = 30


def cpu_of_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def build(site: Path, *args: str) -> tuple[float, subprocess.CompletedProcess]:
    """Wall time of one build; its CPU time (build + workers) is attached as out.cpu_s."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cpu = cpu_of_children()
    started = time.perf_counter()
    out = subprocess.run([PY, "-m", "analysis", "build", "--runs", "runs", *args], cwd=site,
                         capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - started
    out.cpu_s = cpu_of_children() - cpu
    return seconds, out


def size_of(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def report(name: str, seconds: float, out: subprocess.CompletedProcess) -> None:
    last = out.stderr.strip().splitlines()[-1:] or [""]
    # CPU / 2: what the build would take on this machine's 2 cores with nothing else running
    print(f"{name:<44} {seconds:8.2f} s   cpu {out.cpu_s:8.2f} s   exit {out.returncode}   "
          f"{last[0]}")
    if out.returncode != 0:
        print(out.stderr[-2000:], file=sys.stderr)


def demo() -> None:
    runs = [p for p in sorted((REPO / "runs").iterdir()) if (p / "run.yml").is_file()] \
        if (REPO / "runs").is_dir() else []
    if not runs:
        print("demo corpus: no runs/*/run.yml yet; skipped")
        return
    site = OUT / "demo"
    shutil.rmtree(site, ignore_errors=True)
    for run in runs:
        shutil.copytree(run, site / "runs" / run.name,
                        ignore=shutil.ignore_patterns(".*"))
    seconds, out = build(site, "-q")
    report(f"demo corpus ({len(runs)} runs), first build", seconds, out)
    seconds, out = build(site)
    report("demo corpus, no-change rebuild (process)", seconds, out)


def templates() -> dict[tuple[str, str], Path]:
    """One .hlog per (system, load point), written once by the oracle generator."""
    folder = OUT / "templates"
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for i, (load, (_, pool_rate, virtual_rate)) in enumerate(LOAD_POINTS.items()):
        for j, (system, rate) in enumerate((("pool", pool_rate), ("virtual", virtual_rate))):
            path = folder / f"{system}-{load}.hlog"
            if not path.is_file():
                subprocess.run([str(ORACLE / "genhlog"), str(path), str(INTERVALS), str(rate),
                                str(100 + 10 * i + j), "us", "plain"], check=True)
            out[(system, load)] = path
    return out


MANIFEST = """\
title: "Synthetic run {n} of {total} (bench/perf, not a measurement)"
date: 2026-11-22
description: "Synthetic corpus for the site-build benchmark; .hlog files from the oracle generator."
tags: [synthetic]
value_unit: us
service_time_ms: 5
systems:
  - {{id: pool, label: "Platform pool (2 threads)", concurrency_limit: 2}}
  - {{id: virtual, label: "Virtual threads"}}
load_points:
{load_points}
load_generator: {{model: open, timeout_s: 15, connections: 400}}
"""


def synthetic(count: int) -> None:
    site = OUT / "synthetic"
    shutil.rmtree(site, ignore_errors=True)
    files = templates()
    load_points = "\n".join(f"  - {{id: {lp}, offered_rate: {rate}, clients: 10, "
                            f"duration_s: {INTERVALS}}}" for lp, (rate, _, _) in LOAD_POINTS.items())
    for n in range(count):
        run = site / "runs" / f"synth-{n:03d}"
        for (system, load), src in files.items():
            (run / system).mkdir(parents=True, exist_ok=True)
            os.link(src, run / system / f"{load}.hlog")
        (run / "run.yml").write_text(MANIFEST.format(n=n + 1, total=count,
                                                     load_points=load_points))
    seconds, out = build(site, "-q")
    report(f"synthetic {count} runs x 2 systems x 6 loads", seconds, out)
    data_bytes = size_of(site / "_data")
    print(f"{'  _data/ size':<44} {data_bytes / 1e6:8.2f} MB ({data_bytes:,} bytes)")
    print(f"{'  assets/ size':<44} {size_of(site / 'assets') / 1e6:8.2f} MB")
    seconds, out = build(site)
    report("synthetic, no-change rebuild (process)", seconds, out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="synthetic runs (default 200)")
    parser.add_argument("--skip-synthetic", action="store_true")
    parser.add_argument("--skip-demo", action="store_true")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    print(f"{'benchmark':<44} {'wall':>10}   {'cpu (build + workers)':>14}")
    if not args.skip_demo:
        demo()
    if not args.skip_synthetic:
        synthetic(args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
