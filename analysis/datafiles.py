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
from typing import Any

import yaml

from analysis.aggregate import rate_per_client
from analysis.manifest import ENVIRONMENT_LABELS, LOAD_GENERATOR_LABELS

# Version 1: the first published shape (docs/data-format.md). Bump it, and say what changed
# here, when a key is renamed or removed; adding a key does not need a bump.
SCHEMA_VERSION = 1
LATENCY_KEYS = ("p50_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms", "max_ms", "mean_ms", "stddev_ms")
# JFR summary sections flattened into the JVM table (settings such as thresholds left out)
JVM_TABLE_SECTIONS = ("gc", "safepoint", "cpu", "allocation_rate_mb_s", "threads")
SERIES_COLUMNS = ("repetition", "t_s", "length_s", "count", "achieved_rate", "p50_ms", "p99_ms",
                  "max_ms")


# --- paths (repo-relative, '/'-separated: they are also URLs) -------------------------------

def data_path(run_id: str) -> str:
    return f"_data/runs/{run_id}.yml"


def series_csv_path(run_id: str, system: str, load: str) -> str:
    return f"assets/data/{run_id}/{system}-{load}.csv"


def table_csv_path(run_id: str) -> str:
    return f"assets/data/{run_id}/load-curve.csv"


def chart_path(run_id: str, name: str, ext: str) -> str:
    return f"assets/charts/{run_id}/{name}.{ext}"


def report_url(run_id: str) -> str:
    return f"/reports/{run_id}/"


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
    return "–" if x is None else f"{x:,.1f}"


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

def run_document(result: dict[str, Any]) -> dict[str, Any]:
    """The `_data/runs/<id>.yml` document for one analysed run (see analyse.analyse_run)."""
    m = result["manifest"]
    run_id = m.run_id
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "id": run_id,
        "title": m.title,
        "date": m.date,
        "description": m.description,
        "tags": list(m.tags),
        "url": report_url(run_id),
        "manifest": result["manifest_path"],
        "value_unit": m.value_unit,
        "service_time_ms": m.service_time_ms,
        "environment": labelled(m.environment, ENVIRONMENT_LABELS),
        "load_generator": labelled(m.load_generator, LOAD_GENERATOR_LABELS),
    }
    systems = []
    for s in m.systems:
        summary = result["systems"][s.id]
        entry = {"id": s.id, "label": s.label, "concurrency_limit": s.concurrency_limit,
                 "predicted_ceiling_rps": r1(summary["predicted_ceiling_rps"]),
                 "measured_peak_rps": r1(summary["measured_peak_rps"]),
                 "peak_vs_predicted_pct": r1(summary["peak_vs_predicted_pct"])}
        if s.description:
            entry["description"] = s.description
        systems.append(entry)
    doc["systems"] = systems
    doc["load_points"] = [
        {"id": lp.id, "offered_rate": lp.offered_rate, "clients": lp.clients,
         "rate_per_client": r3(rate_per_client(lp.offered_rate, lp.clients)),
         "duration_s": lp.duration_s, "label": load_label(lp.offered_rate, lp.clients)}
        for lp in m.load_points]
    doc["cells"] = [_cell_entry(run_id, c) for c in result["cells"]]
    if result.get("missing"):
        doc["missing"] = [{"load": x["load"], "system": x["system"], "file": x["file"]}
                          for x in result["missing"]]
    jvm_table = _jvm_table(m, result)
    if jvm_table:
        doc["jvm_table"] = jvm_table
    doc["table"] = _table(m, result)
    doc["charts"] = result["charts"]
    return doc


