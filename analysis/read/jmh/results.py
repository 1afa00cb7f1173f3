"""What every JMH format reads into: JmhFile, its results (JmhResult, with its JmhMetric and
JmhSettings) and failures, JmhError; and the naming and fork statistics the readers share."""
from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from decimal import Decimal
from itertools import product

from analysis.errors import LoadcurveError

MODES = ("thrpt", "avgt", "sample", "ss")
MIDDLE_DOT = "\u00b7"
# A sample-mode percentile as CSV and text name it: "p0.50", or "method·p0.50" before 1.33.
_PERCENTILE_LABEL = re.compile(
    r"^(?:[^" + MIDDLE_DOT + r"]*" + MIDDLE_DOT + r")?p([01](?:\.\d+)?)$")


@dataclass
class JmhMetric:
    """One JMH metric (the primary one, or a secondary one such as `gc.alloc.rate.norm`), as
    JMH reports it. None where JMH wrote NaN or nothing (one iteration has no error)."""

    score: float | None
    error: float | None = None              # half-width of JMH's 99.9 % confidence interval
    confidence: tuple[float, float] | None = None
    unit: str | None = None
    percentiles: dict[str, float] = field(default_factory=dict)   # JMH's keys: "50.0", "99.9"
    raw_data: list[list[float]] = field(default_factory=list)     # fork -> iteration -> score
    # sample mode: fork -> iteration -> [(value, count)], the values in `unit`
    raw_histogram: list[list[list[tuple[float, int]]]] = field(default_factory=list)
    samples: int | None = None              # CSV/text "Cnt" when no raw data says it
    approximate: bool = False               # text format printed only "≈ 10⁻⁴"


@dataclass
class JmhSettings:
    """How JMH ran a benchmark: one entry's run settings (None where the file does not say:
    JMH 1.19 lacks the JVM fields; CSV carries only `threads`, a bare results table nothing,
    JMH's console output all but the batch sizes)."""

    threads: int | None = None
    forks: int | None = None
    warmup_iterations: int | None = None
    warmup_time: str | None = None          # as JMH writes it: "1 s", "300 ms"
    warmup_batch_size: int | None = None
    measurement_iterations: int | None = None
    measurement_time: str | None = None
    measurement_batch_size: int | None = None
    jmh_version: str | None = None
    jvm: str | None = None
    jvm_args: list[str] = field(default_factory=list)
    jdk_version: str | None = None
    vm_name: str | None = None
    vm_version: str | None = None
    blackhole_mode: str | None = None       # only JMH's console output says ("compiler")


@dataclass
class JmhResult:
    """A JMH benchmark result (a cell of kind `jmh`; issue 13): one benchmark x mode x params.

    `score`, `error`, `unit` repeat the primary metric's; `forks` are the per-fork means (of
    the iterations' scores, or of the sampled values in sample mode); `secondary` maps each
    secondary metric's name - without the "·" JMH before 1.33 put in front - to its score,
    and `secondary_metrics` to the whole metric. Read by analysis/read/jmh/."""

    benchmark: str
    mode: str
    params: dict[str, str] = field(default_factory=dict)
    score: float | None = None
    error: float | None = None
    unit: str | None = None
    forks: list[float] = field(default_factory=list)
    secondary: dict[str, float | None] = field(default_factory=dict)
    primary: JmhMetric | None = None
    secondary_metrics: dict[str, JmhMetric] = field(default_factory=dict)
    settings: JmhSettings = field(default_factory=JmhSettings)
    source: str | None = None               # file:line (JSON, CSV, text) of the entry


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


def metric_name(name: str) -> str:
    """A secondary metric's name without the "·" of JMH before 1.33."""
    return name.lstrip(MIDDLE_DOT)


def percentile_key(label: str) -> str | None:
    """"p0.50" or "m·p0.999" -> JSON's scorePercentiles key ("50.0", "99.9"); else None."""
    match = _PERCENTILE_LABEL.match(label)
    if not match:
        return None
    return repr(float(Decimal(match.group(1)) * 100))


def make_result(benchmark, mode, params, primary: JmhMetric, secondary: dict[str, JmhMetric],
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


def grid_warnings(results: list[JmhResult]) -> list[str]:
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

class MetricRows:
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
            result = make_result(benchmark, mode, params, metric, {}, JmhSettings(threads=threads),
                             f"{self.path}:{line}")
            self.results.append(result)
            self.by_key[key] = result
            return
        owner = self.by_key.get(key)
        if owner is None:
            raise JmhError(f"secondary metric {label!r} before a row for {benchmark} ({mode})",
                           path=self.path, line=line)
        percentile = percentile_key(label)
        if percentile is not None:
            if metric.score is not None:
                owner.primary.percentiles[percentile] = metric.score
            return
        owner.secondary_metrics[metric_name(label)] = metric
        owner.secondary[metric_name(label)] = metric.score
