"""`-rf json` (JMH 1.19 .. 1.37): every setting, the primary metric with its raw data and
histograms, and every secondary metric, with line:column of anything wrong."""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from analysis.read.jmh.results import (MODES, JmhError, JmhMetric, JmhResult, JmhSettings,
                                       make_result, metric_name, percentile_key)

def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def read_json(path: str, text: str) -> list[JmhResult]:
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
        percentile = percentile_key(name)
        if percentile is not None:
            # Sample mode repeats its percentiles as secondary metrics (p0.50 ...).
            primary.percentiles.setdefault(percentile, metric.score)
            continue
        secondary[metric_name(name)] = metric
    return make_result(benchmark, mode, params, primary, secondary, settings,
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
