"""The build's reduce step: what needs every run at once. From the runs' cell tables
(`assets/data/<run>/cells.csv`) it writes

- `assets/data/cells.csv`: the corpus-wide cell table (corpus.py);
- per series (run.yml `series:`): `_data/history/<series>.yml`, the page `_series/<series>.md`
  (/history/<series>/) and a chart per cell under `assets/history/<series>/`;
- `_data/regressions.yml`: every detected change, newest first, for /feed/regressions.xml;
- per `comparisons/<id>.yml`: `_data/comparisons/<id>.yml`, the page `_comparisons/<id>.md`
  (/comparisons/<id>/) and its charts under `assets/comparisons/<id>/`.

Every file is written only when its bytes change, and charts are drawn only when their data
file changed (a no-change build draws nothing), or all of them with `build --force` or when the
code that drew them changed (pipeline/corpus_cache.py). Files of a series or comparison that is gone
are removed (pages only when they carry `generated_by: loadcurve`).
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from analysis import atomic
from analysis.corpus import cell_table, comparison_memo, compare, flame_diffs, history
from analysis.corpus.comparisons import declared_comparisons
from analysis.errors import LoadcurveError
from analysis.vocabulary import fmt_ms, plain
from analysis.write.flame_views import comparison_flames
from analysis.write.pages import GENERATOR, is_generated
from analysis.paths import (CELLS_CSV, COMPARISON_DATA_DIR, COMPARISONS_DIR,
                                  HISTORY_DATA_DIR, REGRESSIONS_DATA, SERIES_DIR,
                                  comparison_url, history_url, report_url)
from analysis.write.yaml_text import dump_yaml

HISTORY_ASSETS = "assets/history"
COMPARISON_ASSETS = "assets/comparisons"
METRIC = "p99"
FEED_ENTRIES = 50


class Reduce:
    def __init__(self, site_root: Path, redraw: bool = False,
                 known: dict[str, list] | None = None, *, code: str = "",
                 kept: dict[str, dict] | None = None):
        self.site = Path(site_root)
        # draw every chart, also those whose data did not change (`build --force`, or the
        # drawing code changed: a chart's data file does not say by what code it was drawn)
        self.redraw = redraw
        # comparison data file -> [sha256 of its document but the load curve's pixel size,
        # size, mtime_ns, inode] as the last build left it (pipeline/corpus_cache.py keeps it):
        # a document whose digest is that of an untouched file needs no parse of the old one
        self.known = known or {}
        self.memo: dict[str, list] = {}
        # comparison data file -> corpus/comparison_memo.entry of the last build (`kept`) and
        # of this one (`inputs`): a comparison whose inputs are unchanged is not computed
        # again. `code`: the digest of the code ("": no memo)
        self.code = code
        self.kept = kept or {}
        self.inputs: dict[str, dict] = {}
        self.written: set[str] = set()
        self.errors: list[str] = []
        self.warnings: list[str] = []
        self.drawn = 0

    def write(self, rel: str, text: str) -> bool:
        """Write when changed; True when the file's bytes changed (or it was new)."""
        self.written.add(rel)
        return atomic.write_text(self.site / rel, text)

    def charts_needed(self, data_rel: str, text: str, charts: list[str]) -> bool:
        changed = self.write(data_rel, text)
        self.written.update(charts)
        return changed or self.redraw or not all((self.site / c).is_file() for c in charts)

    # --- the whole step ----------------------------------------------------------------------

    def run(self, run_ids: list[str]) -> pd.DataFrame:
        df = cell_table.read_runs(self.site, run_ids)
        self.write(CELLS_CSV, cell_table.corpus_csv(self.site, df))
        feed = []
        for series, cells in history.corpus_histories(df, METRIC).items():
            feed += self.series(series, cells)
        feed.sort(key=lambda e: (e["date"], e["id"]), reverse=True)
        self.write(REGRESSIONS_DATA, dump_yaml({"title": "Regressions and improvements",
                                                "entries": feed[:FEED_ENTRIES]}))
        for spec in declared_comparisons(self.site):
            if isinstance(spec, LoadcurveError):     # its file could not be read
                self.errors.append(str(spec))
                continue
            try:
                self.comparison(spec, df)
            except LoadcurveError as exc:
                self.errors.append(str(exc))
        self.remove_stale()
        return df

    # --- history -----------------------------------------------------------------------------

    def series(self, name: str, cells: list[history.CellHistory]) -> list[dict[str, Any]]:
        doc, feed = history_document(name, cells)
        doc_cells = doc["cells"]
        text = dump_yaml(doc)
        charts = [c["chart"][ext] for c in doc_cells for ext in ("svg", "png")]
        if self.charts_needed(f"{HISTORY_DATA_DIR}/{name}.yml", text, charts):
            # matplotlib is loaded (for the PNGs) only when something changed
            from analysis.write.charts.history_plot import history_job
            from analysis.write.charts.render import render_job
            for h, c in zip(cells, doc_cells):
                (self.site / c["chart"]["svg"]).parent.mkdir(parents=True, exist_ok=True)
                self.warnings += render_job(history_job(h, c["chart"], METRIC, c["label"]),
                                            str(self.site))
                self.drawn += 1
        # a date, so jekyll-seo-tag does not stamp the page with the build's clock
        newest = max((p.date for h in cells for p in h.points), default=None)
        self.page(f"{SERIES_DIR}/{name}.md", {"layout": "history", "title": doc["title"],
                                              "series": name, "date": newest,
                                              "generated_by": GENERATOR})
        return feed

    def page(self, rel: str, front: dict[str, Any] | str) -> None:
        """`front`: the page's front matter, or its text (page_text) kept from a last build."""
        path = self.site / rel
        if path.exists() and not is_generated(path):
            self.errors.append(f"{rel}: not written (a page without generated_by: "
                               f"{GENERATOR} is there)")
            return
        self.write(rel, front if isinstance(front, str) else page_text(front))

    # --- comparisons -------------------------------------------------------------------------

    def comparison(self, spec, df: pd.DataFrame) -> None:
        """One comparison page (spec: a read/comparison.ComparisonSpec) and its charts."""
        rel = f"{COMPARISON_DATA_DIR}/{spec.id}.yml"
        page_rel = f"{COMPARISONS_DIR}/{spec.id}.md"
        inputs, kept = comparison_memo.Inputs(self.site, spec, self.code), self.kept.get(rel)
        if not self.redraw and rel in self.known and inputs.still(kept):
            try:
                untouched = self.known[rel][1:] == self._stamp(rel)
            except OSError:
                untouched = False
            if untouched:
                self.written.update(kept["written"])
                self.memo[rel] = list(self.known[rel])
                self.inputs[rel] = kept
                self.page(page_rel, kept["page"])
                return
        sides = []
        for key, value in (("baseline", spec.baseline), ("candidate", spec.candidate)):
            rows, run, system = compare.select(df, value)
            if rows.empty:
                # a run not (or no longer) in runs/: the page waits for it, the build goes on
                self.warnings.append(f"{spec.path}: {key} {value!r} has no measured cells (is "
                                     f"run {run!r} in runs/?); no comparison page")
                return
            sides.append(rows)
        a, b = sides
        by_system = ":" not in spec.baseline
        result = compare.compare_frames(a, b, metric=spec.metric, by_system=by_system)
        folder = f"{COMPARISON_ASSETS}/{spec.id}"
        # a closed loop's point (issue 23) offers no rate, and the cell table has no
        # connections: it is named by its load id
        loads = {c.load: f"{plain(c.offered_rate)} req/s offered" if c.offered_rate is not None
                 else f"load {c.load}" for c in result}
        closed = any(c.offered_rate is None for c in result)
        spectra = [{"load": load, "svg": f"{folder}/spectrum-{load}.svg",
                    "png": f"{folder}/spectrum-{load}.png", "width": 700, "height": 400,
                    "caption": f"Percentile spectrum at {text}, both sides",
                    "title": f"Latency by percentile at {text}",
                    "alt": f"Latency (ms) by percentile at {text}: {spec.baseline} and "
                           f"{spec.candidate}"} for load, text in loads.items()]
        curve = {"svg": f"{folder}/load-curve.svg", "png": f"{folder}/load-curve.png",
                 "alt": f"p50 and p99 latency (ms) against "
                        f"{'throughput' if closed else 'offered load'}: {spec.baseline} and "
                        f"{spec.candidate}, median of the repetitions"}
        title = spec.title or f"{spec.candidate} against {spec.baseline}"
        doc = {"id": spec.id, "title": title, "description": spec.description,
               "url": comparison_url(spec.id), "baseline": spec.baseline,
               "candidate": spec.candidate, "metric": spec.metric, "unit": "ms",
               "caption": f"{spec.metric} (ms): A = {spec.baseline}, B = {spec.candidate}.",
               "method": compare.method_text(spec.metric, compare.DEFAULT_ALPHA, len(result)),
               "runs": [{"side": side, "spec": value, "url": report_url(value.partition(":")[0])}
                        for side, value in (("A", spec.baseline), ("B", spec.candidate))],
               "rows": [compare.row_texts(c) for c in result],
               "environment_differences": compare.environment_differences(a, b),
               "charts": {"load_curve": curve, "spectrum": spectra}}
        flames = comparison_flames(spec, flame_diffs.stack_pairs(
            self.site, spec.baseline, spec.candidate, result), folder, loads)
        if flames:
            doc["flame_diffs"] = [f.entry for f in flames]
        files = [curve["svg"], curve["png"]] + [e[ext] for e in spectra for ext in ("svg", "png")]
        files += [path for f in flames for path in (f.entry["svg"], f.entry["narrow_svg"])]
        self.written.update([rel, *files])
        digest = hashlib.sha256(dump_yaml(doc).encode()).hexdigest()
        if not self.unchanged(rel, doc, files, digest):
            # matplotlib is loaded, and the load curve sized, only when something changed
            from analysis.write.charts.comparison_charts import chart_jobs, draw
            jobs = chart_jobs(spec, a, b, by_system, doc["charts"], self.site)
            self.write(rel, dump_yaml(doc))
            self.drawn += draw(jobs, self.site)
            for f in flames:
                for path, data in f.files:
                    atomic.write_bytes(self.site / path, data)
        self.remember(rel, digest)
        page = page_text({
            "layout": "comparison", "title": title, "comparison": spec.id,
            "date": max(str(d) for d in pd.concat([a["date"], b["date"]]).dropna()),
            "description": spec.description or title, "generated_by": GENERATOR})
        self.page(page_rel, page)
        if self.code:
            self.inputs[rel] = inputs.entry(
                flame_diffs.stack_files(spec.baseline, spec.candidate, result),
                [rel, *files], page)

    def _stamp(self, rel: str) -> list:
        st = os.stat(self.site / rel)
        return [st.st_size, st.st_mtime_ns, st.st_ino]

    def remember(self, rel: str, digest: str) -> None:
        try:
            self.memo[rel] = [digest, *self._stamp(rel)]
        except OSError:
            pass

    def unchanged(self, rel: str, doc: dict[str, Any], charts: list[str], digest: str) -> bool:
        """Whether the data file holds `doc` already (but for the load curve's pixel size,
        which is only known once drawn) and every chart is there. `digest`: the document's
        (self.known)."""
        if self.redraw or not all((self.site / c).is_file() for c in charts):
            return False
        try:
            if self.known.get(rel) == [digest, *self._stamp(rel)]:
                return True
        except OSError:
            return False
        try:
            old = yaml.safe_load((self.site / rel).read_text(encoding="utf-8"))
            old["charts"]["load_curve"].pop("width")
            old["charts"]["load_curve"].pop("height")
        except (OSError, yaml.YAMLError, KeyError, TypeError, AttributeError):
            return False
        return old == yaml.safe_load(dump_yaml(doc))

    # --- clean-up ----------------------------------------------------------------------------

    def remove_stale(self) -> None:
        for top in (HISTORY_DATA_DIR, COMPARISON_DATA_DIR, HISTORY_ASSETS, COMPARISON_ASSETS,
                    SERIES_DIR, COMPARISONS_DIR):
            folder = self.site / top
            if not folder.is_dir():
                continue
            for path in sorted(folder.rglob("*")):
                rel = path.relative_to(self.site).as_posix()
                if not path.is_file() or path.is_symlink() or rel in self.written:
                    continue
                if top in (SERIES_DIR, COMPARISONS_DIR) and not is_generated(path):
                    continue
                path.unlink()
            for sub in sorted((p for p in folder.rglob("*") if p.is_dir()), reverse=True):
                if not any(sub.iterdir()):
                    sub.rmdir()


