"""-> `_data/runs/<run-id>.yml` (deterministic YAML) and the CSVs under `assets/data/<run-id>/`.

The document's shape is the team contract in docs/data-format.md: the run's fields and data
(systems, load points, cells keyed by load point and system, with full numbers rounded once,
here), then one view block per include (the *_views modules). Keys come in the order listed
there and nothing depends on the clock or the machine.
"""
from __future__ import annotations

import csv
import io
from itertools import chain
from typing import Any

from analysis.model import Cell, LoadPoint, Run, Scenario, System
from analysis.vocabulary import (ENVIRONMENT_LABELS, LATENCY_KEYS, LOAD_GENERATOR_LABELS,
                                 METHOD_LABELS, PERCENTILE_NAMES, SERIES_COLUMNS,
                                 SPREAD_STATS, SUMMARY_CSV_COLUMNS, closed_load_text, fmt_number,
                                 has_closed_loads, labelled, load_label, load_order, r1, r3,
                                 table_csv_columns)
from analysis.write import (cell_text, flame_views, jvm_views, load_curve_views, methodology_views,
                            overload_views, page_views, summary)
from analysis.write.charts.chartset import chart_section, summary_chart_section
from analysis.paths import report_url, series_csv_path

# Version 5 (issue 22): one name per rate. A cell's `achieved_rate` (the goodput in schema 2,
# count / duration in schema 1) and `server_completion_rate` are replaced by `throughput_rps`
# (every reply during the window / s; schema 1: the recorded values / s) and `goodput_rps`
# (schema 2: window requests answered in time, through the drain, / window s); likewise
# `throughput_rps_spread`, `goodput_rps_spread`, `throughput_text`, `goodput_text` (for
# `achieved_rate_spread`, `achieved_text`, `server_rate_text`); the load-curve table cell's
# `achieved_rate`/`achieved_text` (which held the throughput) are `throughput_rps`/
# `throughput_text`; the summary column `achieved` is `throughput`; the saturation reason
# `throughput` is `goodput`.
# Version 4 (issue 11): a run with `scenarios:` keeps its run-wide fields, lists and
# `methodology` at the top, and puts each scenario's data and view blocks (systems with this
# scenario's ceilings, load_points, cells, stat, load_curve_table, ceiling, where_the_time_went,
# host_health, jvm_table, jvm_hotspots, charts) under `scenarios: {<id>: ...}`; new top-level
# blocks `summary_table` and `scenario_list`; systems may carry `family` and `model`; the
# method may carry `pool_threads` and `jfr_repetitions`. A run without scenarios is written as
# in version 3 (the version number aside).
# Version 3 (issue 10): censored statistics (`<name>_ms: null` + `<name>_at_least_ms`); each
# statistic of a cell with repetitions is their median, with `spread: {<key>: [min, median,
# max]}` (replacing p99_ms_min/_median/_max and achieved_rate_min/...: now
# `achieved_rate_spread`); `timeouts` is now `timed_out` (+ `completed`, `not_sent`);
# `saturation` (a list of reasons) replaces `saturation_reason`; `in_flight` is the measured
# mean (Little's law moved to `littles_law`, `in_flight_consistent` removed); new `host_busy`,
# `host`, `time_split`, `jvm.in_window`, `server_completion_rate`; the load-curve table shows
# p99.9 and its cells carry requests, saturation and host texts; new blocks
# `where_the_time_went` and `host_health`; `jvm_table` rows are the window's figures.
# Version 2 (issue 9): `cells` is a map load point -> system -> cell, each cell with the printed
# `<stat>_text` beside its numbers; `table` is now `load_curve_table` (with `missing` inside);
# new view blocks `ceiling`, `methodology`, `stat`; `jvm_table` is the jvm-table.html view
# (the old flattened columns were read by no template); the charts lists carry `caption`.
# Version 1: the first published shape. Bump it, and say what changed here, when a key is
# renamed or removed; adding a key does not need a bump.
SCHEMA_VERSION = 5


