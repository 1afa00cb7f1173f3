"""View blocks: one ready-to-print block of the data file per include (docs/data-format.md).

Rows come ordered, every printed value is its own field (its text beside the raw number where
there is one), flags are booleans and labels are resolved, so that the includes only loop and
print. Text is formatted here (vocabulary.py says how); the includes escape it.
"""
from __future__ import annotations

from typing import Any

from analysis.model import Cell, Run, System
from analysis.vocabulary import (CELL_TEXT_FIELDS, ENVIRONMENT_LABELS, LATENCY_UNIT, PERCENTILES,
                                 RATE_UNIT, TABLE_LATENCY, UNIT_TEXT, display_value, fmt_count,
                                 fmt_ms, fmt_number, fmt_pct, fmt_rate, labelled, load_label,
                                 plain, r1, r3)
from analysis.write.paths import table_csv_path

# Rows per (system, load point) in the printed hot-methods table (the cell's `jvm` holds as many)
HOT_METHODS_SHOWN = 5
LABELS = {name: label for name, _, label in PERCENTILES}


def latency_header() -> str:
    return " / ".join(LABELS.get(name, name) for name in TABLE_LATENCY)


def cell_texts(c: Cell) -> dict[str, str]:
    """The printed text of a cell's statistics (vocabulary.CELL_TEXT_FIELDS), as the
    load-curve table shows them: what stat.html prints for field=p99, achieved, count, ..."""
    drops = "–"
    if c.drops is not None:
        drops = fmt_count(c.drops) + (f" ({c.drop_pct:.1f} %)" if c.drops else "")
    special = {"achieved_rate": fmt_rate(c.achieved_rate), "count": fmt_count(c.stats.count),
               "drops": drops,
               "in_flight": fmt_ms(c.in_flight.littles_law if c.in_flight else None)}
    return {f"{name}_text": special[key] if key in special else fmt_ms(c.stats.value(key))
            for key, name in CELL_TEXT_FIELDS.items()}


# --- load-curve-table.html ------------------------------------------------------------------

def _table_cell(s: System, c: Cell | None) -> dict[str, Any]:
    if c is None:
        return {"system": s.id, "missing": True, "source": None, "latency": [],
                "achieved_text": "–", "drops_text": "–", "count_text": "–",
                "saturated": False}
    texts = cell_texts(c)
    spread = c.spread.get("p99_ms")
    gc = (c.jvm.summary.get("gc") or {}) if c.jvm else {}
    failures = None
    if (c.accounting.errors or 0) > 0 or (c.accounting.timed_out or 0) > 0:
        failures = (f"{plain(c.accounting.errors or 0)} errors, "
                    f"{plain(c.accounting.timed_out or 0)} timeouts")
    return {
        "system": s.id, "missing": False, "source": c.sources[0],
        "latency": [{"name": name, "ms": r3(c.stats.value(f"{name}_ms")),
                     "text": texts[f"{name}_text"]} for name in TABLE_LATENCY],
        "achieved_rate": r3(c.achieved_rate), "achieved_text": texts["achieved_text"],
        "drops": c.drops, "drops_text": texts["drops_text"],
        "count": c.stats.count, "count_text": texts["count_text"],
        "saturated": c.saturation.saturated,
        "low_sample_p99": "p99" in c.low_sample,
        "over_cap": bool(c.in_flight and c.in_flight.consistent is False),
        "spread_text": (f"p99 over {len(c.repetitions)} runs: {plain(r3(spread.min))} – "
                        f"{plain(r3(spread.max))}") if spread else None,
        "gc_text": (f"longest GC pause {plain(gc.get('pause_max_ms'))} ms"
                    if (gc.get("count") or 0) > 0 else None),
        "failures_text": failures,
    }


def load_curve_table(run: Run) -> dict[str, Any]:
    scenario = run.scenario
    rows = []
    for lp, row in scenario.grid():
        offered = fmt_number(lp.offered_rate)
        clients_x_rate = load_label(lp.offered_rate, lp.clients)
        rows.append({"load": lp.id, "offered": offered,
                     # the clients × rate line only says something when the run gave clients
                     "clients_x_rate": None if clients_x_rate == f"{offered}/s" else clients_x_rate,
                     "saturated": any(c is not None and c.saturation.saturated for _, c in row),
                     "cells": [_table_cell(s, c) for s, c in row]})
    names = ", ".join(s.label for s in scenario.systems)
    return {
        "caption_id": f"load-curve-{run.id}",
        "caption": (f"Latency in ms as {latency_header()} per offered load (requests/s), "
                    f"with achieved rate, sample count and drops: {names}. "
                    f"Saturated rows (achieved < 90 % of offered) describe a queue."),
        "csv": table_csv_path(run.id),
        "latency_header": latency_header(),
        "latency_unit": LATENCY_UNIT,
        "systems": [{"id": s.id, "label": s.label} for s in scenario.systems],
        "rows": rows,
        "missing": [{"load": x.load, "system": x.system, "file": x.file} for x in scenario.missing],
    }


