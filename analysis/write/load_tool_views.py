"""The methodology's load-tools entries (load-tools.html, issues 23 and 33): per system read from
a load tool's files, the tool, what its latency covers, its load model and how it is known, the
window cut, the correction and what the files leave out.
"""
from __future__ import annotations

from typing import Any

from analysis.derive.aggregate import DURATION_AGREE_PCT, DURATION_AGREE_S
from analysis.model import Cell, Run, Scenario
from analysis.vocabulary import (PERCENTILES, RATE_UNIT, closed_load_text, fmt_count, fmt_number,
                                 load_point_text, plain)
from analysis.write.charts.chartset import drawn_in


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
