"""Load and validate `runs/<run-id>/run.yml` (the format is in docs/data-format.md).

`load_manifest(run_dir)` returns a `Manifest` or raises one `ManifestError` that lists every
problem found, each with the line of run.yml it is on. Unknown keys are errors (a typo must not be
silently ignored). Paths in the manifest must stay inside the run folder: absolute paths, `..`
and symlinks that resolve outside it are refused.

What run.yml declares is SystemSpec, ScenarioSpec, LoadPointSpec and CellSpec; model.py's System,
Scenario, LoadPoint and Cell are what the analysis made of them. This module is the schema (the
keys and the records); manifest_checks.py checks a run.yml against it.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from analysis.errors import ManifestError
from analysis.kinds import DEFAULT_KIND, KINDS, names_text, step
from analysis.read.checks import ID_RE, Problems, check_relpath, load_yaml, show

# 1: the first format (per-cell counts copied into run.yml); 2 (issue 10, bench/README.md):
# `method`, per-cell `counts` files (<load>.<rep>.counts.json) and `load_generator.drain`.
SCHEMA_VERSIONS = (1, 2)
# recorded unit -> how many of that unit make one millisecond
UNITS_PER_MS = {"ns": 1_000_000.0, "us": 1_000.0, "ms": 1.0}

TOP_KEYS = {"schema_version", "title", "date", "description", "tags", "value_unit",
            "service_time_ms", "systems", "load_points", "environment", "load_generator",
            "jfr_attribution", "cells", "method", "series", "version", "scenarios",
            "window", "co_correction", "cpu_accounting"}
SYSTEM_KEYS = {"id", "label", "concurrency_limit", "description", "family", "model"}
# issue 11: a scenario is one workload (endpoint, service time) at its own load points
SCENARIO_KEYS = {"id", "label", "endpoint", "service_time_ms", "description", "load_points",
                 "headline"}
LOAD_KEYS = {"id", "offered_rate", "clients", "duration_s", "connections", "users"}
JFR_ATTRIBUTION_KEYS = {"pattern", "label"}
# issue 25: which jfr_attribution labels are CPU in the request handler and which in
# coordination (scheduling, futures, stream materialisation) in the per-request accounting.
# The defaults are the labels the bundled servers' run.yml files use; a label not in the run's
# jfr_attribution is left out, one in neither list counts as "other Java".
DEFAULT_CPU_ACCOUNTING = {
    "handler": ("request handler",),
    "coordination": ("virtual-thread scheduling", "executor and queues", "Pekko Streams"),
}
CELL_KEYS = {"system", "load", "hlog", "tag", "jfr", "sent", "errors", "timeouts", "repetition",
             "counts", "scenario", "results", "format", "options", "window", "co_correction",
             "summary"}
# issue 23: a load tool's file instead of an .hlog (`results:`), cut by `window:`, and
# HdrHistogram's coordinated-omission correction (`co_correction:`), per run or per cell;
# issue 32: `summary:`, the same tool's summary of the same invocation (hey's text beside its
# CSV, which leaves out the failed requests), the source of the counts the per-request file lacks
WINDOW_KEYS = {"skip_s", "duration_s"}
CO_CORRECTION_KEYS = {"expected_interval_ms"}
# what a plain CSV (`format: csv`) cannot say about itself (analysis/read/loadtools/plaincsv.py)
RESULT_OPTION_KEYS = {"timestamp", "timestamp_unit", "timestamp_marks", "timestamp_format",
                      "utc_offset", "latency",
                      "latency_unit", "status", "ok", "delimiter", "value_unit_ms"}
# knee_search (bench/run.sh --find-knee): how the rates were chosen; settle (a server given by
# URL): the wait before each cell. Both per system, for the methodology.
METHOD_KEYS = {"repetitions", "order", "order_seed", "drain", "host_check", "pool_threads",
               "jfr_repetitions", "knee_search", "settle", "warmup"}
HOST_CHECK_KEYS = {"threshold", "action", "busy_wait_s"}
KNEE_SEARCH_KEYS = {"rule", "systems"}
KNEE_SYSTEM_KEYS = {"system", "probes", "knee", "first_saturated", "rates", "stopped"}
KNEE_PROBE_KEYS = {"rate", "verdict", "why", "host_check"}
# A probe's host check as its counts file has it (bench/hostcheck.py and bench/settle.py, through
# the generator's --host-check); runs before probes were checked have none.
PROBE_HOST_CHECK_KEYS = {"busy_share_before", "loadavg_1m_before", "waited_s", "threshold",
                         "action", "verdict", "settle", "settle_waited_s", "settle_bound_ms"}
SETTLE_KEYS = {"rule", "max_wait_s", "systems"}
SETTLE_SYSTEM_KEYS = {"system", "quiet_answer_ms", "bound_ms"}
# warmup (issue 32, bench/manifest.py): the generator's warm-up setting and, per cell repetition,
# the warm-up its counts file says it used and whether it was steady
WARMUP_KEYS = {"mode", "min_s", "max_s", "rule", "cells"}
WARMUP_CELL_KEYS = {"cell", "mode", "min_s", "max_s", "used_s", "reached"}
# a cell repetition's files without their suffix: [scenario/]system/load.repetition
WARMUP_CELL_RE = re.compile(r"^(?:[^/]+/)?[^/]+/[^/]+\.[0-9]+$")


@dataclass(frozen=True)
class SystemSpec:
    id: str
    label: str
    concurrency_limit: int | None = None
    description: str | None = None
    family: str | None = None   # issue 11: the server (rows are grouped by it)
    model: str | None = None    # issue 11: pool | virtual | event-loop (or any other word)


@dataclass(frozen=True)
class ScenarioSpec:
    """A `scenarios:` entry (issue 11): one workload, measured on every system at its own
    load points (ids into the run's load_points, in the order given)."""
    id: str
    label: str
    load_points: tuple[str, ...]
    endpoint: str | None = None
    service_time_ms: float | None = None    # None: the run's service_time_ms
    description: str | None = None
    headline: str | None = None             # the load point the summary table shows


@dataclass(frozen=True)
class LoadPointSpec:
    """A load point: an offered rate (open loop), or a number of connections/users (closed
    loop, issue 23: its load is how many wait for replies; offered_rate is then None)."""
    id: str
    offered_rate: float | None
    duration_s: float | None     # None: a closed loop's, taken from its files (issue 33)
    clients: int | None = None
    connections: int | None = None
    connections_key: str | None = None   # the word run.yml used: "connections" or "users"


@dataclass(frozen=True)
class CellSpec:
    """One recording: a ([scenario,] system, load point, repetition) and where its data lives."""
    system: str
    load: str
    repetition: int
    hlog: str                   # relative to the run folder
    tag: str | None = None
    jfr: str | None = None      # relative to the run folder; None = the default if it exists
    sent: int | None = None
    errors: int | None = None
    timeouts: int | None = None
    counts: str | None = None   # schema 2: the generator's <load>.<rep>.counts.json
    scenario: str | None = None  # issue 11: the scenario id (None: a run without scenarios)
    # issue 23: `hlog` is then a load tool's results file, read by analysis/read/loadtools
    results: bool = False
    format: str | None = None    # forced format name; None: detected from the content
    options: tuple = ()          # (key, value) pairs for the reader (plain CSV columns, units)
    window: tuple[float, float | None] | None = None   # (skip_s, duration_s or None)
    co_interval_ms: float | None = None   # coordinated-omission correction's expected interval
    summary: str | None = None   # the tool's summary of the same run, relative to the run folder
    # issue 33: a cell measured by several load generators lists one file per generator
    # (`results: [..]` or `hlog: [..]` with `counts: [..]`, in the same order); `hlog`/`counts`
    # are then the first. Empty for a cell of one generator.
    parts: tuple[str, ...] = ()
    counts_parts: tuple[str, ...] = ()

    @property
    def files(self) -> tuple[str, ...]:
        """The cell's data files (its `.hlog`s or load tools' files), one per generator."""
        return self.parts or (self.hlog,)


@dataclass(frozen=True)
class Method:
    """How the harness measured (schema 2): repetitions, their order, the drain, the host check."""
    repetitions: int | None = None
    order: str | None = None
    order_seed: int | None = None
    drain: str | None = None
    host_check: dict[str, Any] = field(default_factory=dict)
    pool_threads: int | None = None         # issue 11: threads of every pool target
    jfr_repetitions: int | None = None      # repetitions recorded with JFR (the first N)
    # issue 24: {rule, systems: [{system, probes: [{rate, verdict, why}], knee, first_saturated,
    # rates}]} and {rule, max_wait_s, systems: [{system, quiet_answer_ms, bound_ms}]}
    knee_search: dict[str, Any] | None = None
    settle: dict[str, Any] | None = None
    # issue 32: {mode, min_s, max_s, rule, cells: [{cell, used_s, reached}]}
    warmup: dict[str, Any] | None = None


@dataclass
class Manifest:
    run_id: str
    run_dir: Path
    path: Path                  # run.yml
    title: str
    date: str                   # YYYY-MM-DD
    description: str
    value_unit: str
    systems: list[SystemSpec]
    load_points: list[LoadPointSpec]
    cells: list[CellSpec]           # [scenario order,] load point order, system order, repetition
    tags: list[str] = field(default_factory=list)
    service_time_ms: float | None = None
    environment: dict[str, Any] = field(default_factory=dict)
    load_generator: dict[str, Any] = field(default_factory=dict)
    jfr_attribution: list[dict[str, str]] = field(default_factory=list)
    # "handler" / "coordination" -> jfr_attribution labels (DEFAULT_CPU_ACCOUNTING when absent)
    cpu_accounting: dict[str, tuple[str, ...]] = field(default_factory=dict)
    schema_version: int = 1
    method: Method | None = None
    series: str | None = None   # runs of one series are compared over versions (history)
    version: str | None = None
    scenarios: list[ScenarioSpec] = field(default_factory=list)   # empty: one implicit scenario
    kind: str = "load"          # analysis/kinds.py

    def system(self, system_id: str) -> SystemSpec:
        return next(s for s in self.systems if s.id == system_id)

    def load_point(self, load_id: str) -> LoadPointSpec:
        return next(lp for lp in self.load_points if lp.id == load_id)

    def resolve(self, relpath: str) -> Path:
        """The absolute path of a file named in the manifest (already checked to stay inside)."""
        return self.run_dir / relpath


# --- entry point ----------------------------------------------------------------------------

def load_manifest(run_dir: str | os.PathLike, runs_root: str | os.PathLike | None = None) -> Manifest:
    """Read `<run_dir>/run.yml` and check it against its kind's schema (`kind:`, by default
    load: manifest_checks.py). The run id is the folder name.

    With `runs_root`, the run folder itself must be a real folder inside it (a symlinked run
    folder pointing elsewhere is refused)."""
    run_dir = Path(run_dir)
    run_id = run_dir.name
    path = run_dir / "run.yml"
    if not ID_RE.match(run_id):
        raise ManifestError([f"run id {run_id!r} (the folder name) must use only a-z, 0-9, "
                             f"'-' and '_'"], path=run_dir, hint="rename the folder")
    if runs_root is not None:
        root = Path(runs_root).resolve()
        if run_dir.resolve().parent != root:
            raise ManifestError([f"run folder resolves outside {runs_root} (a symlink?)"],
                                path=run_dir)
    if path.is_symlink() and check_relpath(run_dir, "run.yml"):
        raise ManifestError(["run.yml resolves outside the run folder (a symlink?)"], path=path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ManifestError(["run.yml is missing"], path=path,
                            hint="every run folder needs one; see docs/data-format.md") from None
    except UnicodeDecodeError as exc:
        raise ManifestError([f"not UTF-8 text (byte {exc.start})"], path=path) from None
    try:
        data = load_yaml(text)
    except RecursionError:
        raise ManifestError(["nested too deeply to be a run manifest"], path=path) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        what = what if len(what) <= 200 else what[:200] + "..."
        where = f"line {mark.line + 1}: " if mark is not None else ""
        raise ManifestError([f"{where}not valid YAML: {what}"], path=path) from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        raise ManifestError([f"not valid YAML: {str(exc).split(';')[0]}"], path=path) from None
    if not isinstance(data, dict):
        raise ManifestError(["must be a YAML mapping (title:, date:, systems:, ...)"], path=path)
    # each kind of run (analysis/kinds.py) has its own keys and checks
    name = data.get("kind", DEFAULT_KIND)
    kind = KINDS.get(name) if isinstance(name, str) else None
    if kind is None:
        problems = Problems(text)
        problems.add(("kind",), f"must be {names_text()}, not {show(name)}")
        raise ManifestError(problems.messages(), path=path)
    return step(kind, "schema")(data, text, run_dir, path)


def input_files(manifest: Manifest) -> list[str]:
    """The data files a load test's readers open (.hlog or a load tool's, .jfr), relative to
    the run folder."""
    return [rel for cell in manifest.cells
            for rel in (cell.hlog, cell.jfr or default_jfr(manifest, cell)) if rel]


def default_jfr(manifest: Manifest, cell: CellSpec) -> str | None:
    """The cell's JFR recording relative to the run folder, or None when there is none."""
    rel = cell.jfr or f"{cell_folder(cell.scenario, cell.system)}/{cell.load}.jfr"
    if check_relpath(manifest.run_dir, rel):
        return None
    return rel if (manifest.run_dir / rel).is_file() else None


def cell_folder(scenario: str | None, system: str) -> str:
    """Where a cell's files are by default: <system>/, or <scenario>/<system>/ (bench/)."""
    return system if scenario is None else f"{scenario}/{system}"
