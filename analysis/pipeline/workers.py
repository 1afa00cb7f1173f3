"""The build's worker processes, which must never outlive the build that started them.

A worker left running by a killed build kept writing outputs of inputs the next build no
longer had, then waited forever on a queue nobody writes to (issue 22). So each worker dies
with the build: on Linux the kernel kills it when its parent dies (PR_SET_PDEATHSIG), elsewhere
a thread of its own watches the parent. Ctrl-C is the build's to handle: the main process stops
the workers at once (stop), instead of each printing its own KeyboardInterrupt traceback.
"""
from __future__ import annotations

import ctypes
import gc
import importlib
import multiprocessing
import os
import signal
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor

PR_SET_PDEATHSIG = 1   # <linux/prctl.h>


def pool(workers: int) -> ProcessPoolExecutor:
    """A process pool of `workers` forked workers that die with this process."""
    # fork: workers start in milliseconds and inherit the imported modules; frozen, those
    # modules' objects are never scanned by the workers' garbage collector (charts: 0.17 ->
    # 0.11 s of collection a run, bench/perf/run_cost.py)
    gc.freeze()
    executor = ProcessPoolExecutor(max_workers=workers, initializer=start,
                                   initargs=(os.getpid(),),
                                   mp_context=multiprocessing.get_context("fork"))
    # The workers are forked now, with Ctrl-C held back until they ignore it: one arriving
    # while the pool starts would stop a worker before its `start` (a traceback of its own),
    # or the pool half-started (its thread never joinable). Held, it reaches this process
    # once the pool is whole.
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        executor.submit(os.getpid).result()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    return executor


# True in a pool's worker process (set by `start`)
IN_WORKER = [False]
# new containers between a task's young collections in a worker (CPython's default: 700)
YOUNG_COLLECTION_EVERY = 7000


def settle() -> None:
    """Called as a worker starts a task: what the tasks before it left alive (caches: parsed
    templates, the reused figure, font metrics) is collected once and frozen, so that the
    collections during this task scan only this task's objects. A full collection of a worker
    scanned all of it each time (~20 ms of CPU a run, bench/perf/run_cost.py). Frozen objects
    are still freed by reference counting; only a cycle among them would stay, and the
    collection just before the freeze has taken every cycle that was garbage then."""
    if IN_WORKER[0]:
        gc.collect()
        gc.freeze()
        # A young collection every 7,000 new containers, not 700: half a task's collection
        # time (~5 ms a run); with the collector off, the JFR readers' cycles held 50 MB more.
        gc.set_threshold(YOUNG_COLLECTION_EVERY, *gc.get_threshold()[1:])


def load_chart_code() -> None:
    """Import the chart renderer (matplotlib) in this worker, ahead of its first chart."""
    importlib.import_module("analysis.write.charts.render")


def start(parent: int) -> None:
    """A worker's first act: tie its life to `parent`'s; leave Ctrl-C to the parent."""
    IN_WORKER[0] = True
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    if not _die_with_parent_linux():
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    if os.getppid() != parent:   # the parent died before the line above took effect
        os._exit(1)


def _die_with_parent_linux() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0


def _watch_parent(parent: int, every_s: float = 0.5) -> None:
    while os.getppid() == parent:
        time.sleep(every_s)
    os._exit(1)


# set by the build's Ctrl-C handler (catch_ctrl_c), read at the runner's checkpoints
_CTRL_C = [False]


def catch_ctrl_c():
    """In the build's main process: Ctrl-C raises KeyboardInterrupt, as Python's own handler
    does, and is also remembered. Python drops an exception raised inside a weakref callback or
    a __del__ ("Exception ignored in ..."): a Ctrl-C landing in the import system's module-lock
    callback let a build run on to its end with status 0 (a CI run of tests/test_faults.py).
    `check_ctrl_c`, called at each step the build reports, raises it again. Returns the handler
    it replaced, for `release_ctrl_c`."""
    _CTRL_C[0] = False
    # (where Ctrl-C is ignored - a background job, nohup - the build stays deaf to it)
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        return None
    return signal.signal(signal.SIGINT, _on_ctrl_c)


def release_ctrl_c(previous) -> None:
    """Give back the handler `catch_ctrl_c` replaced, and forget the Ctrl-C it remembered: the
    build has raised it by now (Build.run checks before it returns), and a flag left set made
    the next build's first step in the same process raise it again (an xdist worker running
    tests/test_faults.py, then tests/test_build_state.py)."""
    _CTRL_C[0] = False
    if previous is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, previous)


def _on_ctrl_c(signum, frame):
    _CTRL_C[0] = True
    raise KeyboardInterrupt


def check_ctrl_c() -> None:
    """Raise KeyboardInterrupt if a Ctrl-C came and was swallowed where it landed."""
    if _CTRL_C[0]:
        raise KeyboardInterrupt


def stop(executor: ProcessPoolExecutor) -> None:
    """Kill the pool's workers now (a task half done leaves only a temporary file, which the
    next build removes: analysis/atomic.py), so that shutting the pool down does not wait for
    the tasks in hand."""
    for process in list((getattr(executor, "_processes", None) or {}).values()):
        try:
            process.kill()
        except (OSError, ValueError):   # already gone, or closed
            pass
