"""One cell measured by several load generators (issue 33): their files merged exactly.

- **Per-request files** (`merge_samples`): the samples are put together and then recorded as one
  file's are (analysis/read/loadtools/record.py), so a file split into parts gives exactly the
  whole file's figures: recording counts each sample into its second and bucket whatever the
  order. The parts must come from one tool (the latencies must cover the same span).
- **Summaries** (`merge_summaries`): counts and rates add, the minimum and maximum are the
  parts' extremes and the mean is the request-weighted mean; percentiles cannot be merged from
  summaries (a p99 of the whole is not any mix of the parts' p99s): `PERCENTILES_NOT_MERGED`.
- **`.hlog` files** (`merge_logs`): interval histograms added by absolute time, each interval
  placed in the whole second of the epoch it starts in (StartTime/BaseTime plus its offset), as
  HdrLogProcessing's union adds them; one tag is never added to another.
- **Counts files** (`merge_counts`): window and per-interval counts (sent, completed, timed
  out, errors, not sent) add, intervals matched by the whole epoch second they start in, as the
  logs'. The window is the generators' common length from the earliest start. The in-flight mean adds
  (the mean of a sum is the sum of the means over the same seconds) and so do the counts in
  flight at the window's start and end (instants the generators share, started together). The
  maximum in flight is left out: a max of a sum is not the sum of the maxes, only at most it.
  The send lag's p99 is the parts' highest, an upper bound of the whole's (every part has 99 %
  of its sends at or below it, so the whole has too); it is shown as measured by the slowest.

Pure functions of the read objects; no I/O.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from analysis.derive.aggregate import low_sample_percentiles
from analysis.errors import CountsError, HlogError, ResultsError
from analysis.read.counts import Counts, InFlight, IntervalCounts, SendLag, WindowCounts
from analysis.read.hdr.histogram import sum_histograms
from analysis.read.hdr.lines import Interval
from analysis.read.hdr.log import HlogLog
from analysis.read.loadtools.results import NS_PER_UNIT, RequestSamples, ResultSummary

PERCENTILES_NOT_MERGED = ("percentiles cannot be merged from summaries: give per-request files "
                          "or interval logs")


def merge_samples(parts: list[RequestSamples]) -> RequestSamples:
    """The samples of every part as one file's (see the module docstring)."""
    first = parts[0]
    if len(parts) == 1:
        return first
    for other in parts[1:]:
        if other.info.tool != first.info.tool:
            raise ResultsError(f"is a {other.info.tool} file, {first.path} a {first.info.tool} "
                               "one: a cell's files come from one tool (their latencies must "
                               "time the same span)", path=other.path)
        if other.epoch != first.epoch:
            raise ResultsError(f"gives {'epoch' if other.epoch else 'relative'} send times, "
                               f"{first.path} {'epoch' if first.epoch else 'relative'} ones: "
                               "they cannot be put on one time axis", path=other.path)
    labels = ([p.labels for p in parts] if all(p.labels is not None for p in parts) else None)
    versions = {p.info.version for p in parts}
    models = {(p.info.load_model, p.info.load_model_evidence) for p in parts}
    info = replace(first.info, version=first.info.version if len(versions) == 1 else None)
    if len(models) > 1:
        info = replace(info, load_model="unknown", load_model_evidence=None)
    statuses = [p.status for p in parts]
    return RequestSamples(
        path=first.path, info=info,
        start_ms=np.concatenate([p.start_ms for p in parts]),
        latency_ns=np.concatenate([p.latency_ns for p in parts]),
        ok=np.concatenate([p.ok for p in parts]),
        timed_out=np.concatenate([p.timed_out for p in parts]),
        status=(np.concatenate(statuses) if all(s is not None for s in statuses) else None),
        native_unit=min((p.native_unit for p in parts), key=NS_PER_UNIT.__getitem__),
        epoch=first.epoch,
        labels=None if labels is None else np.concatenate(labels),
        warnings=[w for p in parts for w in p.warnings],
        skipped=sum(p.skipped for p in parts),
        first_error=next((p.first_error for p in parts if p.first_error), None))


def _total(values):
    return None if any(v is None for v in values) else sum(values)


