"""`run.yml` of a JMH run (`kind: jmh`, issue 13): which JMH result files the run holds and
how to compare their results (docs/data-format.md, "JMH runs").

    kind: jmh
    title: ...; date: ...; description: ...; tags: [...]; environment: {...}
    jmh:
      - id: ring                      # one table (and its charts) per file
        file: ring.json               # JMH's -rf json (or csv / text), inside the run folder
        console: ring.txt             # optional: JMH's console output (the blackhole mode)
        title: Actor ring
        columns: benchmark            # the variant axis: `benchmark` or a param name
        labels: {platformThreads: Platform threads, ...}   # names and order of the variants
        baseline: platformThreads     # the variant the others are compared with
        sweeps: [ringSize, messages]  # params to chart the score against

`load_jmh_manifest` checks the keys and types (every problem at once, each with its line of
run.yml) and that the files are inside the run folder and exist; whether `columns`,
`baseline` and `sweeps` name something the results have is checked when they are read
(analysis/derive/jmh_report.py), with the same `line N:` form through `JmhManifest.problem`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis.errors import ManifestError
from analysis.read.checks import (Problems, header_at, ident_at, list_at,
                                  relpath_at, scalar_map_at, show, string_at, unknown_keys)
from analysis.vocabulary import ENVIRONMENT_LABELS

TOP_KEYS = {"kind", "title", "date", "description", "tags", "environment", "jmh"}
FILE_KEYS = {"id", "file", "console", "title", "description", "columns", "labels", "baseline",
             "sweeps"}


@dataclass(frozen=True)
class JmhFileSpec:
    """One `jmh:` entry: a result file and how its results are laid out."""
    id: str
    file: str                               # relative to the run folder
    index: int                              # position in `jmh:` (for error lines)
    title: str
    description: str | None = None
    console: str | None = None
    columns: str | None = None              # "benchmark", a param name, or None: one column
    labels: dict[str, str] = field(default_factory=dict)
    baseline: str | None = None
    sweeps: tuple[str, ...] = ()


@dataclass
class JmhManifest:
    run_id: str
    run_dir: Path
    path: Path                              # run.yml
    title: str
    date: str
    description: str
    files: list[JmhFileSpec]
    tags: list[str] = field(default_factory=list)
    environment: dict[str, Any] = field(default_factory=dict)
    # run.yml's text, indexed into lines only when a late problem needs one (checks.Problems)
    lines: dict[tuple, int] | str = ""
    kind: str = "jmh"

    def resolve(self, relpath: str) -> Path:
        return self.run_dir / relpath

    def problem(self, spec: JmhFileSpec, key: str, message: str) -> ManifestError:
        """A problem with one `jmh:` entry's key found after reading its results, as the one
        error of run.yml naming the key's line."""
        problems = Problems(self.lines)
        problems.add(("jmh", spec.index, key), message)
        return ManifestError(problems.messages(), path=self.path)


def load_jmh_manifest(data: dict, text: str, run_dir: Path, path: Path) -> JmhManifest:
    problems = Problems(text)
    unknown_keys(data, TOP_KEYS, (), problems)
    title, date, description, tags = header_at(data, problems)
    environment = scalar_map_at(data, "environment", ENVIRONMENT_LABELS, (), problems)
    files: list[JmhFileSpec] = []
    for i, entry in enumerate(list_at(data, "jmh", (), problems, required=True)):
        spec = _file_spec(entry, i, run_dir, problems)
        if spec is None:
            continue
        if any(f.id == spec.id for f in files):
            problems.add(("jmh", i, "id"), f"duplicate id {show(spec.id)}")
            continue
        files.append(spec)
    if problems.items:
        raise ManifestError(problems.messages(), path=path)
    return JmhManifest(run_id=run_dir.name, run_dir=run_dir, path=path, title=title, date=date,
                       description=description, files=files, tags=tags,
                       environment=environment, lines=text)


def input_files(manifest: JmhManifest) -> list[str]:
    """The result files and console outputs the run's readers open, relative to its folder."""
    return [rel for spec in manifest.files for rel in (spec.file, spec.console) if rel]


def _file_spec(entry, i: int, run_dir: Path, problems: Problems) -> JmhFileSpec | None:
    p = ("jmh", i)
    if not isinstance(entry, dict):
        problems.add(p, "must be a mapping with id and file")
        return None
    before = len(problems.items)
    unknown_keys(entry, FILE_KEYS, p, problems)
    spec_id = ident_at(entry, "id", p, problems)
    file = relpath_at(entry, "file", p, problems, run_dir)
    if "file" not in entry:
        problems.add(p + ("file",), "required (a JMH result file in the run folder)")
    console = relpath_at(entry, "console", p, problems, run_dir)
    for key, rel in (("file", file), ("console", console)):
        if rel is not None and not (run_dir / rel).is_file():
            problems.add(p + (key,), f"{show(rel)} is not a file in the run folder")
    title = string_at(entry, "title", p, problems)
    description = string_at(entry, "description", p, problems)
    columns = string_at(entry, "columns", p, problems)
    baseline = entry.get("baseline")
    if baseline is not None and not isinstance(baseline, (str, int)) or isinstance(baseline, bool):
        problems.add(p + ("baseline",), f"must be a variant id (a string), not {show(baseline)}")
        baseline = None
    labels: dict[str, str] = {}
    block = entry.get("labels")
    if block is not None and not isinstance(block, dict):
        problems.add(p + ("labels",), "must be a mapping variant id -> label")
    for key, label in (block or {}).items() if isinstance(block, dict) else ():
        if not isinstance(label, str) or not label.strip():
            problems.add(p + ("labels", key), "must be a non-empty string")
        else:
            labels[str(key)] = label
    sweeps = []
    for j, name in enumerate(list_at(entry, "sweeps", p, problems)):
        if not isinstance(name, str) or not name:
            problems.add(p + ("sweeps", j), "must be a param name")
        else:
            sweeps.append(name)
    if len(problems.items) > before or spec_id is None or file is None:
        return None
    return JmhFileSpec(id=spec_id, file=file, index=i, title=title or spec_id,
                       description=description, console=console, columns=columns,
                       labels=labels, baseline=None if baseline is None else str(baseline),
                       sweeps=tuple(sweeps))
