"""The kinds of run (issue 35): what a run folder holds decides which readers, derive step,
writers and templates make its page. run.yml's `kind:` names one (`load` when it says none).

A kind is one entry of KINDS, as a load tool's format is one of read/loadtools' FORMATS: each
step is named "module:function" and imported only when a run of the kind is built, so this
table imports no stage (it is a shared leaf) and the pipeline reaches every kind through it
alone (analysis/pipeline/stages.py has no branch on a kind). The steps, in build order:

    schema(data, text, run_dir, path) -> manifest     run.yml checked (read/); the manifest's
                                                       `kind` names its kind again
    inputs(manifest) -> [relative path]               the files its readers will open, refused
                                                       unless regular (pipeline/cache.py)
    derive(manifest, site_root, map_fn) -> derived     read through its readers, then its
                                                       numbers (derive/); `map_fn` may spread
                                                       the reads over the workers
    outputs(derived, site_root, in_feed) -> RunFiles   its data document (the view blocks), CSV,
                                                       pages and chart jobs (write/run_files.py)

`layouts` are the _layouts/ its pages are rendered from (hashed into every run's cache digest:
pipeline/cache.py), `includes` the _includes/ those layouts print sections with. docs/
architecture.md, "A new kind of run", walks through adding one.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

DEFAULT_KIND = "load"


@dataclass(frozen=True)
class RunKind:
    name: str                       # run.yml's `kind:`
    label: str                      # in messages: "a JMH run"
    schema: str
    inputs: str
    derive: str
    outputs: str
    layouts: tuple[str, ...]
    includes: tuple[str, ...]
    # why `new-post` drafts no post for a run of this kind, and where to start instead (None:
    # it drafts one)
    post_hint: str | None = None


KINDS: dict[str, RunKind] = {
    "load": RunKind(
        name="load", label="load-test",
        schema="analysis.read.manifest_checks:check_manifest",
        inputs="analysis.read.manifest:input_files",
        derive="analysis.derive.analyse:analyse_run",
        outputs="analysis.write.load_files:run_files",
        layouts=("report.html", "scenario.html"),
        includes=("flame-diffs.html", "methodology.html", "missing.html", "report-body.html",
                  "scenario-list.html", "summary-charts.html", "summary-table.html",
                  "tag-links.html")),
    # issue 13: JMH's results files, laid out as run.yml asks
    "jmh": RunKind(
        name="jmh", label="JMH",
        schema="analysis.read.jmh_manifest:load_jmh_manifest",
        inputs="analysis.read.jmh_manifest:input_files",
        derive="analysis.derive.jmh_report:build_report",
        outputs="analysis.write.jmh_views:run_files",
        layouts=("jmh-report.html",),
        includes=("jmh-memory-table.html", "jmh-methodology.html", "jmh-percentiles.html",
                  "jmh-sweep.html", "jmh-variant-table.html", "missing.html", "tag-links.html"),
        post_hint="start from _posts/2026-11-24-actors-and-streams-with-jmh.md: its includes "
                  "take block= and table="),
}


def register(kind: RunKind) -> None:
    """Add a kind (a plug-in's, or a test's). Registered in a build's main process before its
    workers start, it is theirs too (they are forked: pipeline/workers.py)."""
    if kind.name in KINDS:
        raise ValueError(f"a kind of run named {kind.name!r} is registered already")
    KINDS[kind.name] = kind


def unregister(name: str) -> None:
    if name == DEFAULT_KIND or name not in KINDS:
        raise ValueError(f"{name!r} is not a kind of run that can be removed")
    del KINDS[name]


def names_text() -> str:
    """The kinds as an error message lists them: "load or jmh", "load, jmh or csv"."""
    names = list(KINDS)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def kind_of(manifest: Any) -> RunKind:
    """The kind of a checked manifest."""
    return KINDS[manifest.kind]


def step(kind: RunKind, name: str) -> Callable[..., Any]:
    """A kind's step ("schema", "inputs", "derive", "outputs") as the function it names."""
    module, _, function = getattr(kind, name).partition(":")
    return getattr(importlib.import_module(module), function)


def layouts() -> list[str]:
    """Every registered kind's layouts, each once, sorted."""
    return sorted({layout for kind in KINDS.values() for layout in kind.layouts})
