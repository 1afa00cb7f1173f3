"""A cell's figures as printed: the texts stat.html prints for it (vocabulary.CELL_TEXT_FIELDS),
and the formatting the view blocks share (a statistic with its censoring or upper bound, a CPU
share, a per-request CPU figure, a waiting share). Every view module prints a cell through these,
so that a figure reads the same in a post, a table and a caption.
"""
from __future__ import annotations

import math

from analysis.model import Cell, LatencyStats
from analysis.vocabulary import (CELL_TEXT_FIELDS, PERCENTILES, TABLE_LATENCY, fmt_censored,
                                 fmt_count, fmt_ms, fmt_pct, fmt_rate)


LABELS = {name: label for name, _, label in PERCENTILES}


def latency_header() -> str:
    return " / ".join(LABELS.get(name, name) for name in TABLE_LATENCY)


def stat_text(c: Cell, name: str, *, table: bool = False) -> str:
    # several generators' summaries (issue 33): say why there are no percentiles where they go
    note = next((r.imported.percentiles_note for r in c.repetitions
                 if r.imported and r.imported.percentiles_note), None)
    return latency_text(c.stats, name, table=table,
                        note=note if name.startswith("p") else None)


def latency_text(stats: LatencyStats, name: str, *, table: bool = False,
                 note: str | None = None) -> str:
    p = stats.get(name)
    if note and not p.known:
        return note
    return fmt_censored(p.value_ms, p.at_least_ms, table=table, at_most=p.upper_bound)


def cell_texts(c: Cell) -> dict[str, str]:
    """The printed text of a cell's statistics (vocabulary.CELL_TEXT_FIELDS): what stat.html
    prints for field=p99, throughput, count, ... A censored statistic prints as "> 15,000" (ms,
    the lower bound); "–" when unknown."""
    drops = "–"
    if c.drops is not None:
        drops = fmt_count(c.drops) + (f" ({c.drop_pct:.1f} %)" if c.drops else "")
    flight = c.in_flight
    a = c.accounting
    special = {"throughput_rps": fmt_rate(c.throughput_rps),
               "goodput_rps": fmt_rate(c.goodput_rps), "count": fmt_count(c.stats.count),
               "drops": drops,
               "in_flight": fmt_ms(flight.measured_mean if flight else None),
               "in_flight_max": fmt_count(flight.measured_max if flight else None),
               "littles_law": fmt_ms(flight.littles_law if flight else None),
               "sent": fmt_count(a.sent), "completed": fmt_count(a.completed),
               "timed_out": fmt_count(a.timed_out), "not_sent": fmt_count(a.not_sent),
               "saturation": ", ".join(c.saturation.reasons) or "none",
               "in_flight_at_window_start": fmt_count(_whole(flight.at_window_start
                                                            if flight else None)),
               "in_flight_at_window_end": fmt_count(_whole(flight.at_window_end
                                                          if flight else None)),
               "time_split.mean.waiting_ms": _waiting(c, "waiting_ms"),
               "time_split.mean.waiting_pct": _waiting(c, "waiting_pct"),
               "spread.p50_ms": _range_text(c, "p50"), "spread.p99_ms": _range_text(c, "p99"),
               "host.machine_cpu": share_text(c.host.machine_cpu if c.host else None),
               "host.server_cpu": share_text(c.host.server_cpu if c.host else None),
               **cpu_account_texts(c.cpu_account), **_steady_cell_texts(c)}
    return {f"{name}_text": special[key] if key in special else stat_text(c, name)
            for key, name in CELL_TEXT_FIELDS.items()}


def _steady_cell_texts(c: Cell) -> dict[str, str]:
    """Issue 32's figures for prose: the classes ("warmup 2, flat 1"), where the steady parts
    whose figures the cell reports start ("3–6 s"), and the whole windows' p50 and p99."""
    starts = [r.steady.steady_from_s for r in c.repetitions
              if r.steady is not None and r.steady.from_steady_part]
    whole = c.window_stats
    return {"steady_counts": ", ".join(f"{k} {v}" for k, v in c.steady_counts.items()) or "–",
            "steady_from": seconds_text(starts) if starts else "–",
            "whole_window.p50_ms": latency_text(whole, "p50", table=True) if whole else "–",
            "whole_window.p99_ms": latency_text(whole, "p99", table=True) if whole else "–"}


def cpu_account_texts(a) -> dict[str, str]:
    """The per-request accounting's figures as a post prints them inline (stat.html)."""
    texts = {f"cpu_account.{name}": "–" if a is None else ms3_text(getattr(a, name))
             for name in ("cpu_ms", "handler_ms", "coordination_ms", "gc_vm_ms")}
    texts["cpu_account.p99.waiting_pct"] = "–" if a is None else bound_pct_text(a.p99)
    return texts


def _whole(x: float | None) -> int | None:
    return None if x is None else int(round(x))


def _waiting(c: Cell, key: str) -> str:
    """The mean's waiting time (ms, "≥ " when a bound) or its share of the mean (%)."""
    t = c.time_split
    if t is None:
        return "–"
    if key == "waiting_pct":
        return fmt_pct(t.mean.waiting_pct)
    return ("≥ " if t.mean.lower_bound else "") + fmt_ms(t.mean.waiting_ms)


def _range_text(c: Cell, name: str) -> str:
    """The repetitions' range of a statistic: "199–204" ("–" with one repetition)."""
    s = c.spread.get(name)
    if s is None:
        return "–"
    return (f"{fmt_censored(s.min.value_ms, s.min.at_least_ms, at_most=s.min.upper_bound)}–"
            f"{fmt_censored(s.max.value_ms, s.max.at_least_ms, at_most=s.max.upper_bound)}")


def seconds_text(values: list[float]) -> str:
    lo, hi = min(values), max(values)
    return f"{lo:g} s" if lo == hi else f"{lo:g}–{hi:g} s"


def ms3_text(x: float) -> str:
    # a per-request CPU figure is a fraction of a millisecond: three decimals keep it visible
    return f"{x:,.3f}"


def bound_pct_text(w) -> str:
    """The waiting share of a latency, rounded down: near saturation it is 99.98 %, which
    rounding would print as a 100 % no request can reach."""
    if w.waiting_pct is None:
        return "–"
    return ("≥ " if w.lower_bound else "") + f"{fmt_pct(math.floor(w.waiting_pct * 10) / 10)} %"


def share_text(x: float | None) -> str:
    """A share of the whole machine (0..1) as every page prints CPU: "8.4 %"."""
    return "–" if x is None else f"{x * 100:.1f} %"
