"""A JMH run's comparisons (issue 13): its result files read (analysis/read/jmh/) and laid
out as run.yml asks - per file a table of variants (columns) by rows, each result compared
with the baseline of its row, the best marked; parameter sweeps; the -prof gc figures;
sample-mode percentiles; the methodology's warnings. Numbers only: the texts are made in
analysis/write/jmh_views.py, which reads the report as plain data (every selection, share and
pairwise comparison it prints is made here, in `_finish`) and calls nothing of this module.

Placement of one result (benchmark x mode x params) in its file's table, by `columns:`:
- `benchmark`: column = the benchmark method, row = its params (the actor ring: a column per
  system, a row per ring size x messages);
- a param name: column = that param's value, row = the method and the other params;
- none: one column, a row per method x params (the stream variants, each against a baseline
  row).
With several modes in one file, the mode is part of the row. A comparison group - the
results a baseline and the best are taken among - is a row (with columns) or every row of
one mode (without).

Better is higher for thrpt, lower for avgt, sample and ss. Two results are "the same" when
JMH's 99.9 % confidence intervals overlap; without an error (one iteration) they cannot be
told apart from noise, which `ci_known` says.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from analysis.errors import LoadcurveError
from analysis.read.jmh import read_jmh
from analysis.read.jmh.results import JmhError, JmhFailure, JmhResult
from analysis.read.jmh_manifest import JmhFileSpec, JmhManifest
from analysis.paths import repo_relative
from analysis.vocabulary import JMH_MODE_TEXT, jmh_params_key

HIGHER_IS_BETTER = {"thrpt": True, "avgt": False, "sample": False, "ss": False}
# An error bar (half the 99.9 % CI) wider than this share of the score is warned about.
WIDE_ERROR_SHARE = 0.10
# -prof gc's metrics, in the memory table's order
GC_METRICS = ("gc.alloc.rate.norm", "gc.alloc.rate", "gc.count", "gc.time")
# JMH's scorePercentiles keys of the sample-mode table
SAMPLE_PERCENTILES = ("50.0", "90.0", "99.0", "99.9", "99.99", "100.0")
BENCHMARK_AXIS = "benchmark"
ONE_COLUMN = "score"


def short_name(benchmark: str) -> str:
    """loadcurve.jmh.RingBenchmark.pekkoActors -> pekkoActors."""
    return benchmark.rsplit(".", 1)[-1]


@dataclass
class Entry:
    """One result at its place in a table."""
    result: JmhResult
    row: str
    column: str
    variant: str                            # method + params: what the labels name
    ratio: float | None = None              # speed-up against the baseline: > 1 is better
    relation: str = "none"                  # baseline, faster, slower, same, none
    ci_known: bool = True                   # both results have an error bar
    best: bool = False
    error_share: float | None = None        # the error bar as a share of the score
    wide: bool = False                      # error_share over WIDE_ERROR_SHARE

    def interval(self) -> tuple[float, float] | None:
        r = self.result
        if r.primary is not None and r.primary.confidence is not None:
            return r.primary.confidence
        if r.score is None or r.error is None:
            return None
        return r.score - r.error, r.score + r.error


@dataclass
class Row:
    id: str
    mode: str
    label: str
    params: dict[str, str]                  # the row's own params (without the column's)
    entries: dict[str, Entry] = field(default_factory=dict)   # column id -> entry
    # (column, other column) -> (how many times better column is than other, whether their
    # intervals overlap), for every ordered pair of the row's columns
    pairs: dict[tuple[str, str], tuple[float | None, bool]] = field(default_factory=dict)


@dataclass
class SweepLine:
    label: str
    index: int                              # colour
    x: list[float]
    y: list[float | None]
    error: list[float | None]


@dataclass
class Sweep:
    param: str
    mode: str
    unit: str | None
    fixed: dict[str, str]                   # the other params, the same along the chart
    lines: list[SweepLine]
    log_x: bool


@dataclass
class Table:
    spec: JmhFileSpec
    source: str                             # the result file, repo-relative
    console_source: str | None
    format: str
    results: list[JmhResult]
    columns: list[tuple[str, str]]          # (id, label) in display order
    rows: list[Row]
    sweeps: list[Sweep] = field(default_factory=list)
    blackhole_modes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    modes: list[str] = field(default_factory=list)       # the results' modes, in file order
    # what the methodology warns about and the sections show, each a list of placed results
    single_fork: list[Entry] = field(default_factory=list)
    wide_errors: list[Entry] = field(default_factory=list)
    no_error: list[Entry] = field(default_factory=list)
    gc_entries: list[Entry] = field(default_factory=list)
    sample_entries: list[Entry] = field(default_factory=list)

    def entries(self) -> list[Entry]:
        return [e for row in self.rows for e in (row.entries.get(c) for c, _ in self.columns)
                if e is not None]

    def column_label(self, column: str) -> str:
        return dict(self.columns).get(column, column)


@dataclass
class JmhReport:
    manifest: JmhManifest
    manifest_path: str
    tables: list[Table]
    warnings: list[str] = field(default_factory=list)
    # benchmarks that threw, from the result files and console outputs: (file, failure)
    failures: list[tuple[str, JmhFailure]] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.manifest.run_id


# --- reading --------------------------------------------------------------------------------

def _read(path: Path, display: str):
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise JmhError(exc.strerror or str(exc), path=display) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JmhError(f"not UTF-8 text (byte {exc.start}); is it a JMH result file?",
                       path=display) from None
    return read_jmh(display, text=text)


def build_report(manifest: JmhManifest, site_root: Path, map_fn=map) -> JmhReport:
    """Read every file of the run and lay its results out (raises LoadcurveError). The JMH
    kind's `derive` step (analysis/kinds.py); `map_fn` is unused: a JMH run's result files are
    read in this worker, one after another, as they were before there were kinds."""
    tables, warnings, failures = [], [], []
    reported: set[str] = set()              # files whose failures are reported (once each)

    def report_failures(source: str, jmh_file) -> None:
        if source not in reported:
            reported.add(source)
            failures.extend((source, f) for f in jmh_file.failures)
            warnings.extend(f"{source}: {w}" for w in jmh_file.failure_warnings())

    for spec in manifest.files:
        display = repo_relative(manifest.resolve(spec.file), site_root)
        read = _read(manifest.resolve(spec.file), display)
        report_failures(display, read)
        failed = set(read.failure_warnings())
        warnings += [f"{display}: {w}" for w in read.warnings if w not in failed]
        console = None
        blackhole: list[str] = []
        if spec.console:
            console = repo_relative(manifest.resolve(spec.console), site_root)
            console_read = _read(manifest.resolve(spec.console), console)
            blackhole = sorted({r.settings.blackhole_mode for r in console_read.results
                                if r.settings.blackhole_mode})
            report_failures(console, console_read)
        if not read.results:
            why = "every benchmark failed" if read.failures else "an empty array"
            warnings.append(f"{display}: no results ({why}); table {spec.id} left out")
            continue
        table = lay_out(manifest, spec, read.results, display, read.format)
        table.console_source = console
        table.blackhole_modes = blackhole
        tables.append(table)
    if not tables:
        raise LoadcurveError("no JMH results in any file of the run", path=repo_relative(
            manifest.path, site_root))
    return JmhReport(manifest, repo_relative(manifest.path, site_root), tables, warnings,
                     failures)


# --- the table ------------------------------------------------------------------------------

def lay_out(manifest: JmhManifest, spec: JmhFileSpec, results: list[JmhResult], source: str,
            fmt: str) -> Table:
    axis = spec.columns
    if axis not in (None, BENCHMARK_AXIS) and not any(axis in r.params for r in results):
        names = sorted({k for r in results for k in r.params})
        raise manifest.problem(spec, "columns", f"{axis!r} is neither `benchmark` nor a param "
                               f"of {source} (params: {', '.join(names) or 'none'})")
    many_modes = len({r.mode for r in results}) > 1
    rows: dict[str, Row] = {}
    columns: dict[str, str] = {}
    warnings = []
    for r in results:
        bench = short_name(r.benchmark)
        variant = " ".join(x for x in (bench, jmh_params_key(r.params)) if x)
        if axis == BENCHMARK_AXIS:
            column, row_params, row_parts = bench, dict(r.params), [jmh_params_key(r.params)]
            column_label = spec.labels.get(bench, bench)
            row_label = _params_text(r.params) or "all"
        elif axis is not None:
            if axis not in r.params:
                warnings.append(f"{source}: {variant} ({r.mode}) has no param {axis}; left "
                                f"out of table {spec.id}")
                continue
            column = r.params[axis]
            column_label = spec.labels.get(column, f"{axis}={column}")
            row_params = {k: v for k, v in r.params.items() if k != axis}
            row_parts = [bench, jmh_params_key(r.params, (axis,))]
            row_label = _variant_label(spec, bench, row_params)
        else:
            column, column_label = ONE_COLUMN, "score"
            row_params = dict(r.params)
            row_parts = [bench, jmh_params_key(r.params)]
            row_label = _variant_label(spec, bench, row_params)
        if many_modes:
            row_parts.append(r.mode)
            row_label += f" ({JMH_MODE_TEXT[r.mode]})"
        row_id = " ".join(p for p in row_parts if p) or "all"
        row = rows.setdefault(row_id, Row(row_id, r.mode, row_label, row_params))
        if column in row.entries:
            warnings.append(f"{source}: {variant} ({r.mode}) appears twice; the first is kept")
            continue
        columns.setdefault(column, column_label)
        row.entries[column] = Entry(r, row_id, column, variant)
    order = list(spec.labels)
    column_list = sorted(columns.items(), key=lambda c: _rank(order, c[0]))
    row_list = list(rows.values())
    if axis is None:     # the rows are the variants: in the labels' order, modes kept apart
        modes = list(dict.fromkeys(r.mode for r in row_list))
        row_list.sort(key=lambda row: (modes.index(row.mode), _row_rank(order, row)))
    table = Table(spec, source, None, fmt, results, column_list, row_list, warnings=warnings,
                  modes=list(dict.fromkeys(r.mode for r in results)))
    for e in table.entries():
        e.error_share = _error_share(e.result)
        e.wide = e.error_share is not None and e.error_share > WIDE_ERROR_SHARE
    _compare(manifest, table)
    table.sweeps = [s for param in spec.sweeps for s in _sweeps(manifest, table, param)]
    _finish(table)
    return table


def _error_share(r: JmhResult) -> float | None:
    if r.score is None or r.error is None or r.score == 0:
        return None
    return abs(r.error / r.score)


def _finish(table: Table) -> None:
    """What the views print besides the entries, chosen here so that they only format it."""
    table.single_fork = single_fork(table)
    table.wide_errors = wide_errors(table)
    table.no_error = no_error(table)
    table.gc_entries = gc_entries(table)
    table.sample_entries = sample_entries(table)
    for row in table.rows:
        row.pairs = {(column, other): pair_speed_up(table, row, column, other)
                     for column in row.entries for other in row.entries if other != column}


def _rank(order: list[str], key: str) -> tuple[int, int]:
    """Listed keys first, in the labels' order; the rest keep the file's order (a stable sort)."""
    return (order.index(key), 0) if key in order else (len(order), 0)


def _row_rank(order: list[str], row: Row) -> tuple[int, int]:
    """A variant row's place: its `method params`, else its method, in the labels' order."""
    entry = next(iter(row.entries.values()))
    key = entry.variant if entry.variant in order else short_name(entry.result.benchmark)
    return _rank(order, key)


def _params_text(params: dict[str, str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(params.items()))


def _variant_label(spec: JmhFileSpec, bench: str, params: dict[str, str]) -> str:
    """The label run.yml gives `method params` or the method, with the params after it."""
    full = " ".join(x for x in (bench, jmh_params_key(params)) if x)
    if full in spec.labels:
        return spec.labels[full]
    text = _params_text(params)
    return spec.labels.get(bench, bench) + (f" ({text})" if text else "")


def _groups(table: Table) -> list[list[Entry]]:
    if table.spec.columns is not None:
        return [list(row.entries.values()) for row in table.rows]
    by_mode: dict[str, list[Entry]] = {}
    for row in table.rows:
        by_mode.setdefault(row.mode, []).extend(row.entries.values())
    return list(by_mode.values())


def _is_baseline(table: Table, entry: Entry) -> bool:
    base = table.spec.baseline
    if table.spec.columns is not None:
        return entry.column == base
    bench = short_name(entry.result.benchmark)
    return entry.variant == base or (bench == base and not entry.result.params)


def speed_up(entry: JmhResult, base: JmhResult) -> float | None:
    """How many times better `entry` is than `base` (> 1: better), by the mode's direction."""
    if entry.score is None or base.score is None or entry.score <= 0 or base.score <= 0:
        return None
    if HIGHER_IS_BETTER[entry.mode]:
        return entry.score / base.score
    return base.score / entry.score


def overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def _compare(manifest: JmhManifest, table: Table) -> None:
    spec = table.spec
    groups = _groups(table)
    if spec.baseline is not None and not any(_is_baseline(table, e) for g in groups for e in g):
        what = ([c for c, _ in table.columns] if spec.columns is not None
                else list(dict.fromkeys(e.variant for g in groups for e in g)))
        raise manifest.problem(spec, "baseline", f"{spec.baseline!r} is not a "
                               f"{'column' if spec.columns else 'variant'} of {table.source} "
                               f"(there: {', '.join(what)})")
    for group in groups:
        scored = [e for e in group if e.result.score is not None]
        if len(scored) > 1:
            higher = HIGHER_IS_BETTER[scored[0].result.mode]
            best = (max if higher else min)(scored, key=lambda e: e.result.score)
            best.best = True
        base = next((e for e in group if spec.baseline is not None and _is_baseline(table, e)),
                    None)
        if base is None:
            continue
        for e in group:
            e.ratio = speed_up(e.result, base.result)
            if e is base:
                e.relation, e.ratio = "baseline", 1.0
                continue
            if e.ratio is None:
                continue
            a, b = e.interval(), base.interval()
            e.ci_known = a is not None and b is not None
            if e.ci_known and overlap(a, b):
                e.relation = "same"
            else:
                e.relation = "faster" if e.ratio >= 1.0 else "slower"


