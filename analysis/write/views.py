"""View blocks: one ready-to-print block of the data file per include (docs/data-format.md).

Rows come ordered, every printed value is its own field (its text beside the raw number where
there is one), flags are booleans and labels are resolved, so that the includes only loop and
print. Text is formatted here (vocabulary.py says how); the includes escape it.
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any

from analysis.derive import overload, steady
from analysis.derive.aggregate import DURATION_AGREE_PCT, DURATION_AGREE_S
from analysis.model import Cell, LatencyStats, LoadPoint, Run, Scenario, System
from analysis.vocabulary import (CELL_TEXT_FIELDS, ENVIRONMENT_LABELS, LATENCY_UNIT, PERCENTILES,
                                 RATE_UNIT, TABLE_LATENCY, UNIT_TEXT, closed_load_text,
                                 display_value, fmt_censored,
                                 fmt_count, fmt_ms, fmt_number, fmt_pct, fmt_rate, fmt_timeout,
                                 has_closed_loads, labelled, load_label, load_point_text, plain,
                                 r1, r3)
from analysis.write import generator_views
from analysis.write.charts.chartset import drawn_in
from analysis.paths import scenario_url, table_csv_path

# Rows per (system, load point) in the printed hot-methods table (the cell's `jvm` holds as many)
HOT_METHODS_SHOWN = 5
LABELS = {name: label for name, _, label in PERCENTILES}


def latency_header() -> str:
    return " / ".join(LABELS.get(name, name) for name in TABLE_LATENCY)


def _stat_text(c: Cell, name: str, *, table: bool = False) -> str:
    # several generators' summaries (issue 33): say why there are no percentiles where they go
    note = next((r.imported.percentiles_note for r in c.repetitions
                 if r.imported and r.imported.percentiles_note), None)
    return _latency_text(c.stats, name, table=table,
                         note=note if name.startswith("p") else None)


def _latency_text(stats: LatencyStats, name: str, *, table: bool = False,
                  note: str | None = None) -> str:
    p = stats.get(name)
    if note and not p.known:
        return note
    return fmt_censored(p.value_ms, p.at_least_ms, table=table, at_most=p.upper_bound)


def cell_texts(c: Cell) -> dict[str, str]:
    """The printed text of a cell's statistics (vocabulary.CELL_TEXT_FIELDS): what stat.html
    prints for field=p99, throughput, count, ... A censored statistic prints as "> 15,000" (ms,
    the lower bound); "–" when unknown."""
    drops = "–"
    if c.drops is not None:
        drops = fmt_count(c.drops) + (f" ({c.drop_pct:.1f} %)" if c.drops else "")
    flight = c.in_flight
    a = c.accounting
    special = {"throughput_rps": fmt_rate(c.throughput_rps),
               "goodput_rps": fmt_rate(c.goodput_rps), "count": fmt_count(c.stats.count),
               "drops": drops,
               "in_flight": fmt_ms(flight.measured_mean if flight else None),
               "in_flight_max": fmt_count(flight.measured_max if flight else None),
               "littles_law": fmt_ms(flight.littles_law if flight else None),
               "sent": fmt_count(a.sent), "completed": fmt_count(a.completed),
               "timed_out": fmt_count(a.timed_out), "not_sent": fmt_count(a.not_sent),
               "saturation": ", ".join(c.saturation.reasons) or "none",
               "in_flight_at_window_start": fmt_count(_whole(flight.at_window_start
                                                            if flight else None)),
               "in_flight_at_window_end": fmt_count(_whole(flight.at_window_end
                                                          if flight else None)),
               "time_split.mean.waiting_ms": _waiting(c, "waiting_ms"),
               "time_split.mean.waiting_pct": _waiting(c, "waiting_pct"),
               "spread.p50_ms": _range_text(c, "p50"), "spread.p99_ms": _range_text(c, "p99"),
               "host.machine_cpu": _share(c.host.machine_cpu if c.host else None),
               "host.server_cpu": _share(c.host.server_cpu if c.host else None),
               **cpu_account_texts(c.cpu_account), **_steady_cell_texts(c)}
    return {f"{name}_text": special[key] if key in special else _stat_text(c, name)
            for key, name in CELL_TEXT_FIELDS.items()}


def _steady_cell_texts(c: Cell) -> dict[str, str]:
    """Issue 32's figures for prose: the classes ("warmup 2, flat 1"), where the steady parts
    whose figures the cell reports start ("3–6 s"), and the whole windows' p50 and p99."""
    starts = [r.steady.steady_from_s for r in c.repetitions
              if r.steady is not None and r.steady.from_steady_part]
    whole = c.window_stats
    return {"steady_counts": ", ".join(f"{k} {v}" for k, v in c.steady_counts.items()) or "–",
            "steady_from": _seconds(starts) if starts else "–",
            "whole_window.p50_ms": _latency_text(whole, "p50", table=True) if whole else "–",
            "whole_window.p99_ms": _latency_text(whole, "p99", table=True) if whole else "–"}


def cpu_account_texts(a) -> dict[str, str]:
    """The per-request accounting's figures as a post prints them inline (stat.html)."""
    texts = {f"cpu_account.{name}": "–" if a is None else _ms3(getattr(a, name))
             for name in ("cpu_ms", "handler_ms", "coordination_ms", "gc_vm_ms")}
    texts["cpu_account.p99.waiting_pct"] = "–" if a is None else _bound_pct(a.p99)
    return texts


def _whole(x: float | None) -> int | None:
    return None if x is None else int(round(x))


