"""The verdicts of a run's scenario x target summary table (issue 11; issue 35: made here, not
in the writer): which targets hold each column's best value within a scenario, and the order of
the targets by each scenario's p99. Made once by aggregate.build_run (Run.summary_marks), from
the cells at the summary load points (Run.summary_load); write/summary.py only prints them.

"Best" is what a reader of the table can see: a difference the table does not print marks
nothing, so values tie when their printed texts (the vocabulary's, as the table prints them)
are equal; throughputs tie within 1 % of the offered rate.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from analysis.model import Cell, Run
from analysis.vocabulary import fmt_censored, fmt_count, fmt_rate

# The summary table's columns, in order (write/summary.py names and prints them)
COLUMNS = ("throughput", "p50", "p99", "max", "errors")
RANK_STAT = "p99"
UNKNOWN = (2, 0.0)          # no value: sorts after every measured and censored one


@dataclass
class SummaryMarks:
    best: set[tuple[str, str, str]] = field(default_factory=set)   # (scenario, system, column)
    ranked: dict[str, list[str]] = field(default_factory=dict)     # scenario -> system ids


def column_keys(c: Cell | None, offered_rate: float | None) -> dict[str, tuple[tuple, str]]:
    """Per column (sort key: lower is better; what ties it: the printed text)."""
    if c is None:
        return {key: (UNKNOWN, "–") for key in COLUMNS}
    # At a fixed offered rate every target that keeps up delivers it, give or take the
    # window's edges (999.9 vs 1,000.1 req/s): throughputs tie within 1 % of the offered.
    share = round(100.0 * c.throughput_rps / offered_rate) if offered_rate else 0
    if offered_rate is None:
        # a closed loop (issue 23) offers no rate: at the same connections, more is better
        share = round(c.throughput_rps)
    out = {"throughput": ((0, -share), fmt_rate(c.throughput_rps))}
    for name in ("p50", "p99", "max"):
        p = c.stats.get(name)
        out[name] = (p.sort_key(), fmt_censored(p.value_ms, p.at_least_ms, table=True,
                                                at_most=p.upper_bound))
    out["errors"] = (UNKNOWN, "–") if c.drops is None else ((0, float(c.drops)),
                                                           fmt_count(c.drops))
    return out


def best_rows(entries: list[tuple[tuple, str]], *, by_key: bool = False) -> set[int]:
    """Rows holding a column's best value: the lowest sort key among measured values (a
    censored bound is never best), with every row that prints the same text (a difference the
    table does not show marks nothing) or, `by_key`, has the same sort key; none when all
    measured values tie."""
    tie = (lambda k, text: k) if by_key else (lambda k, text: text)
    known = [(k, tie(k, text)) for k, text in entries if k[0] == 0]
    if len({t for _, t in known}) < 2:
        return set()
    low = min(known)[1]
    return {i for i, (k, text) in enumerate(entries) if k[0] == 0 and tie(k, text) == low}


def summary_marks(run: Run) -> SummaryMarks | None:
    """The table's best values and rankings; None for a run without scenarios."""
    if not run.has_scenarios:
        return None
    points, _ = run.summary_load
    marks = SummaryMarks()
    for sc in run.scenarios:
        lp, _ = points[sc.id]
        offered = lp.offered_rate if lp else 0.0        # None: a closed loop
        keys = [column_keys(sc.cell(lp.id, s.id) if lp else None, offered) for s in sc.systems]
        for col in COLUMNS:
            winners = best_rows([k[col] for k in keys], by_key=col == "throughput")
            marks.best.update((sc.id, sc.systems[i].id, col) for i in winners)
        order = sorted(range(len(sc.systems)),
                       key=lambda i: (keys[i][RANK_STAT][0], sc.systems[i].index))
        marks.ranked[sc.id] = [sc.systems[i].id for i in order]
    return marks