def pair_speed_up(table: Table, row: Row, column: str, other: str) -> tuple[float | None, bool]:
    """Row `row`: how many times better column `column` is than `other`, and whether their
    intervals overlap (None when either is missing)."""
    a, b = row.entries.get(column), row.entries.get(other)
    if a is None or b is None:
        return None, False
    ia, ib = a.interval(), b.interval()
    return speed_up(a.result, b.result), bool(ia and ib and overlap(ia, ib))


# --- sweeps ---------------------------------------------------------------------------------

def _number(value: str) -> float | None:
    try:
        x = float(value)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def _sweeps(manifest: JmhManifest, table: Table, param: str) -> list[Sweep]:
    """One chart per mode and setting of the other params (except the column's): the score
    against `param`, a line per column (or per method when the table has one column)."""
    spec = table.spec
    having = [e for e in table.entries() if param in e.result.params]
    if not having:
        names = sorted({k for r in table.results for k in r.params})
        raise manifest.problem(spec, "sweeps", f"{param!r} is not a param of {table.source} "
                               f"(params: {', '.join(names) or 'none'})")
    if any(_number(e.result.params[param]) is None for e in having):
        raise manifest.problem(spec, "sweeps", f"{param!r} has values that are not numbers; "
                               f"a sweep needs numbers")
    skip = (param,) + ((spec.columns,) if spec.columns not in (None, BENCHMARK_AXIS) else ())
    charts: dict[tuple, dict[str, list[Entry]]] = {}
    for e in having:
        r = e.result
        fixed = tuple((k, v) for k, v in sorted(r.params.items()) if k not in skip)
        line = e.column if spec.columns is not None else short_name(r.benchmark)
        charts.setdefault((r.mode, fixed), {}).setdefault(line, []).append(e)
    column_ids = [c for c, _ in table.columns]
    out = []
    for (mode, fixed), lines in charts.items():
        if all(len({e.result.params[param] for e in es}) < 2 for es in lines.values()):
            continue     # one value of the param: nothing to sweep
        sweep_lines = []
        xs_all = []
        for n, (line, es) in enumerate(lines.items()):
            es = sorted(es, key=lambda e: _number(e.result.params[param]))
            xs = [_number(e.result.params[param]) for e in es]
            xs_all += xs
            label = (table.column_label(line) if spec.columns is not None
                     else spec.labels.get(line, line))
            index = column_ids.index(line) if line in column_ids else n
            sweep_lines.append(SweepLine(label, index, xs, [e.result.score for e in es],
                                         [e.result.error for e in es]))
        positive = [x for x in xs_all if x > 0]
        log_x = (len(positive) == len(xs_all) and bool(positive)
                 and math.log10(max(positive) / min(positive)) >= 2.0)
        unit = next((e.result.unit for es in lines.values() for e in es), None)
        out.append(Sweep(param, mode, unit, dict(fixed), sweep_lines, log_x))
    return out


# --- what the methodology warns about ------------------------------------------------------

def single_fork(table: Table) -> list[Entry]:
    """Results measured in one JVM fork (JMH's `forks`, else the raw data's fork count)."""
    out = []
    for e in table.entries():
        forks = e.result.settings.forks
        if forks is None and e.result.primary is not None and e.result.primary.raw_data:
            forks = len(e.result.primary.raw_data)
        if forks == 1:
            out.append(e)
    return out


def wide_errors(table: Table) -> list[Entry]:
    return [e for e in table.entries() if e.wide]


def no_error(table: Table) -> list[Entry]:
    return [e for e in table.entries() if e.result.score is not None and e.result.error is None]


def gc_entries(table: Table) -> list[Entry]:
    return [e for e in table.entries() if any(m in e.result.secondary for m in GC_METRICS)]


def sample_entries(table: Table) -> list[Entry]:
    return [e for e in table.entries() if e.result.mode == "sample" and e.result.primary
            and e.result.primary.percentiles]
