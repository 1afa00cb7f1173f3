"""Histograms -> the run model's statistics, cells and systems: pure functions, no I/O.

Inputs are histograms and intervals from the HDR layer (values in the run's recorded unit);
outputs are model objects (analysis/model.py) in milliseconds at full precision. Rounding for
display happens once, in the writers. Conversion from the recorded unit happens once, here, at output.
"""
from __future__ import annotations

import math
import statistics
from typing import Any, Iterable, Sequence

from analysis.model import (Accounting, Cell, InFlight, LatencyStats, LoadPoint, Missing,
                            Percentile, Repetition, Run, Saturation, Scenario, Spread, System)
from analysis.read.manifest import UNITS_PER_MS
from analysis.vocabulary import PERCENTILES, SERIES_PERCENTILES

# A row whose achieved rate is below this share of the offered rate is saturated: its
# latencies describe a queue, not the service.
SATURATION_SHARE = 0.9
# A percentile with fewer samples than this beyond it is noise (credibility.md).
LOW_SAMPLE_BEYOND = 10


def to_ms(value: float | None, value_unit: str) -> float | None:
    return None if value is None else value / UNITS_PER_MS[value_unit]


def histogram_stats(h, value_unit: str) -> LatencyStats:
    """count, min/percentiles/max/mean/stddev in ms of one histogram (None when it is empty)."""
    count = int(h.total_count)
    empty = count == 0
    percentiles = {name: Percentile(None if empty else to_ms(h.value_at_percentile(p), value_unit))
                   for name, p, _ in PERCENTILES}
    return LatencyStats(count=count, percentiles=percentiles,
                        max_ms=None if empty else to_ms(h.max, value_unit),
                        mean_ms=None if empty else to_ms(h.mean, value_unit),
                        stddev_ms=None if empty else to_ms(h.stddev, value_unit))


def low_sample_percentiles(count: int) -> list[str]:
    """Percentiles that rest on fewer than LOW_SAMPLE_BEYOND samples beyond them."""
    # rounded: 100 - 99.9 is 0.0999999... in binary, and 10,000 samples leave exactly 10
    return [name for name, p, _ in PERCENTILES
            if round(count * (100.0 - p) / 100.0, 6) < LOW_SAMPLE_BEYOND]


def achieved_rate(count: int, duration_s: float) -> float:
    return count / duration_s


def is_saturated(achieved: float, offered: float) -> bool:
    return achieved < SATURATION_SHARE * offered


def saturation(achieved: float, offered: float) -> Saturation:
    saturated = is_saturated(achieved, offered)
    return Saturation(saturated, "throughput" if saturated else None)


def _sum_known(values: Iterable[int | None]) -> int | None:
    values = list(values)
    return None if any(v is None for v in values) else sum(values)


def total_accounting(repetitions: Sequence[Accounting]) -> Accounting:
    """Each count summed over the repetitions; None unless every repetition has it."""
    return Accounting(**{name: _sum_known(getattr(r, name) for r in repetitions)
                         for name in ("sent", "completed", "timed_out", "errors", "not_sent")})


def build_cell(*, scenario: str | None, system: str, load: str, offered_rate: float,
               duration_s: float, merged: LatencyStats, repetitions: list[Repetition],
               spectrum: list[tuple[float, float]], in_flight_cap: float | None) -> Cell:
    """One (load point, system) cell from its repetitions.

    `merged` is histogram_stats of all repetitions together. With several repetitions the
    achieved rate is over their total duration, and the spread of p99 and achieved rate across
    them is given as min / median / max. The JFR summary is the first repetition's (recordings
    are not additive).
    """
    n = len(repetitions)
    count = merged.count
    rate = achieved_rate(count, duration_s * n)
    accounting = total_accounting([r.accounting for r in repetitions])
    drops = drop_pct = None
    if accounting.sent is not None:
        # Values recorded below sent: lost, errored or timed out before a latency was taken.
        drops = max(accounting.sent - count, 0)
        drop_pct = 100.0 * drops / accounting.sent if accounting.sent else 0.0
    spread = {}
    if n > 1:
        spread["p99_ms"] = spread_of([r.stats.value("p99_ms") for r in repetitions
                                      if r.stats.value("p99_ms") is not None])
        spread["achieved_rate"] = spread_of([achieved_rate(r.stats.count, duration_s)
                                             for r in repetitions])
    first = repetitions[0]
    return Cell(scenario=scenario, system=system, load=load, repetitions=repetitions,
                stats=merged, achieved_rate=rate, saturation=saturation(rate, offered_rate),
                low_sample=low_sample_percentiles(count), accounting=accounting, drops=drops,
                drop_pct=drop_pct, spread=spread,
                in_flight=littles_law(achieved=rate, mean_ms=merged.mean_ms,
                                      in_flight_cap=in_flight_cap),
                spectrum=spectrum, jvm=first.jvm, gc_pauses=first.gc_pauses)


def spread_of(values: Sequence[float]) -> Spread:
    if not values:
        return Spread(None, None, None)
    return Spread(min(values), statistics.median(values), max(values))


