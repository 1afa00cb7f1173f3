"""Histograms -> the run model's statistics, cells and systems: pure functions, no I/O.

Inputs are histograms and intervals from the HDR layer (values in the run's recorded unit);
outputs are model objects (analysis/model.py) in milliseconds at full precision. Rounding for
display happens once, in the writers. Conversion from the recorded unit happens once, here (and in overload.censored_stats).
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Iterable, Sequence

from analysis.derive import cpu_accounting, flame_profiles, overload
from analysis.derive.gc_tail import gc_tail
from analysis.derive.summary_load import summary_points
from analysis.derive.summary_marks import summary_marks
from analysis.errors import ResultsError
from analysis.model import (Accounting, Cell, HostHealth, InFlight, LatencyStats, LoadPoint,
                            Missing, Percentile, Repetition, Run, Saturation, Scenario, Spread,
                            System)
from analysis.read.hdr.histogram import percentile_target_count
from analysis.read.manifest import UNITS_PER_MS
from analysis.vocabulary import PERCENTILES, SERIES_PERCENTILES, load_order

# A percentile with fewer samples than this beyond it is noise (credibility.md).
LOW_SAMPLE_BEYOND = 10


def to_ms(value: float | None, value_unit: str) -> float | None:
    return None if value is None else value / UNITS_PER_MS[value_unit]


def histogram_stats(h, value_unit: str) -> LatencyStats:
    """The statistics of one histogram whose every value is a measured latency (schema 1: no
    request is known to be unanswered, so nothing is censored); None values when empty."""
    count = int(h.total_count)
    empty = count == 0

    def ms(v):
        return Percentile(None if empty else to_ms(v, value_unit))
    percentiles = {name: ms(h.value_at_percentile(p) if not empty else None)
                   for name, p, _ in PERCENTILES}
    return LatencyStats(count=count, percentiles=percentiles,
                        max=ms(None if empty else h.max), mean=ms(None if empty else h.mean),
                        stddev_ms=None if empty else to_ms(h.stddev, value_unit))


def low_sample_percentiles(count: int) -> list[str]:
    """Percentiles that rest on fewer than LOW_SAMPLE_BEYOND samples beyond them."""
    # rounded: 100 - 99.9 is 0.0999999... in binary, and 10,000 samples leave exactly 10
    return [name for name, p, _ in PERCENTILES
            if round(count * (100.0 - p) / 100.0, 6) < LOW_SAMPLE_BEYOND]


def recorded_rate(count: int, duration_s: float) -> float:
    """Schema 1's one rate, its throughput: the values the log recorded (by completion time)
    in the window, per second of it."""
    return count / duration_s


def _sum_known(values: Iterable[int | None]) -> int | None:
    values = list(values)
    return None if any(v is None for v in values) else sum(values)


def total_accounting(repetitions: Sequence[Accounting]) -> Accounting:
    """Each count summed over the repetitions; None unless every repetition has it."""
    return Accounting(**{name: _sum_known(getattr(r, name) for r in repetitions)
                         for name in ("sent", "completed", "timed_out", "errors", "not_sent")})


def _median(values: Iterable[float | None]) -> float | None:
    spread = overload.number_spread(list(values))
    return None if spread is None else spread[1]


def cell_stats(repetitions: Sequence[Repetition],
               spreads: dict[str, Spread] | None = None) -> LatencyStats:
    """A cell's statistics: each the median of its repetitions' (a censored repetition sorts
    above every value, overload.spread); counts summed. One repetition: its own. `spreads`:
    overload.repetition_spreads of the repetitions' stats, where the caller has them."""
    if len(repetitions) == 1:
        return repetitions[0].stats
    stats = [r.stats for r in repetitions]
    if spreads is None:
        spreads = overload.repetition_spreads(stats)
    return LatencyStats(
        count=sum(s.count for s in stats),
        percentiles={name: spreads[name].median for name, _, _ in PERCENTILES},
        max=spreads["max"].median, mean=spreads["mean"].median,
        stddev_ms=_median(s.stddev_ms for s in stats),
        completed=_sum_known(s.completed for s in stats),
        timed_out=sum(s.timed_out for s in stats), errors=sum(s.errors for s in stats))


