"""Whether to read ahead in a thread (see `log.iter_batches`): a second thread of this process
splits the lines and inflates the payloads one group ahead of the caller, which adds them up
and prints. Both stages spend most of their time in compiled code that runs without the GIL
(ISA-L or zlib's inflate, and _native.c's kernels through ctypes), so the two threads overlap
on two cores without copying a group between processes."""
from __future__ import annotations

import os

# Inputs at least this large are read with a second thread when parallel=None (~7,000
# intervals of 2,000 values); below it there is too little to overlap.
PARALLEL_MIN_BYTES = 8 << 20
# No second thread when the 1-minute load average leaves less than this much of a CPU free:
# the two threads would then wait for each other (and for the GIL) on a core someone else
# holds. (Measured with the read-ahead process this replaced, on 2 CPUs at load ~7, the
# 24-hour log run alternately: in one process 4.7-7.0 s wall, with the second 6.6-9.5 s.)
BUSY_MARGIN = 0.5


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return 0.0


def use_worker(path: str, text, parallel: bool | None) -> bool:
    """Whether to read ahead in a thread: `parallel` True or False decides; None decides by
    the input (a file large enough), the CPUs this process may use and the load on them.
    Lines given as text (standard input) are split by the Python line parser, which holds
    the GIL throughout: a thread reading ahead then mostly waits for the caller's (measured
    before the compiled line splitter: 1.5x slower than one thread). So are a file's
    without the compiled kernels."""
    if parallel is not None:
        return bool(parallel)
    from analysis.read.hdr import native
    if text is not None or native.get() is None:
        return False
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    if cpus < 2 or _load() > cpus - BUSY_MARGIN:
        return False
    try:
        size = os.path.getsize(path)
    except OSError:
        return False
    return size >= PARALLEL_MIN_BYTES
