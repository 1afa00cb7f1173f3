"""The stages of one run, run in worker processes: validate and read the inputs, build the
model, write the data files and page (analyse_task), then draw the charts (chart_task)."""
from __future__ import annotations

import os
import traceback
from pathlib import Path
from typing import Any

from analysis import atomic
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
    `in_feed`: some post names the run (png_use.runs_in_posts), so every chart gets its PNG and
    its data document goes to _data/runs/ for the posts' includes; otherwise only the og:image
    charts get a PNG and the document goes to _rundata/ (paths.data_path). `map_fn` reads the
    run's repetitions (analyse.analyse_run)."""
    from analysis import paths
    from analysis.write import datafiles, pages
    from analysis.write.charts import flame_cells, png_use, run_jobs
    from analysis.write.yaml_text import dump_yaml
    from analysis.derive.analyse import analyse_run
    from analysis.read.manifest import load_manifest

    run_id = Path(run_dir).name
    site = Path(site_root)
    try:
        manifest = load_manifest(Path(run_dir), Path(runs_root))
        if getattr(manifest, "kind", "load") == "jmh":
            return jmh_task(manifest, Path(run_dir), site, in_feed)
        check_regular_inputs(manifest, site)
        check_no_links(Path(run_dir), site)
        run = analyse_run(manifest, site, map_fn)
        jobs = run_jobs.chart_plan(run)
        graphs = flame_cells.flame_graphs(run)
        diffs = flame_cells.flame_diffs(run, graphs)
        doc = datafiles.run_document(run, run_jobs.pixel_sizes(jobs), (graphs, diffs))
        png_use.keep_pngs(jobs, doc, None if in_feed else pages.og_images(run))
        outputs = []

        def write(rel: str, text: str) -> None:
            atomic.write_text(site / rel, text)
            outputs.append(rel)

        for c in run.cells():
            write(paths.series_csv_path(run_id, c.system, c.load, c.scenario),
                  datafiles.series_csv([r.series for r in c.repetitions]))
            for r in c.repetitions:     # issue 23: a load tool's requests, as an .hlog
                if r.imported is not None and r.imported.hlog_text is not None:
                    write(r.imported.converted, r.imported.hlog_text)
                if r.merged_text is not None:     # issue 33: several generators' logs added
                    write(r.source, r.merged_text)
        for g in graphs + diffs:      # issue 25: flame graphs, drawn with the data
            if g.folded is not None:
                write(g.folded, g.folded_text)
            for rel, data in ((g.svg, g.svg_bytes), (g.narrow_svg, g.narrow_bytes)):
                atomic.write_bytes(site / rel, data)
                outputs.append(rel)
        for scenario in run.scenarios:
            write(paths.table_csv_path(run_id, scenario.id), datafiles.table_csv(run, scenario))
        if run.has_scenarios:
            write(paths.summary_csv_path(run_id), datafiles.summary_csv(run))
        from analysis.corpus import cell_table   # the run's rows of the corpus-wide cell table
        write(paths.run_cells_csv_path(run_id), cell_table.run_cells_csv(run))
        write(paths.run_spectra_csv_path(run_id), cell_table.run_spectra_csv(run))
        write(paths.data_path(run_id, in_feed), dump_yaml(doc))
        outputs += pages.write_report(site, run, doc)
        for job in jobs:
            outputs += [rel for rel in (job["svg"], job["png"], job["narrow_svg"]) if rel]
        return {"run": run_id, "ok": True, "outputs": outputs, "chart_jobs": jobs,
                "warnings": run.warnings, "cells": len(run.cells())}
    except Exception as exc:  # noqa: BLE001 - one run's failure must not stop the others
        return _fail(run_id, exc)


def jmh_task(manifest, run_dir: Path, site: Path, in_feed: bool) -> dict[str, Any]:
    """A JMH run (issue 13): its results laid out (analysis/derive/jmh_report.py), then its data file,
    CSV and page (write/jmh_views.py); its charts are drawn by chart_task like any other."""
    from analysis.derive.jmh_report import build_report
    from analysis import paths
    from analysis.write import jmh_views
    from analysis.write.charts import png_use, run_jobs
    from analysis.write.yaml_text import dump_yaml
    check_no_links(run_dir, site)
    report = build_report(manifest, site)
    jobs = jmh_views.chart_jobs(report)
    doc = jmh_views.run_document(report, run_jobs.pixel_sizes(jobs))
    image = jmh_views.report_front_matter(report).get("image")
    png_use.keep_pngs(jobs, doc, None if in_feed else {image.lstrip("/")} if image else set())
    outputs = []
    for rel, text in ((paths.jmh_csv_path(report.id), jmh_views.results_csv(report)),
                      (paths.data_path(report.id, in_feed), dump_yaml(doc)),
                      (paths.report_path(report.id), jmh_views.report_text(report, site, doc))):
        atomic.write_text(site / rel, text)
        outputs.append(rel)
    for job in jobs:
        outputs += [rel for rel in (job["svg"], job["png"], job["narrow_svg"]) if rel]
    return {"run": report.id, "ok": True, "outputs": outputs, "chart_jobs": jobs,
            "warnings": report.warnings + [w for t in report.tables for w in t.warnings],
            "cells": sum(len(t.results) for t in report.tables)}


def chart_task(run_id: str, jobs: list[dict[str, Any]], site_root: str) -> dict[str, Any]:
    from analysis.write.charts import render
    try:
        problems = [w for job in jobs for w in render.render_job(job, site_root)]
        return {"run": run_id, "ok": True, "charts": len(jobs), "warnings": problems}
    except Exception as exc:  # noqa: BLE001
        return _fail(run_id, exc)
