"""-> `_data/runs/<run-id>.yml` (deterministic YAML) and the CSVs under `assets/data/<run-id>/`.

The document's shape is the team contract in docs/data-format.md: the run's fields and data
(systems, load points, cells keyed by load point and system, with full numbers rounded once,
here), then one view block per include (views.py). Keys come in the order listed there and
nothing depends on the clock or the machine.
"""
from __future__ import annotations

import csv
import io
from typing import Any

from analysis.aggregate import rate_per_client
from analysis.model import Cell, Run
from analysis.vocabulary import (ENVIRONMENT_LABELS, LATENCY_KEYS, LOAD_GENERATOR_LABELS,
                                 PERCENTILE_NAMES, SERIES_COLUMNS, SPREAD_STATS,
                                 TABLE_CSV_COLUMNS, labelled, load_label, r1, r3)
from analysis.write import views
from analysis.write.chartset import chart_section
from analysis.write.paths import report_url, series_csv_path

# Version 2 (issue 9): `cells` is a map load point -> system -> cell, each cell with the printed
# `<stat>_text` beside its numbers; `table` is now `load_curve_table` (with `missing` inside);
# new view blocks `ceiling`, `methodology`, `stat`; `jvm_table` is the jvm-table.html view
# (the old flattened columns were read by no template); the charts lists carry `caption`.
# Version 1: the first published shape. Bump it, and say what changed here, when a key is
# renamed or removed; adding a key does not need a bump.
SCHEMA_VERSION = 2


def run_document(run: Run, chart_sizes: dict[str, tuple[int, int]] | None = None) -> dict[str, Any]:
    """The `_data/runs/<id>.yml` document for one analysed run (see analyse.analyse_run);
    `chart_sizes` are the charts' pixel sizes (charts.pixel_sizes)."""
    scenario = run.scenario
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
        "service_time_ms": scenario.service_time_ms,
        "environment": labelled(run.environment, ENVIRONMENT_LABELS),
        "load_generator": labelled(run.load_generator, LOAD_GENERATOR_LABELS),
    }
    for key, value in (("series", run.series), ("version", run.version)):
        if value is not None:
            doc[key] = value
    systems = []
    for s in scenario.systems:
        entry = {"id": s.id, "label": s.label, "concurrency_limit": s.concurrency_limit,
                 "predicted_ceiling_rps": r1(s.predicted_ceiling_rps),
                 "measured_peak_rps": r1(s.measured_peak_rps),
                 "peak_vs_predicted_pct": r1(s.peak_vs_predicted_pct)}
        if s.description:
            entry["description"] = s.description
        systems.append(entry)
    doc["systems"] = systems
    doc["load_points"] = [
        {"id": lp.id, "offered_rate": lp.offered_rate, "clients": lp.clients,
         "rate_per_client": r3(rate_per_client(lp.offered_rate, lp.clients)),
         "duration_s": lp.duration_s, "label": load_label(lp.offered_rate, lp.clients)}
        for lp in scenario.load_points]
    cells: dict[str, dict[str, Any]] = {}
    for c in scenario.measured():
        cells.setdefault(c.load, {})[c.system] = cell_entry(run.id, c)
    doc["cells"] = cells
    doc["stat"] = views.stat(doc)
    doc["load_curve_table"] = views.load_curve_table(run)
    doc["ceiling"] = views.ceiling(run)
    doc["methodology"] = views.methodology(run)
    for name, block in (("jvm_table", views.jvm_table(run)),
                        ("jvm_hotspots", views.jvm_hotspots(run))):
        if block:
            doc[name] = block
    doc["charts"] = chart_section(run, chart_sizes)
    return doc


def cell_entry(run_id: str, c: Cell) -> dict[str, Any]:
    """A cell's numbers (ms, rounded to the microsecond), flags and sources, with the printed
    text of its statistics beside them. Keys of the model's slots that no reader fills yet
    (censored percentiles, accounting, saturation reason, host health, per-window JVM, in
    flight as measured) are written only when set: docs/data-format.md lists them."""
    entry: dict[str, Any] = {"load": c.load, "system": c.system, "kind": c.kind,
                             "count": c.stats.count, "achieved_rate": r3(c.achieved_rate),
                             "saturated": c.saturation.saturated}
    if c.saturation.reason and c.saturation.reason != "throughput":
        entry["saturation_reason"] = c.saturation.reason
    for key in LATENCY_KEYS:
        entry[key] = r3(c.stats.value(key))
    for name in PERCENTILE_NAMES:
        bound = c.stats.percentiles[name].at_least_ms
        if bound is not None:
            entry[f"{name}_at_least_ms"] = r3(bound)
    entry["low_sample"] = list(c.low_sample)
    accounting = c.accounting
    for key, value in (("sent", accounting.sent), ("completed", accounting.completed),
                       ("errors", accounting.errors), ("timeouts", accounting.timed_out),
                       ("not_sent", accounting.not_sent), ("drops", c.drops)):
        if value is not None:
            entry[key] = value
    if c.drop_pct is not None:
        entry["drop_pct"] = r1(c.drop_pct)
    entry["repetitions"] = len(c.repetitions)
    for stat in SPREAD_STATS:
        spread = c.spread.get(stat)
        if spread is not None:
            for which in ("min", "median", "max"):
                entry[f"{stat}_{which}"] = r3(getattr(spread, which))
    flight = c.in_flight
    if flight:
        entry["in_flight"] = r3(flight.littles_law)
        if flight.cap is not None:
            entry["in_flight_cap"] = flight.cap
            entry["in_flight_consistent"] = flight.consistent
        for key in ("measured_mean", "measured_max"):
            if getattr(flight, key) is not None:
                entry[f"in_flight_{key}"] = r3(getattr(flight, key))
    if c.host is not None:
        entry["host"] = {k: v for k, v in vars(c.host).items() if v is not None}
    entry["source"] = c.sources[0]
    if len(c.sources) > 1:
        entry["sources"] = list(c.sources)
    entry["intervals_csv"] = series_csv_path(run_id, c.system, c.load)
    if c.jvm is not None:
        entry["jvm"] = {**c.jvm.summary, "source": c.jvm.source}
        if c.jvm.window is not None:
            entry["jvm"]["window"] = {k: v for k, v in vars(c.jvm.window).items()
                                      if v is not None}
    entry.update(views.cell_texts(c))
    return entry


# --- CSV ------------------------------------------------------------------------------------

def _csv_text(header: tuple[str, ...] | list[str], rows: list[list[Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
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
                        + [row[k] for k in SERIES_COLUMNS[2:]])
    return _csv_text(SERIES_COLUMNS, rows)


def table_csv(run: Run) -> str:
    """The load-curve table as CSV: one line per (load point, system), with the numbers of the
    data file (ms, rounded as there), not the display text."""
    rows = []
    for lp, row in run.scenario.grid():
        for _, c in row:
            if c is None:
                continue
            rows.append([c.load, lp.offered_rate, lp.clients, c.system, c.stats.count,
                         r3(c.achieved_rate), str(c.saturation.saturated).lower(),
                         *[r3(c.stats.value(k)) for k in LATENCY_KEYS], c.accounting.sent,
                         c.accounting.errors, c.accounting.timed_out, c.drops,
                         len(c.repetitions), c.sources[0]])
    return _csv_text(TABLE_CSV_COLUMNS, rows)
