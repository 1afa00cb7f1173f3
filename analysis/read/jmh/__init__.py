"""JMH results into `results.JmhResult`s (issue 13): `-rf json`, and `-rf csv` / `-rf text` for the
fields they carry.

    read_jmh(path) -> JmhFile(path, format, results, warnings)

One result per JMH entry (benchmark x mode x params; `-bm all` gives one per mode). What each
format carries:

- JSON (JMH 1.19 .. 1.37): everything - settings (threads, forks, warm-up and measurement
  iterations, times and batch sizes; the JVM, its arguments, JDK and VM versions and the JMH
  version where the file has them: 1.19 files lack some), the primary metric (score, error,
  confidence interval, percentiles, unit, per-fork per-iteration raw data, and in sample mode
  the raw histograms), and every secondary metric (`-prof gc`'s `gc.alloc.rate.norm`...).
- CSV: benchmark, mode, threads, sample count, score, error, unit, params.
- text (the summary table JMH prints at the end, or `-rf text`): the same without threads;
  values JMH printed only as "≈ 10⁻⁴" are read as 1e-4 and marked `approximate`. When the
  file is JMH's whole console output (`-o FILE`, or its standard output), each benchmark's
  "# ..." header gives its settings (with the blackhole mode, which no result format has)
  and full name, and its "Iteration N:" lines the per-fork raw data - except in sample mode,
  whose iteration lines hold only means of unequal sample counts.

Names: JMH before 1.33 wrote secondary metrics as "·gc.alloc.rate" (and sample percentiles in
CSV and text as "method·p0.50"); the "·" is dropped, so `gc.alloc.rate.norm` finds either. The
sample-mode percentile rows (p0.50 ...) are folded into the primary metric's `percentiles`
under JSON's keys ("50.0"), not kept as secondary metrics.

NaN, "NaN", null, infinities and missing numbers read as None: JMH writes NaN for the error of
a single iteration and for metrics that did not happen. Failed benchmarks leave no entry; a
parameter grid with holes is reported in `warnings`. An empty array is an empty result list.
A damaged file raises one `JmhError` naming the file and where (line:column in JSON).

Failed benchmarks in the console output: an iteration that threw prints "<failure>" and the
exception's stack trace. JMH leaves such a benchmark out of its table, or (1.37) keeps the
measured iterations done before the failure. Each becomes a `JmhFailure` (`JmhFile.failures`)
and a warning naming the benchmark, its params, the iteration and the exception; the other
results are read as usual. A console output that stops before its table (`-foe true`) is one
error naming what failed.
"""
from __future__ import annotations

import os

from analysis.read.jmh.csv_results import read_csv
from analysis.read.jmh.json_results import read_json
from analysis.read.jmh.results import JmhError, JmhFailure, JmhFile, grid_warnings
from analysis.read.jmh.text_results import console_failures, console_runs, read_text, text_header

def read_jmh(path: str | os.PathLike, text: str | None = None) -> JmhFile:
    """Read one JMH result file (format from its content); `text` instead of reading `path`."""
    path = os.fspath(path)
    if text is None:
        with open(path, "rb") as f:
            data = f.read()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JmhError(f"not UTF-8 text (byte {exc.start}); is it a JMH result file?",
                           path=path) from None
    text = text.lstrip("\ufeff")
    start = text.lstrip()
    if not start:
        raise JmhError("empty file (JMH writes at least [] to a JSON result)", path=path)
    failures: list[JmhFailure] = []
    if start[0] == "[":
        fmt, results = "json", read_json(path, text)
    elif start.startswith('"Benchmark"'):
        fmt, results = "csv", read_csv(path, text)
    elif text_header(text.splitlines()) is not None:
        fmt, (results, failures) = "text", read_text(path, text)
    else:
        raise _no_table_error(path, text.splitlines())
    jmh = JmhFile(path, fmt, results, failures=failures)
    jmh.warnings = jmh.failure_warnings() + grid_warnings(results)
    return jmh


def _no_table_error(path: str, lines: list[str]) -> JmhError:
    runs = console_runs(lines, path)
    if not runs:
        return JmhError("neither a JMH JSON array, a JMH CSV header (\"Benchmark\",\"Mode\","
                        "...) nor a JMH results table (Benchmark ... Mode ... Units)", path=path,
                        line=1, hint="write results with -rf json, -rf csv or -rf text")
    failures = console_failures(runs, [])
    if failures:
        return JmhError(f"JMH's console output stops before its results table: "
                        f"{failures[-1].what()}", path=path, line=failures[-1].line,
                        hint="JMH stops at the first failure with -foe true; fix the benchmark "
                             "or run without -foe to get the other results")
    return JmhError("JMH's console output without its results table (the run was cut short?)",
                    path=path, line=len(lines), hint="give the whole output, or -rf json")