def merge_summaries(parts: list[ResultSummary]) -> ResultSummary:
    """Counts and rates added, min/max/mean merged exactly, no percentile (see the module
    docstring)."""
    first = parts[0]
    if len(parts) == 1:
        return first
    requests = _total([p.requests for p in parts])
    means = [(p.mean_ms, p.requests) for p in parts]
    mean = (sum(m * n for m, n in means) / requests
            if requests and all(m is not None and n for m, n in means) else None)
    durations = [p.duration_s for p in parts if p.duration_s is not None]
    return ResultSummary(
        path=first.path, info=first.info, requests=requests,
        errors=_total([p.errors for p in parts]), timeouts=_total([p.timeouts for p in parts]),
        answered=_total([p.answered for p in parts]),
        duration_s=max(durations) if durations else None,
        rate_rps=_total([p.rate_rps for p in parts]), mean_ms=mean,
        min_ms=_extreme(min, [p.min_ms for p in parts]),
        max_ms=_extreme(max, [p.max_ms for p in parts]),
        warnings=[w for p in parts for w in p.warnings], skipped=sum(p.skipped for p in parts))


def _extreme(which, values):
    return None if any(v is None for v in values) else which(values)


def merge_logs(logs: list[HlogLog]) -> HlogLog:
    """The logs' intervals added per tag and whole epoch second of their start."""
    if len(logs) == 1:
        return logs[0]
    groups: dict[tuple, list[Interval]] = {}
    for log in logs:
        for iv in log.intervals:
            if iv.is_double:
                raise HlogError("holds DoubleHistogram intervals; a cell of several generators "
                                "adds integer histograms", path=log.path)
            groups.setdefault((iv.start_ms // 1000, iv.tag is not None, iv.tag or ""),
                              []).append(iv)
    start_s = min(_log_start_s(log) for log in logs)
    merged = []
    for _, ivs in sorted(groups.items()):
        histogram = sum_histograms([iv.histogram for iv in ivs])
        # at the earliest member's start, as long as the longest member: the seconds of the
        # generators' clocks are one second of the cell (their spread is flagged apart)
        start_ms = min(iv.start_ms for iv in ivs)
        end_ms = start_ms + max(iv.end_ms - iv.start_ms for iv in ivs)
        merged.append(Interval(line=ivs[0].line, tag=ivs[0].tag,
                               start_s=start_ms / 1000.0 - start_s,
                               length_s=(end_ms - start_ms) / 1000.0, start_ms=start_ms,
                               end_ms=end_ms, log_start_s=start_s, _histogram=histogram,
                               total_count=int(histogram.total_count)))
    merged.sort(key=lambda iv: (iv.start_ms, iv.tag is not None, iv.tag or ""))
    return HlogLog(logs[0].path, merged, [w for log in logs for w in log.warnings],
                   start_s, logs[0].base_time_s)


def _log_start_s(log: HlogLog) -> float:
    return log.intervals[0].log_start_s if log.intervals else math.inf


def merge_counts(parts: list[Counts]) -> Counts:
    """The generators' counts files as one generator's (see the module docstring). Raises
    CountsError when they did not measure the same window with the same settings."""
    first = parts[0]
    if len(parts) == 1:
        return first
    for other in parts[1:]:
        if other.schema_version != 2:
            raise CountsError("a cell of several generators needs schema 2 counts files",
                              path=other.path)
        for key in ("warmup_s", "duration_s", "timeout_s", "value_unit"):
            if getattr(other, key) != getattr(first, key):
                raise CountsError(f"{key} {getattr(other, key)} differs from {first.path}'s "
                                  f"{getattr(first, key)}: a cell's generators run one "
                                  "configuration", path=other.path)
    ws = [p.window for p in parts]
    axis0 = min(_axis_epoch_s(p) for p in parts)
    # the generators' common window length, from the earliest start (a later start is a
    # clock or start-up difference, flagged in the per-generator table)
    start_ms = min(w.start_epoch_ms for w in ws)
    end_ms = start_ms + first.window.end_epoch_ms - first.window.start_epoch_ms
    window = WindowCounts(
        start_s=round(start_ms / 1000.0 - axis0, 3),
        end_s=round(start_ms / 1000.0 - axis0 + first.window.duration_s, 3),
        start_epoch_ms=start_ms, end_epoch_ms=end_ms,
        sent=sum(w.sent for w in ws), completed=sum(w.completed for w in ws),
        timed_out=sum(w.timed_out for w in ws), errors=sum(w.errors for w in ws),
        not_sent=sum(w.not_sent for w in ws))
    in_flight = InFlight(
        at_window_start=_total([p.in_flight.at_window_start for p in parts]),
        at_window_end=_total([p.in_flight.at_window_end for p in parts]),
        window_mean=_total([p.in_flight.window_mean for p in parts]), window_max=None)
    lags = [p.send_lag_us_window for p in parts]
    return replace(
        first, offered_rate=_total([p.offered_rate for p in parts]), window=window,
        in_flight=in_flight, intervals=_merged_intervals(parts, axis0),
        server_completions_window=_total([p.server_completions_window for p in parts]),
        generator_cpu_s_window=_total([p.generator_cpu_s_window for p in parts]),
        generator_cpu_share_window=_total([p.generator_cpu_share_window for p in parts]),
        machine_cpu_share_window=_extreme(max, [p.machine_cpu_share_window for p in parts]),
        server_cpu_share_window=_extreme(max, [p.server_cpu_share_window for p in parts]),
        send_lag_us_window=SendLag(
            p50=None, p99=_extreme(max, [lag.p99 for lag in lags]), p999=None,
            max=_extreme(max, [lag.max for lag in lags]), count=_total([lag.count for lag in lags])))


def _merged_intervals(parts: list[Counts], axis0: float) -> tuple[IntervalCounts, ...]:
    """Per-interval counts added by the whole epoch second they start in, as merge_logs adds
    the logs' intervals, on the earliest log's axis (t_s from `axis0`, the earliest StartTime);
    an interval's in-flight max left at 0 (see the module docstring)."""
    by_second: dict[int, list[tuple[float, IntervalCounts]]] = {}
    for p in parts:
        axis = _axis_epoch_s(p)
        for iv in p.intervals:
            start = axis + iv.t_s
            by_second.setdefault(math.floor(start + 1e-9), []).append((start, iv))
    out = []
    for _, group in sorted(by_second.items()):
        ivs = [iv for _, iv in group]
        out.append(IntervalCounts(
            t_s=round(min(start for start, _ in group) - axis0, 3),
            length_s=max(iv.length_s for iv in ivs), phase=ivs[0].phase,
            sent=sum(iv.sent for iv in ivs), completed=sum(iv.completed for iv in ivs),
            timed_out=sum(iv.timed_out for iv in ivs), errors=sum(iv.errors for iv in ivs),
            in_flight_mean=sum(iv.in_flight_mean for iv in ivs), in_flight_max=0))
    return tuple(out)


def _axis_epoch_s(c: Counts) -> float:
    """The epoch second the file's t_s count from (its log's StartTime)."""
    return c.window.start_epoch_ms / 1000.0 - c.window.start_s


# A generator fell behind when it sent less than this share of its part of the offered rate (or
# of the generators' mean rate, without one). A generator's window is the cell's, so its edges
# cost it at most a request or two; 5 % is above that and the 1 % a whole cell may fall short by
# (imported._not_sent), yet far below the shortfall of a generator whose CPU ran out.
RATE_SHORT_SHARE = 0.95
# ... or when its p99 is this many times the median of the other generators' p99s, and at least
# P99_OFF_MS apart: the generators sent one mix of requests to one server at once, so their p99s
# differ by the noise of the requests each drew; a factor of 2 is far outside that, and the
# absolute floor keeps sub-millisecond tails (where the 3-digit buckets and one GC pause decide)
# from being flagged. A p99 resting on fewer than aggregate.LOW_SAMPLE_BEYOND samples beyond it
# (its generator sent under 1,000) is one or two requests' latency: never flagged.
P99_OFF_FACTOR = 2.0
P99_OFF_MS = 1.0
# Clocks (or starts) disagree when the first sends lie further apart than one interval: the
# merge adds intervals by absolute second, so beyond it a second of one generator is added to
# another's.
CLOCK_SPREAD_S = 1.0


def flag_generators(rows: list, offered_rate: float | None) -> None:
    """Set `behind_rate` / `behind_p99` on each GeneratorFigures (see the thresholds above),
    and the cell's first-send spread (`first_send_spread_s`, the same in every row)."""
    n = len(rows)
    spread = first_send_spread_s(rows)
    rates = [r.rate_rps for r in rows]
    share = offered_rate / n if offered_rate else sum(rates) / n
    for i, row in enumerate(rows):
        row.share_rps = share
        row.first_send_spread_s = spread
        row.clocks_disagree = spread is not None and spread > CLOCK_SPREAD_S
        row.behind_rate = row.rate_rps < RATE_SHORT_SHARE * share
        others = sorted(r.p99_ms for j, r in enumerate(rows) if j != i and r.p99_ms is not None)
        if row.p99_ms is not None and others and "p99" not in low_sample_percentiles(row.sent):
            typical = float(np.median(others))
            row.behind_p99 = (row.p99_ms >= P99_OFF_FACTOR * typical
                              and row.p99_ms - typical >= P99_OFF_MS)


def first_send_spread_s(rows: list) -> float | None:
    firsts = [r.first_send_ms for r in rows if r.first_send_ms is not None]
    return (max(firsts) - min(firsts)) / 1000.0 if len(firsts) == len(rows) else None
