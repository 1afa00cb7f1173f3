"""One cell repetition read from a load tool's file (issue 23): the I/O side, beside analyse.py.

A per-request file (`RequestSamples`) is recorded into one-second HdrHistogram intervals
(analysis/read/loadtools/record.py) and from there is treated as an `.hlog` is: the same
statistics (Java's percentiles), series, spectrum and saturation rules. The population is the
requests sent in the window; answered ones have a latency, errors are counted apart, and
requests the tool says timed out censor the percentiles at run.yml's `load_generator.timeout_s`
(else the shortest time the tool recorded for any of them: a lower bound, as the harness's
timeouts are). throughput counts the replies that arrived during the window, goodput the
window's requests answered, not_sent what an offered rate asked for that the tool never sent.
The recorded intervals are published as an `.hlog` beside the run's data.

A summary (`ResultSummary`) is shown as it is: the percentiles the tool printed, its counts,
its spectrum when it printed one, and no series (the page says the file has none).

The load model is the file's where it shows one, else run.yml's `load_generator.model`, else
unknown; a closed loop's latencies leave out the time requests waited to be sent.
"""
from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import numpy as np

from analysis.derive import aggregate, overload, steady
from analysis.errors import ResultsError
from analysis.model import Accounting, Imported, LatencyStats, Percentile, Repetition
from analysis.read.hdr.histogram import Histogram, sum_histograms
from analysis.read.loadtools import (CAVEATS, LEAVES_OUT_FAILED, detect_format, native_unit,
                                     read_results)
from analysis.read.loadtools.results import RequestSamples, ResultSummary, spectrum_upper_bound
from analysis.read.manifest import UNITS_PER_MS, Manifest
from analysis.vocabulary import PERCENTILES
from analysis.paths import converted_hlog_path

def load_model(info, manifest: Manifest) -> tuple[str, str | None]:
    """The load model and its evidence: the file's, else run.yml's, else unknown."""
    if info.load_model in ("open", "closed"):
        return info.load_model, info.load_model_evidence
    stated = manifest.load_generator.get("model")
    if stated in ("open", "closed"):
        return stated, "run.yml load_generator.model"
    return "unknown", None


def _relative_warnings(messages, path: Path, rel: str) -> list[str]:
    """A reader names the file by the path it was given; the pages name it repo-relative."""
    absolute = os.fspath(path)
    return [rel + m[len(absolute):] if m.startswith(absolute) else m for m in messages]


def value_unit_for(manifest: Manifest) -> str:
    """The unit a run of load tools' files records its histograms in, when run.yml gives
    none: the finest native unit of its per-request files (a tool's whole milliseconds stay
    exact; a mix of tools is recorded in the finest), ms when every file is a summary."""
    units = set()
    for cell in manifest.cells:
        path = manifest.resolve(cell.hlog)
        if cell.results and path.is_file():
            fmt = cell.format or detect_format(path)
            unit = native_unit(fmt, dict(cell.options))
            if unit is not None:
                units.add(unit)
    return next((u for u in ("ns", "us", "ms") if u in units), "ms")