def _waiting(c: Cell, key: str) -> str:
    """The mean's waiting time (ms, "≥ " when a bound) or its share of the mean (%)."""
    t = c.time_split
    if t is None:
        return "–"
    if key == "waiting_pct":
        return fmt_pct(t.mean.waiting_pct)
    return ("≥ " if t.mean.lower_bound else "") + fmt_ms(t.mean.waiting_ms)


def _range_text(c: Cell, name: str) -> str:
    """The repetitions' range of a statistic: "199–204" ("–" with one repetition)."""
    s = c.spread.get(name)
    if s is None:
        return "–"
    return (f"{fmt_censored(s.min.value_ms, s.min.at_least_ms, at_most=s.min.upper_bound)}–"
            f"{fmt_censored(s.max.value_ms, s.max.at_least_ms, at_most=s.max.upper_bound)}")


def _with_range(c: Cell, name: str) -> str:
    """The table's text of one statistic: the median, with the repetitions' range when there
    are several: "201 (199–204)"; censored: "> 15 s"."""
    text = _stat_text(c, name, table=True)
    s = c.spread.get(name)
    if s is None:
        return text
    lo = fmt_censored(s.min.value_ms, s.min.at_least_ms, table=True, at_most=s.min.upper_bound)
    hi = fmt_censored(s.max.value_ms, s.max.at_least_ms, table=True, at_most=s.max.upper_bound)
    return text if lo == hi == text else f"{text} ({lo}–{hi})"


# --- load-curve-table.html ------------------------------------------------------------------

def _table_cell(s: System, c: Cell | None, lp: LoadPoint) -> dict[str, Any]:
    if c is None:
        return {"system": s.id, "missing": True, "source": None, "latency": [],
                "throughput_text": "–", "requests_text": "–", "count_text": "–",
                "saturated": False, "host_busy": False}
    texts = cell_texts(c)
    window = c.jvm.window if c.jvm else None
    gc_max = window.gc_pause_max_ms if window else None
    a = c.accounting
    if a.completed is not None:
        requests = (f"{fmt_count(a.sent)} / {fmt_count(a.completed)} / "
                    f"{fmt_count(a.timed_out)}")
    else:
        requests = texts["drops_text"]
    failures = None
    if (a.errors or 0) > 0 or (a.not_sent or 0) > 0:
        failures = f"{fmt_count(a.errors or 0)} errors, {fmt_count(a.not_sent or 0)} not sent"
    elif a.completed is None and (a.timed_out or 0) > 0:
        failures = f"{fmt_count(a.timed_out)} timeouts"
    # the table's rate is the throughput, what the server delivered, which a reader compares
    # with the offered one; the goodput shows only as the share answered in time under it
    in_time = None
    if a.completed is not None and a.sent and a.completed < a.sent:
        in_time = f"{fmt_pct(100.0 * a.completed / a.sent)} % answered in time"
    imported = c.imported
    return {
        "system": s.id, "missing": False, "source": c.sources[0],
        # issue 23: read from a load tool's file (only then, so other runs' data stay as were)
        **({"source_title": f"the {imported.tool} file it was read from",
            "converted": imported.converted,
            "closed_loop": imported.load_model == "closed",
            "corrected_text": _corrected_text(c)} if imported else {}),
        "latency": [{"name": name, "ms": r3(c.stats.value(f"{name}_ms")),
                     "text": _with_range(c, name)} for name in TABLE_LATENCY],
        "throughput_rps": r3(c.throughput_rps), "throughput_text": fmt_rate(c.throughput_rps),
        "in_time_text": in_time,
        "requests_text": requests,
        "count": c.stats.count, "count_text": texts["count_text"],
        "saturated": c.saturation.saturated,
        "saturation_text": ("saturated: " + ", ".join(c.saturation.reasons))
        if c.saturation.saturated else None,
        # an error is an answer: its own flag, beside saturation, never part of it
        "error_text": error_flag_text(c),
        "host_busy": bool(c.host and c.host.host_busy),
        "disagree": c.repetitions_disagree,
        "low_sample_p99": "p99" in c.low_sample,
        "over_cap": bool(c.in_flight_cap and c.in_flight and c.in_flight.littles_law
                         and c.in_flight.littles_law > c.in_flight_cap * 1.05),
        "gc_text": (f"longest GC pause in the window {plain(r3(gc_max))} ms"
                    if gc_max else None),
        "failures_text": failures,
        **({"littles_text": text} if (text := _littles_text(c, lp)) else {}),
        **steady_texts(c),
    }


def _seconds(values: list[float]) -> str:
    lo, hi = min(values), max(values)
    return f"{lo:g} s" if lo == hi else f"{lo:g}–{hi:g} s"


