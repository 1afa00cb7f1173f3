"""Load and validate `runs/<run-id>/run.yml` (the format is in docs/data-format.md).

`load_manifest(run_dir)` returns a `Manifest` or raises one `ManifestError` that lists every
problem found, each with the line of run.yml it is on. Unknown keys are errors (a typo must not be
silently ignored). Paths in the manifest must stay inside the run folder: absolute paths, `..`
and symlinks that resolve outside it are refused.
"""
from __future__ import annotations

import datetime as _dt
import os
import re
import reprlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from analysis.errors import ManifestError

SCHEMA_VERSIONS = (1,)
ID_RE = re.compile(r"^[a-z0-9_-]+$")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
# recorded unit -> how many of that unit make one millisecond
UNITS_PER_MS = {"ns": 1_000_000.0, "us": 1_000.0, "ms": 1.0}

TOP_KEYS = {"schema_version", "title", "date", "description", "tags", "value_unit",
            "service_time_ms", "systems", "load_points", "environment", "load_generator",
            "jfr_attribution", "cells"}
SYSTEM_KEYS = {"id", "label", "concurrency_limit", "description"}
LOAD_KEYS = {"id", "offered_rate", "clients", "duration_s"}
# environment/load_generator: key -> label shown in the methodology, in display order
ENVIRONMENT_LABELS = {
    "cpu": "CPU", "cores": "Cores", "smt": "SMT", "memory": "Memory", "os": "OS",
    "kernel": "Kernel", "jdk": "JDK", "jvm_flags": "JVM flags", "gc": "GC", "heap": "Heap",
    "shared_host": "Generator and server on one host",
}
LOAD_GENERATOR_LABELS = {
    "name": "Load generator", "model": "Load model", "timeout_s": "Timeout",
    "warmup_s": "Warm-up", "connections": "Connections",
}
JFR_ATTRIBUTION_KEYS = {"pattern", "label"}
CELL_KEYS = {"system", "load", "hlog", "tag", "jfr", "sent", "errors", "timeouts", "repetition"}


@dataclass(frozen=True)
class System:
    id: str
    label: str
    concurrency_limit: int | None = None
    description: str | None = None


@dataclass(frozen=True)
class LoadPoint:
    id: str
    offered_rate: float
    duration_s: float
    clients: int | None = None


@dataclass(frozen=True)
class Cell:
    """One recording: a (system, load point, repetition) and where its data lives."""
    system: str
    load: str
    repetition: int
    hlog: str                   # relative to the run folder
    tag: str | None = None
    jfr: str | None = None      # relative to the run folder; None = the default if it exists
    sent: int | None = None
    errors: int | None = None
    timeouts: int | None = None


@dataclass
class Manifest:
    run_id: str
    run_dir: Path
    path: Path                  # run.yml
    title: str
    date: str                   # YYYY-MM-DD
    description: str
    value_unit: str
    systems: list[System]
    load_points: list[LoadPoint]
    cells: list[Cell]           # load point order, then system order, then repetition
    tags: list[str] = field(default_factory=list)
    service_time_ms: float | None = None
    environment: dict[str, Any] = field(default_factory=dict)
    load_generator: dict[str, Any] = field(default_factory=dict)
    jfr_attribution: list[dict[str, str]] = field(default_factory=list)

    def system(self, system_id: str) -> System:
        return next(s for s in self.systems if s.id == system_id)

    def load_point(self, load_id: str) -> LoadPoint:
        return next(lp for lp in self.load_points if lp.id == load_id)

    def resolve(self, relpath: str) -> Path:
        """The absolute path of a file named in the manifest (already checked to stay inside)."""
        return self.run_dir / relpath


# Values quoted in problem messages are shortened: a YAML alias bomb (`&a [*b, *b, ...]`) is
# cheap to load (shared references) but its full repr would be exponentially long.
_short = reprlib.Repr()
_short.maxstring = _short.maxother = 80
_short.maxlong = 40
_short.maxlevel = 2
_show = _short.repr


