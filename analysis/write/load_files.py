"""A load test's files (the load kind's `outputs` step, analysis/kinds.py), made from its run
model; the pipeline commits them (pipeline/stages.py)."""
from __future__ import annotations

from pathlib import Path

from analysis import paths
from analysis.corpus import cell_table
from analysis.model import Run
from analysis.write import datafiles, pages
from analysis.write.charts import flame_cells, png_use, run_jobs
from analysis.write.run_files import Content, OutputFile, RunFiles
from analysis.write.yaml_text import dump_yaml


def run_files(run: Run, site_root: Path, in_feed: bool) -> RunFiles:
    """A load test's files: per cell its series CSV (and a load tool's requests or several
    generators' logs as an .hlog), the flame graphs, per scenario the table CSV, the summary
    CSV, the run's rows of the corpus-wide cell table, the data document and the pages.
    `in_feed`: some post names the run (png_use.runs_in_posts), so every chart gets its PNG and
    the document goes to _data/runs/; otherwise only the og:image charts get a PNG and the
    document goes to _rundata/ (paths.data_path)."""
    jobs = run_jobs.chart_plan(run)
    graphs = flame_cells.flame_graphs(run)
    diffs = flame_cells.flame_diffs(run, graphs)
    doc = datafiles.run_document(run, run_jobs.pixel_sizes(jobs), (graphs, diffs))
    png_use.keep_pngs(jobs, doc, None if in_feed else pages.og_images(run))
    # (asked for first, committed last: where the build lends a worker, pages.rendering_on,
    # the pages are rendered there while this process makes the files below)
    report_pages = pages.report_pages(site_root, run, doc)
    files: list[OutputFile] = []

    def add(rel: str, content: Content) -> None:
        files.append(OutputFile(rel, content))

    for c in run.cells():
        add(paths.series_csv_path(run.id, c.system, c.load, c.scenario),
            datafiles.series_csv([r.series for r in c.repetitions]))
        for r in c.repetitions:     # issue 23: a load tool's requests, as an .hlog
            if r.imported is not None and r.imported.hlog_text is not None:
                add(r.imported.converted, r.imported.hlog_text)
            if r.merged_text is not None:     # issue 33: several generators' logs added
                add(r.source, r.merged_text)
    for g in graphs + diffs:      # issue 25: flame graphs, drawn with the data
        if g.folded is not None:
            add(g.folded, g.folded_text)
        add(g.svg, g.svg_bytes)
        add(g.narrow_svg, g.narrow_bytes)
    for scenario in run.scenarios:
        add(paths.table_csv_path(run.id, scenario.id), datafiles.table_csv(run, scenario))
    if run.has_scenarios:
        add(paths.summary_csv_path(run.id), datafiles.summary_csv(run))
    add(paths.run_cells_csv_path(run.id), cell_table.run_cells_csv(run))
    add(paths.run_spectra_csv_path(run.id), cell_table.run_spectra_csv(run))
    add(paths.data_path(run.id, in_feed), dump_yaml(doc))
    for rel, text in report_pages:
        add(rel, text)
    return RunFiles(files, jobs, run.warnings, len(run.cells()))