def read_imported(manifest: Manifest, cell, path: Path, rel: str,
                  warnings: list[str]) -> tuple[Repetition, object]:
    """One repetition of a `results:` cell -> (Repetition, histogram of the answered requests,
    or None for a summary). A cell of several generators' files (issue 33) is their merge."""
    from analysis.derive import merge
    # (rel ends with the cell's run-relative path: the other files' sit beside it)
    base = rel[:len(rel) - len(cell.hlog)]
    results = []
    for part in cell.files:
        part_path = manifest.resolve(part)
        if not part_path.is_file():
            raise ResultsError("missing: a cell of several generators needs every file",
                               path=base + part)
        result = read_results(part_path, cell.format, dict(cell.options))
        warnings.extend(_relative_warnings(result.warnings, part_path, base + part))
        results.append(result)
    kinds = {isinstance(r, RequestSamples) for r in results}
    if len(kinds) > 1:
        which = [base + p for p, r in zip(cell.files, results) if not isinstance(r, RequestSamples)]
        raise ResultsError("is a summary while the cell's other files list every request: "
                           "give one kind of file per cell", path=which[0])
    parts = results if len(results) > 1 else None
    if isinstance(results[0], RequestSamples):
        result = merge.merge_samples(results)
    else:
        result = merge.merge_summaries(results)
    model, evidence = load_model(result.info, manifest)
    info = result.info
    imported = Imported(format=info.format, tool=info.tool, version=info.version,
                        measure=info.measure, load_model=model, load_model_evidence=evidence,
                        per_request=isinstance(result, RequestSamples), source=rel,
                        skipped=result.skipped, co_interval_ms=cell.co_interval_ms,
                        caveat=CAVEATS.get(info.format),
                        leaves_out_failed=info.format in LEAVES_OUT_FAILED)
    if cell.summary and not isinstance(result, RequestSamples):
        raise ResultsError(f"is a {info.tool} summary itself; run.yml's `summary:` goes with a "
                           f"per-request file", path=rel)
    if isinstance(result, RequestSamples):
        if cell.summary:
            from analysis.derive.tool_summary import read_tool_summary
            # (rel ends with the cell's run-relative path: the summary's sits beside it)
            imported.summary = read_tool_summary(
                manifest.resolve(cell.summary),
                rel[:len(rel) - len(cell.hlog)] + cell.summary, result, rel)
        rep, histogram = _from_samples(manifest, cell, result, imported)
        if parts:
            rep.generators = _sample_generators(parts, [base + p for p in cell.files],
                                                result, manifest, cell)
        return rep, histogram
    if parts:
        imported.percentiles_note = merge.PERCENTILES_NOT_MERGED
    rep = _from_summary(manifest, cell, result, imported, rel)
    if parts:
        rep.generators = _summary_generators(parts, [base + p for p in cell.files], manifest, cell)
    return rep, None


def _sample_generators(parts: list[RequestSamples], sources: list[str], merged: RequestSamples,
                       manifest: Manifest, cell) -> list:
    """Each generator's figures over the cell's window (the same absolute send times as the
    merged cell's): its own samples recorded as the cell's are."""
    from analysis.derive import merge
    from analysis.model import GeneratorFigures
    from analysis.read.loadtools.record import record_samples
    skip_s, window_s = cell.window if cell.window else (None, None)
    lower = float(merged.start_ms.min()) + 1000.0 * (skip_s or 0.0)
    upper = lower + 1000.0 * window_s if window_s else np.inf
    duration = (window_s or _send_span_s_of(merged, lower, upper)
                or manifest.load_point(cell.load).duration_s)
    rows = []
    for samples, source in zip(parts, sources):
        keep = (samples.start_ms >= lower) & (samples.start_ms < upper)
        if not keep.any():
            rows.append(GeneratorFigures(source, 0, 0.0, 0, 0, None, None))
            continue
        part = replace(samples, start_ms=samples.start_ms[keep],
                       latency_ns=samples.latency_ns[keep], ok=samples.ok[keep],
                       timed_out=samples.timed_out[keep], labels=None, status=None, warnings=[])
        rec = record_samples(part, manifest.value_unit)
        p99 = aggregate.histogram_stats(rec.merged(), manifest.value_unit).get("p99")
        rows.append(GeneratorFigures(
            source=source, sent=rec.requests, rate_rps=rec.requests / duration if duration else 0.0,
            errors=rec.errors, timed_out=rec.timed_out, p99_ms=p99.value_ms,
            first_send_ms=rec.first_ms if samples.epoch else None))
    merge.flag_generators(rows, manifest.load_point(cell.load).offered_rate)
    return rows