class _Loader(yaml.SafeLoader):
    """The safe loader, but dates stay strings: we check them ourselves, so a bad date such as
    2026-13-01 is one problem in the list instead of an exception from the YAML library."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}


# --- line numbers ---------------------------------------------------------------------------

def _line_index(text: str) -> dict[tuple, int]:
    """Map key paths ('systems', 0, 'id') to 1-based line numbers, so problems name a line."""
    index: dict[tuple, int] = {}
    try:
        root = yaml.compose(text, Loader=_Loader)
    except (yaml.YAMLError, RecursionError):
        return index

    seen: set[int] = set()

    def walk(node, path):
        # an alias repeats a node: visit each node once (alias bombs, recursive aliases)
        if id(node) in seen:
            return
        seen.add(id(node))
        index.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                key = k.value if isinstance(k, yaml.ScalarNode) else None
                index[path + (key,)] = k.start_mark.line + 1
                index[path + (key, "__value__")] = v.start_mark.line + 1
                walk(v, path + (key,))
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                walk(v, path + (i,))

    if root is not None:
        walk(root, ())
    return index


class _Problems:
    def __init__(self, lines: dict[tuple, int]):
        self.lines = lines
        self.items: list[tuple[int, str]] = []

    def add(self, path: tuple, message: str) -> None:
        line = None
        p = path
        while line is None and p:
            line = self.lines.get(p)
            p = p[:-1]
        name = _path_name(path)
        text = f"{name}: {message}" if name else message
        self.items.append((line or 0, f"line {line}: {text}" if line else text))

    def messages(self) -> list[str]:
        return [m for _, m in sorted(self.items, key=lambda item: item[0])]


def _path_name(path: tuple) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            # a key is quoted when odd (newline, huge): one error line, of bounded length
            plain = isinstance(part, str) and part.isprintable() and len(part) <= 80
            out += ("." if out else "") + (part if plain else _show(part))
    return out


# --- checks ---------------------------------------------------------------------------------

def _unknown_keys(data: dict, allowed: set, path: tuple, problems: _Problems) -> None:
    for key in data:
        if key not in allowed:
            problems.add(path + (key,), f"unknown key (allowed: {', '.join(sorted(allowed))})")


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v \
        and v not in (float("inf"), float("-inf")) and (isinstance(v, float) or abs(v) < 2**63)


def _string(data, key, path, problems, *, required=False) -> str | None:
    if key not in data or data[key] is None:
        if required:
            problems.add(path + (key,), "required")
        return None
    value = data[key]
    if not isinstance(value, str) or not value.strip():
        problems.add(path + (key,), "must be a non-empty string")
        return None
    return value


def _number(data, key, path, problems, *, required=False, positive=True, integer=False):
    if key not in data or data[key] is None:
        if required:
            problems.add(path + (key,), "required")
        return None
    value = data[key]
    kind = "an integer" if integer else "a number"
    if not _is_number(value) or (integer and not isinstance(value, int)):
        problems.add(path + (key,), f"must be {kind}, not {_show(value)}")
        return None
    if positive and value <= 0:
        problems.add(path + (key,), f"must be {kind} > 0, not {_show(value)}")
        return None
    if not positive and value < 0:
        problems.add(path + (key,), f"must be {kind} >= 0, not {_show(value)}")
        return None
    return value


def _ident(data, key, path, problems) -> str | None:
    value = _string(data, key, path, problems, required=True)
    if value is not None and not ID_RE.match(value):
        problems.add(path + (key,), f"{_show(value)} must use only a-z, 0-9, '-' and '_'")
        return None
    return value


def check_relpath(run_dir: Path, relpath: str) -> str | None:
    """Why `relpath` may not be used inside `run_dir`, or None when it is fine."""
    if not relpath or "\0" in relpath:
        return "must be a non-empty path"
    if os.path.isabs(relpath) or relpath.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", relpath):
        return f"{_show(relpath)} is absolute; give a path relative to the run folder"
    parts = re.split(r"[\\/]", relpath)
    if ".." in parts:
        return f"{_show(relpath)} leaves the run folder ('..' is not allowed)"
    root = run_dir.resolve()
    target = (run_dir / relpath).resolve()
    if target != root and root not in target.parents:
        return f"{_show(relpath)} resolves outside the run folder (a symlink?)"
    return None


def _relpath(data, key, path, problems, run_dir: Path) -> str | None:
    value = _string(data, key, path, problems)
    if value is None:
        return None
    why = check_relpath(run_dir, value)
    if why:
        problems.add(path + (key,), why)
        return None
    return value


def _scalar_map(data, key, labels: dict, path, problems) -> dict:
    block = data.get(key)
    if block is None:
        return {}
    if not isinstance(block, dict):
        problems.add(path + (key,), "must be a mapping")
        return {}
    _unknown_keys(block, set(labels), path + (key,), problems)
    out = {}
    for k, v in block.items():
        if k not in labels or v is None:
            continue
        if isinstance(v, (dict, list)):
            problems.add(path + (key, k), "must be a single value")
            continue
        if isinstance(v, (_dt.date, _dt.datetime)):
            v = v.isoformat()
        out[k] = v
    return out


def _date(data, problems) -> str | None:
    if "date" not in data or data["date"] is None:
        problems.add(("date",), "required (YYYY-MM-DD)")
        return None
    value = data["date"]
    if isinstance(value, _dt.datetime):
        value = value.date()
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, str) and DATE_RE.match(value):
        try:
            return _dt.date.fromisoformat(value).isoformat()
        except ValueError:
            pass
    problems.add(("date",), f"must be a date YYYY-MM-DD, not {_show(value)}")
    return None


def _list(data, key, path, problems, *, required=False) -> list:
    value = data.get(key)
    if value is None:
        if required:
            problems.add(path + (key,), "required (a list with at least one entry)")
        return []
    if not isinstance(value, list) or (required and not value):
        problems.add(path + (key,), "must be a list" + (" with at least one entry" if required else ""))
        return []
    return value


# --- entry point ----------------------------------------------------------------------------

def load_manifest(run_dir: str | os.PathLike, runs_root: str | os.PathLike | None = None) -> Manifest:
    """Read and check `<run_dir>/run.yml`. The run id is the folder name.

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
        data = yaml.load(text, Loader=_Loader)  # noqa: S506 - _Loader is a SafeLoader
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

    problems = _Problems(_line_index(text))
    _unknown_keys(data, TOP_KEYS, (), problems)

    version = data.get("schema_version", 1)
    if version not in SCHEMA_VERSIONS or isinstance(version, bool):
        problems.add(("schema_version",), f"unknown version {_show(version)}; this loadcurve reads "
                     f"{', '.join(map(str, SCHEMA_VERSIONS))} (update loadcurve?)")

    title = _string(data, "title", (), problems, required=True)
    date = _date(data, problems)
    description = _string(data, "description", (), problems, required=True)
    tags = []
    for i, tag in enumerate(_list(data, "tags", (), problems)):
        if not isinstance(tag, str) or not tag.strip():
            problems.add(("tags", i), "must be a non-empty string")
        else:
            tags.append(tag)

    value_unit = data.get("value_unit")
    if value_unit is None:
        problems.add(("value_unit",), "required: ns, us or ms (the unit the .hlog values are in)")
    elif not isinstance(value_unit, str) or value_unit not in UNITS_PER_MS:
        problems.add(("value_unit",), f"must be ns, us or ms, not {_show(value_unit)}")
        value_unit = None
    service_time_ms = _number(data, "service_time_ms", (), problems)

    systems: list[System] = []
    declared_systems: list[str] = []   # valid ids, even of entries with other problems
    for i, entry in enumerate(_list(data, "systems", (), problems, required=True)):
        p = ("systems", i)
        if not isinstance(entry, dict):
            problems.add(p, "must be a mapping with id and label")
            continue
        _unknown_keys(entry, SYSTEM_KEYS, p, problems)
        sid = _ident(entry, "id", p, problems)
        label = _string(entry, "label", p, problems, required=True)
        limit = _number(entry, "concurrency_limit", p, problems, integer=True)
        desc = _string(entry, "description", p, problems)
        if sid:
            declared_systems.append(sid)
        if sid and any(s.id == sid for s in systems):
            problems.add(p + ("id",), f"duplicate system id {_show(sid)}")
        elif sid and label:
            systems.append(System(sid, label, limit, desc))

    load_points: list[LoadPoint] = []
    declared_loads: list[str] = []
    for i, entry in enumerate(_list(data, "load_points", (), problems, required=True)):
        p = ("load_points", i)
        if not isinstance(entry, dict):
            problems.add(p, "must be a mapping with id, offered_rate and duration_s")
            continue
        _unknown_keys(entry, LOAD_KEYS, p, problems)
        lid = _ident(entry, "id", p, problems)
        offered = _number(entry, "offered_rate", p, problems, required=True)
        duration = _number(entry, "duration_s", p, problems, required=True)
        clients = _number(entry, "clients", p, problems, integer=True)
        if lid:
            declared_loads.append(lid)
        if lid and any(lp.id == lid for lp in load_points):
            problems.add(p + ("id",), f"duplicate load point id {_show(lid)}")
        elif lid and offered is not None and duration is not None:
            load_points.append(LoadPoint(lid, offered, duration, clients))

    environment = _scalar_map(data, "environment", ENVIRONMENT_LABELS, (), problems)
    load_generator = _scalar_map(data, "load_generator", LOAD_GENERATOR_LABELS, (), problems)
    if "model" in load_generator and load_generator["model"] not in ("open", "closed"):
        problems.add(("load_generator", "model"), f"must be open or closed, not "
                     f"{_show(load_generator['model'])}")
    for key in ("timeout_s", "warmup_s", "connections"):
        if key in load_generator:
            _number(load_generator, key, ("load_generator",), problems, positive=False)

    attribution = []
    for i, entry in enumerate(_list(data, "jfr_attribution", (), problems)):
        p = ("jfr_attribution", i)
        if not isinstance(entry, dict):
            problems.add(p, "must be a mapping {pattern, label}")
            continue
        _unknown_keys(entry, JFR_ATTRIBUTION_KEYS, p, problems)
        pattern = _string(entry, "pattern", p, problems, required=True)
        label = _string(entry, "label", p, problems, required=True)
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as exc:
                problems.add(p + ("pattern",), f"not a valid regular expression: {exc}")
                pattern = None
        if pattern is not None and label is not None:
            attribution.append({"pattern": pattern, "label": label})

    cells = _cells(data, run_dir, systems, load_points, problems,
                   declared_systems, declared_loads)

    if problems.items:
        raise ManifestError(problems.messages(), path=path)
    return Manifest(run_id=run_id, run_dir=run_dir, path=path, title=title, date=date,
                    description=description, value_unit=value_unit, systems=systems,
                    load_points=load_points, cells=cells, tags=tags,
                    service_time_ms=service_time_ms, environment=environment,
                    load_generator=load_generator, jfr_attribution=attribution)


