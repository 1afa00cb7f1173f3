"""The scenario x target summary table of a run with scenarios (issue 11): one row per target,
per scenario its throughput, p50 / p99 / max and errors at one load point, the best value of
each column marked; pre-rendered in several orders (grouped by server, grouped by model, sorted
by each scenario's p99), so that a reader can sort without JavaScript.

Which load point stands for a scenario (derive/summary_load.py), which value is best and the
order of the rows by p99 (derive/summary_marks.py) are decided in derive/; this module prints
them, and summary-table.html only loops and prints (docs/data-format.md,
`summary_table`). The same numbers go to `assets/data/<run>/summary.csv`.
"""
from __future__ import annotations

from typing import Any, Callable

from analysis.derive import overload
from analysis.derive.summary_marks import RANK_STAT
from analysis.model import Cell, Percentile, Run, System
from analysis.vocabulary import (RATE_UNIT, fmt_censored, fmt_count,
                                 fmt_rate, load_point_text, r3)
from analysis.paths import scenario_url, summary_csv_path
from analysis.write.load_curve_views import error_flag_text

# How a target's model (run.yml `model:`) is named in the table; other words print as given.
MODEL_TEXT = {"pool": "thread pool", "virtual": "virtual threads", "event-loop": "event loop"}
# The columns of each scenario, in order: (key, header, unit)
COLUMNS = (("throughput", "throughput", RATE_UNIT), ("p50", "p50", "ms"), ("p99", "p99", "ms"),
           ("max", "max", "ms"), ("errors", "errors + timed out", "requests"))


def _texts(c: Cell | None) -> dict[str, str]:
    """Per column, the printed value ("–": none)."""
    if c is None:
        return {key: "–" for key, _, _ in COLUMNS}
    out = {"throughput": fmt_rate(c.throughput_rps)}
    for name in ("p50", "p99", "max"):
        p: Percentile = c.stats.get(name)
        out[name] = fmt_censored(p.value_ms, p.at_least_ms, table=True, at_most=p.upper_bound)
    out["errors"] = "–" if c.drops is None else fmt_count(c.drops)
    return out


def _system_text(s: System) -> str:
    parts = [s.family, MODEL_TEXT.get(s.model, s.model) if s.model else None]
    return " · ".join(p for p in parts if p)


def _groups(systems: list[System], key: Callable[[System], str | None]) -> list[tuple[str | None, list[System]]]:
    """Systems grouped by `key` (groups in order of first appearance, run.yml order inside)."""
    groups: dict[str | None, list[System]] = {}
    for s in systems:
        groups.setdefault(key(s), []).append(s)
    return list(groups.items())


