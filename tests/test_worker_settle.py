"""workers.settle: a pool worker freezes what its earlier tasks left alive; no other process
(a build without workers, a test session) ever freezes anything."""
from __future__ import annotations

import gc
import os

from analysis.pipeline import workers


def _frozen_after_settle() -> tuple[int, int]:
    kept = [[i] for i in range(1000)]     # what a task leaves alive: a cache's entries
    before = gc.get_freeze_count()
    workers.settle()
    after = gc.get_freeze_count()
    return len(kept), after - before


def test_a_pool_worker_freezes_what_its_tasks_left_alive():
    pool = workers.pool(1)
    try:
        kept, frozen = pool.submit(_frozen_after_settle).result(timeout=60)
        worker = pool.submit(os.getpid).result(timeout=60)
    finally:
        workers.stop(pool)
        pool.shutdown(wait=False)
        gc.unfreeze()       # (workers.pool froze this process's objects before forking)
    assert worker != os.getpid()
    assert frozen >= kept


def test_settle_outside_a_worker_freezes_nothing():
    assert not workers.IN_WORKER[0]
    _, frozen = _frozen_after_settle()
    assert frozen == 0