def _cells(data, run_dir, systems, load_points, problems, declared_systems,
           declared_loads) -> list[Cell]:
    """Every (system, load point) gets the default cell unless the manifest lists its own."""
    system_ids = [s.id for s in systems]
    load_ids = [lp.id for lp in load_points]
    given: dict[tuple[str, str], list[Cell]] = {}
    for i, entry in enumerate(_list(data, "cells", (), problems)):
        p = ("cells", i)
        if not isinstance(entry, dict):
            problems.add(p, "must be a mapping with system and load")
            continue
        _unknown_keys(entry, CELL_KEYS, p, problems)
        system = _string(entry, "system", p, problems, required=True)
        load = _string(entry, "load", p, problems, required=True)
        if system is not None and system not in declared_systems:
            problems.add(p + ("system",), f"{_show(system)} is not a system id of this run")
            system = None
        if load is not None and load not in declared_loads:
            problems.add(p + ("load",), f"{_show(load)} is not a load point id of this run")
            load = None
        repetition = _number(entry, "repetition", p, problems, integer=True)
        hlog = _relpath(entry, "hlog", p, problems, run_dir)
        jfr = _relpath(entry, "jfr", p, problems, run_dir)
        tag = entry.get("tag")
        if tag is not None and (not isinstance(tag, str) or not tag):
            problems.add(p + ("tag",), "must be a non-empty string or null")
            tag = None
        counts = {k: _number(entry, k, p, problems, positive=False, integer=True)
                  for k in ("sent", "errors", "timeouts")}
        if system not in system_ids or load not in load_ids:
            continue
        cells = given.setdefault((system, load), [])
        rep = repetition if repetition is not None else len(cells) + 1
        if any(c.repetition == rep for c in cells):
            problems.add(p + ("repetition",), f"repetition {rep} of {system}/{load} given twice")
            continue
        cells.append(Cell(system, load, rep, hlog or _default_hlog(system, load, run_dir, problems, p),
                          tag, jfr, **counts))
    out = []
    for load in load_ids:
        for system in system_ids:
            if (system, load) in given:
                out.extend(sorted(given[(system, load)], key=lambda c: c.repetition))
            else:
                out.append(Cell(system, load, 1, _default_hlog(system, load, run_dir, problems, ())))
    return out


def _default_hlog(system, load, run_dir, problems, path) -> str:
    rel = f"{system}/{load}.hlog"
    why = check_relpath(run_dir, rel)
    if why:
        problems.add(path, f"default data file {why}")
    return rel


def default_jfr(manifest: Manifest, cell: Cell) -> str | None:
    """The cell's JFR recording relative to the run folder, or None when there is none."""
    rel = cell.jfr or f"{cell.system}/{cell.load}.jfr"
    if check_relpath(manifest.run_dir, rel):
        return None
    return rel if (manifest.run_dir / rel).is_file() else None