def _send_span_s_of(samples: RequestSamples, lower: float, upper: float) -> float | None:
    """The merged cell's send span in the window, as _send_span_s gives it for the cell."""
    inside = samples.start_ms[(samples.start_ms >= lower) & (samples.start_ms < upper)]
    if inside.size < 2:
        return None
    span = (float(inside.max()) - float(inside.min())) / 1000.0
    return span * inside.size / (inside.size - 1) if span > 0 else None


def _summary_generators(parts: list[ResultSummary], sources: list[str], manifest: Manifest,
                        cell) -> list:
    from analysis.derive import merge
    from analysis.model import GeneratorFigures
    rows = []
    for summary, source in zip(parts, sources):
        sent = (summary.requests or 0) + (summary.timeouts or 0)
        rate = summary.rate_rps
        if rate is None and summary.requests is not None and summary.duration_s:
            rate = summary.requests / summary.duration_s
        rows.append(GeneratorFigures(source=source, sent=sent, rate_rps=rate or 0.0,
                                     errors=summary.errors or 0, timed_out=summary.timeouts or 0,
                                     p99_ms=summary.percentiles_ms.get(99.0),
                                     first_send_ms=None))
    merge.flag_generators(rows, manifest.load_point(cell.load).offered_rate)
    return rows


def _from_samples(manifest: Manifest, cell, samples: RequestSamples,
                  imported: Imported) -> tuple[Repetition, Histogram]:
    from analysis.read.loadtools.record import record_samples
    from analysis.read.hdr.log_writer import hlog_text
    unit = manifest.value_unit
    skip_s, window_s = cell.window if cell.window else (None, None)
    rec = record_samples(samples, unit, skip_s=skip_s, duration_s=window_s,
                         expected_interval_ms=cell.co_interval_ms)
    answered = [iv for iv in rec.intervals if iv.tag is None]
    histogram = rec.merged()
    timeout_ms = timeout_bound_ms(rec, unit)
    stated = manifest.load_generator.get("timeout_s")
    if timeout_ms is not None and stated:
        # the tool gave up on them at the timeout run.yml states (what it measured for them is
        # that, give or take its clock: 14,998.8 ms for vegeta's 15 s)
        timeout_ms = float(stated) * 1000.0
    stats = overload.censored_stats(histogram, rec.timed_out, timeout_ms or 0.0,
                                    1.0 / UNITS_PER_MS[unit], rec.errors)
    lp = manifest.load_point(cell.load)
    imported.duration_s = window_s or _send_span_s(rec)
    duration = imported.duration_s or lp.duration_s
    series = aggregate.interval_series(answered, unit)
    timeouts = {iv.start_s: iv.total_count for iv in rec.intervals if iv.tag == "timeout"}
    for row, iv in zip(series, answered):
        row["timed_out"] = timeouts.get(iv.start_s, 0)
    state = steady.classify(steady.window_series(series, duration), window_s=duration,
                            offered_rate=lp.offered_rate, timeout_ms=timeout_ms)
    whole = None
    requests, completed, timed_out, errors = rec.requests, rec.answered, rec.timed_out, rec.errors
    length_s = duration
    if state.from_steady_part and answered:
        # the intervals are by send time: the steady part is exactly the requests sent from
        # steady_from_s on
        cut = answered[0].start_s + state.steady_from_s - 1e-6
        part = [iv for iv in rec.intervals if iv.start_s >= cut]
        kept = [iv.histogram for iv in part if iv.tag is None]
        if kept:
            whole, histogram = stats, sum_histograms(kept)
            timed_out = sum(iv.total_count for iv in part if iv.tag == "timeout")
            errors = sum(iv.total_count for iv in part if iv.tag == "error")
            completed = int(histogram.total_count)
            requests = completed + timed_out + errors
            length_s = duration - state.steady_from_s
            stats = overload.censored_stats(histogram, timed_out, timeout_ms or 0.0,
                                            1.0 / UNITS_PER_MS[unit], errors)
    if whole is None and state.from_steady_part:
        state = replace(state, from_steady_part=False)
    replies = (completed + errors if whole is not None else
               _replies_during(samples, skip_s, duration) if duration else 0)
    queue = None
    if lp.offered_rate:
        queue = aggregate.p50_queue(series, lp.offered_rate,
                                    state.steady_from_s if whole is not None else 0.0)
    if rec.corrected:
        imported.corrected = aggregate.histogram_stats(rec.merged(corrected=True), unit)
    imported.converted = converted_hlog_path(manifest.run_id, os.path.relpath(
        manifest.resolve(cell.hlog), manifest.run_dir).replace(os.sep, "/"))
    imported.window_text = _window_text(rec)
    imported.window_cut = None if rec.window is None else (rec.cut_before, rec.cut_after)
    base = imported.source[:len(imported.source) - len(cell.hlog)]
    files = [base + part for part in cell.files]
    imported.hlog_text = hlog_text(rec.intervals, UNITS_PER_MS[unit],
                                   comment=f"{imported.tool} {imported.format} file "
                                           f"{imported.source}, recorded by loadcurve"
                                   if len(files) == 1 else
                                   f"{imported.tool} {imported.format} files "
                                   f"{', '.join(files)}, their requests merged and recorded "
                                   f"by loadcurve")
    rep = Repetition(
        index=cell.repetition, source=imported.source, stats=stats,
        # as the harness counts them: every reply (any status) that came during the window,
        # to whichever request, per second; and the window's requests answered, per second
        # (the steady part's: its requests' replies, answered or failed, per second of it)
        throughput_rps=replies / length_s if length_s else 0.0,
        goodput_rps=completed / length_s if length_s else None,
        accounting=Accounting(sent=requests, completed=completed,
                              timed_out=timed_out, errors=errors,
                              not_sent=_not_sent(lp.offered_rate, length_s, requests)),
        series=series, timeout_ms=timeout_ms, queue=queue, imported=imported,
        steady=state, window_stats=whole)
    return rep, histogram


