"""Show what a load tool's result file holds: format, tool, load model, counts, latency.

    python -m analysis import FILE [FILE ...] [--format NAME] [--json] [--hlog OUT] [-q]

The format is detected from the file's content (--format forces one). Printed: the format, the
tool and its version where the file says, whether it has one row per request, the load model
(open, closed or unknown), requests, errors, duration_s, and latency_ms at 50, 90, 99, 99.9 and
max. A per-request file's percentiles are computed from its samples recorded as the import
records them (1-second HdrHistogram intervals, 3 significant digits), the way HdrHistogram's
Java code computes them, over the requests a report counts: the answered ones and those the
tool says timed out. A percentile whose rank falls among the timed out is only known to be at
least the shortest time they ran: printed "> X", null with --json (as the report prints it,
"> X"). A summary file's are the file's own, and what it does not hold is shown as "-" (null
with --json). Where a summary has a percentile spectrum (.hgrm, wrk2, vegeta's hdrplot) but no
row exactly at a level, the first row above it is what the file states that percentile is at
most: printed "<= X" ("≤"), and with --json the number, its key listed in latency_upper_bounds.

`--json` prints one JSON object with exactly the keys format, tool, version, per_request,
load_model, requests, errors, timed_out, duration_s, latency_ms ("50", "90", "99", "99.9",
"max") and latency_upper_bounds (the latency_ms keys whose number is only an upper bound; []
when none). For a per-request file requests = answered + errors + timed_out: errors are the
failed requests that did not time out. A summary's are the tool's own counts.

Several files (one per load generator of one cell, issue 33) are merged as a run's cell merges
them (analysis/derive/merge.py): per-request files' samples put together and recorded as one
file's, summaries' counts added and no percentile (they cannot be merged from summaries). The
text is the merge's, then one line per file; the JSON object is the merge's with `files`, one
object per file with `file` (its path) and the keys above.
`--hlog OUT` also writes the converted HdrHistogram interval log (per-request files only):
untagged lines hold the answered requests, Tag=error the failed ones, Tag=timeout the timed-out
ones. Lines the reader skipped are reported on stderr as warnings; progress for big files
too, unless -q.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

from analysis.errors import ResultsError
from analysis.read import loadtools
from analysis.read.loadtools import FORMATS, read_results
from analysis.read.loadtools.record import record_parts, record_samples
from analysis.read.loadtools.results import RequestSamples, ResultSummary
from analysis.read.manifest import UNITS_PER_MS

# latency_ms keys -> the percentile each is (max: None)
LATENCY_KEYS = (("50", 50.0), ("90", 90.0), ("99", 99.0), ("99.9", 99.9), ("max", None))
STAT_NAMES = (("50", "p50"), ("90", "p90"), ("99", "p99"), ("99.9", "p999"), ("max", "max"))
PROGRESS_BYTES = 32 << 20        # files from this size on get progress lines


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", metavar="FILE", nargs="+",
                        help="the result file to look at; several: one per load generator of "
                             "one cell, merged (issue 33)")
    parser.add_argument("--format", metavar="NAME",
                        help="read them as this format instead of detecting it: "
                             + ", ".join(FORMATS))
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--hlog", metavar="OUT",
                        help="also write the converted .hlog to OUT (per-request files; of the "
                             "merge for several)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")


def run(args) -> int:
    from analysis.derive import merge
    results = [_read_one(path, args.format, args.quiet) for path in args.files]
    kinds = {isinstance(r, RequestSamples) for r in results}
    if len(kinds) > 1:
        summary_file = next(r.path for r in results if not isinstance(r, RequestSamples))
        raise ResultsError("is a summary while the other files list every request: give "
                           "one kind of file", path=summary_file)
    if len(results) == 1:
        looked = [_Looked.of(results[0])]
        merged = looked[0]
    elif kinds == {True}:
        # each file recorded once; the merge's recording is the sum of theirs by key
        recordings, whole = record_parts(results)
        looked = [_Looked.of(r, recording) for r, recording in zip(results, recordings)]
        merged = _Looked.of(merge.merge_samples(results), whole)
    else:
        looked = [_Looked.of(r) for r in results]
        merged = _Looked.of(merge.merge_summaries(results))
    if args.hlog:
        if merged.recording is None:
            raise ResultsError(f"a {merged.result.info.format} file is a summary, with no "
                               "per-request samples to convert into an .hlog",
                               path=merged.result.path)
        from analysis.read.hdr.log_writer import write_hlog
        write_hlog(args.hlog, merged.recording.intervals, UNITS_PER_MS[merged.recording.unit],
                   comment=hlog_comment(merged.result, merged.recording.unit))
    if len(looked) == 1:
        one = looked[0]
        print(json.dumps(one.summary) if args.json else
              summary_text(one.result.path, one.result, one.summary, one.timed_out, one.bounds))
        return 0
    if args.json:
        print(json.dumps({**merged.summary,
                          "files": [{"file": one.result.path, **one.summary} for one in looked]}))
        return 0
    note = "" if merged.recording is not None else f" ({merge.PERCENTILES_NOT_MERGED})"
    text = summary_text(" + ".join(args.files) + f" (merged{note})", merged.result,
                        merged.summary, merged.timed_out, merged.bounds)
    print(text + "\n" + "\n".join(_file_line(one) for one in looked))
    return 0


class _Looked:
    """One file (or the merge) read: its result, printed keys, timeouts and censored bounds,
    and its recording (None for a summary)."""

    def __init__(self, result, summary, timed_out, bounds, recording):
        self.result, self.summary, self.timed_out = result, summary, timed_out
        self.bounds, self.recording = bounds, recording

    @classmethod
    def of(cls, result, recording=None) -> "_Looked":
        if isinstance(result, RequestSamples):
            recording = recording or record_samples(result)
            stats = samples_stats(recording)
            return cls(result, samples_summary(result, recording, stats), recording.timed_out,
                       censored_bounds(stats), recording)
        return cls(result, file_summary(result), result.timeouts, {}, None)


def _read_one(path: str, fmt: str | None, quiet: bool):
    _check_readable(path)
    progress = _Progress(path, quiet=quiet)
    result = _read(path, fmt, progress)
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if isinstance(result, RequestSamples):
        progress.stage(f"recording {len(result):,} requests into 1-second histograms")
    return result


def _file_line(one: _Looked) -> str:
    """One generator's file in a line: its counts, p99 and first send (per-request files)."""
    s = one.summary
    p99 = ("> " + _number(one.bounds["99"])) if "99" in one.bounds else (
        ("≤ " if "99" in s["latency_upper_bounds"] else "") + _number(s["latency_ms"]["99"]))
    first = ""
    if one.recording is not None and one.result.epoch:
        first = f"  first send {one.recording.first_ms / 1000.0:.3f} s since the epoch"
    return (f"  {one.result.path}: requests {_number(s['requests'])}  errors "
            f"{_number(s['errors'])}  timed_out {_number(s['timed_out'])}  p99 {p99}{first}")