def steady_texts(c: Cell) -> dict[str, Any]:
    """Issue 32: what the load-curve cell says of its steadiness, once. `steady_text` is the
    flag (not steady; warm-up with the figures from the steady part; slowdown; no steady state),
    `whole_window_text` the whole windows' figures beside steady-part ones. A saturated cell
    whose queue grows to the end says so in its saturation flag instead (one mark, not two)."""
    reps = [r for r in c.repetitions if r.steady is not None and r.steady.cls is not None]
    out: dict[str, Any] = {"steady_text": None, "whole_window_text": None}
    if not reps:
        if any(r.steady is not None for r in c.repetitions):
            out["steady_text"] = "steadiness not known"
        return out
    n = len(c.repetitions)

    def of(k: int) -> str:
        return "" if k == n == 1 else f" ({k} of {n} repetitions)"
    growing = [r for r in reps if r.steady.saturated_queue]
    if c.not_steady:
        k = sum(1 for r in reps if r.steady.not_steady)
        out["steady_text"] = "not steady: a transient" + of(k)
    else:
        warm = [r.steady.steady_from_s for r in reps if r.steady.from_steady_part]
        slow = [r.steady.steady_from_s for r in reps if r.steady.cls == "slowdown"]
        if warm:
            out["steady_text"] = f"warm-up: steady from {_seconds(warm)}" + of(len(warm))
        elif slow:
            out["steady_text"] = f"slowdown from {_seconds(slow)}" + of(len(slow))
        elif len(growing) < sum(1 for r in reps if r.steady.cls == "no-steady-state"):
            k = sum(1 for r in reps if r.steady.cls == "no-steady-state")
            out["steady_text"] = "no steady state" + of(k)
    if growing and c.saturation.saturated and 2 * len(growing) > n:
        out["saturation_text"] = ("saturated: " + ", ".join(c.saturation.reasons)
                                  + "; the queue grows to the end: no steady state")
    if c.window_stats is not None:
        whole = " / ".join(_latency_text(c.window_stats, name, table=True)
                           for name in TABLE_LATENCY)
        out["whole_window_text"] = f"whole window: {whole}"
    return out


def error_flag_text(c: Cell) -> str | None:
    """The cell's flag when its error rate is high (overload.error_rate): "errors: 10.0 %"."""
    errors = overload.error_rate(c.accounting)
    return f"errors: {fmt_pct(100.0 * errors.share)} %" if errors and errors.high else None


def _littles_text(c: Cell, lp: LoadPoint) -> str | None:
    """A closed loop's check (issue 23): its connections are its requests in flight, so
    throughput x mean latency should give them back (less when users pause between requests)."""
    flight = c.in_flight
    if not lp.closed or flight is None:
        return None
    if flight.littles_law is None:
        return f"Little's law {flight.verdict}"
    return (f"Little's law: {fmt_rate(c.throughput_rps)} req/s × {fmt_ms(c.stats.mean_ms)} ms "
            f"= {fmt_rate(flight.littles_law)} in flight, for {closed_load_text(lp)}: "
            f"{flight.verdict}")


def _corrected_text(c: Cell) -> str | None:
    """The coordinated-omission corrected p99 (an estimate) printed under the measured one."""
    corrected = c.imported.corrected if c.imported else None
    if corrected is None:
        return None
    p99 = corrected.get("p99").value_ms
    return f"corrected estimate: p99 {fmt_ms(p99)}, max {fmt_ms(corrected.max.value_ms)}"


def load_model_note(run: Run, scenario: Scenario) -> dict[str, Any] | None:
    """What the table's cells read from load tools' files measured: closed loop (and so
    coordinated omission) or open, by which tool (issue 23). None for the harness's runs, whose
    methodology states their load model."""
    cells = [c for c in scenario.measured() if c.imported]
    if not cells:
        return None
    by_model: dict[str, list[str]] = {}
    for c in cells:
        label = next(s.label for s in scenario.systems if s.id == c.system)
        tool = c.imported.tool
        names = by_model.setdefault(c.imported.load_model, [])
        # the tool's name, unless the system's label already says it
        name = label if tool.lower() in label.lower() else f"{label} ({tool})"
        if name not in names:
            names.append(name)
    sentences = []
    if "closed" in by_model:
        corrected = any(c.imported.corrected for c in cells)
        sentences.append(
            ("Closed loop: coordinated omission.", "; ".join(by_model["closed"])
            + ": each connection waits for its reply before it sends again, so while the "
            "server stalls, requests are not sent and the time they would have waited is in "
            "no latency here. These percentiles understate the tail, most at p99 and above."
            + (" The corrected estimates (HdrHistogram's correction for the expected "
               "interval in run.yml) rebuild the missing requests assuming a steady send "
               "rate: estimates, shown beside the measured numbers." if corrected else "")))
    if "open" in by_model:
        sentences.append(("Open loop.", "; ".join(by_model["open"]) + ": requests were sent "
                          "at their scheduled times whatever the server did, so waiting is in "
                          "the latencies."))
    if "unknown" in by_model:
        sentences.append(("Load model not known.", "; ".join(by_model["unknown"])
                          + ": the file does not show whether the tool waited for replies "
                          "(set load_generator.model in run.yml). If it did (a closed loop), "
                          "the tail is understated."))
    return {"closed": "closed" in by_model,
            "sentences": [{"lead": lead, "text": text} for lead, text in sentences]}


def block_id(run: Run, scenario: Scenario) -> str:
    """What a block's ids (caption ids, anchors) are made of: the run id, and the scenario's
    when it has one, so that the blocks of several scenarios can share a page."""
    return run.id if scenario.id is None else f"{run.id}-{scenario.id}"


