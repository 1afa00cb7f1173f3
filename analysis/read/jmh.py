"""JMH results into `model.JmhResult`s (issue 13): `-rf json`, and `-rf csv` / `-rf text` for the
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

import csv
import io
import json
import math
import os
import re
import statistics
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from itertools import product

from analysis.errors import LoadcurveError
from analysis.model import JmhMetric, JmhResult, JmhSettings

MODES = ("thrpt", "avgt", "sample", "ss")
MIDDLE_DOT = "\u00b7"
# A sample-mode percentile as CSV and text name it: "p0.50", or "method·p0.50" before 1.33.
_PERCENTILE_LABEL = re.compile(
    r"^(?:[^" + MIDDLE_DOT + r"]*" + MIDDLE_DOT + r")?p([01](?:\.\d+)?)$")
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")


class JmhError(LoadcurveError):
    """A JMH result file that cannot be read; `where()` gives file:line:column when known."""

    def __init__(self, message: str, *, path=None, line: int | None = None,
                 column: int | None = None, hint: str | None = None):
        super().__init__(message, path=path, line=line, hint=hint)
        self.column = column

    def where(self) -> str:
        where = super().where()
        if self.line is not None and self.column is not None:
            where += f":{self.column}"
        return where


@dataclass
class JmhFailure:
    """A benchmark (x params x mode) that threw in JMH's console output."""
    benchmark: str
    mode: str | None
    params: dict[str, str]
    line: int                               # the first "<failure>" line
    iteration: str                          # "warm-up iteration 1", "iteration 2"
    fork: int | None
    exception: str                          # the stack trace's first line
    failed_forks: int = 1
    has_result: bool = False                # JMH's table has a row for it

    def name(self) -> str:
        params = " ".join(f"{k}={v}" for k, v in self.params.items())
        return self.benchmark + (f" {params}" if params else "") + \
            (f" ({self.mode})" if self.mode else "")

    def what(self) -> str:
        where = self.iteration + (f" of fork {self.fork}" if self.fork else "")
        more = f" (and in {self.failed_forks - 1} more fork(s))" if self.failed_forks > 1 else ""
        return f"{self.name()} failed in {where}{more}: {self.exception}"

    def warning(self) -> str:
        outcome = ("JMH's result for it comes from the iterations before the failure"
                   if self.has_result else "it has no result")
        return f"line {self.line}: {self.what()}; {outcome}"


@dataclass
class JmhFile:
    path: str
    format: str                             # json, csv or text
    results: list[JmhResult]
    warnings: list[str] = field(default_factory=list)
    failures: list[JmhFailure] = field(default_factory=list)

    def failure_warnings(self) -> list[str]:
        return [f.warning() for f in self.failures]


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
        fmt, results = "json", _read_json(path, text)
    elif start.startswith('"Benchmark"'):
        fmt, results = "csv", _read_csv(path, text)
    elif _text_header(text.splitlines()) is not None:
        fmt, (results, failures) = "text", _read_text(path, text)
    else:
        raise _no_table_error(path, text.splitlines())
    jmh = JmhFile(path, fmt, results, failures=failures)
    jmh.warnings = jmh.failure_warnings() + _grid_warnings(results)
    return jmh


def _no_table_error(path: str, lines: list[str]) -> JmhError:
    runs = _console_runs(lines, path)
    if not runs:
        return JmhError("neither a JMH JSON array, a JMH CSV header (\"Benchmark\",\"Mode\","
                        "...) nor a JMH results table (Benchmark ... Mode ... Units)", path=path,
                        line=1, hint="write results with -rf json, -rf csv or -rf text")
    failures = _failures(runs, [])
    if failures:
        return JmhError(f"JMH's console output stops before its results table: "
                        f"{failures[-1].what()}", path=path, line=failures[-1].line,
                        hint="JMH stops at the first failure with -foe true; fix the benchmark "
                             "or run without -foe to get the other results")
    return JmhError("JMH's console output without its results table (the run was cut short?)",
                    path=path, line=len(lines), hint="give the whole output, or -rf json")


# ---- JSON ----------------------------------------------------------------------------------