def _replies_during(samples: RequestSamples, skip_s: float | None, duration_s: float) -> int:
    """Replies (answered or failed, not timed out) whose arrival, send time + latency, falls in
    the window [first send + skip_s, + duration_s): what the server delivered while it was
    measured. Past the knee of an open loop most replies to the window's requests come after
    it, so this stays at the server's ceiling while the window's sends run above it."""
    lower = float(samples.start_ms.min()) + 1000.0 * (skip_s or 0.0)
    upper = lower + 1000.0 * duration_s
    arrival = samples.start_ms + samples.latency_ns / 1e6
    replied = ~samples.timed_out
    return int(np.count_nonzero(replied & (arrival >= lower) & (arrival < upper)))


def _not_sent(offered_rate: float | None, duration_s: float | None, sent: int) -> int | None:
    """Requests the offered rate asked for in the window that the tool never sent: what a
    closed loop leaves out when replies come slower than its rate (coordinated omission, as a
    count). A shortfall within 1 % (or one request) is the window's edges, not a tool falling
    behind. None where there is no rate to compare with."""
    if not offered_rate or not duration_s:
        return None
    asked = round(offered_rate * duration_s)
    short = asked - sent
    return short if short > max(1, 0.01 * asked) else 0


def _send_span_s(rec) -> float | None:
    """The seconds the file's sends cover: N sends spaced evenly d apart span (N - 1) d, and
    stand for N d of sending (so 250 sends at 50/s give 5 s, not 4.98)."""
    if rec.requests < 2 or rec.duration_s <= 0:
        return None
    return rec.duration_s * rec.requests / (rec.requests - 1)


def timeout_bound_ms(rec, unit: str) -> float | None:
    """What a request the tool says timed out is known to have taken at least: the shortest
    time the tool recorded for any of them (the tool's timeout, as it measured it)."""
    timed = [iv.histogram for iv in rec.intervals if iv.tag == "timeout"]
    if not timed:
        return None
    return min(h.min for h in timed if h.total_count) / UNITS_PER_MS[unit]


