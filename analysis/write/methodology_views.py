"""The methodology's view block (methodology.html and the includes under it): how the run was
measured, and the tables of its method: steady state (issue 32), warm-up, knee search and
settling (issue 24); the load tools' and generators' entries come from their own modules.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from analysis.derive import steady
from analysis.model import Run
from analysis.vocabulary import (LATENCY_UNIT, RATE_UNIT, UNIT_TEXT, display_value, fmt_count,
                                 fmt_ms, fmt_number, load_point_text)
from analysis.write import generator_views
from analysis.write.load_tool_views import load_tools


# --- methodology.html -----------------------------------------------------------------------

def methodology(run: Run) -> dict[str, Any]:
    shared = run.environment.get("shared_host")
    shared_text = display_value("shared_host", shared) if shared is not None else None
    return {"value_unit_text": UNIT_TEXT.get(run.value_unit, run.value_unit),
            "latency_unit": LATENCY_UNIT,
            **({"load_tools": tools} if (tools := load_tools(run)) else {}),
            "raw_data_text": ("the file behind it (a load tool's, with the HdrHistogram log "
                              "recorded from it where it lists every request)" if tools else
                              "the HdrHistogram log behind it"),
            "estimates_text": ("the coordinated-omission corrected figures are estimates "
                               "(labelled as such beside the measured ones); every other figure "
                               "is computed from the linked files"
                               if any(c.imported and c.imported.corrected for c in run.cells())
                               else "nothing here is estimated — every figure is computed from "
                                    "the linked logs"),
            # one machine for generator and server: true, false, or null when not recorded
            "shared_host": {"yes": True, "no": False}.get(shared_text),
            "scope_text": ("one server given by URL, and the requests this run sent to it"
                           if "target" in run.load_generator else
                           "one JDK, one synthetic workload"),
            **({"knee_search": search} if (search := knee_search(run)) else {}),
            **({"settle_text": settle} if (settle := settle_text(run)) else {}),
            **({"steadiness": block} if (block := steadiness(run)) else {}),
            **({"warmup": warmup} if (warmup := warmup_used(run)) else {}),
            **({"generators": gens} if (gens := generator_views.generators(run)) else {})}


def steadiness(run: Run) -> dict[str, Any] | None:
    """Issue 32's methodology block: how a window is judged steady (derive/steady.py), the count
    of repetitions per class over the run, and a row per cell that is not all flat, with each
    repetition's sentence. None for a run with no classified repetition (JMH)."""
    totals: dict[str, int] = {}
    rows = []
    for scenario in run.scenarios:
        labels = {s.id: s.label for s in scenario.systems}
        for lp, row in scenario.grid():
            for system, c in row:
                if c is None:
                    continue
                for name, k in c.steady_counts.items():
                    totals[name] = totals.get(name, 0) + k
                if set(c.steady_counts) <= {"flat"}:
                    continue
                rows.append({
                    "scenario": scenario.label, "load": load_point_text(lp),
                    "system": labels.get(system.id, system.id),
                    "counts_text": ", ".join(f"{name} {k}" for name, k in c.steady_counts.items()),
                    "verdict_text": ("not steady: kept out of the measured ceiling, the knee and "
                                     "comparisons" if c.not_steady else
                                     "figures from the steady part" if c.window_stats else
                                     "figures from the whole window"),
                    "repetitions": [f"{r.index}: {r.steady.sentence}" for r in c.repetitions
                                    if r.steady is not None]})
    if not totals:
        return None
    order = [*STEADY_ORDER, *sorted(set(totals) - set(STEADY_ORDER))]
    return {"caption": ("The cells whose repetitions were not all flat: their classes, each "
                        "repetition's verdict, and what the load-curve table shows for the cell."),
            "method_text": "How a window is judged steady: " + steady.METHOD_TEXT + ".",
            "counts_text": ", ".join(f"{totals[k]} {k}" for k in order if k in totals)
            + " (cell repetitions)",
            "has_scenarios": any(sc.id is not None for sc in run.scenarios),
            "rows": rows}


STEADY_ORDER = ("flat", "warmup", "slowdown", "no-steady-state", "not known")


def _system_labels(run: Run) -> dict[str, str]:
    return {s.id: s.label for sc in run.scenarios for s in sc.systems}


def knee_search(run: Run) -> dict[str, Any] | None:
    """The knee search (bench/run.sh --find-knee, issues 24 and 32) as the methodology's table:
    per system each probe's rate, warm-up, window, outcomes, p99, verdict and why and host
    check, then what was measured in full. From the run's knee.json where it has one (the
    figures); else from run.yml's method.knee_search (rate, verdict, why, host check only)."""
    search = _knee_entries(run)
    if search is None:
        return None
    rule, entries, source = search
    labels = _system_labels(run)
    systems = []
    for entry in entries:
        knee, past = entry.get("knee"), entry.get("first_saturated")
        result = (f"knee {fmt_number(knee)} {RATE_UNIT} (the highest good probe)"
                  if knee is not None else "no good probe")
        if past is not None:
            result += f", first saturated {fmt_number(past)} {RATE_UNIT}"
        if entry.get("stopped"):
            result += f"; the search stopped: {entry['stopped']}"
        if entry.get("rates"):
            result += (f"; measured in full at "
                       f"{', '.join(fmt_number(r) for r in entry['rates'])} {RATE_UNIT}")
        systems.append({"label": labels.get(entry["system"], entry["system"]),
                        "result_text": result,
                        "probes": [_probe_row(pr) for pr in entry["probes"]]})
    figures = ("each probe's figures are its window's requests (sent at the offered rate after "
               "its warm-up) as the run's knee.json records them, its files in knee/"
               if source else "run.yml records each probe's verdict only (the run has no "
               "knee.json with the probes' figures)")
    return {"caption": f"Knee search (bench/run.sh --find-knee): short probes chose the rates; "
                       f"{rule}; {figures}.",
            **({"source": source} if source else {}),
            "systems": systems}


