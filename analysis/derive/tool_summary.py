"""A per-request file's companion: the same tool's summary of the same invocation (issue 32).

hey's CSV lists only the requests that got an answer; a request that timed out or whose
connection was refused is in no row, so from the CSV alone a failed request looks like one that
was never sent. hey's text summary counts them (its error distribution). bench/outside/record.sh
has one hey run print both (bench/outside/hey-csv-and-summary.tmpl), and run.yml names the
summary beside the CSV (`summary:`). Here the summary is read and checked against the file: it
must be the same tool's, and its answered count must equal the file's rows, which is what makes
it the same run (a second invocation answers a different number of requests).
"""
from __future__ import annotations

import os
from pathlib import Path

from analysis.errors import ResultsError
from analysis.model import ToolSummary
from analysis.read.loadtools import read_results
from analysis.read.loadtools.results import RequestSamples, ResultSummary


def read_tool_summary(summary_path: Path, summary_rel: str, samples: RequestSamples,
                      results_rel: str) -> ToolSummary:
    """The summary at SUMMARY_PATH, checked against the per-request file's SAMPLES."""
    if not summary_path.is_file():
        raise ResultsError("not found (run.yml names it as the `summary:` of "
                           f"{results_rel})", path=summary_rel)
    summary = read_results(os.fspath(summary_path), None, {})
    tool = samples.info.tool
    if not isinstance(summary, ResultSummary) or summary.info.tool != tool:
        raise ResultsError(f"not a {tool} summary (read as {summary.info.format}); `summary:` "
                           f"names the {tool} summary of the run that wrote {results_rel}",
                           path=summary_rel)
    if summary.answered is None or summary.requests is None:
        raise ResultsError(f"the {tool} summary does not count its answered and failed "
                           f"requests, so it adds nothing to {results_rel}", path=summary_rel)
    rows = len(samples) + samples.skipped
    if summary.answered != rows:
        raise ResultsError(f"counts {summary.answered:,} answered requests where {results_rel} "
                           f"has {rows:,} rows: not the same run",
                           path=summary_rel,
                           hint="keep the summary that the same invocation printed "
                                "(bench/outside/record.sh)")
    failed = summary.requests - summary.answered
    return ToolSummary(source=summary_rel, requests=summary.requests, answered=summary.answered,
                       failed=failed, timed_out=summary.timeouts or 0,
                       error_answers=(summary.errors or 0) - failed)