def load_curve_table(run: Run, scenario: Scenario | None = None) -> dict[str, Any]:
    scenario = scenario or run.scenario
    closed = has_closed_loads(scenario.load_points)
    rows = []
    for lp, row in scenario.grid():
        rows.append({"load": lp.id, **_row_load(lp),
                     "saturated": any(c is not None and c.saturation.saturated for _, c in row),
                     "cells": [_table_cell(s, c, lp) for s, c in row]})
    names = ", ".join(s.label for s in scenario.systems)
    reps = run.repetitions
    timeout = next((c.timeout_ms for c in scenario.measured() if c.timeout_ms), None)
    counted = any(c.accounting.completed is not None for c in scenario.measured())
    used = _marks_used(rows)
    return {
        "caption_id": f"load-curve-{block_id(run, scenario)}",
        "caption": ((f"{scenario.label}: " if scenario.id is not None else "")
                    + f"Latency in ms as {latency_header()} per "
                    + ("load (connections)" if closed else "offered load (requests/s)")
                    + f", with throughput, requests and sample count: {names}."
                    + (f" Each latency is the median of {reps} repetitions, their range in "
                       f"brackets." if reps > 1 else "")),
        "csv": table_csv_path(run.id, scenario.id),
        "latency_header": latency_header(),
        "latency_unit": LATENCY_UNIT,
        "requests_header": "sent / answered / timed out" if counted else "drops",
        "systems": [{"id": s.id, "label": s.label,
                     # the system's own table (issue 34: read on a phone one at a time)
                     "alone": {"summary": f"{s.label} alone",
                               "caption_id": f"load-curve-{block_id(run, scenario)}-{s.id}",
                               "caption": f"{s.label}: the columns of the table above that "
                                          f"are its own."}}
                    for s in scenario.systems],
        "rows": rows,
        "rules": table_rules(timeout, counted, closed,
                             imported=any(c.imported for c in scenario.measured()),
                             harness=any(not c.imported for c in scenario.measured()),
                             marks=used)
        + _steady_rules(rows),
        "marks": [text for key, text in TABLE_MARKS if key in used],
        # issue 23: a closed loop's rows are its connections, not offered rates
        **({"load_header": "Load"} if closed else {}),
        **({"load_model": note} if (note := load_model_note(run, scenario)) else {}),
        "missing": [{"load": x.load, "system": x.system, "file": x.file} for x in scenario.missing],
    }


# The footnote marks a cell can carry, each explained under a table only where a cell uses it
# (issue 34): (the cell's flag, the note).
TABLE_MARKS = (
    ("low_sample_p99", "† fewer than 10 samples beyond p99."),
    ("over_cap", "‡ Little's law (requests answered per second × mean latency) puts more "
                 "requests in flight than the load generator allows: suspect the row."),
)
# The flags whose rule table_rules states only under a table that shows them.
FLAGGED_RULES = ("error_text", "host_busy", "disagree")


def _marks_used(rows: list[dict[str, Any]]) -> set[str]:
    """The cell flags (TABLE_MARKS, FLAGGED_RULES) that some cell of the rows carries."""
    flags = [key for key, _ in TABLE_MARKS] + list(FLAGGED_RULES)
    return {key for r in rows for c in r["cells"] for key in flags if c.get(key)}


def _steady_rules(rows: list[dict[str, Any]]) -> list[str]:
    """The steady-state marks' rule, under a table that shows one (issue 32)."""
    if not any(c.get("steady_text") for r in rows for c in r["cells"]):
        return []
    return [f"steady state, per repetition (Methodology, \"Steady state\"): warm-up - the window "
            f"started in a transient; when its steady part is at least "
            f"{steady.HEADLINE_SHARE:.0%} of the window the figures are that part's, the whole "
            f"window's beside them; not steady - a transient in more than half of the "
            f"repetitions, kept out of the measured ceiling, the knee and comparisons; slowdown "
            f"- worse at the end than before; no steady state - it changed to the end."]


def _row_load(lp: LoadPoint) -> dict[str, Any]:
    """How a row of the load-curve table names its load point: the offered rate (and the
    clients × rate when the run gave clients), or a closed loop's connections."""
    if lp.closed:
        return {"offered": None, "load_text": load_point_text(lp), "clients_x_rate": None}
    offered = fmt_number(lp.offered_rate)
    clients_x_rate = load_label(lp.offered_rate, lp.clients)
    # the clients × rate line only says something when the run gave clients
    return {"offered": offered,
            "clients_x_rate": None if clients_x_rate == f"{offered}/s" else clients_x_rate}


