"""Per-request samples -> HdrHistogram intervals, by the rules of the harness's `.hlog` (issue 23).

A reader's `RequestSamples` become what `read_hlog` gives for a log the bench harness wrote, so
the rest of the pipeline (aggregate.interval_series, histogram_stats, percentile_spectrum) takes
them unchanged:

- one interval per second of the request's *send* timestamp: second k holds the requests sent
  in [k, k+1) s, counted in whole seconds of the Unix epoch (`epoch` files) or of the file's own
  zero. Every second from the first request's to the last one's has its interval, empty or not
  (a stall shows as seconds with nothing sent);
- each interval is what HdrHistogram's auto-resizing `new Histogram(3)` holds after
  `recordValue` of its latencies (3 significant digits, lowest discernible value 1): the same
  counts, and the same highest trackable value in its header (2 until a value needs more);
- per second, the untagged interval holds the answered requests (`ok` and not timed out), tag
  `error` the failed ones that did not time out, tag `timeout` the timed-out ones, at the latency
  the tool recorded for them. A tag no request of the file has gets no lines;
- values are in `unit` (default: the file's native unit, where the tool's numbers are whole).
  In the native unit or a finer one the conversion is exact; in a coarser one (ms for a file in
  us) a value is rounded half up to a whole unit (1.5 ms -> 2, 2.5 ms -> 3).

Interval.line is 0: these intervals come from no file line.

Options: a window (`skip_s`, `duration_s`) keeps the requests sent in [t0 + skip_s, t0 + skip_s
+ duration_s), t0 the first request's send time, and reports how many fell before and after it;
`expected_interval_ms` adds HdrHistogram's coordinated-omission correction
(`recordValueWithExpectedInterval`: beside a value v > E also v - E, v - 2E, ... down to E) into
a second set of intervals, `Recording.corrected`, always beside the raw ones, never instead.

Vectorised and in chunks, no loop over samples: each sample's second, class and counts index
are counted in bulk (_KeyCounter), and the correction's extra values generated a few million
at a time.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from analysis.errors import ResultsError
from analysis.read.hdr.histogram import Histogram, Layout, layout_for, sum_histograms
from analysis.read.hdr.lines import Interval
from analysis.read.loadtools.results import NS_PER_UNIT, UNITS, RequestSamples

# The untagged, error and timeout classes, in the order their lines are written per second.
TAGS = (None, "error", "timeout")
ANSWERED, ERROR, TIMEOUT = range(3)
# `new Histogram(3)` in Java: lowest discernible value 1, highest trackable 2, auto-resizing.
JAVA_LAYOUT = layout_for(1, 2, 3)
INDEX_BITS = 16                   # every counts index of JAVA_LAYOUT fits: 54 * 1024 < 2**16
# Samples per vectorised step: the temporaries of 2**17 stay in cache. Measured with
# bench/perf/record_speed.py (10 million samples, us): 2**16 to 2**18 alike, 2**20 1.3x slower.
CHUNK = 1 << 17
# The coordinated-omission correction records v // E - 1 extra values per value v: a wrong unit
# or expected interval makes that billions. Beyond this many (about 15 s of work at the ~35
# million a second measured) the import stops and says why.
MAX_CORRECTION_VALUES = 500_000_000
CORRECTION_CHUNK = 1 << 22        # extra values generated per step


@dataclass
class Recording:
    """The intervals of one file's samples and what was counted on the way."""

    intervals: list[Interval]          # per second: untagged, then error, then timeout
    unit: str                          # the unit the histogram values are in
    requests: int                      # requests kept (inside the window)
    answered: int
    errors: int                        # failed, not timed out
    timed_out: int
    first_ms: float                    # send time of the first and last request kept
    last_ms: float
    duration_s: float                  # (last_ms - first_ms) / 1000
    epoch: bool
    window: tuple[float, float | None] | None = None   # (skip_s, duration_s) as given
    cut_before: int = 0                # requests sent before the window
    cut_after: int = 0                 # requests sent after it
    expected_interval: int | None = None   # the correction's E, in `unit`
    corrected: list[Interval] | None = None
    correction_values: int = 0         # extra values the correction recorded

    def merged(self, tag: str | None = None, corrected: bool = False) -> Histogram:
        """All intervals of `tag` added as HistogramLogProcessor adds them."""
        chosen = [iv.histogram for iv in (self.corrected if corrected else self.intervals)
                  if iv.tag == tag]
        return sum_histograms(chosen) if chosen else Histogram.empty(JAVA_LAYOUT)


