"""The reduce step alone (write/corpus_pages.reduce), as a build in which another run of the
corpus changed runs it: the newest scale run's cells.csv and spectra.csv are written again (the
same bytes, a new inode and mtime, as its build would write them), then the step runs with what
the last build kept (pipeline/corpus_cache.py), as runner._reduce calls it, and records it.
Prints its CPU and wall seconds. Run with the code to measure on PYTHONPATH, in no build's
tree while a build runs (add_run_cost.py --corpus-step runs it turn by turn).

    PYTHONPATH=SRC python bench/perf/corpus_step_cost.py DIR
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

from analysis.pipeline import corpus_cache
from analysis.pipeline.cache import CACHE_DIR, code_version
from analysis.write.corpus_pages import reduce


def main() -> int:
    site = Path(sys.argv[1]).resolve()
    ids = sorted(p.name for p in (site / "runs").iterdir() if p.is_dir())
    changed = max(i for i in ids if i.startswith("scale-"))
    for name in ("cells.csv", "spectra.csv"):
        path = site / "assets" / "data" / changed / name
        data = path.read_bytes()
        path.unlink()
        path.write_bytes(data)
    code, cache = code_version(), site / CACHE_DIR
    last = corpus_cache.last(cache)
    # (the code before the comparison memo kept two things, and took neither code nor kept)
    memo = {"code": code, "kept": last[2]} if len(last) == 3 else {}
    cpu, wall = time.process_time(), time.perf_counter()
    step = reduce(site, ids, redraw=last[0] != code, known=last[1], **memo)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    corpus_cache.record(cache, site, "", step.written, code, step.memo,
                        *([step.inputs] if memo else []))
    print(f"corpus step CPU {cpu:.3f} s  wall {wall:.3f} s  ({step.drawn} charts drawn, "
          f"{len(step.errors)} errors)")
    return 1 if step.errors else 0


if __name__ == "__main__":
    sys.exit(main())
