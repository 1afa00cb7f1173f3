"""workers.settle: a pool worker freezes what its earlier tasks left alive; no other process
(a build without workers, a test session) ever freezes anything."""
from __future__ import annotations

import gc
import os
import weakref

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



class _Node:
    """A cycle's member, weakly referable."""


def _collections_during_a_task() -> tuple[bool, bool, bool]:
    """(collector on during the task, its garbage cycle left until the next task's settle,
    freed by it)"""
    workers.settle()
    enabled = gc.isenabled()
    node = _Node()
    node.self = node
    ref = weakref.ref(node)
    del node
    kept = [[] for _ in range(20_000)]   # more new containers than a collection waits for
    left = ref() is not None
    del kept
    workers.settle()
    return enabled, left, ref() is None


def test_a_pool_worker_collects_between_tasks_not_during_them():
    pool = workers.pool(1)
    try:
        enabled, left, freed = pool.submit(_collections_during_a_task).result(timeout=60)
    finally:
        workers.stop(pool)
        pool.shutdown(wait=False)
        gc.unfreeze()
    assert not enabled and left and freed


def test_settle_outside_a_worker_leaves_the_collector_on():
    enabled, _, freed = _collections_during_a_task()
    assert enabled and freed and gc.isenabled()
