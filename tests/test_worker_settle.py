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


def _collections_during_a_task(new_containers: int) -> tuple[int, bool]:
    """(young collections while a task makes `new_containers` containers, the task's garbage
    cycle freed by the next task's settle)"""
    workers.settle()
    young = []
    count = lambda phase, info: young.append(1) if phase == "start" and info["generation"] == 0 \
        else None
    gc.callbacks.append(count)
    try:
        node = _Node()
        node.self = node
        ref = weakref.ref(node)
        del node
        kept = [[] for _ in range(new_containers)]
        del kept
    finally:
        gc.callbacks.remove(count)
    workers.settle()
    return len(young), ref() is None


def test_a_pool_worker_collects_young_objects_10_times_less_often():
    pool = workers.pool(1)
    try:
        few, freed = pool.submit(_collections_during_a_task, 5_000).result(timeout=60)
        many, _ = pool.submit(_collections_during_a_task, 50_000).result(timeout=60)
    finally:
        workers.stop(pool)
        pool.shutdown(wait=False)
        gc.unfreeze()
    assert few == 0 and freed       # (CPython's default: a collection every 700)
    assert 1 <= many <= 50_000 // workers.YOUNG_COLLECTION_EVERY + 1    # but it collects


def test_settle_outside_a_worker_leaves_the_collector_as_it_is():
    threshold = gc.get_threshold()
    young, _ = _collections_during_a_task(5_000)
    assert young >= 5_000 // threshold[0] - 1 and gc.get_threshold() == threshold