def run_document(run: Run, chart_sizes: dict[str, tuple[int, int]] | None = None,
                 flames: tuple[list, list] = ([], [])) -> dict[str, Any]:
    """The `_data/runs/<id>.yml` document for one analysed run (see analyse.analyse_run);
    `chart_sizes` are the charts' pixel sizes (run_jobs.pixel_sizes); `flames` the flame
    graphs and differential ones drawn of it (charts/flame_cells.py)."""
    implicit = None if run.has_scenarios else run.scenario
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "id": run.id,
        "title": run.title,
        "date": run.date,
        "description": run.description,
        "tags": list(run.tags),
        "url": report_url(run.id),
        "manifest": run.manifest_path,
        "value_unit": run.value_unit,
        "service_time_ms": implicit.service_time_ms if implicit else None,
        "environment": labelled(run.environment, ENVIRONMENT_LABELS),
        "load_generator": labelled(run.load_generator, LOAD_GENERATOR_LABELS),
    }
    if run.method is not None:
        method = {k: getattr(run.method, k, None) for k in METHOD_LABELS
                  if getattr(run.method, k, None) is not None}
        doc["method"] = labelled(method, METHOD_LABELS)
    for key, value in (("series", run.series), ("version", run.version)):
        if value is not None:
            doc[key] = value
    if implicit is not None:
        doc.update(scenario_data(run, implicit))
        doc["stat"] = page_views.stat(doc)
        doc["load_curve_table"] = load_curve_views.load_curve_table(run, implicit)
        doc["ceiling"] = overload_views.ceiling(run, implicit)
        doc["methodology"] = methodology_views.methodology(run)
        doc.update(optional_blocks(run, implicit, flames))
        doc["charts"] = chart_section(run, chart_sizes)
        return doc
    doc["systems"] = [_system_entry(s) for s in run.scenarios[0].systems]
    doc["load_points"] = [_load_point_entry(lp) for lp in _run_load_points(run)]
    doc["methodology"] = methodology_views.methodology(run)
    doc["summary_table"] = summary.summary_table(run)
    summary_charts = summary_chart_section(run, chart_sizes)
    if summary_charts:
        doc["summary_charts"] = summary_charts
    doc["scenario_list"] = [page_views.scenario_heading(run, sc) for sc in run.scenarios]
    doc["scenarios"] = {sc.id: scenario_document(run, sc, doc, chart_sizes, flames)
                        for sc in run.scenarios}
    across = flame_views.run_diffs(run, flames[1])
    if across:
        doc["flame_diffs"] = across
    return doc


def scenario_document(run: Run, scenario: Scenario, doc: dict[str, Any],
                      chart_sizes: dict[str, tuple[int, int]] | None,
                      flames: tuple[list, list] = ([], [])) -> dict[str, Any]:
    """One scenario's block of a run with scenarios: its heading (page_views.scenario_heading), its
    data (systems with this scenario's ceilings, load points, cells) and its view blocks, each
    as the run-level block of a run without scenarios."""
    block: dict[str, Any] = page_views.scenario_heading(run, scenario)
    block.update(scenario_data(run, scenario))
    block["stat"] = page_views.stat({**block, **{k: doc[k] for k in
                                            ("environment", "load_generator", "method")
                                            if k in doc}})
    block["load_curve_table"] = load_curve_views.load_curve_table(run, scenario)
    block["ceiling"] = overload_views.ceiling(run, scenario)
    block.update(optional_blocks(run, scenario, flames))
    block["charts"] = chart_section(run, chart_sizes, scenario)
    return block


def scenario_data(run: Run, scenario: Scenario) -> dict[str, Any]:
    """`systems`, `load_points` and `cells` of one scenario."""
    cells: dict[str, dict[str, Any]] = {}
    for c in scenario.measured():
        cells.setdefault(c.load, {})[c.system] = cell_entry(run.id, c)
    return {"systems": [_system_entry(s, figures=True) for s in scenario.systems],
            "load_points": [_load_point_entry(lp) for lp in scenario.load_points],
            "cells": cells}