def table_rules(timeout_ms: float | None, counted: bool, closed: bool = False, *,
                imported: bool = False, harness: bool = True,
                marks: set[str] | None = None) -> list[str]:
    """The table's rules, stated under it (overload.py's constants). A closed loop offers no
    rate: the goodput and queue rules, which compare with one, are not tested. `imported`:
    some cells were read from load tools' files (issue 23), whose counts mean what the tool's
    timestamps allow; `harness`: some were not; `marks`: the flags some cell shows
    (_marks_used), whose rules are stated (None: every rule)."""
    def shown(flag: str) -> bool:
        return marks is None or flag in marks

    queue = ("queue - " + overload.QUEUE_RULE.format(share=overload.QUEUE_MIN_SLOPE_SHARE * 100,
                                                     sig=overload.QUEUE_SIGNIFICANCE)
             # a load tool's file has counts but no in-flight series: its rule runs on the p50
             + (" (in more than half of the repetitions)" if counted and harness else
                " (here on the per-interval p50 scaled by the offered rate: no in-flight count "
                "was recorded)"))
    if closed:
        rate_rules = ("goodput and queue - not tested: both compare with an offered rate, "
                      "and a closed loop offers none (its connections send as fast as replies "
                      "come back, so its throughput is what it achieved)")
    else:
        rate_rules = ("goodput - fewer than "
                      f"{overload.GOODPUT_SHARE:.0%} of the window's requests answered in "
                      f"time; " + queue)
    rules = [
        "saturated, by one or more rules: " + rate_rules
        + f"; latency - p50 more than {overload.LATENCY_FACTOR:g} × the system's p50 at its "
        f"lowest load; utilisation - the server delivered at least "
        f"{overload.UTILISATION_SHARE:.0%} of its predicted ceiling (N / S), where a queue has "
        "no steady state. Saturated rows describe a queue, not the service.",
    ]
    if closed:
        rules.append("Little's law: a closed loop keeps one request in flight per connection, "
                     "so throughput × mean latency should equal the connections (less when "
                     "users pause between requests); checked on rows not saturated, within "
                     f"{overload.LITTLE_TOLERANCE:.0%}.")
    if imported:
        rules.append(
            "Cells read from a load tool's file: the requests are those the tool sent in the "
            "window, by its send timestamps (a summary: every request it reports); answered: a "
            "successful reply (the tool's success flag, or a status below 400), errors: the "
            "other replies and failures, timed out: what the tool counted as such; not sent: "
            "what the offered rate asked for in the window and the tool never sent. "
            "throughput: replies of any status that arrived during the window, per second (a "
            "summary: the tool's own rate).")
    if counted and harness:
        rules.append(
            "The requests are those whose intended send time fell in the measured window; "
            "answered: a reply within the timeout. throughput: every reply the server sent "
            "during the window (to earlier requests too) per second, what it delivered.")
    elif harness:
        rules.append("throughput: the replies the log recorded during the window, per second.")
    if timeout_ms:
        rules.append(f"> {fmt_timeout(timeout_ms)}: the percentile falls among requests that "
                     f"got no answer within the {fmt_timeout(timeout_ms)} timeout, so it is "
                     f"only known to be at least that.")
    if shown("error_text"):
        rules.append(f"errors: more than {overload.ERROR_SHARE * 100:g} % of the window's "
                     "requests were answered with an error (a status outside success, a "
                     "refused or reset connection). An error is an answer, not saturation: the "
                     "goodput rule counts it as answered, and the latencies leave errors out, "
                     "so they describe the other requests.")
    if shown("host_busy"):
        rules.append(f"host busy: the machine's CPU was above {overload.HOST_BUSY_MACHINE:.0%}, "
                     f"or more than {overload.HOST_UNEXPLAINED:.0%} above what the server and "
                     f"the load generator used together, in some repetition.")
    if shown("disagree"):
        rules.append(f"repetitions disagree: max / min of p50 or p99 over "
                     f"{overload.SPREAD_DISAGREE_RATIO:g} below saturation.")
    return rules


# --- where-the-time-went.html ---------------------------------------------------------------

