"""JMH's results table (`-rf text`, or the end of its console output), and the console
output before the table: each benchmark's settings, its iterations' raw data and its failures."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from analysis.read.jmh.results import (JmhError, JmhFailure, JmhMetric, JmhResult, JmhSettings,
                                       MetricRows, fork_means)


_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")


def text_header(lines: list[str]) -> int | None:
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


def read_text(path: str, text: str) -> tuple[list[JmhResult], list[JmhFailure]]:
    lines = text.splitlines()
    start = text_header(lines)
    header = lines[start].split()
    params = [h[1:-1] for h in header[1:] if h.startswith("(") and h.endswith(")")]
    rows = MetricRows(path)
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
    runs = console_runs(lines[:start], path)
    _add_console_runs(rows.results, runs)
    return rows.results, console_failures(runs, rows.results)


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


def console_runs(lines: list[str], path: str) -> list[_ConsoleRun]:
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


def console_failures(runs: list[_ConsoleRun], results: list[JmhResult]) -> list[JmhFailure]:
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