def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def _read_json(path: str, text: str) -> list[JmhResult]:
    """The top-level array element by element, so that each entry's line:column is known."""
    decoder = json.JSONDecoder()
    # JMH writes the closing "]" last: without it the file was cut short (a killed run, a
    # full disk), which says more than the parser's message at the point it gave up.
    truncated = "truncated?" if not text.rstrip().endswith("]") else None
    pos = text.index("[") + 1
    results: list[JmhResult] = []
    ws = re.compile(r"\s*")
    while True:
        pos = ws.match(text, pos).end()
        if pos >= len(text):
            line, col = _line_col(text, pos)
            raise JmhError("the file ends inside the top-level array", path=path, line=line,
                           column=col, hint=truncated)
        if text[pos] == "]" and not results:
            pos += 1
            break
        try:
            entry, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise JmhError(f"invalid JSON: {exc.msg}", path=path, line=exc.lineno,
                           column=exc.colno, hint=truncated) from None
        line, col = _line_col(text, pos)
        results.append(_json_entry(entry, _Where(path, line, col, len(results) + 1)))
        pos = ws.match(text, end).end()
        if pos < len(text) and text[pos] == ",":
            pos += 1
            continue
        if pos < len(text) and text[pos] == "]":
            pos += 1
            break
        line, col = _line_col(text, pos)
        raise JmhError("invalid JSON: expected ',' or ']' after an entry", path=path,
                       line=line, column=col, hint=truncated)
    rest = ws.match(text, pos).end()
    if rest < len(text):
        line, col = _line_col(text, rest)
        raise JmhError("invalid JSON: extra data after the top-level array", path=path,
                       line=line, column=col)
    return results


@dataclass
class _Where:
    path: str
    line: int
    column: int
    index: int                              # 1-based entry number

    def error(self, message: str) -> JmhError:
        return JmhError(f"entry {self.index}: {message}", path=self.path, line=self.line,
                        column=self.column)


def _number(value, where: _Where, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise where.error(f"{name}: expected a number, got {json.dumps(value)}")
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str) and value.strip() in ("NaN", "Infinity", "-Infinity", "+Infinity"):
        return None
    raise where.error(f"{name}: expected a number or \"NaN\", got {json.dumps(value)[:40]}")