def record_samples(samples: RequestSamples, unit: str | None = None, *,
                   skip_s: float | None = None, duration_s: float | None = None,
                   expected_interval_ms: float | None = None,
                   max_correction_values: int = MAX_CORRECTION_VALUES) -> Recording:
    """The intervals of `samples` (see the module docstring). Raises ResultsError when no
    request is left (empty file, or a window past the end), or the correction would need more
    than `max_correction_values` extra values."""
    unit = unit or samples.native_unit
    if unit not in UNITS:
        raise ResultsError(f"unknown value unit {unit!r}", path=samples.path,
                           hint="one of " + ", ".join(UNITS))
    _check_arrays(samples)
    expected = _expected_interval(expected_interval_ms, unit, samples.path)
    lower, upper, window = _window(samples, skip_s, duration_s)
    index_bound = _index_bound(_to_unit(samples.latency_ns.max(keepdims=True), unit, samples))
    raw, extra = _KeyCounter(index_bound), _KeyCounter(index_bound)
    tally = _Tally()
    for seconds, values, classes in _chunks(samples, unit, lower, upper, tally):
        groups = seconds * 3 + classes
        raw.add(groups, java_indices(values))
        if expected is not None:
            tally.correction_values += _add_correction(extra, values, groups, expected)
            if tally.correction_values > max_correction_values:
                raise _too_many_extra_values(samples.path, expected, unit,
                                             max_correction_values, tally)
    if tally.requests == 0:
        span = (float(samples.start_ms.max()) - float(samples.start_ms.min())) / 1000.0
        raise ResultsError(f"no request inside the window (skip_s {window[0]:g}, duration_s "
                           f"{window[1]}); the requests span {span:.3f} s", path=samples.path,
                           hint="shorten skip_s")
    keys, counts = raw.result()
    recording = _recording(keys, counts, tally, unit, samples.epoch, window)
    if expected is not None:
        keys, counts = _merge_counts(keys, counts, *extra.result())
        recording.expected_interval = expected
        recording.corrected = _intervals(keys, counts, _present(tally))
        recording.correction_values = tally.correction_values
    return recording


def _present(tally: "_Tally") -> list[int]:
    """The classes that get lines: the answered always, the others where a request has them."""
    return [c for c in range(3) if c == ANSWERED or tally.classes[c]]


def _recording(keys, counts, tally: "_Tally", unit: str, epoch: bool, window) -> Recording:
    return Recording(
        intervals=_intervals(keys, counts, _present(tally)), unit=unit, requests=tally.requests,
        answered=int(tally.classes[ANSWERED]), errors=int(tally.classes[ERROR]),
        timed_out=int(tally.classes[TIMEOUT]), first_ms=tally.first_ms, last_ms=tally.last_ms,
        duration_s=(tally.last_ms - tally.first_ms) / 1000.0, epoch=epoch,
        window=window, cut_before=tally.before, cut_after=tally.after)


def record_parts(parts: list[RequestSamples], unit: str | None = None
                 ) -> tuple[list[Recording], Recording]:
    """Each part's recording and their merge's (issue 33: one cell's files of several load
    generators), whole (no window, no correction). The merge is what record_samples gives for
    the parts' samples put together, exactly: the same (second, class, bucket) counts, added
    by key as the chunks of one file are, without recording a sample twice. A part's recording
    holds one interval per class over its whole span (its figures, not its seconds: building
    every second's histogram of every part cost as much as reading them)."""
    unit = unit or min((p.native_unit for p in parts), key=NS_PER_UNIT.__getitem__)
    recordings, key_parts, total = [], [], _Tally()
    for samples in parts:
        if unit not in UNITS:
            raise ResultsError(f"unknown value unit {unit!r}", path=samples.path,
                               hint="one of " + ", ".join(UNITS))
        _check_arrays(samples)
        counter = _KeyCounter(_index_bound(_to_unit(samples.latency_ns.max(keepdims=True),
                                                    unit, samples)))
        tally = _Tally()
        for seconds, values, classes in _chunks(samples, unit, None, None, tally):
            counter.add(seconds * 3 + classes, java_indices(values))
        keys, counts = counter.result()
        recordings.append(_whole_span(keys, counts, tally, unit, samples.epoch))
        key_parts.append((keys, counts))
        total.requests += tally.requests
        total.classes += tally.classes
        total.first_ms = min(total.first_ms, tally.first_ms)
        total.last_ms = max(total.last_ms, tally.last_ms)
    keys, counts = _sum_by_key(np.concatenate([k for k, _ in key_parts]),
                               np.concatenate([c for _, c in key_parts]))
    return recordings, _recording(keys, counts, total, unit, parts[0].epoch, None)