def page_text(front: dict[str, Any]) -> str:
    return "---\n" + dump_yaml(front) + "---\n"


def history_document(name: str, cells: list[history.CellHistory]
                     ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A series' `_data/history/<series>.yml` document and its entries for the regressions
    feed (pure: the tests read its shape)."""
    url = history_url(name)
    doc_cells, feed = [], []
    for h in cells:
        cell_id = "-".join(p for p in (h.scenario, h.system, h.load) if p)
        files = {ext: f"{HISTORY_ASSETS}/{name}/{cell_id}.{ext}" for ext in ("svg", "png")}
        label = f"{h.system} at {h.load}" + (f" ({h.scenario})" if h.scenario else "")
        changes = [{"version": c.version, "run": c.run, "url": report_url(c.run),
                    "date": c.date, "kind": c.kind,
                    "size_text": f"{c.size_pct:+.1f} %",
                    "text": f"{METRIC} {fmt_ms(c.before)} → {fmt_ms(c.after)} ms "
                            f"({c.size_pct:+.1f} %) from version {c.version}"}
                   for c in h.changes]
        doc_cells.append({
            "id": cell_id, "label": label,
            "values_caption": f"{label}: median (range) of the repetitions, ms",
            "system": h.system, "load": h.load,
            "scenario": h.scenario,
            "chart": {**files, "alt": f"{METRIC} of {label} over the versions of {name}: "
                                      f"median and range of the repetitions",
                      "width": 700, "height": 400},
            "points": [{"version": p.version, "run": p.run, "url": report_url(p.run),
                        "date": p.date,
                        "value_text": compare.values_text(p.values, p.censored),
                        "flags": ", ".join(f for f, on in (("censored", p.censored),
                                                           ("host busy", p.host_busy)) if on)}
                       for p in h.points],
            "changes": changes})
        for c in changes:
            feed.append({"id": f"{url}#{cell_id}-{c['run']}", "url": f"{url}#{cell_id}",
                         "date": c["date"], "updated": f"{c['date']}T00:00:00Z",
                         "title": f"{name}: {c['kind']} {c['size_text']} in {METRIC} of "
                                  f"{label}, version {c['version']}",
                         "summary": f"{c['text']} (run {c['run']})."})
    doc = {"series": name, "title": f"History of {name}", "url": url, "metric": METRIC,
           "unit": "ms", "method": history.method_text(METRIC),
           "versions": len({p.version for h in cells for p in h.points}),
           "changes": sum(len(c["changes"]) for c in doc_cells), "cells": doc_cells}
    return doc, feed


def reduce(site_root: Path, run_ids: list[str], *, redraw: bool = False,
           known: dict[str, list] | None = None, code: str = "",
           kept: dict[str, dict] | None = None) -> Reduce:
    step = Reduce(site_root, redraw, known, code=code, kept=kept)
    step.run(run_ids)
    return step