def _check_readable(path: str) -> None:
    if os.path.isdir(path):
        raise ResultsError("is a directory, not a result file", path=path)
    if not os.path.exists(path):
        raise ResultsError("no such file", path=path)


def _read(path: str, fmt: str | None, progress: "_Progress"):
    progress.stage("reading")
    try:
        return read_results(path, fmt)
    except UnicodeDecodeError as exc:
        raise ResultsError(f"not text: byte {exc.start} of a decoded block is not "
                           f"{exc.encoding} (a binary file?)", path=path) from None


class _Progress:
    """Stage lines on stderr with the time since the start, for files of PROGRESS_BYTES or
    more, unless quiet."""

    def __init__(self, path: str, quiet: bool):
        size = os.path.getsize(path) if os.path.isfile(path) else 0
        self.on = not quiet and size >= PROGRESS_BYTES
        self.path, self.size = path, size
        self.started = time.perf_counter()

    def stage(self, what: str) -> None:
        if self.on:
            elapsed = time.perf_counter() - self.started
            print(f"import: {self.path} ({self.size / 1e6:,.0f} MB): {what} "
                  f"[{elapsed:.1f} s]", file=sys.stderr, flush=True)


def samples_stats(recording):
    """The statistics a report prints for these requests (analysis/derive/imported.py's rule): the
    population is the answered and the timed-out ones, so a percentile whose rank falls among
    the timed out is only a lower bound (censored)."""
    from analysis.derive import overload
    from analysis.derive.imported import timeout_bound_ms
    per_ms = UNITS_PER_MS[recording.unit]
    return overload.censored_stats(recording.merged(tag=None), recording.timed_out,
                                   timeout_bound_ms(recording, recording.unit) or 0.0,
                                   1.0 / per_ms, recording.errors)