def _integer(value, where: _Where, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise where.error(f"{name}: expected a whole number, got {json.dumps(value)[:40]}")
    return value


def _string(value, where: _Where, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise where.error(f"{name}: expected a string, got {json.dumps(value)[:40]}")
    return value


def _object(value, where: _Where, name: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise where.error(f"{name}: expected an object, got {json.dumps(value)[:40]}")
    return value


def _list(value, where: _Where, name: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise where.error(f"{name}: expected an array, got {json.dumps(value)[:40]}")
    return value


def _json_entry(entry, where: _Where) -> JmhResult:
    if not isinstance(entry, dict):
        raise where.error("expected an object (one benchmark result), got "
                          f"{json.dumps(entry)[:40]}")
    benchmark = _string(entry.get("benchmark"), where, "benchmark")
    if not benchmark:
        raise where.error("benchmark: missing")
    mode = _string(entry.get("mode"), where, "mode")
    if mode not in MODES:
        raise where.error(f"mode: expected one of {', '.join(MODES)}, got {json.dumps(mode)}")
    params = {}
    for key, value in _object(entry.get("params"), where, "params").items():
        if isinstance(value, (dict, list)) or value is None:
            raise where.error(f"params.{key}: expected a value, got {json.dumps(value)[:40]}")
        params[key] = value if isinstance(value, str) else json.dumps(value)
    jvm_args = _list(entry.get("jvmArgs"), where, "jvmArgs")
    for i, arg in enumerate(jvm_args):
        _string(arg, where, f"jvmArgs[{i}]")
    settings = JmhSettings(
        threads=_integer(entry.get("threads"), where, "threads"),
        forks=_integer(entry.get("forks"), where, "forks"),
        warmup_iterations=_integer(entry.get("warmupIterations"), where, "warmupIterations"),
        warmup_time=_string(entry.get("warmupTime"), where, "warmupTime"),
        warmup_batch_size=_integer(entry.get("warmupBatchSize"), where, "warmupBatchSize"),
        measurement_iterations=_integer(entry.get("measurementIterations"), where,
                                        "measurementIterations"),
        measurement_time=_string(entry.get("measurementTime"), where, "measurementTime"),
        measurement_batch_size=_integer(entry.get("measurementBatchSize"), where,
                                        "measurementBatchSize"),
        jmh_version=_string(entry.get("jmhVersion"), where, "jmhVersion"),
        jvm=_string(entry.get("jvm"), where, "jvm"),
        jvm_args=list(jvm_args),
        jdk_version=_string(entry.get("jdkVersion"), where, "jdkVersion"),
        vm_name=_string(entry.get("vmName"), where, "vmName"),
        vm_version=_string(entry.get("vmVersion"), where, "vmVersion"),
    )
    if "primaryMetric" not in entry:
        raise where.error("primaryMetric: missing")
    primary = _json_metric(entry["primaryMetric"], where, "primaryMetric")
    secondary: dict[str, JmhMetric] = {}
    for name, value in _object(entry.get("secondaryMetrics"), where, "secondaryMetrics").items():
        metric = _json_metric(value, where, f"secondaryMetrics.{name}")
        percentile = _percentile_key(name)
        if percentile is not None:
            # Sample mode repeats its percentiles as secondary metrics (p0.50 ...).
            primary.percentiles.setdefault(percentile, metric.score)
            continue
        secondary[_metric_name(name)] = metric
    return _result(benchmark, mode, params, primary, secondary, settings,
                   f"{where.path}:{where.line}")


def _json_metric(value, where: _Where, name: str) -> JmhMetric:
    obj = _object(value, where, name)
    confidence = None
    bounds = _list(obj.get("scoreConfidence"), where, f"{name}.scoreConfidence")
    if bounds:
        if len(bounds) != 2:
            raise where.error(f"{name}.scoreConfidence: expected [low, high]")
        low, high = (_number(b, where, f"{name}.scoreConfidence") for b in bounds)
        if low is not None and high is not None:
            confidence = (low, high)
    percentiles = {}
    for key, p in _object(obj.get("scorePercentiles"), where, f"{name}.scorePercentiles").items():
        v = _number(p, where, f"{name}.scorePercentiles.{key}")
        if v is not None:
            percentiles[key] = v
    raw = []
    for f, fork in enumerate(_list(obj.get("rawData"), where, f"{name}.rawData")):
        values = (_number(v, where, f"{name}.rawData[{f}]")
                  for v in _list(fork, where, f"{name}.rawData[{f}]"))
        raw.append([v for v in values if v is not None])
    histogram = []
    for f, fork in enumerate(_list(obj.get("rawDataHistogram"), where,
                                   f"{name}.rawDataHistogram")):
        iterations = []
        for i, iteration in enumerate(_list(fork, where, f"{name}.rawDataHistogram[{f}]")):
            label = f"{name}.rawDataHistogram[{f}][{i}]"
            pairs = []
            for pair in _list(iteration, where, label):
                if not (isinstance(pair, list) and len(pair) == 2):
                    raise where.error(f"{label}: expected [value, count] pairs")
                v = _number(pair[0], where, label)
                n = _integer(pair[1], where, label)
                if v is not None and n:
                    pairs.append((v, n))
            iterations.append(pairs)
        histogram.append(iterations)
    if histogram:
        samples = sum(n for fork in histogram for it in fork for _, n in it)
    else:
        samples = sum(len(fork) for fork in raw) or None
    return JmhMetric(score=_number(obj.get("score"), where, f"{name}.score"),
                     error=_number(obj.get("scoreError"), where, f"{name}.scoreError"),
                     confidence=confidence,
                     unit=_string(obj.get("scoreUnit"), where, f"{name}.scoreUnit"),
                     percentiles=percentiles, raw_data=raw, raw_histogram=histogram,
                     samples=samples)


# ---- names shared by the formats -------------------------------------------------------------

def _metric_name(name: str) -> str:
    """A secondary metric's name without the "·" of JMH before 1.33."""
    return name.lstrip(MIDDLE_DOT)


def _percentile_key(label: str) -> str | None:
    """"p0.50" or "m·p0.999" -> JSON's scorePercentiles key ("50.0", "99.9"); else None."""
    match = _PERCENTILE_LABEL.match(label)
    if not match:
        return None
    return repr(float(Decimal(match.group(1)) * 100))


def _result(benchmark, mode, params, primary: JmhMetric, secondary: dict[str, JmhMetric],
            settings: JmhSettings, source: str) -> JmhResult:
    return JmhResult(benchmark=benchmark, mode=mode, params=dict(sorted(params.items())),
                     score=primary.score, error=primary.error, unit=primary.unit,
                     forks=fork_means(primary),
                     secondary={name: m.score for name, m in secondary.items()},
                     primary=primary, secondary_metrics=secondary, settings=settings,
                     source=source)


def fork_means(metric: JmhMetric) -> list[float]:
    """Each fork's mean: of its iterations' scores, or in sample mode of its sampled values."""
    if metric.raw_histogram:
        means = []
        for fork in metric.raw_histogram:
            n = sum(c for it in fork for _, c in it)
            if n:
                means.append(sum(v * c for it in fork for v, c in it) / n)
        return means
    return [statistics.fmean(fork) for fork in metric.raw_data if fork]


def fork_spread(result: JmhResult) -> tuple[float, float, float] | None:
    """(min, median, max) of the per-fork means; None without raw data (CSV, text)."""
    if not result.forks:
        return None
    return min(result.forks), statistics.median(result.forks), max(result.forks)


def _grid_warnings(results: list[JmhResult]) -> list[str]:
    """Holes in a benchmark's parameter grid: JMH leaves no entry for a failed benchmark."""
    warnings = []
    seen: dict[tuple[str, str], list[dict[str, str]]] = {}
    for r in results:
        seen.setdefault((r.benchmark, r.mode), []).append(r.params)
    for (benchmark, mode), combos in seen.items():
        keys = sorted({k for c in combos for k in c})
        present = {tuple(c.get(k) for k in keys) for c in combos}
        if len(present) < len(combos):
            warnings.append(f"{benchmark} ({mode}): {len(combos) - len(present)} duplicate "
                            f"entries (several runs in one file?)")
        values = [sorted({c.get(k) for c in combos}, key=str) for k in keys]
        grid = set(product(*values))
        missing = sorted(grid - present, key=str)
        if missing and keys:
            shown = ", ".join(" ".join(f"{k}={v}" for k, v in zip(keys, m) if v is not None)
                              for m in missing[:3])
            more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
            warnings.append(f"{benchmark} ({mode}): {len(missing)} of {len(grid)} parameter "
                            f"combinations have no result (failed or not run): {shown}{more}")
    return warnings


# ---- CSV and text: one row per metric ----------------------------------------------------------

class _Rows:
    """Collects CSV/text rows into results: a primary row, then its secondary rows."""

    def __init__(self, path: str):
        self.path = path
        self.results: list[JmhResult] = []
        self.by_key: dict[tuple, JmhResult] = {}

    def add(self, line: int, name: str, mode: str, params: dict[str, str], metric: JmhMetric,
            threads: int | None) -> None:
        if mode not in MODES:
            raise JmhError(f"mode: expected one of {', '.join(MODES)}, got {mode!r}",
                           path=self.path, line=line)
        benchmark, _, label = name.partition(":")
        if not benchmark:
            raise JmhError("empty benchmark name", path=self.path, line=line)
        key = (benchmark, mode, tuple(sorted(params.items())))
        if not label:
            result = _result(benchmark, mode, params, metric, {}, JmhSettings(threads=threads),
                             f"{self.path}:{line}")
            self.results.append(result)
            self.by_key[key] = result
            return
        owner = self.by_key.get(key)
        if owner is None:
            raise JmhError(f"secondary metric {label!r} before a row for {benchmark} ({mode})",
                           path=self.path, line=line)
        percentile = _percentile_key(label)
        if percentile is not None:
            if metric.score is not None:
                owner.primary.percentiles[percentile] = metric.score
            return
        owner.secondary_metrics[_metric_name(label)] = metric
        owner.secondary[_metric_name(label)] = metric.score


def _csv_number(text: str, path: str, line: int, column: str) -> float | None:
    text = text.strip()
    if text in ("", "NaN", "Infinity", "-Infinity", "N/A"):
        return None
    try:
        value = float(text)
    except ValueError:
        raise JmhError(f"{column}: expected a number, got {text!r}", path=path,
                       line=line) from None
    return value if math.isfinite(value) else None


def _read_csv(path: str, text: str) -> list[JmhResult]:
    reader = csv.reader(io.StringIO(text))
    header = next(reader)
    required = ("Benchmark", "Mode", "Threads", "Samples", "Score", "Score Error (99.9%)", "Unit")
    missing = [c for c in required if c not in header]
    if missing:
        raise JmhError(f"CSV header lacks {', '.join(missing)}", path=path, line=1)
    col = {name: header.index(name) for name in required}
    param_cols = [(i, h[len("Param: "):]) for i, h in enumerate(header) if h.startswith("Param: ")]
    rows = _Rows(path)
    for row in reader:
        line = reader.line_num
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) < len(header):
            raise JmhError(f"{len(row)} columns, the header has {len(header)}",
                           path=path, line=line, hint="truncated?")
        threads = _csv_number(row[col["Threads"]], path, line, "Threads")
        samples = _csv_number(row[col["Samples"]], path, line, "Samples")
        metric = JmhMetric(score=_csv_number(row[col["Score"]], path, line, "Score"),
                           error=_csv_number(row[col["Score Error (99.9%)"]], path, line,
                                             "Score Error (99.9%)"),
                           unit=row[col["Unit"]] or None,
                           samples=int(samples) if samples is not None else None)
        params = {name: row[i] for i, name in param_cols if row[i] not in ("", "N/A")}
        rows.add(line, row[col["Benchmark"]], row[col["Mode"]], params, metric,
                 int(threads) if threads is not None else None)
    return rows.results


def _text_header(lines: list[str]) -> int | None:
    """The index of the last results-table header line ("Benchmark ... Mode ... Units")."""
    found = None
    for i, line in enumerate(lines):
        words = line.split()
        if words[:1] == ["Benchmark"] and "Mode" in words and "Units" in words:
            found = i
    return found


def _text_number(tokens: list[str], path: str, line: int) -> tuple[float | None, bool]:
    """A score as the table prints it: "12.345", "≈ 0", or "≈ 10⁻⁴" (JMH's way with tiny
    values)."""
    if not tokens:
        raise JmhError("expected a score, got nothing", path=path, line=line)
    approximate = tokens[0] == "≈"
    text = "".join(tokens[1:] if approximate else tokens)
    if approximate and text.startswith("10") and len(text) > 2:
        exponent = text[2:].translate(_SUPERSCRIPT)
        try:
            return 10.0 ** int(exponent), True
        except ValueError:
            pass
    try:
        value = float(Decimal(text.replace(",", "")))
    except InvalidOperation:
        raise JmhError(f"expected a score, got {' '.join(tokens)!r}", path=path,
                       line=line) from None
    return (value if math.isfinite(value) else None), approximate


def _read_text(path: str, text: str) -> tuple[list[JmhResult], list[JmhFailure]]:
    lines = text.splitlines()
    start = _text_header(lines)
    header = lines[start].split()
    params = [h[1:-1] for h in header[1:] if h.startswith("(") and h.endswith(")")]
    rows = _Rows(path)
    for index in range(start + 1, len(lines)):
        line_no = index + 1
        tokens = lines[index].split()
        if not tokens:
            break                           # the table ends at the first blank line
        where = dict(path=path, line=line_no)
        if len(tokens) < 2 + len(params) + 2:
            raise JmhError("too few columns for a results row", hint="truncated?", **where)
        name = tokens[0]
        values = tokens[1:1 + len(params)]
        mode = tokens[1 + len(params)]
        unit = tokens[-1]
        rest = tokens[2 + len(params):-1]
        error = None
        if "±" in rest:
            at = rest.index("±")
            error, _ = _text_number(rest[at + 1:], path, line_no)
            rest = rest[:at]
        samples = None
        if len(rest) >= 2 and rest[0].isdigit():
            samples, rest = int(rest[0]), rest[1:]
        if not rest:
            raise JmhError("no score in a results row", **where)
        score, approximate = _text_number(rest, path, line_no)
        metric = JmhMetric(score=score, error=error, unit=unit, samples=samples,
                           approximate=approximate)
        row_params = {k: v for k, v in zip(params, values) if v != "N/A"}
        rows.add(line_no, name, mode, row_params, metric, None)
    runs = _console_runs(lines[:start], path)
    _add_console_runs(rows.results, runs)
    return rows.results, _failures(runs, rows.results)


# ---- JMH's console output: the run headers and iteration lines before the table -------------

_CONSOLE_MODES = {"Throughput": "thrpt", "Average time": "avgt", "Sampling time": "sample",
                  "Single shot invocation time": "ss"}
_ITERATIONS = re.compile(r"^(\d+) iterations?, (.+?) each(?:, (\d+) calls? per op)?$")


@dataclass
class _ConsoleRun:
    settings: JmhSettings
    mode: str | None = None
    benchmark: str | None = None
    params: dict[str, str] = field(default_factory=dict)
    raw: list[list[float]] = field(default_factory=list)
    # (line, "iteration 2" or "warm-up iteration 1", fork, exception) per "<failure>"
    failures: list[list] = field(default_factory=list)

    def matches(self, result: JmhResult) -> bool:
        return (self.mode == result.mode and self.params == result.params
                and (self.benchmark == result.benchmark
                     or self.benchmark.endswith("." + result.benchmark)))


def _console_header(settings: JmhSettings, key: str, value: str, run: _ConsoleRun) -> None:
    if key == "VM version":                 # "JDK 25.0.3, OpenJDK 64-Bit Server VM, 25.0.3+9"
        parts = [p.strip() for p in value.split(",", 2)]
        if len(parts) == 3:
            settings.jdk_version = parts[0].removeprefix("JDK ")
            settings.vm_name, settings.vm_version = parts[1], parts[2]
    elif key == "VM invoker":
        settings.jvm = value
    elif key == "VM options":
        settings.jvm_args = [] if value == "<none>" else value.split()
    elif key == "Blackhole mode":
        settings.blackhole_mode = value.split(" (")[0]
    elif key in ("Warmup", "Measurement"):
        match = _ITERATIONS.match(value)
        count, time, batch = ((int(match[1]), match[2], int(match[3]) if match[3] else 1)
                              if match else (0, None, None))
        if key == "Warmup":
            settings.warmup_iterations, settings.warmup_time = count, time
            settings.warmup_batch_size = batch
        else:
            settings.measurement_iterations, settings.measurement_time = count, time
            settings.measurement_batch_size = batch
    elif key == "Threads":
        settings.threads = int(value.split()[0]) if value.split()[0].isdigit() else None
    elif key == "Benchmark mode":
        run.mode = _CONSOLE_MODES.get(value.split(",")[0])
    elif key == "Benchmark":
        run.benchmark = value
    elif key == "Parameters":               # "(messages = 1000, ringSize = 16)"
        for pair in value.strip("()").split(", "):
            name, _, v = pair.partition(" = ")
            run.params[name] = v


_FAILED_ITERATION = re.compile(r"^(# Warmup )?Iteration\s+(\d+):\s*<failure>")


def _console_runs(lines: list[str], path: str) -> list[_ConsoleRun]:
    runs: list[_ConsoleRun] = []
    run = None
    awaiting_exception = None               # a failure whose stack trace comes next
    for line_no, line in enumerate(lines, 1):
        failed = _FAILED_ITERATION.match(line)
        if awaiting_exception is not None and line.strip():
            # (JMH prints the exception's toString() first, after a blank line)
            awaiting_exception[3] = line.strip()[:300]
            awaiting_exception = None
            continue
        if line.startswith("# JMH version: "):
            run = _ConsoleRun(JmhSettings(jmh_version=line.split(": ", 1)[1].strip()))
            runs.append(run)
        elif run is None:
            continue
        elif failed:
            iteration = ("warm-up iteration " if failed[1] else "iteration ") + failed[2]
            awaiting_exception = [line_no, iteration, len(run.raw) or None, "(no stack trace)"]
            run.failures.append(awaiting_exception)
        elif line.startswith("# Fork: "):   # "# Fork: 1 of 3"
            run.raw.append([])
            total = line.split(" of ")[-1].strip()
            run.settings.forks = int(total) if total.isdigit() else None
        elif line.startswith("# ") and ": " in line:
            key, value = line[2:].split(": ", 1)
            _console_header(run.settings, key, value.strip(), run)
        elif line.startswith("Iteration ") and run.raw:
            tokens = line.split(":", 1)[1].split()
            if "±(99.9%)" in tokens:
                tokens = tokens[:tokens.index("±(99.9%)")] + ["unit"]
            value, _ = _text_number(tokens[:-1], path, line_no)
            if value is not None:
                run.raw[-1].append(value)
    return runs


def _add_console_runs(results: list[JmhResult], runs: list[_ConsoleRun]) -> None:
    """Settings and per-fork data from the console output above the table, when it is there."""
    runs = [r for r in runs if r.benchmark and r.mode]
    for result in results:
        for run in runs:
            if run.matches(result):
                result.benchmark = run.benchmark  # the table drops the common package
                result.settings = run.settings
                if result.mode != "sample":
                    result.primary.raw_data = [fork for fork in run.raw if fork]
                    result.forks = fork_means(result.primary)
                break


def _failures(runs: list[_ConsoleRun], results: list[JmhResult]) -> list[JmhFailure]:
    """One JmhFailure per console run that printed "<failure>", in the output's order."""
    out = []
    for run in runs:
        if not run.failures:
            continue
        line, iteration, fork, exception = run.failures[0]
        out.append(JmhFailure(
            benchmark=run.benchmark or "(unnamed benchmark)", mode=run.mode,
            params=dict(sorted(run.params.items())), line=line, iteration=iteration,
            fork=fork, exception=exception, failed_forks=len(run.failures),
            has_result=bool(run.benchmark and any(run.matches(r) for r in results))))
    return out