def _whole_span(keys, counts, tally: "_Tally", unit: str, epoch: bool) -> Recording:
    """A Recording whose intervals are one per present class over the whole span."""
    classes = (keys >> INDEX_BITS) % 3
    indices = keys & ((1 << INDEX_BITS) - 1)
    first, last = math.floor(tally.first_ms), math.floor(tally.last_ms) + 1
    intervals = []
    for cls in _present(tally):
        idx, n = indices[classes == cls], counts[classes == cls]
        if idx.size:
            idx, n = _sum_by_key(idx, n)
            hist = Histogram(java_layout(int(idx[-1])), idx, n)
        else:
            hist = Histogram.empty(JAVA_LAYOUT)
        intervals.append(Interval(line=0, tag=TAGS[cls], start_s=0.0,
                                  length_s=(last - first) / 1000.0, start_ms=first, end_ms=last,
                                  log_start_s=first / 1000.0, _histogram=hist,
                                  total_count=hist.total_count))
    return Recording(
        intervals=intervals, unit=unit, requests=tally.requests,
        answered=int(tally.classes[ANSWERED]), errors=int(tally.classes[ERROR]),
        timed_out=int(tally.classes[TIMEOUT]), first_ms=tally.first_ms, last_ms=tally.last_ms,
        duration_s=(tally.last_ms - tally.first_ms) / 1000.0, epoch=epoch)


@dataclass
class _Tally:
    """What record_samples counts on its way through the chunks."""

    requests: int = 0
    classes: np.ndarray = field(default_factory=lambda: np.zeros(3, np.int64))
    first_ms: float = math.inf
    last_ms: float = -math.inf
    before: int = 0
    after: int = 0
    correction_values: int = 0


def _chunks(samples: RequestSamples, unit: str, lower: float | None, upper: float | None,
            tally: _Tally):
    """(send seconds, values in `unit`, classes) of the requests inside [lower, upper), CHUNK
    requests at a time (temporaries of a few MB, which stay in cache)."""
    for lo in range(0, len(samples), CHUNK):
        part = slice(lo, lo + CHUNK)
        start_ms, latency_ns = samples.start_ms[part], samples.latency_ns[part]
        ok = samples.ok[part].astype(bool, copy=False)
        timed_out = samples.timed_out[part].astype(bool, copy=False)
        if lower is not None:
            before = start_ms < lower
            after = start_ms >= upper
            tally.before += int(before.sum())
            tally.after += int(after.sum())
            inside = ~(before | after)
            start_ms, latency_ns = start_ms[inside], latency_ns[inside]
            ok, timed_out = ok[inside], timed_out[inside]
            if not start_ms.size:
                continue
        classes = (~ok).view(np.int8)          # ANSWERED 0, ERROR 1
        classes[timed_out] = TIMEOUT
        tally.requests += int(start_ms.size)
        tally.classes += np.bincount(classes, minlength=3)
        tally.first_ms = min(tally.first_ms, float(start_ms.min()))
        tally.last_ms = max(tally.last_ms, float(start_ms.max()))
        yield (np.floor(start_ms / 1000.0).astype(np.int64), _to_unit(latency_ns, unit, samples),
               classes)


def _check_arrays(samples: RequestSamples) -> None:
    n = samples.latency_ns.size
    if n == 0:
        raise ResultsError("no request samples in the file", path=samples.path,
                           hint="is it the tool's complete output?")
    for name in ("start_ms", "ok", "timed_out"):
        if getattr(samples, name).size != n:
            raise ResultsError(f"{name} has {getattr(samples, name).size} entries for {n} "
                               "latencies (a reader bug)", path=samples.path)
    if not np.isfinite(samples.start_ms).all():
        raise ResultsError("a request has no finite send time (a reader bug)", path=samples.path)
    if int(samples.latency_ns.min()) < 0:
        raise ResultsError("a request has a negative latency (a reader bug)", path=samples.path)