def samples_summary(samples: RequestSamples, recording, stats) -> dict:
    """The printed keys of a per-request file: its percentiles as the report gives them
    (`stats`, samples_stats'), None where censored (summary_text prints the bound)."""
    latency = {key: stats.get(name).value_ms for key, name in STAT_NAMES}
    return _summary(samples.info, per_request=True, requests=recording.requests,
                    errors=recording.errors, timed_out=recording.timed_out,
                    duration_s=recording.duration_s, latency=latency)


def censored_bounds(stats) -> dict:
    """latency_ms key -> the lower bound, for the censored ones (`stats`, samples_stats')."""
    return {key: stats.get(name).at_least_ms for key, name in STAT_NAMES
            if stats.get(name).censored}


def file_summary(result: ResultSummary) -> dict:
    """The printed keys of a summary file: what it holds, None for what it does not."""
    from analysis.derive.imported import summary_percentile
    stated = {key: summary_percentile(result, percentile) for key, percentile in LATENCY_KEYS
              if percentile is not None}
    latency = {key: stated[key].value_ms if key in stated else result.max_ms
               for key, _ in LATENCY_KEYS}
    return _summary(result.info, per_request=False, requests=result.requests,
                    errors=result.errors, timed_out=result.timeouts,
                    duration_s=result.duration_s, latency=latency,
                    upper_bounds=[key for key, p in stated.items() if p.upper_bound])


def _summary(info, *, per_request: bool, requests, errors, timed_out, duration_s,
             latency, upper_bounds=()) -> dict:
    return {"format": info.format, "tool": info.tool, "version": info.version,
            "per_request": per_request, "load_model": info.load_model,
            "requests": requests, "errors": errors, "timed_out": timed_out,
            "duration_s": duration_s, "latency_ms": latency,
            "latency_upper_bounds": list(upper_bounds)}


def hlog_comment(samples: RequestSamples, unit: str) -> str:
    info = samples.info
    tool = info.tool + (f" {info.version}" if info.version else "")
    return (f"[Converted by loadcurve from {os.path.basename(samples.path)} ({tool}, "
            f"{info.format}): one interval per second of send time, values in {unit}; "
            "untagged = answered requests, Tag=error = failed, Tag=timeout = timed out]")


def _number(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.6g}" if abs(value) < 1e6 else f"{value:,.0f}"


def summary_text(path: str, result, summary: dict, timed_out: int | None,
                 bounds: dict | None = None) -> str:
    info = result.info
    tool = info.tool + (f" {info.version}" if info.version else " (version not in the file)")
    model = summary["load_model"]
    if info.load_model_evidence:
        model += f" ({info.load_model_evidence})"
    requests = _number(summary["requests"])
    if timed_out is not None:
        requests += f" (timed out: {timed_out:,})"
    if result.skipped:
        requests += f" ({result.skipped:,} line(s) of the file skipped)"
    bounds = bounds or {}
    at_most = set(summary["latency_upper_bounds"])
    latency = "  ".join(f"{'p' + key if key != 'max' else key} "
                        + (f"> {_number(bounds[key])}" if key in bounds else
                           f"≤ {_number(value)}" if key in at_most else _number(value))
                        for key, value in summary["latency_ms"].items())
    # (the registry looked up now, not at import: a test may register a format of its own)
    described = loadtools.FORMATS.get(info.format, ("", "?"))[1]
    rows = [("file", path), ("format", f"{info.format} ({described})"),
            ("tool", tool), ("measures", info.measure or "-"),
            ("per_request", "true" if summary["per_request"] else "false"),
            ("load_model", model), ("requests", requests), ("errors", _number(summary["errors"])),
            ("duration_s", _number(summary["duration_s"])), ("latency_ms", latency)]
    return "\n".join(f"{name:<12} {value}" for name, value in rows)
