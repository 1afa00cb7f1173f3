"""-> `_data/runs/<run-id>.yml` (deterministic YAML) and CSV series under `assets/data/<run-id>/`.

The document's shape is the team contract in docs/data-format.md. Keys come in the order listed
there, nothing depends on the clock or the machine, and numbers are rounded for display here and
only here. The YAML is produced by PyYAML's safe dumper from plain data, never by pasting strings,
so a title like `"><script>` or `{{ site }}` stays a string value.
"""
from __future__ import annotations

import csv
import io
import math
import re
from typing import Any

import yaml

from analysis.aggregate import rate_per_client
from analysis.model import Cell, Run, Scenario
from analysis.read.manifest import ENVIRONMENT_LABELS, LOAD_GENERATOR_LABELS
from analysis.write.chartset import chart_section
from analysis.write.paths import report_url, series_csv_path, table_csv_path

# Version 1: the first published shape (docs/data-format.md). Bump it, and say what changed
# here, when a key is renamed or removed; adding a key does not need a bump.
SCHEMA_VERSION = 1
LATENCY_KEYS = ("p50_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms", "mean_ms", "stddev_ms")
# JFR summary sections flattened into the JVM table (settings such as thresholds left out)
JVM_TABLE_SECTIONS = ("gc", "safepoint", "cpu", "allocation_rate_mb_s", "threads")
# Rows per (system, load point) in the printed hot-methods table (the cell's `jvm` holds as many)
HOT_METHODS_SHOWN = 5
SERIES_COLUMNS = ("repetition", "t_s", "length_s", "count", "achieved_rate", "p50_ms", "p99_ms",
                  "max_ms")


# --- number formatting ----------------------------------------------------------------------

def r3(x: float | None) -> float | None:
    """Round to 3 decimals (ms -> microsecond resolution) for the data file."""
    if x is None:
        return None
    value = round(float(x), 3)
    return 0.0 if value == 0 else value  # no '-0.0'


def r1(x: float | None) -> float | None:
    return None if x is None else (round(float(x), 1) or 0.0)


def fmt_number(x: float) -> str:
    """25 -> '25', 2500 -> '2,500', 12.5 -> '12.5'."""
    if float(x).is_integer():
        return f"{int(x):,}"
    return f"{x:,.3f}".rstrip("0").rstrip(".")


def fmt_ms(x: float | None) -> str:
    """About three significant figures, the way a table in a post prints latencies."""
    if x is None:
        return "–"
    ax = abs(x)
    if ax >= 100:
        return f"{x:,.0f}"
    if ax >= 10:
        return f"{x:.1f}"
    if ax >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def fmt_rate(x: float | None) -> str:
    """A rate or share with one decimal: 14.2857 -> '14.3' ('–' when unknown)."""
    return "–" if x is None else f"{x:,.1f}"


fmt_pct = fmt_rate


def load_label(offered_rate: float, clients: int | None) -> str:
    per_client = rate_per_client(offered_rate, clients)
    if per_client is None:
        return f"{fmt_number(offered_rate)}/s"
    return f"{clients:,} × {fmt_number(round(per_client, 3))}/s"


