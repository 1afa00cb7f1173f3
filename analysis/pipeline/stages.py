"""The stages of one run, run in worker processes: validate and read the inputs, derive its
numbers, commit the files its writers make (analyse_task, through the run's kind:
analysis/kinds.py), then draw the charts (chart_task)."""
from __future__ import annotations

import os
import traceback
from pathlib import Path
from typing import Any

from analysis import atomic, kinds
from analysis.pipeline import workers
from analysis.pipeline.cache import check_no_links, check_regular_inputs
from analysis.errors import LoadcurveError, is_machine_fault, os_error_text



def _fail(run_id: str, exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, LoadcurveError):
        return {"run": run_id, "ok": False, "error": str(exc)}
    if isinstance(exc, OSError):
        # a disk full or read-only is no fault of the run: "stop" ends the build (runner.py)
        return {"run": run_id, "ok": False, "error": os_error_text(exc),
                "stop": is_machine_fault(exc)}
    detail = traceback.format_exc() if os.environ.get("LOADCURVE_DEBUG") else ""
    return {"run": run_id, "ok": False, "internal": True, "detail": detail,
            "error": f"internal error: {type(exc).__name__}: {exc} (re-run with "
                     f"LOADCURVE_DEBUG=1 for a traceback, and please report it)"}


def analyse_task(run_dir: str, runs_root: str, site_root: str,
                 in_feed: bool = True, map_fn=map) -> dict[str, Any]:
    """Validate, analyse and write one run's data files and page; return its chart jobs.
    Every step is its kind's (analysis/kinds.py: run.yml's `kind:`); this only orders them and
    commits the files they make. `in_feed`: some post names the run (png_use.runs_in_posts),
    so its data document goes to _data/runs/ and every chart gets its PNG. `map_fn` spreads
    the reading of the run's inputs (analyse.analyse_run: its repetitions)."""
    from analysis.read.manifest import load_manifest

    run_id = Path(run_dir).name
    site = Path(site_root)
    workers.settle()
    try:
        manifest = load_manifest(Path(run_dir), Path(runs_root))
        kind = kinds.kind_of(manifest)
        check_regular_inputs(manifest, kinds.step(kind, "inputs")(manifest), site)
        check_no_links(Path(run_dir), site)
        derived = kinds.step(kind, "derive")(manifest, site, map_fn)
        made = kinds.step(kind, "outputs")(derived, site, in_feed)
        outputs = commit(site, made.files)
        for job in made.chart_jobs:     # drawn by chart_task
            outputs += [rel for rel in (job["svg"], job["png"], job["narrow_svg"]) if rel]
        return {"run": run_id, "ok": True, "outputs": outputs, "chart_jobs": made.chart_jobs,
                "warnings": made.warnings, "cells": made.cells}
    except Exception as exc:  # noqa: BLE001 - one run's failure must not stop the others
        return _fail(run_id, exc)


def commit(site: Path, files) -> list[str]:
    """Write a run's files (write/run_files.py's OutputFile) in their order, each whole or not
    at all (analysis/atomic.py); return their paths."""
    for f in files:
        content = f.content() if callable(f.content) else f.content
        if isinstance(content, bytes):
            atomic.write_bytes(site / f.path, content)
        else:
            atomic.write_text(site / f.path, content)
    return [f.path for f in files]


def chart_task(run_id: str, jobs: list[dict[str, Any]], site_root: str) -> dict[str, Any]:
    from analysis.write.charts import render
    workers.settle()
    try:
        problems = [w for job in jobs for w in render.render_job(job, site_root)]
        return {"run": run_id, "ok": True, "charts": len(jobs), "warnings": problems}
    except Exception as exc:  # noqa: BLE001
        return _fail(run_id, exc)
