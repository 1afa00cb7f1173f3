"""A synthetic series (issue 12's evidence): VERSIONS versions x 2 systems x 4 loads x 3
repetitions, with two injected changes on top of ~5 % run-to-run noise:

- a 15 % p99 regression from version 12 on in `pool` at r200 (REGRESSION),
- a 30 % improvement from version 20 on in `virtual` at r100 (IMPROVEMENT).

Two forms:
- `cell_rows(seed)`: the cell table's rows directly, in memory (fast; the statistics tests);
- `write_corpus(root, seed)`: run folders with run.yml and .hlog files. The logs come from
  ../shared/oracle/genhlog (HdrHistogram's own HistogramLogWriter): one template per
  (system, load), each repetition's log that template with every recorded value multiplied by
  the repetition's factor (version effect x noise), re-encoded as Java encodes V2 payloads.

    python tests/series_gen.py OUT_DIR [--seed N]      (writes OUT_DIR/runs/...)
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
VERSIONS = 30
SYSTEMS = ("pool", "virtual")
LOADS = {"r50": 50, "r100": 100, "r200": 200, "r400": 400}
REPETITIONS = 3
NOISE = 0.05                  # sd of log(factor) from run to run: ~5 %
REGRESSION = ("pool", "r200", 12, 1.15)      # (system, load, first version, factor)
IMPROVEMENT = ("virtual", "r100", 20, 0.70)
CHANGES = (REGRESSION, IMPROVEMENT)
BASE_P99_MS = {"pool": 1.5, "virtual": 1.2}  # scaled by load below


def version_name(v: int) -> str:
    return f"0.{v}"           # 0.9 < 0.10: natural order, not text order


def factor(rng: np.random.Generator, system: str, load: str, v: int, noise: float,
           changes=CHANGES) -> float:
    effect = 1.0
    for c_sys, c_load, c_version, c_factor in changes:
        if (system, load) == (c_sys, c_load) and v >= c_version:
            effect *= c_factor
    return effect * float(np.exp(rng.normal(0.0, noise)))


def cell_rows(seed: int, *, versions: int = VERSIONS, noise: float = NOISE, changes=CHANGES,
              series: str = "synthetic", run_prefix: str = "v") -> list[dict]:
    """The cell table's rows of the whole series (p50/p99/max scaled alike)."""
    rng = np.random.default_rng(seed)
    rows = []
    for v in range(1, versions + 1):
        for load, rate in LOADS.items():
            for system in SYSTEMS:
                for rep in range(1, REPETITIONS + 1):
                    f = factor(rng, system, load, v, noise, changes)
                    p99 = BASE_P99_MS[system] * (1 + rate / 400) * f
                    rows.append({"run": f"{run_prefix}{v:03d}", "series": series,
                                 "version": version_name(v), "date": f"2026-10-{1 + v // 2:02d}",
                                 "scenario": None, "system": system, "load": load,
                                 "repetition": rep, "offered_rate": float(rate),
                                 "count": 1000, "throughput_rps": float(rate),
                                 "p50_ms": p99 / 3, "p99_ms": p99, "max_ms": p99 * 2,
                                 "saturated": False, "host_busy": False, "censored": False})
    return rows


# --- on disk, through genhlog ---------------------------------------------------------------

MANIFEST = """\
title: "Synthetic series, version {version} (tests/series_gen.py, not a measurement)"
date: {date}
description: "Synthetic run for the history tests: genhlog logs scaled by injected factors."
tags: [synthetic]
series: synthetic
version: "{version}"
value_unit: us
systems:
  - {{id: pool, label: "Pool"}}
  - {{id: virtual, label: "Virtual threads"}}
load_points:
{load_points}
cells:
{cells}
"""


def reduced(work: Path, rows: list[dict]):
    """The build's reduce step (write/corpus_pages.reduce) over `rows` (cell_rows'), each
    run's rows written as its cell table under `work` first, as a build leaves them."""
    from analysis.corpus import cell_table
    from analysis.paths import run_cells_csv_path
    from analysis.write.corpus_pages import reduce
    df = cell_table.frame(rows)
    for run_id, run_rows in df.groupby("run"):
        path = work / run_cells_csv_path(run_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(cell_table.to_csv(run_rows))
    return reduce(work, sorted(df["run"].unique()))


def templates(folder: Path, oracle: Path, intervals: int = 4, per_s: int = 500) -> dict:
    """One genhlog log per (system, load), read back as interval histograms."""
    from analysis.read.hdr.log import read_hlog
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for i, load in enumerate(LOADS):
        for j, system in enumerate(SYSTEMS):
            path = folder / f"{system}-{load}.hlog"
            if not path.is_file():
                subprocess.run([str(oracle / "genhlog"), str(path), str(intervals), str(per_s),
                                str(1000 + 10 * i + j), "us", "plain"], check=True,
                               capture_output=True)
            out[(system, load)] = read_hlog(path).select(None)
    return out


def scaled_log(intervals, f: float) -> list[str]:
    """The log lines of `intervals` with every value multiplied by f."""
    from analysis.read.hdr.histogram import Histogram
    from tests.helpers import encode, log_line
    lines = []
    for iv in intervals:
        h = iv.histogram
        values = np.rint(h.layout.median_value_at(h.indices) * f).astype(np.int64)
        scaled = Histogram.from_values(h.layout, values, h.counts)
        lines.append(log_line(encode(scaled), iv.start_s))
    return lines


def write_corpus(root: Path, oracle: Path, seed: int = 1, versions: int = VERSIONS) -> list[str]:
    """Run folders root/runs/v001.. of the series; returns the run ids."""
    from tests.helpers import write_log
    base = templates(root / "templates", oracle)
    rng = np.random.default_rng(seed)
    ids = []
    load_points = "\n".join(f"  - {{id: {lp}, offered_rate: {rate}, duration_s: 4}}"
                            for lp, rate in LOADS.items())
    for v in range(1, versions + 1):
        run_id = f"v{v:03d}"
        run = root / "runs" / run_id
        cells = []
        for load in LOADS:
            for system in SYSTEMS:
                (run / system).mkdir(parents=True, exist_ok=True)
                for rep in range(1, REPETITIONS + 1):
                    rel = f"{system}/{load}-{rep}.hlog"
                    write_log(run / rel, scaled_log(base[(system, load)],
                                                    factor(rng, system, load, v, NOISE)))
                    cells.append(f"  - {{system: {system}, load: {load}, repetition: {rep}, "
                                 f"hlog: {rel}}}")
        (run / "run.yml").write_text(MANIFEST.format(
            version=version_name(v), date=f"2026-10-{1 + v // 2:02d}",
            load_points=load_points, cells="\n".join(cells)))
        ids.append(run_id)
    return ids


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--versions", type=int, default=VERSIONS)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    oracle = REPO.parent / "shared" / "oracle"
    print(f"{len(write_corpus(args.out, oracle, args.seed, args.versions))} runs in "
          f"{args.out / 'runs'}")