def _cell_entry(run_id: str, c: dict[str, Any]) -> dict[str, Any]:
    s = c["summary"]
    entry: dict[str, Any] = {"load": c["load"], "system": c["system"], "count": s["count"],
                             "achieved_rate": r3(s["achieved_rate"]), "saturated": s["saturated"]}
    for key in LATENCY_KEYS:
        entry[key] = r3(s[key])
    entry["low_sample"] = list(s["low_sample"])
    for key in ("sent", "errors", "timeouts", "drops"):
        if key in s:
            entry[key] = s[key]
    if "drop_pct" in s:
        entry["drop_pct"] = r1(s["drop_pct"])
    entry["repetitions"] = s["repetitions"]
    for key in ("p99_ms_min", "p99_ms_median", "p99_ms_max"):
        if key in s:
            entry[key] = r3(s[key])
    for key in ("achieved_rate_min", "achieved_rate_median", "achieved_rate_max"):
        if key in s:
            entry[key] = r3(s[key])
    little = c.get("littles_law")
    if little:
        entry["in_flight"] = r3(little["in_flight"])
        if "cap" in little:
            entry["in_flight_cap"] = little["cap"]
            entry["in_flight_consistent"] = little["consistent"]
    entry["source"] = c["sources"][0]
    if len(c["sources"]) > 1:
        entry["sources"] = list(c["sources"])
    entry["intervals_csv"] = series_csv_path(run_id, c["system"], c["load"])
    if c.get("jvm") is not None:
        entry["jvm"] = c["jvm"]
    return entry


def _table(m, result) -> dict[str, Any]:
    by_key = {(c["load"], c["system"]): c for c in result["cells"]}
    rows = []
    for lp in m.load_points:
        cells = []
        for s in m.systems:
            c = by_key.get((lp.id, s.id))
            if c is None:
                cells.append({"system": s.id, "latency": "no data", "achieved": "–", "count": "–",
                              "drops": "–", "saturated": False, "missing": True, "source": None})
                continue
            st = c["summary"]
            latency = " / ".join(fmt_ms(st[k]) for k in ("p50_ms", "p95_ms", "p99_ms", "max_ms"))
            drops = "–"
            if "drops" in st:
                drops = f"{st['drops']:,}"
                if st["drops"]:
                    drops += f" ({st['drop_pct']:.1f} %)"
            cells.append({"system": s.id, "latency": latency, "achieved": fmt_rate(st["achieved_rate"]),
                          "count": f"{st['count']:,}", "drops": drops, "saturated": st["saturated"],
                          "source": c["sources"][0]})
        rows.append({"load": lp.id, "offered": fmt_number(lp.offered_rate),
                     "clients_x_rate": load_label(lp.offered_rate, lp.clients), "cells": cells})
    names = ", ".join(s.label for s in m.systems)
    return {
        "caption": (f"Latency in ms as p50 / p95 / p99 / max per offered load (requests/s), "
                    f"with achieved rate, sample count and drops: {names}. "
                    f"Saturated rows (achieved < 90 % of offered) describe a queue."),
        "csv": table_csv_path(m.run_id),
        "systems": [{"id": s.id, "label": s.label} for s in m.systems],
        "rows": rows,
    }


def _jvm_table(m, result) -> dict[str, Any] | None:
    """One row per cell with a JFR summary: scalar numbers found under its top-level sections
    (gc, cpu, allocation, ...), flattened to columns like `gc.pause_max_ms`."""
    rows = []
    columns: list[str] = []
    for c in result["cells"]:
        jvm = c.get("jvm")
        if not isinstance(jvm, dict):
            continue
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
        rows.append({"load": c["load"], "system": c["system"], "values": values})
    if not rows:
        return None
    columns.sort()
    return {"columns": columns,
            "rows": [{"load": r["load"], "system": r["system"],
                      "values": [r["values"].get(k) for k in columns]} for r in rows]}


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


def _represent_str(dumper, value):
    if any(ch in _UNSAFE_PLAIN or (ch < " " and ch not in "\n") for ch in value):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
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


def table_csv(doc: dict[str, Any]) -> str:
    """The load-curve table as CSV: one line per (load point, system), numbers unrounded by
    display formatting (those in the data file, ms)."""
    header = ["load", "offered_rate", "clients", "system", "count", "achieved_rate", "saturated",
              *LATENCY_KEYS, "sent", "errors", "timeouts", "drops", "repetitions", "source"]
    offered = {lp["id"]: lp for lp in doc["load_points"]}
    rows = []
    for c in doc["cells"]:
        lp = offered[c["load"]]
        rows.append([c["load"], lp["offered_rate"], lp["clients"], c["system"], c["count"],
                     c["achieved_rate"], str(c["saturated"]).lower(),
                     *[c[k] for k in LATENCY_KEYS], c.get("sent"), c.get("errors"),
                     c.get("timeouts"), c.get("drops"), c["repetitions"], c["source"]])
    return _csv_text(header, rows)
