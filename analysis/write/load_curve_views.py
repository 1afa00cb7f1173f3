"""The load-curve table's view block (load-curve-table.html and the includes it uses): per load
point and system the cell's latencies with their range, throughput, requests, flags and the
footnotes and rules stated under the table (docs/data-format.md, `load_curve_table`).

A view block is ready to print: rows come ordered, every printed value is its own field (its
text beside the raw number where there is one), flags are booleans and labels are resolved, so
that the includes only loop and print. Text is formatted here (vocabulary.py says how); the
includes escape it. The other view modules follow the same contract.
"""
from __future__ import annotations

from typing import Any

from analysis.derive import overload, steady
from analysis.model import Cell, LoadPoint, Run, Scenario, System
from analysis.vocabulary import (LATENCY_UNIT, TABLE_LATENCY, closed_load_text, fmt_censored,
                                 fmt_count, fmt_ms, fmt_number, fmt_pct, fmt_rate, fmt_timeout,
                                 has_closed_loads, load_label, load_point_text, plain, r3)
from analysis.write.cell_text import (cell_texts, latency_header, latency_text as _latency_text,
                                      seconds_text as _seconds, stat_text as _stat_text)
from analysis.write.page_views import block_id
from analysis.paths import table_csv_path


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
    errors = c.error_rate
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