def by_system(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows (load-major, as the grid gives them) grouped by system, loads in order within
    each; the first row of a system carries `group`, its label, printed once as the group's
    heading rather than in every row (issue 34: a phone shows the label column only once)."""
    order = list(dict.fromkeys(r["label"] for r in rows))
    out = sorted(rows, key=lambda r: order.index(r["label"]))   # stable: loads stay in order
    return [{**r, "group": r["label"]} if i == 0 or out[i - 1]["label"] != r["label"] else r
            for i, r in enumerate(out)]


def where_the_time_went(run: Run, scenario: Scenario | None = None) -> dict[str, Any] | None:
    """Per cell, the mean (and p99) split into service and waiting: ms and % (overload's
    where_the_time_went). None when no cell has a service time."""
    scenario = scenario or run.scenario
    rows = []
    for lp, row in scenario.grid():
        for s, c in row:
            if c is None or c.time_split is None:
                continue
            t = c.time_split
            rows.append({
                "label": s.label, "offered_text": load_point_text(lp, unit=RATE_UNIT),
                "saturated": c.saturation.saturated,
                "service_text": fmt_ms(t.mean.service_ms),
                "mean_text": _stat_text(c, "mean"),
                "waiting_text": ("≥ " if t.mean.lower_bound else "") + fmt_ms(t.mean.waiting_ms),
                "waiting_pct_text": _pct(t.mean.waiting_pct),
                "p99_text": _stat_text(c, "p99"),
                "p99_waiting_text": ("≥ " if t.p99.lower_bound else "") + fmt_ms(t.p99.waiting_ms),
                "p99_waiting_pct_text": _pct(t.p99.waiting_pct)})
    if not rows:
        return None
    service = scenario.service_time_ms
    source = (f"the {'scenario' if scenario.id else 'run'}'s service time, "
              f"{fmt_number(service)} ms" if service else "each system's p50 at its lowest load")
    return {"caption_id": f"time-{block_id(run, scenario)}",
            "caption": (f"Where the time went: each latency split into service ({source}) and "
                        f"waiting (the rest: queued), in ms and as a share of it"),
            "rows": by_system(rows), **_load_header(scenario), "service_source": source}


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{fmt_pct(x)} %"


# --- cpu-accounting.html (issue 25) ----------------------------------------------------------

CPU_SOURCE_TEXT = {
    "counts": "the server process's CPU in the window from counts.json (server.cpu_share_window "
              "× machine.cores × the window's length)",
    "jfr": "the server process's CPU from the recording's jdk.CPULoad (mean jvmUser + jvmSystem "
           "× machine.cores × the window's length)"}


def cpu_accounting(run: Run, scenario: Scenario | None = None) -> dict[str, Any] | None:
    """Per cell the CPU per request (handler, coordination, other Java, GC/VM) and the latency's
    rest, waiting (derive/cpu_accounting.py), with per system the waiting share of p99 at each
    load up to and past its first saturated one. None when no cell has the inputs."""
    scenario = scenario or run.scenario
    rows, accounts = [], []
    for lp, row in scenario.grid():
        for s, c in row:
            a = c.cpu_account if c is not None else None
            if a is None:
                continue
            accounts.append(a)
            rows.append({
                "label": s.label, "offered_text": load_point_text(lp, unit=RATE_UNIT),
                "saturated": c.saturation.saturated,
                "handler_text": _ms3(a.handler_ms), "coordination_text": _ms3(a.coordination_ms),
                "other_java_text": _ms3(a.other_java_ms), "gc_vm_text": _ms3(a.gc_vm_ms),
                "cpu_text": _ms3(a.cpu_ms), "mean_text": _stat_text(c, "mean"),
                "waiting_text": _bound_ms(a.mean), "p99_text": _stat_text(c, "p99"),
                "p99_waiting_text": _bound_ms(a.p99), "p99_waiting_pct_text": _bound_pct(a.p99),
                # the population: every pooled repetition's window (jvm_hotspots counts one)
                "samples_text": (f"{fmt_count(a.samples)} ({a.repetitions} "
                                 f"repetition{'s' if a.repetitions != 1 else ''})"),
                "requests_text": fmt_count(a.replies)})
    if not rows:
        return None
    return {"caption_id": f"cpu-{block_id(run, scenario)}",
            "caption": ("Per-request accounting" + (f" ({scenario.label})" if scenario.id else "")
                        + ": the server's CPU per request, split by its JFR execution samples, "
                        "and the rest of the latency, waiting (ms per request; the repetitions "
                        "with a recording pooled). " + _cpu_method_text(run, accounts)),
            "samples_note": "in the pooled repetitions' windows",
            "rows": by_system(rows), "growth": _waiting_growth(scenario)}


def _ms3(x: float) -> str:
    # a per-request CPU figure is a fraction of a millisecond: three decimals keep it visible
    return f"{x:,.3f}"


def _bound_ms(w) -> str:
    return ("≥ " if w.lower_bound else "") + fmt_ms(w.waiting_ms)


def _bound_pct(w) -> str:
    """The waiting share of a latency, rounded down: near saturation it is 99.98 %, which
    rounding would print as a 100 % no request can reach."""
    if w.waiting_pct is None:
        return "–"
    return ("≥ " if w.lower_bound else "") + f"{fmt_pct(math.floor(w.waiting_pct * 10) / 10)} %"


def _cpu_method_text(run: Run, accounts: list) -> str:
    sources = sorted({src for a in accounts for src in a.sources})
    periods = sorted({a.period_ms for a in accounts})
    kinds = run.cpu_accounting or {}

    def labels(kind: str) -> str:
        return ", ".join(f"“{x}”" for x in kinds.get(kind, ())) or "none"
    over = sum(1 for a in accounts if a.sampled_over_cpu)
    return (
        "CPU per request: " + "; or ".join(CPU_SOURCE_TEXT[x] for x in sources)
        + ", divided by the replies the server sent in the window. Java CPU: the window's "
        f"jdk.ExecutionSample events × the recording's sampling period "
        f"({' / '.join(fmt_number(p) for p in periods)} ms), each sample being one thread seen "
        "running Java code at one tick; it is split by the samples' jfr_attribution labels "
        f"(run.yml's cpu_accounting): handler = {labels('handler')}; coordination = "
        f"{labels('coordination')}; other Java = every other label. GC/VM = the process's CPU "
        "minus the Java CPU: GC, JIT compiler and VM threads, which the sampler never sees, and "
        "Java threads in native code or system calls (socket reads and writes), which it does "
        "not count either, so it is an upper bound on GC and JIT work. Limits: a sample stands "
        "for a whole period, so a figure resting on few samples is rough (the samples column "
        "says how many); the sampler takes a few threads per tick. Waiting = latency − CPU "
        "per request: queueing, sleeping or parking on dependencies, the network and the "
        "load generator."
        + (f" In {over} cells the samples × period exceeded the measured CPU and were scaled "
           "down to it." if over else ""))


def _waiting_growth(scenario: Scenario) -> list[dict[str, Any]]:
    """Per system, the waiting share of p99 at each of its loads, the first saturated load
    that was steady (the knee) marked."""
    out = []
    for s in scenario.systems:
        points, knee_seen = [], False
        for lp in scenario.load_points:
            c = scenario.cell(lp.id, s.id)
            if c is None or c.cpu_account is None:
                continue
            # a cell that measured a transient is no knee (issue 32)
            knee = c.saturation.saturated and not c.not_steady and not knee_seen
            knee_seen = knee_seen or knee
            w = c.cpu_account.p99
            points.append({"offered_text": load_point_text(lp, unit=RATE_UNIT),
                           "pct_text": _bound_pct(w),
                           "saturated": c.saturation.saturated, "knee": knee})
        if points:
            out.append({"label": s.label, "points": points})
    return out


# --- host-health.html -----------------------------------------------------------------------

def host_health(run: Run, scenario: Scenario | None = None) -> dict[str, Any] | None:
    """Per cell, the machine's CPU against the server's and the generator's, the generator's
    send lag and the busy verdict: the medians of the repetitions, or a busy repetition's own
    (overload.repetitions_host), so that figures and verdict agree. None without counts."""
    scenario = scenario or run.scenario
    rows = []
    for lp, row in scenario.grid():
        for s, c in row:
            if c is None or c.host is None:
                continue
            h = c.host
            rows.append({"label": s.label,
                         "offered_text": load_point_text(lp, unit=RATE_UNIT),
                         "machine_text": _share(h.machine_cpu), "server_text": _share(h.server_cpu),
                         "generator_text": _share(h.generator_cpu),
                         "lag_text": fmt_ms(h.send_lag_p99_ms), "host_busy": h.host_busy,
                         "reason": h.reason})
    if not rows:
        return None
    busy_text = f"{sum(1 for r in rows if r['host_busy'])} of {len(rows)}"
    return {"caption_id": f"host-{block_id(run, scenario)}",
            "caption": (f"Host health during each cell's window (medians of the repetitions, "
                        f"or where a repetition's host was busy, that repetition's own figures, "
                        f"named in the verdict; CPU as a share of the whole machine): host busy "
                        f"in {busy_text} cells"),
            "rows": rows, "busy_cells": sum(1 for r in rows if r["host_busy"]),
            "busy_text": busy_text}


def _load_header(scenario: Scenario) -> dict[str, str]:
    """where-the-time-went's load column is headed "Load" for a closed loop (connections),
    and keeps its "Offered" (no key) otherwise."""
    return {"load_header": "Load"} if has_closed_loads(scenario.load_points) else {}


def _share(x: float | None) -> str:
    """A share of the whole machine (0..1) as every page prints CPU: "8.4 %"."""
    return "–" if x is None else f"{x * 100:.1f} %"


# --- ceiling.html ---------------------------------------------------------------------------

def ceiling(run: Run, scenario: Scenario | None = None) -> dict[str, Any]:
    scenario = scenario or run.scenario
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
            "left_out_text": _ceiling_left_out(scenario, s),
            "peak_vs_predicted_pct": vs, "vs_text": f"{plain(vs)} %" if vs is not None else "–"})
    return {"caption_id": f"ceiling-{block_id(run, scenario)}",
            "caption": ("Predicted vs measured ceiling. Little's law: a system holding at most N "
                        "requests at a time, each for S seconds, completes at most N / S "
                        "requests per second. The measured ceiling is "
                        + overload.CEILING_RULE + "."),
            "measured_note": "kept up in every repetition",
            "service_time_ms": service,
            "service_time_text": f"{plain(service)} ms" if service is not None else "not given",
            "rows": rows}


def _ceiling_left_out(scenario: Scenario, system: System) -> str | None:
    """Why the load-curve table shows a higher throughput for `system` than its measured
    ceiling: each such load point and overload.ceiling_left_out's reason."""
    peak = system.measured_peak_rps
    parts = []
    for lp in scenario.load_points:
        c = scenario.cell(lp.id, system.id)
        # a hair above the ceiling is the lowest repetition's noise, not a left-out point
        if c is None or peak is None or c.throughput_rps <= (1 + overload.DRAIN_SHARE) * peak:
            continue
        why = overload.ceiling_left_out([(r.index, r.throughput_rps) for r in c.repetitions],
                                        lp.offered_rate)
        if why:
            parts.append(f"{load_point_text(lp, unit=RATE_UNIT)} (throughput "
                         f"{fmt_rate(c.throughput_rps)}): {why}")
    return ("not counted: " + "; ".join(parts)) if parts else None


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


def load_tools(run: Run) -> list[dict[str, Any]]:
    """Per system whose cells were read from a load tool's files (issue 23): the tool, what
    its latency covers, the load model and how it is known, the window cut and the
    correction, in the order of run.yml's systems."""
    out = []
    for scenario in run.scenarios:
        for s in scenario.systems:
            cells = [c for c in scenario.measured() if c.system == s.id and c.imported]
            if not cells:
                continue
            first = cells[0].imported
            tool = first.tool + (f" {first.version}" if first.version else "")
            files = sorted({r.imported.source for c in cells for r in c.repetitions
                            if r.imported})
            skipped = sum(r.imported.skipped for c in cells for r in c.repetitions
                          if r.imported)
            model = {"open": "open loop", "closed": "closed loop (coordinated omission: "
                     "latencies leave out the time a request waited to be sent)",
                     "unknown": "not known"}[first.load_model]
            entry = {
                "label": s.label + (f" ({scenario.label})" if scenario.id else ""),
                "tool_text": tool, "format": first.format,
                "measure_text": first.measure or "not stated by the tool",
                "load_model_text": model + (f"; from {first.load_model_evidence}"
                                            if first.load_model_evidence else ""),
                "content_text": ("every request (exact, recorded into one-second HdrHistogram "
                                 "intervals; the converted .hlog is linked from each cell)"
                                 if first.per_request else
                                 "the tool's summary, shown as it printed it"
                                 + ("" if drawn_in(cells[0], "spectrum")
                                    else "; no percentile spectrum")
                                 + ("" if drawn_in(cells[0], "latency_over_time")
                                    else "; no latency over time")),
                "files_text": f"{len(files)} file{'s' if len(files) != 1 else ''}",
                "caveat_text": first.caveat,
                "bounds_text": _upper_bounds_text(cells),
                "duration_text": _duration_from_files_text(scenario, cells),
                "failures_text": failures_text(first, cells, scenario),
                "window_text": "; ".join(dict.fromkeys(
                    c.imported.window_text for c in cells if c.imported.window_text)) or None,
                **({"window_loads": loads} if (loads := _window_cuts(scenario, cells)) else {}),
                "correction_text": (f"coordinated-omission correction for an expected "
                                    f"interval of {fmt_number(first.co_interval_ms)} ms "
                                    f"(estimates, shown beside the measured numbers)"
                                    if first.co_interval_ms else None),
                "skipped_text": (f"{fmt_count(skipped)} unreadable lines skipped (listed in "
                                 f"the build's warnings)" if skipped else None)}
            out.append(entry)
    return out


def _upper_bounds_text(cells: list[Cell]) -> str | None:
    """Said once per tool when a percentile is only an upper bound (issue 33)."""
    names = [label for name, _, label in PERCENTILES
             if any(c.stats.get(name).upper_bound for c in cells)]
    if not names:
        return None
    return (f"{' and '.join(names)} {'are' if len(names) > 1 else 'is'} printed \"≤ X\": the "
            f"file's percentile spectrum has no row exactly at that level, and X is its first "
            f"row above it, the most that the file states that percentile can be")


def _duration_from_files_text(scenario: Scenario, cells: list[Cell]) -> str | None:
    """Where a closed-loop load point's duration came from the files (issue 33)."""
    loads = {c.load for c in cells}
    taken = [f"{closed_load_text(lp)}: {fmt_number(lp.duration_s)} s"
             for lp in scenario.load_points if lp.duration_from_files and lp.id in loads]
    if not taken:
        return None
    which = "these load points" if len(taken) > 1 else "this load point"
    return (f"run.yml gives no duration_s for {which}: "
            f"taken from the files, which state how long they ran and agree within "
            f"{fmt_number(DURATION_AGREE_PCT)} % or {fmt_number(DURATION_AGREE_S)} s (the "
            f"median of theirs): {'; '.join(taken)}")


def failures_text(first, cells: list[Cell], scenario: Scenario) -> str | None:
    """Where a system's error and never-sent counts come from when its tool's per-request files
    leave out the failed requests (issue 32): the tool's summary of the same run, kept beside
    each file (run.yml `summary:`), or, without one, that the run's files cannot show them."""
    reps = [(c, r) for c in cells for r in c.repetitions if r.imported]
    kept = [(c, r.imported.summary) for c, r in reps if r.imported.summary]
    if not first.leaves_out_failed and not kept:
        return None
    tool = first.tool
    loads = {lp.id: lp for lp in scenario.load_points}
    sentences = []
    if kept:
        requests = sum(s.requests for _, s in kept)
        failed = sum(s.failed for _, s in kept)
        timed_out = sum(s.timed_out for _, s in kept)
        where = [f"{load_point_text(loads[c.load], plain, RATE_UNIT)}: {fmt_count(s.failed)}"
                 for c, s in kept if s.failed]
        text = (f"From {tool}'s own summary of the same run, kept beside "
                f"{'each' if len(kept) == len(reps) else 'the'} file ({len(kept)} of "
                f"{len(reps)}; whole runs, warm-up included): {fmt_count(failed)} of "
                f"{fmt_count(requests)} requests failed without an answer "
                f"({fmt_count(timed_out)} timed out)")
        if failed:
            sentences.append(text + f" ({'; '.join(where)}). The file leaves them out: up to "
                             f"that many of a cell's not-sent requests were sent and failed, "
                             f"and its errors count only answers with a status of 400 or more.")
        else:
            sentences.append(text + ". So every request it sent is in the file: the sent, "
                             "errors and not-sent counts are complete.")
    if len(kept) < len(reps):
        sentences.append(f"{'The other files have' if kept else 'This run keeps'} no {tool} "
                         f"summary beside {'them' if kept else 'its files'}: {tool}'s file "
                         f"lists only the requests that were answered, so whether any request "
                         f"failed without an answer (a timeout, a refused connection) cannot be "
                         f"checked from the run's files. Such a request would count here as "
                         f"not sent, and in no error count.")
    return " ".join(sentences)


def _window_cuts(scenario: Scenario, cells: list[Cell]) -> list[str]:
    """Per load point, the requests the window cut left out of its files (summed over the
    repetitions): every load's, not the first's alone."""
    out = []
    for lp in scenario.load_points:
        cuts = [r.imported.window_cut for c in cells if c.load == lp.id
                for r in c.repetitions if r.imported and r.imported.window_cut]
        if not cuts:
            continue
        files = f" ({len(cuts)} files)" if len(cuts) > 1 else ""
        out.append(f"{load_point_text(lp, unit=RATE_UNIT)}: {fmt_count(sum(b for b, _ in cuts))} "
                   f"requests before the window and {fmt_count(sum(a for _, a in cuts))} after "
                   f"it left out{files}")
    return out


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


# --- scenarios (issue 11) --------------------------------------------------------------------

def scenario_heading(run: Run, scenario: Scenario) -> dict[str, Any]:
    """What the report's scenario list and a scenario's page say about it: label, description,
    endpoint, nominal service time and offered rates, and where its page is."""
    service = scenario.service_time_ms
    if has_closed_loads(scenario.load_points):
        # issue 23: a closed loop's loads are its connections; it offers no rates
        loads = {"loads_text": ", ".join(closed_load_text(lp) for lp in scenario.load_points)}
    else:
        rates = ", ".join(fmt_number(lp.offered_rate) for lp in scenario.load_points)
        loads = {"rates_text": f"{rates} {RATE_UNIT}"}
    return {"id": scenario.id, "label": scenario.label, "description": scenario.description,
            "endpoint": scenario.endpoint, "service_time_ms": service,
            "service_time_text": "not given" if service is None else f"{plain(service)} ms",
            **loads, "url": scenario_url(run.id, scenario.id)}


# --- stat.html ------------------------------------------------------------------------------

def stat(doc: dict[str, Any]) -> dict[str, Any]:
    """Maps for stat.html's look-ups without `where`: systems and load points by id, and the
    printed value of each environment / load_generator setting by key (cells are looked up in
    the document's `cells`, already keyed by load point and system)."""
    return {"systems": {s["id"]: dict(s) for s in doc["systems"]},
            "load_points": {lp["id"]: dict(lp) for lp in doc["load_points"]},
            "settings": {name: {e["key"]: e["value"] for e in doc[name]}
                         for name in ("environment", "load_generator", "method") if name in doc}}