def _window(samples: RequestSamples, skip_s, duration_s):
    """(lower, upper) bounds of the send times kept, in ms (None, None without a window), and
    the window as given."""
    if skip_s is None and duration_s is None:
        return None, None, None
    skip = float(skip_s or 0.0)
    if not (skip >= 0 and (duration_s is None or float(duration_s) > 0)):
        raise ResultsError(f"window skip_s {skip_s} / duration_s {duration_s}: skip_s must be "
                           ">= 0 and duration_s > 0", path=samples.path)
    lower = float(samples.start_ms.min()) + skip * 1000.0
    upper = math.inf if duration_s is None else lower + float(duration_s) * 1000.0
    return lower, upper, (skip, duration_s)


def _to_unit(latency_ns: np.ndarray, unit: str, samples: RequestSamples) -> np.ndarray:
    per_unit = NS_PER_UNIT[unit]
    if per_unit == 1:
        return latency_ns.astype(np.int64, copy=False)
    if per_unit <= NS_PER_UNIT[samples.native_unit]:
        values = latency_ns // per_unit
        if not np.array_equal(values * per_unit, latency_ns):
            raise ResultsError(f"latencies are not whole {unit} though the reader gave "
                               f"{samples.native_unit} as the file's unit (a reader bug)",
                               path=samples.path)
        return values
    return (latency_ns + per_unit // 2) // per_unit       # coarser than the file: half up


def _expected_interval(expected_interval_ms, unit: str, path: str) -> int | None:
    if expected_interval_ms is None:
        return None
    expected = float(expected_interval_ms) * NS_PER_UNIT["ms"] / NS_PER_UNIT[unit]
    if not (expected >= 1 and expected == round(expected)):
        raise ResultsError(f"co_correction expected_interval_ms {expected_interval_ms} is not a "
                           f"whole number of {unit} (>= 1)", path=path,
                           hint="record in a finer unit, or give a whole number of units")
    return int(expected)


def _index_bound(values: np.ndarray) -> int:
    return int(JAVA_LAYOUT.index_of(np.array([values.max()]))[0]) + 1


def java_indices(values: np.ndarray) -> np.ndarray:
    """JAVA_LAYOUT.index_of(values) (countsArrayIndex), 15x faster: the bit length comes from
    the exponent of the value as a double, exact below 2**53 (larger values take index_of)."""
    if not values.size or int(values.max()) >= 1 << 53:
        return JAVA_LAYOUT.index_of(values)
    # JAVA_LAYOUT: sub-bucket half count 2**10, unit magnitude 0, so the bucket is
    # bit_length(v | 2047) - 11 and the index (bucket << 10) + (v >> bucket)
    exponent = ((values | 2047).astype(np.float64).view(np.int64) >> 52) - 1023
    bucket = exponent - 10
    return (bucket << 10) + (values >> bucket)


class _KeyCounter:
    """Counts of (group, counts index) pairs, group = second * 3 + class, added chunk by chunk;
    the result as keys (group << INDEX_BITS | index), ascending, with their counts.

    A chunk of time-ordered samples covers a few seconds: counted with one bincount over those
    seconds' bins. A chunk whose seconds are too many for that (an unordered file) is sorted
    and counted instead. The chunks' counts are sorted runs, merged at the end."""

    def __init__(self, index_bound: int):
        self.index_bound = index_bound
        self.parts: list[tuple[np.ndarray, np.ndarray]] = []

    def add(self, groups: np.ndarray, indices: np.ndarray) -> None:
        low, high = int(groups.min()), int(groups.max())
        width = self.index_bound
        bins = (high - low + 1) * width
        if bins <= max(8 * groups.size, 1 << 16):
            dense = np.bincount((groups - low) * width + indices, minlength=bins)
            nz = np.flatnonzero(dense)
            self.parts.append((((nz // width + low) << INDEX_BITS) | (nz % width), dense[nz]))
        else:
            self.parts.append(np.unique((groups << INDEX_BITS) | indices, return_counts=True))

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        if not self.parts:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        keys = np.concatenate([k for k, _ in self.parts])
        counts = np.concatenate([c for _, c in self.parts]).astype(np.int64)
        return _sum_by_key(keys, counts)


def _sum_by_key(keys: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # (a stable sort is a merge sort: fast on a few sorted runs, as the chunks' counts are)
    order = np.argsort(keys, kind="stable")
    keys, counts = keys[order], counts[order]
    starts = np.flatnonzero(np.diff(keys, prepend=keys[0] - 1))
    return keys[starts], np.add.reduceat(counts, starts)


def _merge_counts(keys_a, counts_a, keys_b, counts_b):
    if not keys_b.size:
        return keys_a, counts_a
    return _sum_by_key(np.concatenate([keys_a, keys_b]), np.concatenate([counts_a, counts_b]))


def _add_correction(counter: _KeyCounter, values, groups, expected: int) -> int:
    """Count into `counter` the extra values recordValueWithExpectedInterval records for
    `values` (for a value v: v - k*E for k = 1 .. v // E - 1, in v's second and class), a few
    million at a time; return how many."""
    extra_per = np.maximum(values // expected - 1, 0)
    which = np.flatnonzero(extra_per)
    per, base, owner_groups = extra_per[which], values[which], groups[which]
    ends = np.cumsum(per)
    i = 0
    while i < which.size:
        # requests i..j-1 together have at most CORRECTION_CHUNK extra values
        j = int(np.searchsorted(ends, ends[i] - per[i] + CORRECTION_CHUNK, side="right"))
        if j > i:
            owner = np.repeat(np.arange(i, j), per[i:j])
            first = np.repeat(ends[i:j] - per[i:j], per[i:j])
            k = np.arange(ends[i] - per[i], ends[j - 1]) - first + 1
            counter.add(owner_groups[owner], java_indices(base[owner] - k * expected))
            i = j
        else:              # one request with more extra values than a chunk: in slices
            for lo in range(1, int(per[i]) + 1, CORRECTION_CHUNK):
                k = np.arange(lo, min(lo + CORRECTION_CHUNK, int(per[i]) + 1))
                counter.add(np.full(k.size, owner_groups[i]),
                            java_indices(base[i] - k * expected))
            i += 1
    return int(ends[-1]) if ends.size else 0


def _too_many_extra_values(path: str, expected: int, unit: str, limit: int,
                           tally: _Tally) -> ResultsError:
    return ResultsError(f"the coordinated-omission correction with an expected interval of "
                        f"{expected} {unit} would record more than {limit:,} extra values (the "
                        f"first {tally.requests:,} requests already need "
                        f"{tally.correction_values:,})", path=path,
                        hint="is co_correction's expected_interval_ms in milliseconds, and the "
                             "interval between the requests of one sender?")


def java_layout(max_index: int) -> Layout:
    """The layout (and so the header) of `new Histogram(3)` after recording values up to the
    one at counts index `max_index`: resized to the buckets that value needs."""
    return _layout_of_half_bucket(max_index >> JAVA_LAYOUT.sub_bucket_half_count_magnitude)


@lru_cache(maxsize=None)
def _layout_of_half_bucket(half: int) -> Layout:
    # (indices come in runs of sub_bucket_half_count per bucket; the layout depends on the run)
    first_index = half << JAVA_LAYOUT.sub_bucket_half_count_magnitude
    if first_index < JAVA_LAYOUT.sub_bucket_count:
        return JAVA_LAYOUT
    top = int(JAVA_LAYOUT.lowest_value_at(np.array([first_index]))[0])
    buckets = JAVA_LAYOUT.buckets_needed(top)
    return layout_for(1, JAVA_LAYOUT.highest_recordable_value(buckets), 3)


def _intervals(keys, counts, present) -> list[Interval]:
    """One Interval per second and present class, in time order, from the counted keys
    (group = second * 3 + class, absolute seconds)."""
    groups = keys >> INDEX_BITS
    indices = keys & ((1 << INDEX_BITS) - 1)
    first_second = int(groups[0]) // 3
    n_seconds = int(groups[-1]) // 3 - first_second + 1
    bounds = np.searchsorted(groups, first_second * 3 + np.arange(n_seconds * 3 + 1),
                             side="left").tolist()
    out = []
    for rel in range(n_seconds):
        second = first_second + rel
        for cls in present:
            group = rel * 3 + cls
            lo, hi = bounds[group], bounds[group + 1]
            if hi > lo:
                idx = indices[lo:hi]
                hist = Histogram(java_layout(int(idx[-1])), idx, counts[lo:hi])
            else:
                hist = Histogram.empty(JAVA_LAYOUT)
            out.append(Interval(line=0, tag=TAGS[cls], start_s=float(rel), length_s=1.0,
                                start_ms=second * 1000, end_ms=second * 1000 + 1000,
                                log_start_s=float(first_second), _histogram=hist,
                                total_count=hist.total_count))
    return out