def optional_blocks(run: Run, scenario: Scenario,
                    flames: tuple[list, list] = ([], [])) -> dict[str, Any]:
    """The view blocks a run has only when it recorded what they show."""
    out = {}
    for name, block in (("where_the_time_went", overload_views.where_the_time_went(run, scenario)),
                        ("cpu_accounting", overload_views.cpu_accounting(run, scenario)),
                        ("host_health", overload_views.host_health(run, scenario)),
                        ("jvm_table", jvm_views.jvm_table(run, scenario)),
                        ("jvm_hotspots", jvm_views.jvm_hotspots(run, scenario)),
                        ("flame_graphs", flame_views.flame_block(run, scenario, *flames))):
        if block:
            out[name] = block
    return out


def _system_entry(s: System, figures: bool = False) -> dict[str, Any]:
    """A `systems` entry; with `figures`, the scenario's ceiling, peak and baseline."""
    entry: dict[str, Any] = {"id": s.id, "label": s.label}
    for key in ("family", "model"):
        if getattr(s, key) is not None:
            entry[key] = getattr(s, key)
    entry["concurrency_limit"] = s.concurrency_limit
    if figures:
        entry.update({"predicted_ceiling_rps": r1(s.predicted_ceiling_rps),
                      "measured_peak_rps": r1(s.measured_peak_rps),
                      "peak_vs_predicted_pct": r1(s.peak_vs_predicted_pct),
                      "baseline_p50_ms": r3(s.baseline_p50_ms)})
    if s.description:
        entry["description"] = s.description
    return entry


def _load_point_entry(lp: LoadPoint) -> dict[str, Any]:
    if lp.closed:
        # issue 23: a closed loop's load is its connections (users); it offers no rate
        return {"id": lp.id, "offered_rate": None, "connections": lp.connections,
                "clients": None, "rate_per_client": None, "duration_s": lp.duration_s,
                "duration_text": fmt_number(lp.duration_s), "label": closed_load_text(lp)}
    # (duration_text: issue 33's durations from the files are floats, 3.06, which Liquid
    # would print as Ruby does)
    return {"id": lp.id, "offered_rate": lp.offered_rate, "clients": lp.clients,
            "rate_per_client": r3(lp.rate_per_client),
            "duration_s": lp.duration_s, "duration_text": fmt_number(lp.duration_s),
            "label": load_label(lp.offered_rate, lp.clients)}


def _run_load_points(run: Run) -> list[LoadPoint]:
    """Every scenario's load points, once each, by offered rate (or connections)."""
    seen: dict[str, LoadPoint] = {}
    for sc in run.scenarios:
        for lp in sc.load_points:
            seen.setdefault(lp.id, lp)
    return sorted(seen.values(), key=lambda lp: (load_order(lp), lp.id))


def _spread_lists(c: Cell) -> tuple[dict[str, list], dict[str, list]]:
    """`spread` ({key: [min, median, max]}, null where censored) and `spread_at_least` (the
    bounds of the censored entries, null elsewhere; only keys with one)."""
    spread, at_least = {}, {}
    for key in SPREAD_STATS:
        s = c.spread.get(key[:-3])
        if s is None:
            continue
        parts = (s.min, s.median, s.max)
        spread[key] = [r3(p.value_ms) for p in parts]
        if any(p.censored for p in parts):
            at_least[key] = [r3(p.at_least_ms) for p in parts]
    return spread, at_least


def _time_split(c: Cell) -> dict[str, Any] | None:
    t = c.time_split
    if t is None:
        return None
    out: dict[str, Any] = {"service_ms": r3(t.mean.service_ms)}
    for name in ("mean", "p99"):
        part = getattr(t, name)
        out[name] = {"total_ms": r3(part.total_ms), "waiting_ms": r3(part.waiting_ms),
                     "service_pct": r1(part.service_pct), "waiting_pct": r1(part.waiting_pct),
                     "lower_bound": part.lower_bound}
    return out


