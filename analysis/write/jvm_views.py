"""The JFR view blocks: what the server's JVM did per cell (jvm-table.html) and where it spent
its samples (jvm-hotspots.html: hot methods and the share per jfr_attribution label). The flame
graphs' blocks are flame_views.py's.
"""
from __future__ import annotations

from typing import Any

from analysis.model import Cell, LoadPoint, Run, Scenario
from analysis.vocabulary import (ENVIRONMENT_LABELS, RATE_UNIT, closed_load_text, fmt_number,
                                 fmt_pct, labelled, load_point_text, plain)
from analysis.write.cell_text import share_text as _share
from analysis.write.page_views import block_id


# Rows per (system, load point) in the printed hot-methods table (the cell's `jvm` holds as many)
HOT_METHODS_SHOWN = 5


# --- jvm-table.html -------------------------------------------------------------------------

def jvm_table(run: Run, scenario: Scenario | None = None) -> dict[str, Any] | None:
    """What the server's JVM did per cell (its JFR summary, whole recording); None when no
    cell has one."""
    scenario = scenario or run.scenario
    rows = []
    for lp, row in scenario.grid():
        for system, c in row:
            if c is not None and c.jvm is not None:
                rows.append(_jvm_row(lp, system.label, c))
    if not rows:
        return None
    shared = next((e for e in labelled(run.environment, ENVIRONMENT_LABELS)
                   if e["key"] == "shared_host"), None)
    windowed = any(c.jvm is not None and c.jvm.window is not None for c in scenario.measured())
    return {"caption_id": f"jvm-{block_id(run, scenario)}",
            "caption": ("The server's JFR recording per system and offered load (each links its "
                        ".jfr file)"),
            "rows": rows, "shared_host": shared,
            "span_text": ("inside the measured window of each cell's first repetition (the "
                          "warm-up before it and the drain after it left out)" if windowed else
                          "over the whole recording of each cell's first repetition (JVM start "
                          "and warm-up included)")}


def _jvm_row(lp: LoadPoint, label: str, c: Cell) -> dict[str, Any]:
    j = c.jvm.summary
    gc, cpu, sp = j.get("gc") or {}, j.get("cpu") or {}, j.get("safepoint") or {}
    pauses = gc.get("pause_count") if gc.get("pause_count") is not None else gc.get("count")
    return {
        "label": label, "source": c.jvm.source,
        "offered_text": load_point_text(lp, plain, RATE_UNIT),
        "gc_pauses_text": plain(pauses),
        "gc_pause_total_text": plain(gc.get("pause_total_ms")),
        "gc_pause_max_text": plain(gc.get("pause_max_ms")),
        "safepoints_text": plain(sp.get("total_ms")) if sp.get("total_ms") is not None else "–",
        # percent, as the host-health table on the same page prints the machine's CPU
        "cpu_jvm_text": f"{_share(cpu.get('jvm_user'))} / {_share(cpu.get('jvm_system'))}",
        "cpu_machine_text": _share(cpu.get("machine")),
        "allocation_text": plain(j.get("allocation_rate_mb_s")),
        "truncated": bool(j.get("truncated"))}


# --- jvm-hotspots.html ----------------------------------------------------------------------

def jvm_hotspots(run: Run, scenario: Scenario | None = None) -> dict[str, Any] | None:
    """Where each system's JVM spent its samples, shaped for printing: per system, per load
    point the top hot methods by self time and, when the manifest gives `jfr_attribution`,
    the share of samples per label. Percentages are of the samples with a readable stack."""
    scenario = scenario or run.scenario
    with_labels = bool(run.jfr_attribution)
    scopes = {_samples_scope(c) for c in scenario.measured() if c.jvm is not None}
    scope = scopes.pop() if len(scopes) == 1 else "in one repetition's recording"
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
                "load": lp.id,
                "offered": closed_load_text(lp) if lp.closed else fmt_number(lp.offered_rate),
                "samples": f"{n:,}",
                # the population: the recording of the cell's first repetition (the
                # per-request accounting pools every repetition's windows)
                "samples_text": f"{n:,} samples {_samples_scope(c)}",
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
                "methods_caption_id": f"jvm-methods-{block_id(run, scenario)}-{s.id}",
                "methods_caption": (f"Hot methods of {s.label}: the top {HOT_METHODS_SHOWN} "
                                    f"by self time per offered load (requests/s), from the "
                                    f"server's JFR execution samples {scope} of each load "
                                    f"(the per-request accounting pools every repetition's). "
                                    f"Self %: share of samples "
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
        out["attribution_caption_id"] = f"jvm-attribution-{block_id(run, scenario)}"
        out["attribution_samples_note"] = "one repetition"
        out["attribution_caption"] = (
            "Share of the server's JFR execution samples per offered load (requests/s), in "
            "brackets how many, the samples " + scope + " of each load (the per-request "
            "accounting pools every repetition's): a sample counts once, under the first frame "
            "from the leaf (the running method) towards the root that a pattern of the run's "
            "jfr_attribution matches; other: no frame matched.")
    return out


def _samples_scope(c: Cell) -> str:
    """Which samples a hot-methods row counts: those of one repetition's recording (the cell's
    `jvm`), inside its measured window when the run says where the window is."""
    index = c.repetitions[0].index
    return (f"in repetition {index}'s measured window" if c.jvm.window is not None
            else f"over repetition {index}'s whole recording")
