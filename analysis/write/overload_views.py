"""The view blocks of overload and accounting: where the time went (service against waiting),
the per-request CPU accounting (issue 25), the host's health and the predicted against the
measured ceiling (where-the-time-went.html, cpu-accounting.html, host-health.html, ceiling.html).
"""
from __future__ import annotations

from typing import Any

from analysis.derive import overload
from analysis.model import Run, Scenario, System
from analysis.vocabulary import (RATE_UNIT, fmt_count, fmt_ms, fmt_number, fmt_pct, fmt_rate,
                                 has_closed_loads, load_point_text, plain, r1)
from analysis.write.cell_text import (bound_pct_text as _bound_pct, ms3_text as _ms3,
                                      share_text as _share, stat_text as _stat_text)
from analysis.write.page_views import block_id


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


def _bound_ms(w) -> str:
    return ("≥ " if w.lower_bound else "") + fmt_ms(w.waiting_ms)


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
    parts = []
    for lp in scenario.load_points:
        c = scenario.cell(lp.id, system.id)
        why = c.ceiling_left_out if c is not None else None
        if why:
            parts.append(f"{load_point_text(lp, unit=RATE_UNIT)} (throughput "
                         f"{fmt_rate(c.throughput_rps)}): {why}")
    return ("not counted: " + "; ".join(parts)) if parts else None
