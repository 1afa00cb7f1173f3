"""GC pause against tail, per scenario: each cell's longest in-window GC pause beside its p99.9
and max, and a computed statement of how many tails exceed that pause and by how much.

Descriptive only: a tail longer than the longest pause says that something else also took that
long, not what; a tail shorter than it says the pause did not land on the slowest requests (or
fell between them). The statement therefore says "exceeds", never "caused by".

Pure: aggregate.build_run sets each scenario's `gc_tail` (gc_tail below) once, and the chart
(write/charts/run_jobs.py) and the data file (chartset.chart_section) read it from the model.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from analysis.model import Cell, Percentile, Scenario
from analysis.vocabulary import fmt_ms

TAILS = ("p999", "max")


@dataclass(frozen=True)
class GcTailPoint:
    system: str
    load: str
    pause_ms: float             # the longest in-window GC pause of any of the cell's repetitions
    p999: Percentile            # the cell's (median of its repetitions')
    max: Percentile


@dataclass(frozen=True)
class GcTail:
    """A scenario's GC pauses against its tails: the points the chart draws, systems in
    run.yml's order, and the statement the page prints (gc_tail_statement)."""
    points: tuple[GcTailPoint, ...]
    statement: dict[str, Any]


def gc_tail(scenario: Scenario) -> GcTail | None:
    """The scenario's GcTail; None when no cell has a JFR window (no chart, nothing to say)."""
    points = gc_tail_points(scenario)
    return GcTail(tuple(points), gc_tail_statement(points)) if points else None


def longest_window_pause(cell: Cell) -> float | None:
    """The longest GC pause inside the measured window over the cell's repetitions that have a
    JFR recording (`jvm.window.gc_pause_max_ms`); None when none has one."""
    pauses = [r.jvm.window.gc_pause_max_ms for r in cell.repetitions
              if r.jvm is not None and r.jvm.window is not None
              and r.jvm.window.gc_pause_max_ms is not None]
    return max(pauses) if pauses else None


def gc_tail_points(scenario: Scenario) -> list[GcTailPoint]:
    """The scenario's cells with a JFR window, load point by load point, systems in order."""
    points = []
    for lp, row in scenario.grid():
        for system, cell in row:
            if cell is None:
                continue
            pause = longest_window_pause(cell)
            if pause is not None:
                points.append(GcTailPoint(system.id, lp.id, pause, cell.stats.get("p999"),
                                          cell.stats.get("max")))
    return points


def _exceeding(points: list[GcTailPoint], name: str) -> dict[str, Any]:
    """How many of the points' `name` tails exceed the pause, and by how much (ms). A censored
    tail is only known to be at least the timeout: it counts as exceeding when the timeout does,
    and stays out of the differences (`censored` says how many)."""
    known = [(p.pause_ms, getattr(p, name)) for p in points if getattr(p, name).known]
    over = [(pause, tail) for pause, tail in known if tail.bound() > pause]
    by = sorted(tail.value_ms - pause for pause, tail in over if not tail.censored)
    return {"cells": len(known), "exceeding": len(over),
            "censored": sum(1 for _, tail in over if tail.censored),
            "by_min_ms": by[0] if by else None, "by_max_ms": by[-1] if by else None,
            "by_median_ms": statistics.median(by) if by else None}


def _amount(n: dict[str, Any]) -> str:
    """', by 2.10–480 ms (median 12.0 ms)' for the exceeding tails with a value; a censored
    one (no answer within the timeout) is only known to exceed, and said apart."""
    censored = n["censored"]
    if n["by_min_ms"] is None:
        if not censored:
            return ""
        which = f"all {censored}" if censored > 1 else "it is"
        return f" ({which} censored at the timeout: no answer within it)"
    if n["by_min_ms"] == n["by_max_ms"]:
        text = f", by {fmt_ms(n['by_min_ms'])} ms"
        return text + (f" ({censored} more censored at the timeout)" if censored else "")
    notes = [f"median {fmt_ms(n['by_median_ms'])} ms"]
    if censored:
        notes.append(f"{censored} censored at the timeout, left out of these figures")
    return (f", by {fmt_ms(n['by_min_ms'])}–{fmt_ms(n['by_max_ms'])} ms "
            f"({'; '.join(notes)})")


def gc_tail_statement(points: list[GcTailPoint]) -> dict[str, Any] | None:
    """The statement for the page, with the numbers it rests on:
    {text, cells, p999: {cells, exceeding, censored, by_min_ms, by_max_ms, by_median_ms},
    max: {...}}, e.g. "In 31 of 35 cells the p99.9 exceeds the longest in-window GC pause, by
    2.10–480 ms (median 12.0 ms); the max exceeds it in 35 of 35, by ...". None without a
    cell that has a JFR window: nothing to say."""
    if not points:
        return None
    p999, mx = (_exceeding(points, name) for name in TAILS)
    text = (f"In {p999['exceeding']} of {p999['cells']} cells the p99.9 exceeds the longest "
            f"in-window GC pause{_amount(p999)}; the max exceeds it in {mx['exceeding']} of "
            f"{mx['cells']}{_amount(mx)}.")
    return {"text": text, "cells": len(points), "p999": p999, "max": mx}
