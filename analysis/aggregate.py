"""Runs -> load-curve cells, rows and series: pure functions, no I/O.

Inputs are histograms and intervals from the HDR layer (values in the run's recorded unit);
outputs are plain dicts in milliseconds at full precision. Rounding for display happens once,
in datafiles.py. Conversion from the recorded unit happens once, here, at output.
"""
from __future__ import annotations

import math
import statistics
from typing import Any, Iterable, Sequence

from analysis.read.manifest import UNITS_PER_MS

# (name used in the data, percentile)
PERCENTILES: tuple[tuple[str, float], ...] = (
    ("p50", 50.0), ("p90", 90.0), ("p95", 95.0), ("p99", 99.0), ("p999", 99.9))
# A row whose achieved rate is below this share of the offered rate is saturated: its
# latencies describe a queue, not the service.
SATURATION_SHARE = 0.9
# A percentile with fewer samples than this beyond it is noise (credibility.md).
LOW_SAMPLE_BEYOND = 10


def to_ms(value: float | None, value_unit: str) -> float | None:
    return None if value is None else value / UNITS_PER_MS[value_unit]


def histogram_stats(h, value_unit: str) -> dict[str, Any]:
    """count, min/percentiles/max/mean/stddev in ms of one histogram (None when it is empty)."""
    count = int(h.total_count)
    out: dict[str, Any] = {"count": count}
    empty = count == 0
    for name, p in PERCENTILES:
        out[f"{name}_ms"] = None if empty else to_ms(h.value_at_percentile(p), value_unit)
    out["max_ms"] = None if empty else to_ms(h.max, value_unit)
    out["mean_ms"] = None if empty else to_ms(h.mean, value_unit)
    out["stddev_ms"] = None if empty else to_ms(h.stddev, value_unit)
    return out


def low_sample_percentiles(count: int) -> list[str]:
    """Percentiles that rest on fewer than LOW_SAMPLE_BEYOND samples beyond them."""
    # rounded: 100 - 99.9 is 0.0999999... in binary, and 10,000 samples leave exactly 10
    return [name for name, p in PERCENTILES
            if round(count * (100.0 - p) / 100.0, 6) < LOW_SAMPLE_BEYOND]


def achieved_rate(count: int, duration_s: float) -> float:
    return count / duration_s


def is_saturated(achieved: float, offered: float) -> bool:
    return achieved < SATURATION_SHARE * offered


def _sum_known(values: Iterable[int | None]) -> int | None:
    values = list(values)
    return None if any(v is None for v in values) else sum(values)


def cell_summary(*, offered_rate: float, duration_s: float, merged: dict[str, Any],
                 repetitions: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One (load point, system) cell.

    `merged` is histogram_stats of all repetitions together; `repetitions` holds per repetition
    its histogram_stats plus the manifest's `sent`, `errors`, `timeouts` (None when not given).
    With several repetitions the achieved rate is over their total duration, and the spread of
    p99 and achieved rate across them is given as min / median / max.
    """
    n = len(repetitions)
    count = merged["count"]
    rate = achieved_rate(count, duration_s * n)
    cell: dict[str, Any] = {"count": count, "achieved_rate": rate,
                            "saturated": is_saturated(rate, offered_rate)}
    for key in ("p50_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms", "mean_ms",
                "stddev_ms"):
        cell[key] = merged[key]
    cell["low_sample"] = low_sample_percentiles(count)
    sent = _sum_known(r.get("sent") for r in repetitions)
    errors = _sum_known(r.get("errors") for r in repetitions)
    timeouts = _sum_known(r.get("timeouts") for r in repetitions)
    if sent is not None:
        cell["sent"] = sent
    if errors is not None:
        cell["errors"] = errors
    if timeouts is not None:
        cell["timeouts"] = timeouts
    if sent is not None:
        # Values recorded below sent: lost, errored or timed out before a latency was taken.
        cell["drops"] = max(sent - count, 0)
        cell["drop_pct"] = 100.0 * cell["drops"] / sent if sent else 0.0
    cell["repetitions"] = n
    if n > 1:
        spread = spread_of([r["p99_ms"] for r in repetitions if r["p99_ms"] is not None])
        rates = spread_of([achieved_rate(r["count"], duration_s) for r in repetitions])
        for stat, value in spread.items():
            cell[f"p99_ms_{stat}"] = value
        for stat, value in rates.items():
            cell[f"achieved_rate_{stat}"] = value
    return cell


def spread_of(values: Sequence[float]) -> dict[str, float | None]:
    if not values:
        return {"min": None, "median": None, "max": None}
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def littles_law(*, achieved: float, mean_ms: float | None,
                in_flight_cap: float | None) -> dict[str, Any] | None:
    """In-flight = throughput x latency. With a cap on requests in flight (the generator's
    connections), a row whose implied in-flight exceeds the cap cannot have achieved its rate."""
    if mean_ms is None:
        return None
    in_flight = achieved * mean_ms / 1000.0
    out: dict[str, Any] = {"in_flight": in_flight}
    if in_flight_cap:
        out["cap"] = in_flight_cap
        out["consistent"] = in_flight <= in_flight_cap * 1.05  # 5 %: rounding and ramp edges
    return out


def predicted_ceiling(concurrency_limit: int | None, service_time_ms: float | None) -> float | None:
    """N workers each holding a request S seconds complete at most N / S requests per second."""
    if not concurrency_limit or not service_time_ms:
        return None
    return concurrency_limit / (service_time_ms / 1000.0)


def system_summary(*, concurrency_limit: int | None, service_time_ms: float | None,
                   achieved_rates: Sequence[float]) -> dict[str, Any]:
    predicted = predicted_ceiling(concurrency_limit, service_time_ms)
    peak = max(achieved_rates) if achieved_rates else None
    vs = None
    if predicted is not None and peak is not None:
        vs = (peak - predicted) / predicted * 100.0
    return {"predicted_ceiling_rps": predicted, "measured_peak_rps": peak,
            "peak_vs_predicted_pct": vs}


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
            "p50_ms": None if empty else to_ms(h.value_at_percentile(50.0), value_unit),
            "p99_ms": None if empty else to_ms(h.value_at_percentile(99.0), value_unit),
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
