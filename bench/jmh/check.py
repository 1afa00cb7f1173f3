"""Check a JMH run of bench/jmh/run.sh with the analysis's JMH reader (used by bench/test.sh).

For RUN_DIR/ring.json and RUN_DIR/pipeline.json: the reader reads the file without warnings;
every benchmark of the suite is there (the ring's four kinds of actor; the pipeline's variants,
mapAsync at parallelism 1, 4 and 16); every score is a positive number in the suite's unit;
each result has as many per-fork means as JMH's forks setting says; `-prof gc`'s
gc.alloc.rate.norm is there. Prints one line per check and closes with 'N passed, N failed';
exit status 1 when any check failed.

usage: python bench/jmh/check.py RUN_DIR
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from analysis.errors import LoadcurveError  # noqa: E402  (the path is set just above)
from analysis.read.jmh import read_jmh  # noqa: E402

SUITES = {
    "ring": ("us/op", {"platformThreads", "virtualThreads", "executorActors", "pekkoActors"}),
    "pipeline": ("ops/s", {"fused", "asyncBoundaries", "mapAsync", "batched", "javaStream"}),
}


def check_suite(path: Path, unit: str, methods: set[str]) -> list[tuple[str, bool, str]]:
    try:
        jmh = read_jmh(path)
    except (LoadcurveError, OSError) as exc:
        return [(f"{path.name}: the reader reads it", False, str(exc))]
    results = jmh.results
    found = {r.benchmark.rsplit(".", 1)[-1] for r in results}
    bad_scores = [r.benchmark for r in results
                  if not (r.score is not None and math.isfinite(r.score) and r.score > 0)]
    fork_counts = [r.benchmark for r in results if len(r.forks) != r.settings.forks]
    no_gc = [r.benchmark for r in results if "gc.alloc.rate.norm" not in r.secondary]
    parallelism = sorted(int(r.params["parallelism"]) for r in results
                         if r.benchmark.endswith(".mapAsync"))
    checks = [
        (f"{path.name}: read without warnings", not jmh.warnings, "; ".join(jmh.warnings)),
        (f"{path.name}: every benchmark present", found == methods,
         f"missing {sorted(methods - found)}, unexpected {sorted(found - methods)}"),
        (f"{path.name}: every score positive, in {unit}",
         not bad_scores and {r.unit for r in results} == {unit},
         f"bad scores {bad_scores}, units {sorted({str(r.unit) for r in results})}"),
        (f"{path.name}: one per-fork mean per fork", not fork_counts, ", ".join(fork_counts)),
        (f"{path.name}: -prof gc's gc.alloc.rate.norm", not no_gc, ", ".join(no_gc)),
    ]
    if "mapAsync" in methods:
        checks.append((f"{path.name}: mapAsync at parallelism 1, 4, 16", parallelism == [1, 4, 16],
                       str(parallelism)))
    return checks


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    run_dir = Path(argv[0])
    passed = failed = 0
    for suite, (unit, methods) in SUITES.items():
        for name, ok, detail in check_suite(run_dir / f"{suite}.json", unit, methods):
            print(("ok   " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
            passed, failed = passed + ok, failed + (not ok)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