def littles_law(*, achieved: float, mean_ms: float | None,
                in_flight_cap: float | None) -> InFlight | None:
    """In-flight = throughput x latency. With a cap on requests in flight (the generator's
    connections), a row whose implied in-flight exceeds the cap cannot have achieved its rate."""
    if mean_ms is None:
        return None
    in_flight = achieved * mean_ms / 1000.0
    if not in_flight_cap:
        return InFlight(in_flight)
    return InFlight(in_flight, in_flight_cap,
                    in_flight <= in_flight_cap * 1.05)  # 5 %: rounding and ramp edges


def predicted_ceiling(concurrency_limit: int | None, service_time_ms: float | None) -> float | None:
    """N workers each holding a request S seconds complete at most N / S requests per second."""
    if not concurrency_limit or not service_time_ms:
        return None
    return concurrency_limit / (service_time_ms / 1000.0)


def fill_system(system: System, *, service_time_ms: float | None,
                achieved_rates: Sequence[float]) -> None:
    """The system's predicted ceiling, its measured peak and how far apart they are."""
    predicted = predicted_ceiling(system.concurrency_limit, service_time_ms)
    peak = max(achieved_rates) if achieved_rates else None
    vs = None
    if predicted is not None and peak is not None:
        vs = (peak - predicted) / predicted * 100.0
    system.predicted_ceiling_rps = predicted
    system.measured_peak_rps = peak
    system.peak_vs_predicted_pct = vs


def interval_series(intervals: Iterable, value_unit: str) -> list[dict[str, Any]]:
    """Per-interval count, achieved rate, p50, p99 and max, time relative to the first interval."""
    rows = []
    t0 = None
    for iv in intervals:
        if t0 is None:
            t0 = iv.start_s
        h = iv.histogram
        count = int(h.total_count)
        empty = count == 0
        rows.append({
            "t_s": iv.start_s - t0,
            "length_s": iv.length_s,
            "count": count,
            "achieved_rate": count / iv.length_s if iv.length_s > 0 else None,
            **{f"{name}_ms": None if empty else to_ms(h.value_at_percentile(p), value_unit)
               for name, p in SERIES_PERCENTILES},
            "max_ms": None if empty else to_ms(h.max, value_unit),
        })
    return rows


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


def percentile_spectrum(h, value_unit: str) -> list[tuple[float, float]]:
    """(percentile, value in ms) pairs, ending with (100, max)."""
    count = int(h.total_count)
    if count == 0:
        return []
    percentiles = spectrum_percentiles(count)
    many = getattr(h, "values_at_percentiles", None)  # one pass over the counts when offered
    values = list(many(percentiles)) if many else [h.value_at_percentile(p) for p in percentiles]
    points = [(p, to_ms(float(v), value_unit)) for p, v in zip(percentiles, values)]
    points.append((100.0, to_ms(h.max, value_unit)))
    return points


def rate_per_client(offered_rate: float, clients: int | None) -> float | None:
    return offered_rate / clients if clients else None


def build_run(manifest, measured: dict[tuple[str, str], list[tuple[Repetition, Any]]] | None = None,
              combine=None, *, missing: Sequence[Missing] = (), warnings: Sequence[str] = (),
              manifest_path: str = "") -> Run:
    """The run model from run.yml and the repetitions read for each (load, system): the grid is
    joined here, once. `measured` pairs each repetition with its histogram; `combine` adds
    histograms (the HDR layer's sum, as Java adds them). Without `measured`: the run's shape
    only (systems, load points), as new-post drafts it before any analysis."""
    measured = measured or {}
    unit = manifest.value_unit
    cap = manifest.load_generator.get("connections")
    systems = [System(s.id, s.label, i, s.concurrency_limit, s.description)
               for i, s in enumerate(manifest.systems)]
    load_points = [LoadPoint(lp.id, lp.offered_rate, lp.clients, lp.duration_s)
                   for lp in manifest.load_points]
    scenario = Scenario(id=None, label=None, description=None,
                        service_time_ms=manifest.service_time_ms, systems=systems,
                        load_points=load_points, missing=list(missing))
    for lp in load_points:
        for system in systems:
            pairs = measured.get((lp.id, system.id))
            if not pairs:
                continue
            reps = [rep for rep, _ in pairs]
            merged_h = combine([h for _, h in pairs])
            # One repetition (the usual case): its histogram is the merged one, stats and all.
            merged = reps[0].stats if len(reps) == 1 else histogram_stats(merged_h, unit)
            scenario.cells[(lp.id, system.id)] = build_cell(
                scenario=None, system=system.id, load=lp.id, offered_rate=lp.offered_rate,
                duration_s=lp.duration_s, merged=merged, repetitions=reps,
                spectrum=percentile_spectrum(merged_h, unit), in_flight_cap=cap)
    for system in systems:
        fill_system(system, service_time_ms=manifest.service_time_ms,
                    achieved_rates=[c.achieved_rate for c in scenario.measured()
                                    if c.system == system.id])
    return Run(id=manifest.run_id, title=manifest.title, date=manifest.date,
               description=manifest.description, tags=list(manifest.tags),
               value_unit=unit, manifest_path=manifest_path,
               environment=manifest.environment, load_generator=manifest.load_generator,
               jfr_attribution=list(manifest.jfr_attribution), scenarios=[scenario],
               warnings=list(warnings), series=getattr(manifest, "series", None),
               version=getattr(manifest, "version", None),
               repetitions=max((c.repetition for c in manifest.cells), default=1))