# --- ceiling.html ---------------------------------------------------------------------------

def ceiling(run: Run) -> dict[str, Any]:
    scenario = run.scenario
    service = scenario.service_time_ms
    rows = []
    for s in scenario.systems:
        predicted, peak, vs = (r1(s.predicted_ceiling_rps), r1(s.measured_peak_rps),
                               r1(s.peak_vs_predicted_pct))
        rows.append({
            "label": s.label, "concurrency_limit": s.concurrency_limit,
            "workers_text": plain(s.concurrency_limit) if s.concurrency_limit else "no limit",
            "predicted_ceiling_rps": predicted,
            "predicted_text": f"{plain(predicted)} {RATE_UNIT}" if predicted else "none predicted",
            "measured_peak_rps": peak, "measured_text": f"{plain(peak)} {RATE_UNIT}",
            "peak_vs_predicted_pct": vs, "vs_text": f"{plain(vs)} %" if vs is not None else "–"})
    return {"caption_id": f"ceiling-{run.id}", "service_time_ms": service,
            "service_time_text": f"{plain(service)} ms" if service else "not given",
            "rows": rows}


# --- methodology.html -----------------------------------------------------------------------

def methodology(run: Run) -> dict[str, Any]:
    shared = run.environment.get("shared_host")
    shared_text = display_value("shared_host", shared) if shared is not None else None
    return {"value_unit_text": UNIT_TEXT.get(run.value_unit, run.value_unit),
            "latency_unit": LATENCY_UNIT,
            # one machine for generator and server: true, false, or null when not recorded
            "shared_host": {"yes": True, "no": False}.get(shared_text)}


# --- jvm-table.html -------------------------------------------------------------------------

def jvm_table(run: Run) -> dict[str, Any] | None:
    """What the server's JVM did per cell (its JFR summary, whole recording); None when no
    cell has one."""
    rows = []
    for lp, row in run.scenario.grid():
        for system, c in row:
            if c is not None and c.jvm is not None:
                rows.append(_jvm_row(lp.offered_rate, system.label, c))
    if not rows:
        return None
    shared = next((e for e in labelled(run.environment, ENVIRONMENT_LABELS)
                   if e["key"] == "shared_host"), None)
    return {"caption_id": f"jvm-{run.id}", "rows": rows, "shared_host": shared}


def _jvm_row(offered_rate: float, label: str, c: Cell) -> dict[str, Any]:
    j = c.jvm.summary
    gc, cpu, sp = j.get("gc") or {}, j.get("cpu") or {}, j.get("safepoint") or {}
    pauses = gc.get("pause_count") if gc.get("pause_count") is not None else gc.get("count")
    return {
        "label": label, "source": c.jvm.source,
        "offered_text": f"{plain(offered_rate)} {RATE_UNIT}",
        "gc_pauses_text": plain(pauses),
        "gc_pause_total_text": plain(gc.get("pause_total_ms")),
        "gc_pause_max_text": plain(gc.get("pause_max_ms")),
        "safepoints_text": plain(sp.get("total_ms")) if sp.get("total_ms") is not None else "–",
        "cpu_jvm_text": f"{plain(cpu.get('jvm_user'))} / {plain(cpu.get('jvm_system'))}",
        "cpu_machine_text": plain(cpu.get("machine")),
        "allocation_text": plain(j.get("allocation_rate_mb_s")),
        "truncated": bool(j.get("truncated"))}


# --- jvm-hotspots.html ----------------------------------------------------------------------

def jvm_hotspots(run: Run) -> dict[str, Any] | None:
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
                "methods_caption_id": f"jvm-methods-{run.id}-{s.id}",
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
        out["attribution_colspan"] = len(labels) + 2    # offered, samples, one per label
        out["attribution_caption_id"] = f"jvm-attribution-{run.id}"
        out["attribution_caption"] = (
            "Share of the server's JFR execution samples per offered load (requests/s), in "
            "brackets how many: a sample counts once, under the first frame from the leaf (the "
            "running method) towards the root that a pattern of the run's jfr_attribution "
            "matches; other: no frame matched.")
    return out


# --- stat.html ------------------------------------------------------------------------------

def stat(doc: dict[str, Any]) -> dict[str, Any]:
    """Maps for stat.html's look-ups without `where`: systems and load points by id, and the
    printed value of each environment / load_generator setting by key (cells are looked up in
    the document's `cells`, already keyed by load point and system)."""
    return {"systems": {s["id"]: dict(s) for s in doc["systems"]},
            "load_points": {lp["id"]: dict(lp) for lp in doc["load_points"]},
            "settings": {name: {e["key"]: e["value"] for e in doc[name]}
                         for name in ("environment", "load_generator")}}