def queue_verdict(repetitions: Sequence[Repetition]) -> overload.QueueTest | None:
    """The queue rule holds for a cell when it holds in more than half of its repetitions; the
    test returned (for its sentence) is the growing one with the median slope."""
    tests = [r.queue for r in repetitions if r.queue is not None]
    growing = sorted((t for t in tests if t.grows), key=lambda t: t.slope_per_s)
    if not tests or 2 * len(growing) <= len(tests):
        return None
    return growing[len(growing) // 2]


def p50_queue(series: list[dict[str, Any]], offered_rate: float,
              from_s: float = 0.0) -> overload.QueueTest:
    """The queue rule on the per-interval p50 of `series` (interval_series rows) from `from_s`
    on: where no in-flight count was recorded (schema 1, a load tool's per-request file)."""
    points = [(r["t_s"], r["p50_ms"]) for r in series
              if r["p50_ms"] is not None and r["t_s"] >= from_s]
    return overload.queue_growth_from_p50([t for t, _ in points], [v for _, v in points],
                                          offered_rate)


def cell_host(repetitions: Sequence[Repetition]) -> HostHealth | None:
    """overload.repetitions_host: a busy repetition's own figures, else the medians."""
    return overload.repetitions_host([(r.index, r.host) for r in repetitions
                                      if r.host is not None])


def cell_in_flight(repetitions: Sequence[Repetition], answered_rps: float, mean: Percentile,
                   saturated: bool, connections: int | None = None) -> InFlight:
    """Measured in flight (medians of the repetitions' window mean, start and end; the largest
    max) with overload.in_flight's Little's-law check (only on cells not saturated). A closed
    loop's point (issue 23) unmeasured has its `connections` in flight, by construction: each
    holds one request until its reply."""
    measured = [r.in_flight for r in repetitions if r.in_flight is not None]
    maxima = [f.measured_max for f in measured if f.measured_max is not None]
    if not measured and connections:
        n = connections
        return overload.in_flight(n, n, n, n, answered_rps, mean, saturated)
    return overload.in_flight(
        _median(f.measured_mean for f in measured), max(maxima) if maxima else None,
        _median(f.at_window_start for f in measured), _median(f.at_window_end for f in measured),
        answered_rps, mean, saturated)


def build_cell(*, scenario: str | None, system: str, load: str, offered_rate: float | None,
               repetitions: list[Repetition], spectrum: list[tuple[float, float, bool]],
               baseline_p50_ms: float | None, service_time_ms: float | None,
               baseline_p50: Percentile | None = None,
               predicted_ceiling_rps: float | None = None,
               connections: int | None = None) -> Cell:
    """One (load point, system) cell from its repetitions: every statistic the median of the
    repetitions' with its spread, counts summed, saturation by overload.saturation's rules
    (throughput, queue, latency against `baseline_p50_ms`, the system's p50 at its lowest
    load, utilisation against `predicted_ceiling_rps`), in flight measured, host health, and where the time went (service time: the run's
    service_time_ms, else that lowest-load p50). The JFR summary is the first repetition's
    (recordings are not additive)."""
    n = len(repetitions)
    # (the spreads are the cell's medians too: taken once, for both)
    spreads = overload.repetition_spreads([r.stats for r in repetitions]) if n > 1 else {}
    stats = cell_stats(repetitions, spreads or None)
    throughput_spread = overload.number_spread([r.throughput_rps for r in repetitions])
    goodputs = [r.goodput_rps for r in repetitions]
    goodput_spread = (None if any(g is None for g in goodputs)
                      else overload.number_spread(goodputs))
    throughput = throughput_spread[1]
    # the rate the offered load was answered at, for the goodput rule and Little's law;
    # schema 1 records one rate only
    answered = throughput if goodput_spread is None else goodput_spread[1]
    accounting = total_accounting([r.accounting for r in repetitions])
    drops = drop_pct = None
    if accounting.completed is not None:
        drops = (accounting.timed_out or 0) + (accounting.errors or 0)
    elif accounting.sent is not None:
        # schema 1: values recorded below sent: lost, errored or timed out
        drops = max(accounting.sent - stats.count, 0)
    if drops is not None and accounting.sent is not None:
        drop_pct = 100.0 * drops / accounting.sent if accounting.sent else 0.0
    sat = overload.saturation(answered, offered_rate, queue_verdict(repetitions),
                              stats.get("p50"), baseline_p50_ms, throughput_rps=throughput,
                              predicted_ceiling_rps=predicted_ceiling_rps,
                              answered=overload.answered_counts(repetitions))
    sat = Saturation(sat.saturated, sat.reasons, sat.sentences)
    service = overload.service_time(service_time_ms, baseline_p50 or Percentile())
    first = repetitions[0]
    steady_counts, not_steady, window_stats = steadiness(repetitions)
    return Cell(scenario=scenario, system=system, load=load, repetitions=repetitions,
                stats=stats, throughput_rps=throughput, saturation=sat,
                low_sample=low_sample_percentiles(min(r.stats.count for r in repetitions)),
                accounting=accounting, drops=drops, drop_pct=drop_pct, spread=spreads,
                throughput_spread=throughput_spread if n > 1 else None,
                goodput_spread=goodput_spread if n > 1 else None,
                repetitions_disagree=overload.repetitions_disagree(spreads, sat.saturated)
                if spreads else False,
                in_flight=cell_in_flight(repetitions, answered, stats.mean, sat.saturated,
                                         connections),
                spectrum=spectrum, jvm=first.jvm, gc_pauses=first.gc_pauses,
                host=cell_host(repetitions),
                goodput_rps=None if goodput_spread is None else goodput_spread[1],
                time_split=None if service is None else overload.where_the_time_went(
                    stats.mean, stats.get("p99"), service),
                timeout_ms=first.timeout_ms, imported=first.imported,
                steady_counts=steady_counts, not_steady=not_steady, window_stats=window_stats,
                error_rate=overload.error_rate(accounting))


def steadiness(repetitions: Sequence[Repetition]) -> tuple[dict[str, int], bool, LatencyStats | None]:
    """Issue 32, per cell: how many repetitions fell in each steadiness class ("not known"
    where the data cannot show it), whether the cell is not steady (more than half of its
    repetitions are: the queue rule's majority), and the whole windows' statistics when some
    repetition's figures are its steady part's."""
    counts: dict[str, int] = {}
    for r in repetitions:
        name = (r.steady.cls if r.steady is not None else None) or "not known"
        counts[name] = counts.get(name, 0) + 1
    not_steady = 2 * sum(1 for r in repetitions if r.steady and r.steady.not_steady) > \
        len(repetitions)
    whole = None
    if any(r.window_stats is not None for r in repetitions):
        whole = cell_stats([replace(r, stats=r.window_stats or r.stats) for r in repetitions])
    return dict(sorted(counts.items())), not_steady, whole


def predicted_ceiling(concurrency_limit: int | None, service_time_ms: float | None) -> float | None:
    """N workers each holding a request S seconds complete at most N / S requests per second."""
    if not concurrency_limit or not service_time_ms:
        return None
    return concurrency_limit / (service_time_ms / 1000.0)


def fill_system(system: System, *, service_time_ms: float | None,
                throughput_rps: Sequence[float | None]) -> None:
    """The system's predicted ceiling, its measured peak (the highest of `throughput_rps`: per
    steady load point, what it kept up, overload.CEILING_RULE) and how far apart they are."""
    predicted = predicted_ceiling(system.concurrency_limit, service_time_ms)
    peak = overload.measured_ceiling(list(throughput_rps))
    vs = None
    if predicted is not None and peak is not None:
        vs = (peak - predicted) / predicted * 100.0
    system.predicted_ceiling_rps = predicted
    system.measured_peak_rps = peak
    system.peak_vs_predicted_pct = vs


def interval_series(intervals: Iterable, value_unit: str) -> list[dict[str, Any]]:
    """Per-interval count, throughput, p50, p99 and max, time relative to the first interval.
    The throughput is the log's count per second (schema 1's, by completion time); a schema-2
    reader replaces it with the counts file's every reply (analyse.read_repetition)."""
    rows = []
    t0 = None
    per_ms = UNITS_PER_MS[value_unit]
    for iv in intervals:
        if t0 is None:
            t0 = iv.start_s
        h = iv.histogram
        count = int(h.total_count)
        row = {"t_s": iv.start_s - t0, "length_s": iv.length_s, "count": count,
               "throughput_rps": count / iv.length_s if iv.length_s > 0 else None}
        # (the keys in this order; to_ms's division, without a dict and a call a row)
        for key, p in _SERIES_KEYS:
            row[key] = h.value_at_percentile(p) / per_ms if count else None
        row["max_ms"] = h.max / per_ms if count else None
        rows.append(row)
    return rows


_SERIES_KEYS = tuple((f"{name}_ms", p) for name, p in SERIES_PERCENTILES)


def spectrum_percentiles(count: int, per_decade: int = 10) -> list[float]:
    """Percentiles for a spectrum plot, evenly spaced in log(1/(1-p)), stopping where fewer
    than one sample lies beyond (the tail is then drawn at the max)."""
    out = [0.0]
    if count <= 1:
        return out
    steps = int(math.floor(math.log10(count) * per_decade))
    for i in range(1, steps + 1):
        out.append(100.0 * (1.0 - 10.0 ** (-i / per_decade)))
    return out


def percentile_spectrum(h, value_unit: str, timed_out: int = 0,
                        timeout_ms: float | None = None) -> list[tuple[float, float, bool]]:
    """(percentile, value in ms, censored) points, ending with the max. With `timed_out`
    requests beyond the completed ones in `h`, the population is both, and a percentile whose
    rank falls among the timed-out requests is drawn at the timeout, censored (a lower bound)."""
    completed = int(h.total_count)
    population = completed + timed_out
    if population == 0:
        return []
    percentiles = spectrum_percentiles(population)
    if timed_out == 0 or timeout_ms is None:
        many = getattr(h, "values_at_percentiles", None)  # one pass over the counts
        values = list(many(percentiles)) if many else [h.value_at_percentile(p)
                                                       for p in percentiles]
        points = [(p, to_ms(float(v), value_unit), False) for p, v in zip(percentiles, values)]
        points.append((100.0, to_ms(h.max, value_unit), False))
        return points
    targets = [percentile_target_count(p, population) for p in percentiles]
    # the answered ones' values in one search (overload.value_at_count each, as before)
    found = iter(overload.values_at_counts(h, [t for t in targets if t <= completed]))
    points = [(p, float(timeout_ms), True) if target > completed
              else (p, to_ms(next(found), value_unit), False)
              for p, target in zip(percentiles, targets)]
    points.append((100.0, float(timeout_ms), True))
    return points


def rate_per_client(offered_rate: float | None, clients: int | None) -> float | None:
    return offered_rate / clients if clients and offered_rate is not None else None


def measured_key(scenario: str | None, load: str, system: str) -> tuple[str, ...]:
    """The key of a cell's repetitions in build_run's `measured`: (load, system) in a run
    without scenarios (as before issue 11), (scenario, load, system) in a run with them."""
    return (load, system) if scenario is None else (scenario, load, system)


def build_run(manifest, measured: dict[tuple[str, ...], list[tuple[Repetition, Any]]] | None = None,
              combine=None, *, missing: Sequence[Missing] = (), warnings: Sequence[str] = (),
              manifest_path: str = "") -> Run:
    """The run model from run.yml and the repetitions read for each cell (keyed by
    measured_key): the grid is joined here, once, one Scenario per run.yml scenario (or the
    implicit one). `measured` pairs each repetition with its histogram (of the completed
    requests); `combine` adds histograms (the HDR layer's sum, as Java adds them) for the
    cell's spectrum. Without `measured`: the run's shape only (systems, load points), as
    new-post drafts it before any analysis."""
    measured = measured or {}
    points = {lp.id: _load_point(lp, measured, manifest_path) for lp in manifest.load_points}
    declared = list(getattr(manifest, "scenarios", None) or [])
    shapes = [(sc.id, sc.label, sc.description, sc.service_time_ms, sc.load_points,
               sc.endpoint, sc.headline) for sc in declared] or \
        [(None, None, None, manifest.service_time_ms, tuple(points), None, None)]
    scenarios = []
    for sid, label, description, service, loads, endpoint, headline in shapes:
        scenario = Scenario(id=sid, label=label, description=description,
                            service_time_ms=service,
                            systems=[System(s.id, s.label, i, s.concurrency_limit, s.description,
                                            family=getattr(s, "family", None),
                                            model=getattr(s, "model", None))
                                     for i, s in enumerate(manifest.systems)],
                            load_points=[points[lid] for lid in loads],
                            missing=[m for m in missing if m.scenario == sid],
                            endpoint=endpoint, headline=headline)
        build_scenario(scenario, measured, combine, manifest.value_unit,
                       manifest.load_generator.get("connections"))
        scenario.gc_tail = gc_tail(scenario)
        kinds = getattr(manifest, "cpu_accounting", None) or {}
        for cell in scenario.measured():
            cell.cpu_account = cpu_accounting.account(cell.repetitions, kinds, cell.stats.mean,
                                                      cell.stats.get("p99"))
            cell.flame = flame_profiles.cell_profiles(cell)
        scenarios.append(scenario)
    method = getattr(manifest, "method", None)
    run = Run(id=manifest.run_id, title=manifest.title, date=manifest.date,
              description=manifest.description, tags=list(manifest.tags),
              value_unit=manifest.value_unit, manifest_path=manifest_path,
              environment=manifest.environment, load_generator=manifest.load_generator,
              jfr_attribution=list(manifest.jfr_attribution), scenarios=scenarios,
              cpu_accounting=dict(getattr(manifest, "cpu_accounting", None) or {}),
              warnings=list(warnings), series=manifest.series, version=manifest.version,
              repetitions=max((c.repetition for c in manifest.cells), default=1),
              method=method)
    run.flame_pairs = flame_profiles.flame_pairs(run)
    run.summary_load = summary_points(run)
    run.summary_marks = summary_marks(run)
    return run


# Files of one closed-loop load point agree on its duration when the shortest is within 1 % or
# 0.5 s (whichever is more) of the longest: tools stop on their own clocks and print the span
# rounded ("30.08s"), and repetitions of `-d 30s` differ by that much, not by a whole run.
DURATION_AGREE_PCT = 1.0
DURATION_AGREE_S = 0.5


def duration_from_files(load_id: str, spans: list[tuple[str, float | None]],
                        manifest_path: str) -> float:
    """A closed-loop load point's duration when run.yml gives none (issue 33): what its files
    state (SPANS: each file and its duration), when they agree; their median. A ResultsError
    naming the files when some state none or they disagree."""
    silent = [source for source, span in spans if span is None]
    if silent or not spans:
        raise ResultsError(f"load point {load_id!r} has no duration_s, and "
                           + (f"{', '.join(silent)} state{'s' if len(silent) == 1 else ''} none"
                              if silent else "no file of it was read"),
                           path=manifest_path, hint=f"give duration_s for {load_id} in run.yml")
    durations = sorted(span for _, span in spans)
    if durations[-1] - durations[0] > max(DURATION_AGREE_S,
                                          DURATION_AGREE_PCT / 100 * durations[-1]):
        listed = ", ".join(f"{source} {span:g} s" for source, span in sorted(spans))
        raise ResultsError(f"load point {load_id!r} has no duration_s, and its files disagree "
                           f"on how long they ran ({listed}; they agree within "
                           f"{DURATION_AGREE_PCT:g} % or {DURATION_AGREE_S:g} s)",
                           path=manifest_path,
                           hint=f"give duration_s for {load_id} in run.yml, or keep only the "
                                f"files of one length of run in it")
    n = len(durations)
    return durations[n // 2] if n % 2 else (durations[n // 2 - 1] + durations[n // 2]) / 2


def _load_point(lp, measured: dict, manifest_path: str) -> LoadPoint:
    """The model's load point; a closed loop's duration from its files where run.yml gives none
    (new-post, before any analysis, leaves it None)."""
    duration, from_files = lp.duration_s, False
    if duration is None and measured:
        spans = [(r.imported.source if r.imported else r.source,
                  r.imported.duration_s if r.imported else None)
                 for key, reps in measured.items() if key[-2] == lp.id for r, _ in reps]
        duration, from_files = duration_from_files(lp.id, spans, manifest_path), True
    return LoadPoint(lp.id, lp.offered_rate, lp.clients, duration,
                     getattr(lp, "connections", None), getattr(lp, "connections_key", None),
                     duration_from_files=from_files,
                     rate_per_client=rate_per_client(lp.offered_rate, lp.clients))


def build_scenario(scenario: Scenario, measured: dict, combine, unit: str,
                   cap: float | None) -> None:
    """Fill one scenario's cells and its systems' figures: per system the latency rule's
    baseline (its p50 at its lowest measured load of this scenario) and the predicted ceiling
    from this scenario's service time."""
    # a nominal 0 ms (bench's json scenario: no wait, the machine's time) predicts nothing and
    # splits nothing: the time split then takes the system's lowest-load p50, as with none
    service = scenario.service_time_ms or None
    by_rate = sorted(scenario.load_points, key=load_order)
    for system in scenario.systems:
        def pairs_at(lp, system=system):
            return measured.get(measured_key(scenario.id, lp.id, system.id))
        lowest = next((pairs_at(lp) for lp in by_rate if pairs_at(lp)), None)
        baseline = cell_stats([r for r, _ in lowest]).get("p50") if lowest else Percentile()
        system.baseline_p50_ms = baseline.value_ms
        ceiling = predicted_ceiling(system.concurrency_limit, service)
        for lp in scenario.load_points:
            pairs = pairs_at(lp)
            if not pairs:
                continue
            reps = [rep for rep, _ in pairs]
            if any(h is None for _, h in pairs):
                # a load tool's summary (issue 23): its own spectrum, when it printed one
                spectrum = list(reps[0].imported.spectrum) if reps[0].imported else []
            else:
                merged_h = combine([h for _, h in pairs])
                spectrum = percentile_spectrum(merged_h, unit,
                                               sum(r.stats.timed_out for r in reps),
                                               reps[0].timeout_ms)
            cell = build_cell(scenario=scenario.id, system=system.id, load=lp.id,
                              offered_rate=lp.offered_rate, repetitions=reps, spectrum=spectrum,
                              baseline_p50_ms=baseline.value_ms, baseline_p50=baseline,
                              service_time_ms=service, predicted_ceiling_rps=ceiling,
                              connections=lp.connections)
            cell.in_flight_cap = cap
            scenario.cells[(lp.id, system.id)] = cell
        # a cell that is not steady measured a transient, not what the server can do
        cells = [c for c in scenario.measured() if c.system == system.id and not c.not_steady]
        offered = {lp.id: lp.offered_rate for lp in scenario.load_points}
        fill_system(system, service_time_ms=service,
                    throughput_rps=[overload.ceiling_rate([r.throughput_rps for r in c.repetitions],
                                                          offered[c.load]) for c in cells])
        peak = system.measured_peak_rps
        for c in scenario.measured():
            # a hair above the ceiling is the lowest repetition's noise, not a left-out point
            if c.system == system.id and peak is not None \
                    and c.throughput_rps > (1 + overload.DRAIN_SHARE) * peak:
                c.ceiling_left_out = overload.ceiling_left_out(
                    [(r.index, r.throughput_rps) for r in c.repetitions], offered[c.load])