def summary_table(run: Run) -> dict[str, Any] | None:
    """The `summary_table` block; None for a run without scenarios."""
    if not run.has_scenarios:
        return None
    scenarios, cells = [], {}
    points, same_load = run.summary_load
    for sc in run.scenarios:
        lp, why = points[sc.id]
        scenarios.append({"id": sc.id, "label": sc.label, "url": scenario_url(run.id, sc.id),
                          "point_text": load_point_text(lp, unit=RATE_UNIT) if lp else "–",
                          "point_reason": why, "colspan": len(COLUMNS)})
        for s in sc.systems:
            cells[(sc.id, s.id)] = sc.cell(lp.id, s.id) if lp else None
    systems = run.scenarios[0].systems
    texts = {key: _texts(c) for key, c in cells.items()}
    best = run.summary_marks.best

    def row(s: System) -> dict[str, Any]:
        out_cells = []
        for sc in run.scenarios:
            c = cells[(sc.id, s.id)]
            out_cells.append({
                "scenario": sc.id, "missing": c is None,
                "saturated": bool(c and c.saturation.saturated),
                "error_text": error_flag_text(c) if c else None,
                "values": [{"text": texts[(sc.id, s.id)][col],
                            "best": (sc.id, s.id, col) in best} for col, _, _ in COLUMNS]})
        return {"system": s.id, "label": s.label, "detail_text": _system_text(s),
                "cells": out_cells}

    orders = []
    for order_id, label, key in (("family", "grouped by server", lambda s: s.family),
                                 ("model", "grouped by model",
                                  lambda s: MODEL_TEXT.get(s.model, s.model) if s.model else None)):
        if not any(key(s) for s in systems):
            continue        # run.yml gives no family (model): no such grouping
        orders.append({"id": order_id, "label": label, "groups": [
            {"label": name or "other", "rows": [row(s) for s in members]}
            for name, members in _groups(systems, key)]})
    if len(systems) < 2:
        # one target: every grouping and sort gives the same one-row table
        orders = orders[:1] or [{"id": "target", "label": "of the one target", "groups": [
            {"label": None, "rows": [row(s) for s in systems]}]}]
    for sc in run.scenarios if len(systems) > 1 else ():
        by_id = {s.id: s for s in systems}
        ranked = [by_id[i] for i in run.summary_marks.ranked[sc.id]]
        orders.append({"id": f"by-{sc.id}", "label": f"sorted by {sc.label} {RANK_STAT}",
                       "groups": [{"label": None, "rows": [row(s) for s in ranked]}]})
    base = f"summary-{run.id}"
    for o in orders:
        o["anchor"] = f"{base}-{o['id']}"
        o["caption_id"] = f"{base}-{o['id']}-caption"
    if same_load and scenarios:
        first = scenarios[0]
        at = (f"Each target in each scenario at one load, the same in every scenario - "
              f"{first['point_text']} ({first['point_reason']}).")
    else:
        points_text = "; ".join(f"{x['label']}: {x['point_text']} ({x['point_reason']})"
                                for x in scenarios)
        at = (f"Each target in each scenario at one load; the scenarios' loads differ, so "
              f"compare targets within a scenario, not one scenario's column with another's - "
              f"{points_text}.")
    return {
        "caption": (f"{at} "
                    f"Throughput: the replies the server sent per second in the window; latencies "
                    f"the median of the repetitions; errors + timed out: the window's requests "
                    f"that got no answer in time, summed over the repetitions."),
        "csv": summary_csv_path(run.id),
        "best_note": ("Bold, with the words \"(best)\": the best value of its column within a "
                      "scenario (highest throughput, lowest latency or errors), marked only "
                      "where the values differ as printed (throughputs: by more than 1 % "
                      "of the offered rate); a censored latency (\">\": only a "
                      "lower bound) is never best. Saturated: a saturation rule of the "
                      "load-curve table holds for the cell, so its latencies describe a queue. "
                      "errors: more than "
                      f"{overload.ERROR_SHARE * 100:g} % of its window's requests were "
                      "answered with an error (its own verdict: an error is an answer)."),
        "colspan": 1 + len(COLUMNS) * len(scenarios),
        "columns": [{"key": k, "label": label, "unit": unit} for k, label, unit in COLUMNS],
        "scenarios": scenarios,
        "orders": orders,
    }


def summary_rows(run: Run) -> list[list[Any]]:
    """The summary table's numbers, one line per (scenario, target): SUMMARY_CSV_COLUMNS."""
    rows = []
    points, _ = run.summary_load
    for sc in run.scenarios:
        lp, _ = points[sc.id]
        for s in sc.systems:
            c = sc.cell(lp.id, s.id) if lp else None
            if c is None:
                continue
            stats = [c.stats.get(n) for n in ("p50", "p99", "max")]
            rows.append([sc.id, lp.id, lp.offered_rate, s.id, s.family, s.model,
                         r3(c.throughput_rps), *[r3(p.value_ms) for p in stats],
                         *[r3(p.at_least_ms) for p in stats], c.drops,
                         str(c.saturation.saturated).lower()])
    return rows