def _window_text(rec) -> str | None:
    if rec.window is None:
        return None
    skip, duration = rec.window
    span = f"the {duration:g} s after it" if duration else "the rest"
    return f"the first {skip:g} s of sends skipped, {span} kept"


def _from_summary(manifest: Manifest, cell, summary: ResultSummary, imported: Imported,
                  rel: str) -> Repetition:
    if summary.requests is None and not summary.percentiles_ms and not summary.spectrum:
        raise ResultsError("the file gives neither a request count nor any latency",
                           path=rel)
    # a run's window and correction apply to its per-request files; a summary holds no
    # times and no single latencies, and the methodology says it was taken whole
    if cell.window is not None:
        imported.window_text = (f"not cut: the {imported.tool} summary holds no times (the "
                                f"window applies to per-request files)")
    imported.co_interval_ms = None
    stats = LatencyStats(
        count=summary.requests or 0,
        percentiles={name: summary_percentile(summary, p) for name, p, _ in PERCENTILES},
        max=Percentile(summary.max_ms), mean=Percentile(summary.mean_ms),
        stddev_ms=summary.stddev_ms, completed=summary.requests,
        timed_out=summary.timeouts or 0, errors=summary.errors or 0)
    lp = manifest.load_point(cell.load)
    imported.duration_s = summary.duration_s
    duration = summary.duration_s or lp.duration_s
    rate = summary.rate_rps
    if rate is None and summary.requests is not None and duration:
        rate = summary.requests / duration
    series = _summary_series(summary.intervals or [])
    imported.spectrum = [(pt.percentile, pt.value_ms, False) for pt in summary.spectrum or ()]
    sent = answered = None
    if summary.requests is not None:
        # a tool's request count includes the failed ones; the accounting's answered does not
        answered = summary.requests - (summary.errors or 0)
        sent = summary.requests + (summary.timeouts or 0)
    return Repetition(
        index=cell.repetition, source=rel, stats=stats, throughput_rps=rate or 0.0,
        accounting=Accounting(sent=sent, completed=answered,
                              timed_out=summary.timeouts, errors=summary.errors),
        series=series, imported=imported,
        steady=steady.not_known(f"a {imported.tool} summary holds no per-request times"))


def summary_percentile(summary: ResultSummary, level: float) -> Percentile:
    """A summary's LEVEL percentile: the one it printed, or a spectrum row exactly at it, else
    the first spectrum row above it as an upper bound (wrk2's, vegeta's hdrplot and an .hgrm's
    rows almost never sit at 99 or 99.9 exactly)."""
    if level in summary.percentiles_ms:
        return Percentile(summary.percentiles_ms[level])
    exact = {round(p.percentile, 9): p.value_ms for p in summary.spectrum or ()}
    if round(level, 9) in exact:
        return Percentile(exact[round(level, 9)])
    bound = spectrum_upper_bound(summary.spectrum, level)
    return Percentile(bound, upper_bound=True) if bound is not None else Percentile()


def _summary_series(rows: list[dict]) -> list[dict]:
    """A summary's per-interval rows (Locust's history) in interval_series' shape: each row
    lasts until the next one starts (the last as long as the one before it), and its count is
    the growth of the running total where the tool keeps one, else its rate times its length."""
    out = []
    for i, row in enumerate(rows):
        t = row.get("t_s")
        nxt = rows[i + 1].get("t_s") if i + 1 < len(rows) else None
        length = (nxt - t) if nxt is not None and t is not None else (
            out[-1]["length_s"] if out else 1.0)
        count = None
        if row.get("requests") is not None:
            before = rows[i - 1].get("requests") if i else 0
            count = row["requests"] - (before or 0)
        elif row.get("rate_rps") is not None and length:
            count = round(row["rate_rps"] * length)
        out.append({"t_s": t, "length_s": length, "count": count,
                    "throughput_rps": row.get("rate_rps"), "p50_ms": row.get("p50_ms"),
                    "p99_ms": row.get("p99_ms"), "max_ms": row.get("max_ms")})
    return out