def cell_entry(run_id: str, c: Cell) -> dict[str, Any]:
    """A cell's numbers (ms, rounded to the microsecond), flags and sources, with the printed
    text of its statistics beside them (docs/data-format.md lists every key). Keys of what a
    run does not record (schema 1: completed, in flight measured, host, JVM window) are left
    out."""
    entry: dict[str, Any] = {"load": c.load, "system": c.system}
    if c.scenario is not None:
        entry["scenario"] = c.scenario
    entry.update(kind=c.kind, count=c.stats.count, throughput_rps=r3(c.throughput_rps))
    if c.goodput_rps is not None:
        entry["goodput_rps"] = r3(c.goodput_rps)
    entry["saturated"] = c.saturation.saturated
    entry["saturation"] = list(c.saturation.reasons)
    entry["saturation_sentences"] = list(c.saturation.sentences)
    errors = c.error_rate
    if errors is not None:
        # its own verdict: an error is an answer (docs/data-format.md, "The overload layer")
        entry["error_rate"] = {"share": r3(errors.share), "high": errors.high,
                               "sentence": errors.sentence}
    for key in LATENCY_KEYS:
        entry[key] = r3(c.stats.value(key))
    for name in (*PERCENTILE_NAMES, "max", "mean"):
        bound = c.stats.get(name).at_least_ms
        if bound is not None:
            entry[f"{name}_at_least_ms"] = r3(bound)
    upper = [name for name in (*PERCENTILE_NAMES, "max", "mean") if c.stats.get(name).upper_bound]
    if upper:
        # (issue 33) these numbers are what a tool's percentile spectrum states they are at most
        entry["upper_bounds"] = upper
    entry["low_sample"] = list(c.low_sample)
    accounting = c.accounting
    for key, value in (("sent", accounting.sent), ("completed", accounting.completed),
                       ("timed_out", accounting.timed_out), ("errors", accounting.errors),
                       ("not_sent", accounting.not_sent), ("drops", c.drops)):
        if value is not None:
            entry[key] = value
    if c.drop_pct is not None:
        entry["drop_pct"] = r1(c.drop_pct)
    entry["repetitions"] = len(c.repetitions)
    spread, at_least = _spread_lists(c)
    if spread:
        entry["spread"] = spread
        if at_least:
            entry["spread_at_least"] = at_least
        entry["throughput_rps_spread"] = [r3(v) for v in c.throughput_spread]
        if c.goodput_spread is not None:
            entry["goodput_rps_spread"] = [r3(v) for v in c.goodput_spread]
        entry["repetitions_disagree"] = c.repetitions_disagree
    flight = c.in_flight
    if flight is not None:
        entry["in_flight"] = r3(flight.measured_mean)
        if flight.measured_mean is not None:
            entry["in_flight_max"] = flight.measured_max
            entry["in_flight_at_window_start"] = r3(flight.at_window_start)
            entry["in_flight_at_window_end"] = r3(flight.at_window_end)
        entry["littles_law"] = r3(flight.littles_law)
        entry["littles_law_check"] = flight.verdict
        if c.in_flight_cap is not None:
            entry["in_flight_cap"] = c.in_flight_cap
    if c.host is not None:
        entry["host_busy"] = c.host.host_busy
        entry["host"] = {k: (r3(v) if isinstance(v, float) else v)
                         for k, v in vars(c.host).items() if v is not None and k != "host_busy"}
    split = _time_split(c)
    if split is not None:
        entry["time_split"] = split
    entry.update(_steady_entry(c))
    entry["source"] = c.sources[0]
    if len(c.sources) > 1:
        entry["sources"] = list(c.sources)
    entry["intervals_csv"] = series_csv_path(run_id, c.system, c.load, c.scenario)
    if c.jvm is not None:
        entry["jvm"] = {**c.jvm.summary, "source": c.jvm.source}
        if c.jvm.window is not None:
            entry["jvm"]["in_window"] = {k: (r3(v) if isinstance(v, float) else v)
                                         for k, v in vars(c.jvm.window).items()
                                         if v is not None}
    entry.update(cell_text.cell_texts(c))
    return entry


