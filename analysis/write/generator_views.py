"""The methodology's per-generator tables (issue 33): for each cell repetition measured by several
load generators, one row per generator's file, with what the merge did and which generator fell
behind (derive/merge.py's thresholds, said in words here)."""
from __future__ import annotations

import datetime as _dt
from typing import Any

from analysis.derive import merge
from analysis.model import Run
from analysis.vocabulary import fmt_count, fmt_ms, fmt_number, fmt_rate, load_point_text

RULE_TEXT = (f"A generator is flagged when it sent less than "
             f"{fmt_number(round(100 * merge.RATE_SHORT_SHARE))} % of its share of the offered "
             f"rate (the rate divided by the generators; without one, their mean rate), or when "
             f"its p99 is at least {fmt_number(merge.P99_OFF_FACTOR)} times the median of the "
             f"others' and {fmt_number(merge.P99_OFF_MS)} ms above it (only where it sent at "
             f"least 1,000 requests, so that its p99 rests on ten or more): a slow generator "
             f"makes the server look slow. Clocks are flagged when the first sends lie more than "
             f"{fmt_number(merge.CLOCK_SPREAD_S)} s (one interval) apart.")


def generators(run: Run) -> list[dict[str, Any]]:
    """One block per repetition with several generators, in the run's cell order."""
    out = []
    for scenario in run.scenarios:
        loads = {lp.id: lp for lp in scenario.load_points}
        labels = {s.id: s.label for s in scenario.systems}
        for cell in scenario.measured():
            for rep in cell.repetitions:
                if not rep.generators:
                    continue
                out.append(_block(rep, f"{labels.get(cell.system, cell.system)}, "
                                       f"{load_point_text(loads[cell.load])}"
                                       + (f", repetition {rep.index}"
                                          if len(cell.repetitions) > 1 else "")
                                       + (f" ({scenario.label})" if scenario.id else ""),
                                  "-".join(["generators", *([scenario.id] if scenario.id
                                                            else []),
                                            cell.system, cell.load, str(rep.index)])))
    return out


def _block(rep, label: str, caption_id: str) -> dict[str, Any]:
    rows = rep.generators
    firsts = [r.first_send_ms for r in rows if r.first_send_ms is not None]
    earliest = min(firsts) if firsts else None
    spread = rows[0].first_send_spread_s
    imported = rep.imported
    if imported is None:
        what = ("the generators' .hlog interval histograms added by absolute second, their "
                "counts added (in flight: the means added, the maximum left out, as a maximum "
                "of a sum is at most the sum of the maxima)")
    elif imported.per_request:
        what = ("the generators' requests put together, then recorded into one-second "
                "intervals by send time as one file's are: exact")
    else:
        what = ("the generators' summaries: counts and rates added; "
                + (imported.percentiles_note or ""))
    flagged = [r for r in rows if r.behind_rate or r.behind_p99]
    return {
        "label": label, "merge_text": what, "caption_id": caption_id,
        "caption": f"{label}: each load generator's file, with what it sent and measured in "
                   f"the window",
        "rows": [{"source": r.source, "sent_text": fmt_count(r.sent),
                  "rate_text": fmt_rate(r.rate_rps),
                  "share_text": fmt_rate(r.share_rps),
                  "errors_text": fmt_count(r.errors), "timed_out_text": fmt_count(r.timed_out),
                  "p99_text": fmt_ms(r.p99_ms),
                  "first_send_text": _first_send(r.first_send_ms, earliest),
                  "flag_text": _flag(r)} for r in rows],
        "verdict_text": (f"{len(flagged)} of {len(rows)} generators fell behind: the cell's "
                         f"figures include their slowness." if flagged else
                         f"None of the {len(rows)} generators fell behind."),
        "clock_text": _clock(spread, rows[0].clocks_disagree, len(firsts), len(rows)),
        "rule_text": RULE_TEXT}


def _first_send(ms: float | None, earliest: float | None) -> str:
    if ms is None:
        return "not in the file"
    when = _dt.datetime.fromtimestamp(ms / 1000.0, _dt.timezone.utc)
    text = when.strftime("%Y-%m-%d %H:%M:%S.") + f"{when.microsecond // 1000:03d} UTC"
    return text + f" (+{fmt_number(round((ms - earliest) / 1000.0, 3))} s)"


def _flag(row) -> str:
    reasons = []
    if row.behind_rate:
        reasons.append(f"sent {fmt_rate(row.rate_rps)} req/s of its {fmt_rate(row.share_rps)} req/s")
    if row.behind_p99:
        reasons.append("p99 far above the others'")
    return "fell behind: " + "; ".join(reasons) if reasons else "kept up"


def _clock(spread: float | None, disagree: bool, known: int, n: int) -> str:
    if spread is None:
        return (f"The files of {n - known} of {n} generators hold no wall-clock send time: "
                f"whether their clocks agree cannot be checked.")
    if disagree:
        return (f"The first sends lie {fmt_number(round(spread, 3))} s apart, more than one "
                f"interval: the generators' clocks disagree or they did not start together, so "
                f"the merged seconds add different moments.")
    return (f"The first sends lie within {fmt_number(round(spread, 3))} s of each other, inside "
            f"one interval.")
