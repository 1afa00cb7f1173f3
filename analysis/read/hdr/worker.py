"""When hgrm reads a log with a second core (processor.py, ahead.py), and the packed form of a
group of plain payloads (its counts bodies joined: what the fused decoder takes)."""
from __future__ import annotations

import os

import numpy as np

from analysis.read.hdr.histogram import layout_for
from analysis.read.hdr.payload import V2_MAX_WORD_SIZE, DecodedPayload

# Inputs at least this large are read with a second core when parallel=None (~7,000 intervals
# of 2,000 values). Set for the second process hgrm forked before ahead.py's threads, whose
# start-up costs far less; not measured again for them.
PARALLEL_MIN_BYTES = 8 << 20
# No second core when the 1-minute load average leaves less than this much of a CPU free.
# Measured for the forked second process (on 2 CPUs at load ~7, the 24-hour log, in one
# process 4.7-7.0 s wall, with it 6.6-9.5 s); kept for the threads.
BUSY_MARGIN = 0.5


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return 0.0


def _runnable_others() -> float | None:
    """Threads runnable at this instant besides this one (/proc/loadavg's fourth field counts
    the reader too), or None where the kernel does not say."""
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[3].split("/")[0]) - 1
    except (OSError, ValueError, IndexError):
        return None


def _busy() -> float:
    """The CPUs other work takes: the 1-minute load average, unless fewer threads are runnable
    right now. The average lags: a job that ended seconds ago (HistogramLogProcessor just
    before hgrm in bench/perf/hgrm_vs_hlp.py's turns, ~17 s of 2+ threads) still holds it
    near or over 1.5 on 2 CPUs, and the second core was refused on a machine with both CPUs free."""
    now = _runnable_others()
    return _load() if now is None else min(_load(), now)


def use_worker(path: str, text, parallel: bool | None) -> bool:
    """Whether hgrm reads the log with a second thread decoding ahead (ahead.py)."""
    if parallel is not None:
        return bool(parallel)
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    if cpus < 2:
        return False
    if _busy() > cpus - BUSY_MARGIN:
        return False
    try:
        size = len(text) if text is not None else os.path.getsize(path)
    except OSError:
        return False
    return size >= PARALLEL_MIN_BYTES


def pack_payloads(payloads):
    """A group of plain payloads (every line of a normal log: V2 counts ending on a whole
    varint, one layout, no DoubleHistogram) as (layout parameters, ratio, every counts body
    joined, their lengths); None for any other group. The fused and the batch decoder take
    the bodies joined."""
    if not payloads:
        return None
    first = payloads[0]
    layout, ratio = first.layout, first.double_ratio
    if not all(p.layout is layout and p.word_size == V2_MAX_WORD_SIZE and
               p.double_config is None and p.double_ratio == ratio and
               (not p.counts_bytes or p.counts_bytes[-1] < 0x80) for p in payloads):
        return None
    bodies = [p.counts_bytes for p in payloads]
    lengths = np.fromiter(map(len, bodies), np.int64, len(bodies))
    return ((layout.lowest_discernible_value, layout.highest_trackable_value,
             layout.significant_digits), ratio, b"".join(bodies), lengths)


def unpack_payloads(packed):
    """pack_payloads' group -> (payloads, raws, errors, joined) for batch.decode_batch: the
    rows share one DecodedPayload whose counts are in `joined` = (bodies joined, lengths)."""
    params, ratio, joined, lengths = packed
    payload = DecodedPayload(layout_for(*params), V2_MAX_WORD_SIZE, b"", ratio)
    n = lengths.size
    return [payload] * n, [None] * n, {}, (joined, lengths)