def _steady_entry(c) -> dict[str, Any]:
    """Issue 32: each repetition's steadiness class (`steady_state`, the key and class names
    checks read), the cell's count per class, whether it is not steady, and the whole
    windows' figures when the cell's are (some repetitions') steady parts'."""
    reps = []
    for r in c.repetitions:
        st = r.steady
        reps.append({"repetition": r.index, "source": r.source,
                     "steady_state": {"class": st.cls if st else None,
                                      "steady_from_s": r3(st.steady_from_s) if st else None},
                     "from_steady_part": bool(st and st.from_steady_part),
                     "not_steady": bool(st and st.not_steady),
                     "sentence": st.sentence if st else "not known"})
    out: dict[str, Any] = {"steady_counts": dict(c.steady_counts), "not_steady": c.not_steady,
                           "repetition_steadiness": reps}
    if c.window_stats is not None:
        out["whole_window"] = {key: r3(c.window_stats.value(key)) for key in LATENCY_KEYS}
    return out


# --- CSV ------------------------------------------------------------------------------------

# The types the csv writer prints as _csv_text's loop would: None as "", a float by its str
# (which is its repr for a float itself, not for a subclass: numpy's is "np.float64(1.5)").
_WRITTEN_AS_THEY_ARE = frozenset((str, int, float, bool, type(None)))


def _csv_text(header: tuple[str, ...] | list[str], rows: list[list[Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    # (a series CSV is ~1,000 rows of 12 values: the rows as they are, written in C, unless a
    # value of another type needs the loop)
    if _WRITTEN_AS_THEY_ARE.issuperset(map(type, chain.from_iterable(rows))):
        w.writerows(rows)
        return buf.getvalue()
    for row in rows:
        w.writerow(["" if v is None else (repr(v) if isinstance(v, float) else v) for v in row])
    return buf.getvalue()


def _log_decimals(times: list[float]) -> int:
    """The fewest decimals (at most 6) that write every time of one log exactly, give or take
    the float error of subtracting epoch seconds (~2e-7 s): a log written in ms gives 3."""
    for digits in range(7):
        if all(abs(t - round(t, digits)) < 1e-6 for t in times):
            return digits
    return 6


def series_csv(series_by_repetition: list[list[dict[str, Any]]]) -> str:
    """Full-precision per-interval series of one cell, repetitions one after another; `t_s`
    at its log's precision (0.014, not the 0.01399993896484375 of the subtraction)."""
    rows = []
    for rep, series in enumerate(series_by_repetition, start=1):
        digits = _log_decimals([row["t_s"] for row in series])
        for row in series:
            rows.append([rep, round(row["t_s"], digits) + 0.0]      # (+ 0.0: no "-0.0")
                        + [row.get(k) for k in SERIES_COLUMNS[2:]])
    return _csv_text(SERIES_COLUMNS, rows)


def table_csv(run: Run, scenario: Scenario | None = None) -> str:
    """The load-curve table (of one scenario) as CSV: one line per (load point, system), with
    the numbers of the data file (ms, rounded as there), not the display text. A censored
    statistic: its column empty and its lower bound in <name>_at_least_ms. A closed loop's
    table (issue 23) has a `connections` column after `clients` (its offered_rate is empty)."""
    scenario = scenario or run.scenario
    closed = has_closed_loads(scenario.load_points)
    rows = []
    for lp, row in scenario.grid():
        for _, c in row:
            if c is None:
                continue
            a = c.accounting
            names = (*PERCENTILE_NAMES, "max", "mean")
            rows.append([c.load, lp.offered_rate, lp.clients,
                         *([lp.connections] if closed else []), c.system, c.stats.count,
                         r3(c.throughput_rps), r3(c.goodput_rps),
                         str(c.saturation.saturated).lower(), " ".join(c.saturation.reasons),
                         *[r3(c.stats.value(k)) for k in LATENCY_KEYS],
                         *[r3(c.stats.get(n).at_least_ms) for n in names],
                         a.sent, a.completed, a.timed_out, a.errors, a.not_sent, c.drops,
                         r3(c.in_flight.measured_mean) if c.in_flight else None,
                         None if c.host is None else str(c.host.host_busy).lower(),
                         len(c.repetitions), c.sources[0]])
    return _csv_text(table_csv_columns(closed), rows)


def summary_csv(run: Run) -> str:
    """The scenario x target summary table as CSV (summary.summary_rows)."""
    return _csv_text(SUMMARY_CSV_COLUMNS, summary.summary_rows(run))