def _display_value(key: str, value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if key == "model":
        return {"open": "open loop (latency from intended send time)",
                "closed": "closed loop (waits for each reply; hides stalls)"}.get(value, str(value))
    if key.endswith("_s") and isinstance(value, (int, float)):
        return f"{fmt_number(value)} s"
    return str(value)


def labelled(block: dict[str, Any], labels: dict[str, str]) -> list[dict[str, Any]]:
    return [{"key": key, "label": label, "value": _display_value(key, block[key])}
            for key, label in labels.items() if key in block]


# --- the document ---------------------------------------------------------------------------

def run_document(run: Run) -> dict[str, Any]:
    """The `_data/runs/<id>.yml` document for one analysed run (see analyse.analyse_run)."""
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
    doc["cells"] = [_cell_entry(run.id, c) for c in scenario.measured()]
    if scenario.missing:
        doc["missing"] = [{"load": x.load, "system": x.system, "file": x.file}
                          for x in scenario.missing]
    jvm_table = _jvm_table(scenario)
    if jvm_table:
        doc["jvm_table"] = jvm_table
    hotspots = _jvm_hotspots(run)
    if hotspots:
        doc["jvm_hotspots"] = hotspots
    doc["table"] = _table(run)
    doc["charts"] = chart_section(run)
    return doc


def _cell_entry(run_id: str, c: Cell) -> dict[str, Any]:
    entry: dict[str, Any] = {"load": c.load, "system": c.system, "count": c.stats.count,
                             "achieved_rate": r3(c.achieved_rate),
                             "saturated": c.saturation.saturated}
    for key in LATENCY_KEYS:
        entry[key] = r3(c.stats.value(key))
    entry["low_sample"] = list(c.low_sample)
    for key, value in (("sent", c.accounting.sent), ("errors", c.accounting.errors),
                       ("timeouts", c.accounting.timed_out), ("drops", c.drops)):
        if value is not None:
            entry[key] = value
    if c.drop_pct is not None:
        entry["drop_pct"] = r1(c.drop_pct)
    entry["repetitions"] = len(c.repetitions)
    for stat, spread in c.spread.items():
        for which in ("min", "median", "max"):
            entry[f"{stat}_{which}"] = r3(getattr(spread, which))
    if c.in_flight:
        entry["in_flight"] = r3(c.in_flight.littles_law)
        if c.in_flight.cap is not None:
            entry["in_flight_cap"] = c.in_flight.cap
            entry["in_flight_consistent"] = c.in_flight.consistent
    entry["source"] = c.sources[0]
    if len(c.sources) > 1:
        entry["sources"] = list(c.sources)
    entry["intervals_csv"] = series_csv_path(run_id, c.system, c.load)
    if c.jvm is not None:
        entry["jvm"] = {**c.jvm.summary, "source": c.jvm.source}
    return entry


def _table(run: Run) -> dict[str, Any]:
    scenario = run.scenario
    rows = []
    for lp, row in scenario.grid():
        cells = []
        for s, c in row:
            if c is None:
                cells.append({"system": s.id, "latency": "no data", "achieved": "–", "count": "–",
                              "drops": "–", "mean": "–", "in_flight": "–", "saturated": False,
                              "missing": True, "source": None})
                continue
            latency = " / ".join(fmt_ms(c.stats.value(k))
                                 for k in ("p50_ms", "p95_ms", "p99_ms", "max_ms"))
            drops = "–"
            if c.drops is not None:
                drops = f"{c.drops:,}"
                if c.drops:
                    drops += f" ({c.drop_pct:.1f} %)"
            cells.append({"system": s.id, "latency": latency, "achieved": fmt_rate(c.achieved_rate),
                          "count": f"{c.stats.count:,}", "drops": drops,
                          "mean": fmt_ms(c.stats.mean_ms),
                          "in_flight": fmt_ms(c.in_flight.littles_law if c.in_flight else None),
                          "saturated": c.saturation.saturated, "source": c.sources[0]})
        rows.append({"load": lp.id, "offered": fmt_number(lp.offered_rate),
                     "clients_x_rate": load_label(lp.offered_rate, lp.clients), "cells": cells})
    names = ", ".join(s.label for s in scenario.systems)
    return {
        "caption": (f"Latency in ms as p50 / p95 / p99 / max per offered load (requests/s), "
                    f"with achieved rate, sample count and drops: {names}. "
                    f"Saturated rows (achieved < 90 % of offered) describe a queue."),
        "csv": table_csv_path(run.id),
        "systems": [{"id": s.id, "label": s.label} for s in scenario.systems],
        "rows": rows,
    }


def _jvm_table(scenario: Scenario) -> dict[str, Any] | None:
    """One row per cell with a JFR summary: scalar numbers found under its top-level sections
    (gc, cpu, allocation, ...), flattened to columns like `gc.pause_max_ms`."""
    rows = []
    columns: list[str] = []
    for c in scenario.measured():
        if c.jvm is None:
            continue
        jvm = c.jvm.summary
        values = {}
        for section in JVM_TABLE_SECTIONS:
            block = jvm.get(section)
            if isinstance(block, dict):
                for key in sorted(block):
                    v = block[key]
                    if isinstance(v, (int, float)) and not isinstance(v, bool) \
                            and "threshold" not in key:
                        values[f"{section}.{key}"] = v
            elif isinstance(block, (int, float)) and not isinstance(block, bool):
                values[section] = block
        for k in values:
            if k not in columns:
                columns.append(k)
        rows.append({"load": c.load, "system": c.system, "values": values})
    if not rows:
        return None
    columns.sort()
    return {"columns": columns,
            "rows": [{"load": r["load"], "system": r["system"],
                      "values": [r["values"].get(k) for k in columns]} for r in rows]}


def _jvm_hotspots(run: Run) -> dict[str, Any] | None:
    """Where each system's JVM spent its samples, shaped for printing: per system, per load
    point the top hot methods by self time and, when the manifest gives `jfr_attribution`,
    the share of samples per label. Percentages are of the samples with a readable stack."""
    scenario = run.scenario
    with_labels = bool(run.jfr_attribution)
    labels: list[str] = []
    systems = []
    for s in scenario.systems:
        loads = []
        for lp in scenario.load_points:
            c = scenario.cell(lp.id, s.id)
            jvm = c.jvm.summary if c and c.jvm else None
            if not isinstance(jvm, dict) or not isinstance(jvm.get("hot_methods"), list):
                continue
            smp = jvm.get("samples") or {}
            n = (smp.get("count") or 0) - (smp.get("unresolved") or 0)
            entry: dict[str, Any] = {
                "load": lp.id, "offered": fmt_number(lp.offered_rate), "samples": f"{n:,}",
                "methods": [{"method": h["method"], "self_pct": fmt_pct(h.get("self_pct")),
                             "total_pct": fmt_pct(h.get("total_pct"))}
                            for h in jvm["hot_methods"][:HOT_METHODS_SHOWN]]}
            if with_labels and isinstance(jvm.get("attribution"), list):
                entry["attribution"] = [{"label": a["label"], "samples": f"{a['samples']:,}",
                                         "pct": fmt_pct(a.get("pct"))}
                                        for a in jvm["attribution"]]
                for a in jvm["attribution"]:
                    if a["label"] not in labels:
                        labels.append(a["label"])
            loads.append(entry)
        if loads:
            systems.append({
                "system": s.id, "label": s.label,
                "methods_caption": (f"Hot methods of {s.label}: the top {HOT_METHODS_SHOWN} "
                                    f"by self time per offered load (requests/s), from the "
                                    f"server's JFR execution samples. Self %: share of samples "
                                    f"with the method on top of the stack; total %: with it "
                                    f"anywhere on the stack."),
                "loads": loads})
    if not systems:
        return None
    out: dict[str, Any] = {"systems": systems}
    if labels and any("attribution" in x for s in systems for x in s["loads"]):
        # every row lists the labels in this order (a label missing from a row: 0 samples)
        for s in systems:
            for x in s["loads"]:
                if "attribution" in x:
                    have = {a["label"]: a for a in x["attribution"]}
                    x["attribution"] = [have.get(label, {"label": label, "samples": "0",
                                                         "pct": fmt_pct(0.0)})
                                        for label in labels]
        out["attribution_labels"] = labels
        out["attribution_caption"] = (
            "Share of the server's JFR execution samples per offered load (requests/s), in "
            "brackets how many: a sample counts once, under the first frame from the leaf (the "
            "running method) towards the root that a pattern of the run's jfr_attribution "
            "matches; other: no frame matched.")
    return out


# --- serialisation --------------------------------------------------------------------------

class _Dumper(yaml.SafeDumper):
    """Safe dumper that keeps our key order and writes None as `null`."""


def _represent_none(dumper, _):
    return dumper.represent_scalar("tag:yaml.org,2002:null", "null")


def _represent_float(dumper, value):
    if math.isnan(value) or math.isinf(value):
        # Liquid has no NaN; a value we could not compute is null.
        return _represent_none(dumper, None)
    return yaml.SafeDumper.represent_float(dumper, value)


# Characters a YAML reader takes as line breaks (or strips) when they appear unquoted: PyYAML
# writes them raw with allow_unicode, and reads them back as a space. Double quotes escape them.
_UNSAFE_PLAIN = set("\x85\u2028\u2029\ufeff")


# Jekyll reads the data with Ruby's Psych, which takes commas and underscores inside a number as
# separators ("1,180" -> the integer 1180, "1,234.5" -> a float), where PyYAML sees a string and
# writes it plain. Such strings are quoted, so that the page prints "1,180". (Psych's patterns.)
_PSYCH_NUMBER = re.compile(r"""[-+]?(?:0b[0-1_,]+|0[0-7_,]+|(?:0|[1-9](?:[0-9]|,[0-9]|_[0-9])*)
                                   |0x[0-9a-fA-F_,]+)
                              |[-+]?(?:[0-9][0-9_,]*)?\.[0-9]*(?:[eE][-+][0-9]+)?""", re.X)


def _represent_str(dumper, value):
    if any(ch in _UNSAFE_PLAIN or (ch < " " and ch not in "\n") for ch in value):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    if _PSYCH_NUMBER.fullmatch(value):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="'")
    return yaml.SafeDumper.represent_str(dumper, value)


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(type(None), _represent_none)
_Dumper.add_representer(float, _represent_float)


def dump_yaml(doc: Any) -> str:
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                     default_flow_style=False, width=100, indent=2)


def _csv_text(header: tuple[str, ...] | list[str], rows: list[list[Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for row in rows:
        w.writerow(["" if v is None else (repr(v) if isinstance(v, float) else v) for v in row])
    return buf.getvalue()


def series_csv(series_by_repetition: list[list[dict[str, Any]]]) -> str:
    """Full-precision per-interval series of one cell, repetitions one after another."""
    rows = []
    for rep, series in enumerate(series_by_repetition, start=1):
        for row in series:
            rows.append([rep] + [row[k] for k in SERIES_COLUMNS[1:]])
    return _csv_text(SERIES_COLUMNS, rows)


def table_csv(run: Run) -> str:
    """The load-curve table as CSV: one line per (load point, system), with the numbers of the
    data file (ms, rounded as there), not the display text."""
    header = ["load", "offered_rate", "clients", "system", "count", "achieved_rate", "saturated",
              *LATENCY_KEYS, "sent", "errors", "timeouts", "drops", "repetitions", "source"]
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
    return _csv_text(header, rows)