def _knee_entries(run: Run) -> tuple[str, list[dict[str, Any]], str | None] | None:
    """(rule, per-system entries as dicts, the knee.json it came from or None)."""
    if run.knee_search is not None:
        source = run.manifest_path.rsplit("/", 1)[0] + "/knee.json"
        return (run.knee_search.rule, [dataclasses.asdict(e) for e in run.knee_search.systems],
                source)
    search = run.method.knee_search if run.method is not None else None
    if not search:
        return None
    return search["rule"], search["systems"], None


def _probe_row(pr: dict[str, Any]) -> dict[str, Any]:
    """One probe as printed; a figure the record lacks is a dash."""
    def count(key: str) -> str:
        return fmt_count(pr[key]) if pr.get(key) is not None else "–"
    p99 = pr.get("p99_ms")
    return {"rate_text": f"{fmt_number(pr['rate'])} {RATE_UNIT}",
            "warmup_text": f"{fmt_number(pr['warmup_s'])} s" if pr.get("warmup_s") is not None
            else "–",
            "window_text": f"{fmt_number(pr['window_s'])} s" if pr.get("window_s") is not None
            else "–",
            "sent_text": count("sent"), "completed_text": count("completed"),
            "timed_out_text": count("timed_out"), "errors_text": count("errors"),
            "p99_text": (fmt_ms(p99) if p99 is not None else
                         "none answered" if pr.get("completed") == 0 else "–"),
            "verdict": pr["verdict"], "why": pr["why"],
            "host_text": probe_host_text(pr.get("host_check"))}


def probe_host_text(host: dict[str, Any] | None) -> str:
    """A knee probe's host check (the one each cell gets) in a few words."""
    if not host:
        return "not checked"   # runs from before the probes were checked
    text = host["verdict"]
    details = []
    if host.get("busy_share_before") is not None:
        details.append(f"CPU {host['busy_share_before']:.0%} busy")
    if host.get("settle_waited_s") is not None:
        details.append(f"server settled in {fmt_number(host['settle_waited_s'])} s")
    return text + (f" ({'; '.join(details)})" if details else "")


def settle_text(run: Run) -> str | None:
    """run.yml's method.settle (a server given by URL, issue 24) as one sentence."""
    settle = run.method.settle if run.method is not None else None
    if not settle:
        return None
    labels = _system_labels(run)
    bounds = "; ".join(f"{labels.get(e['system'], e['system'])}: within {fmt_ms(e['bound_ms'])} ms "
                       f"(quiet answer {fmt_ms(e['quiet_answer_ms'])} ms)"
                       for e in settle["systems"])
    return f"Settling: {settle['rule']}. {bounds}."


def warmup_used(run: Run) -> dict[str, Any] | None:
    """run.yml's method.warmup (issue 32) as the methodology's table: per cell, the warm-up
    each repetition had before its window and in how many the generator found it steady, in
    run.yml's order. None for runs recorded before it."""
    warmup = run.method.warmup if run.method is not None else None
    if not warmup:
        return None
    labels = _system_labels(run)
    scenario_labels = {sc.id: sc.label for sc in run.scenarios if sc.id is not None}
    load_points = {lp.id: lp for sc in run.scenarios for lp in sc.load_points}
    rows: dict[tuple[str, ...], dict[str, Any]] = {}
    for entry in warmup["cells"]:
        path = entry["cell"].rpartition(".")[0]
        *scenario, system, load = path.split("/")
        row = rows.setdefault((*scenario, system, load), {
            "label": labels.get(system, system) + "".join(
                f" ({scenario_labels.get(sc, sc)})" for sc in scenario),
            "load_text": (load_point_text(load_points[load], unit=RATE_UNIT)
                          if load in load_points else load),
            "used": [], "reached": [], "modes": set()})
        row["used"].append(entry["used_s"])
        row["reached"].append(entry["reached"])
        row["modes"].add(entry.get("mode", warmup["mode"]))
    bounds = (f"{fmt_number(warmup['min_s'])} to {fmt_number(warmup['max_s'])} s"
              if warmup["mode"] == "auto" else f"{fmt_number(warmup['min_s'])} s")
    return {"caption": (f"Warm-up before each window ({warmup['mode']}, {bounds}): the seconds "
                        f"each repetition had, and in how many the generator found its last "
                        f"seconds steady"),
            "rule_text": warmup.get("rule"),
            "rows": [{"label": r["label"], "load_text": r["load_text"],
                      "used_text": ", ".join(fmt_number(u) for u in r["used"]) + " s"
                      + ("" if r["modes"] == {warmup["mode"]}
                         else f" ({', '.join(sorted(r['modes']))})"),
                      "steady_text": f"{sum(r['reached'])} of {len(r['reached'])}",
                      "all_steady": all(r["reached"])} for r in rows.values()]}
