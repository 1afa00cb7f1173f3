"""Speed of the build's corpus step (issue 12): the cell table and the history of 200 runs.

    .venv/bin/python bench/perf/corpus_history.py [--runs 200]

Targets: it adds < 30 s to a full build and < 2 s to a no-change build. The 200 runs are one
series of 200 versions x 2 systems x 4 loads x 3 repetitions (tests/series_gen.py, in memory)
written as the per-run tables the build's analyse stage writes; then, timed:
1. the analyse stage's extra work per run (its rows -> DataFrame -> CSV), x 200;
2. the reduce step on a fresh site (cell table, history with 8 charts, regressions data);
3. the reduce step again with nothing changed (what a build pays when one run changed but
   not the others: every table is read again);
4. what a no-change build of those 200 runs pays for the corpus step: the reduce step's
   input check (analysis/pipeline/corpus_cache.py), which skips it: pandas is not imported;
5. `import pandas` in a fresh interpreter.
Everything goes under bench/perf/out/corpus/ (gitignored).
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from analysis.corpus import cell_table  # noqa: E402
from analysis.pipeline import corpus_cache  # noqa: E402
from analysis.pipeline.cache import code_version  # noqa: E402
from analysis.write.corpus_pages import reduce  # noqa: E402
from analysis.paths import run_cells_csv_path  # noqa: E402
from tests import series_gen  # noqa: E402

OUT = REPO / "bench" / "perf" / "out" / "corpus"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    shutil.rmtree(OUT, ignore_errors=True)
    rows = series_gen.cell_rows(1, versions=args.runs)
    by_run: dict[str, list[dict]] = {}
    for row in rows:
        by_run.setdefault(row["run"], []).append(row)

    started = time.perf_counter()
    for run_id, run_rows in by_run.items():
        path = OUT / run_cells_csv_path(run_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(cell_table.to_csv(cell_table.frame(run_rows)))
    per_run = time.perf_counter() - started
    print(f"{'per-run tables (' + str(len(by_run)) + ' runs, analyse stage)':<48} {per_run:7.2f} s")

    for name in ("reduce, fresh site (full build)", "reduce, nothing changed"):
        started = time.perf_counter()
        step = reduce(OUT, sorted(by_run))
        seconds = time.perf_counter() - started
        print(f"{name:<48} {seconds:7.2f} s   ({step.drawn} charts drawn, "
              f"{len(step.errors)} errors)")

    cache = OUT / ".cache"
    code = code_version()
    digest = corpus_cache.inputs_digest(OUT, sorted(by_run), code)
    # as the build records it (analysis/pipeline/runner.py's _reduce)
    corpus_cache.record(cache, OUT, digest, step.written, code, step.memo, step.inputs)
    started = time.perf_counter()
    again = corpus_cache.inputs_digest(OUT, sorted(by_run), code)
    skipped = corpus_cache.up_to_date(cache, OUT, again)
    seconds = time.perf_counter() - started
    print(f"{'no-change build: the corpus input check':<48} {seconds:7.2f} s   "
          f"(skipped: {skipped})")
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import pandas"], check=True)
    print(f"{'import pandas (fresh interpreter)':<48} {time.perf_counter() - started:7.2f} s")
    size = (OUT / "assets/data/cells.csv").stat().st_size
    print(f"{'assets/data/cells.csv':<48} {size / 1e6:7.2f} MB ({len(rows):,} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
