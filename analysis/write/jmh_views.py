"""A JMH run's outputs (issue 13): its `_data/runs/<id>.yml` (the view blocks the jmh-*.html
includes print), its CSV, its report page's front matter and its chart jobs, from
analysis/derive/jmh_report.py's layout, read as plain data (the selections and comparisons are
made there). Every printed text is made here; the includes loop and print.

Blocks (docs/data-format.md, "JMH runs"), each keyed by the `jmh:` entry's id where per file:
`jmh_tables` (the files in order, for the layout), `jmh_methodology`, `jmh_variants`,
`jmh_memory`, `jmh_percentiles`, `jmh_sweeps` (charts by param), `jmh_stat` (any printed
value of a result by row and column, for posts) and `charts` (every chart, by name).
"""
from __future__ import annotations

import csv
import io
import re
from typing import Any

from analysis.derive import jmh_report as jr
from analysis.vocabulary import ENVIRONMENT_LABELS, JMH_MODE_TEXT, fmt_ms, jmh_params_key, labelled
from analysis.write.charts import png_use, run_jobs
from analysis.write.charts.chartset import Chart
from analysis.paths import data_path, jmh_csv_path, report_path, report_url
from analysis.write.charts.plots import color
from analysis.write.run_files import OutputFile, RunFiles
from analysis.write.yaml_text import dump_yaml

GENERATOR = "loadcurve"      # = pages.GENERATOR: the report page is replaced only when ours
JMH_CSV_COLUMNS = ("table", "benchmark", "mode", "params", "threads", "forks", "samples",
                   "score", "error", "ci_low", "ci_high", "unit", "gc_alloc_rate_norm",
                   "gc_alloc_rate", "gc_count", "gc_time", "p50", "p90", "p99", "p999",
                   "p9999", "max", "source")
PERCENTILE_LABELS = {"50.0": "p50", "90.0": "p90", "99.0": "p99", "99.9": "p99.9",
                     "99.99": "p99.99", "100.0": "max"}
GC_HEADERS = {"gc.alloc.rate.norm": "allocated per op", "gc.alloc.rate": "allocation rate",
              "gc.count": "GC count", "gc.time": "GC time"}


# --- numbers and units ----------------------------------------------------------------------

def fmt_score(x: float | None) -> str:
    """About three significant figures, thousands separated: 12,676 / 552.2 / 0.00312."""
    if x is not None and 0 < abs(x) < 1:
        return f"{x:.3g}"
    return "0" if x == 0 else fmt_ms(x)


def unit_text(unit: str | None) -> str:
    """JMH's unit as printed: us -> µs (us/op, ops/us)."""
    if not unit:
        return ""
    return re.sub(r"\bus\b", "µs", unit)


def score_text(result) -> str:
    unit = unit_text(result.unit)
    error = "" if result.error is None else f" ± {fmt_score(result.error)}"
    return f"{fmt_score(result.score)}{error} {unit}".strip()


def ratio_text(entry: jr.Entry) -> str:
    """As printed: 1.00× (baseline), 2.35× faster, 1.80× slower, ≈ (intervals overlap), –."""
    if entry.relation == "baseline":
        return "1.00× (baseline)"
    if entry.relation == "same":
        return "≈"
    if entry.ratio is None or entry.relation == "none":
        return "–"
    text = speed_text(entry.ratio)
    return text if entry.ci_known else f"{text} (no error bar)"


def speed_text(ratio: float) -> str:
    """2.35× faster / 12.4× slower / 3,286× slower: about three significant figures."""
    times = ratio if ratio >= 1.0 else 1.0 / ratio
    text = f"{times:,.0f}" if times >= 100 else f"{times:.1f}" if times >= 10 else f"{times:.2f}"
    return f"{text}× {'faster' if ratio >= 1.0 else 'slower'}"


def pct_text(share: float | None) -> str:
    return "–" if share is None else f"{share * 100:.1f} %"


def better_text(mode: str) -> str:
    return ("higher is better (operations per unit of time)" if jr.HIGHER_IS_BETTER[mode]
            else "lower is better (time per operation)")


def entry_label(table: jr.Table, e: jr.Entry) -> str:
    """'Pekko actors, messages 1000, ringSize 16': a result named by its column and row."""
    row = next(r for r in table.rows if r.id == e.row)
    if table.spec.columns is None:
        return row.label
    return f"{_column_label(table, e.column)}, {row.label}"


def _column_label(table: jr.Table, column: str) -> str:
    return dict(table.columns).get(column, column)


def entry_name(table: jr.Table, e: jr.Entry) -> str:
    """'Actor ring: Pekko actors, messages 1000, ringSize 16' - a result in warnings."""
    return f"{table.spec.title}: {entry_label(table, e)}"


# --- jmh_methodology ------------------------------------------------------------------------

def _distinct(values) -> str:
    seen = [v for v in dict.fromkeys(values) if v not in (None, "")]
    return " / ".join(str(v) for v in seen) or "not recorded"


def _settings(table: jr.Table) -> list[dict[str, str]]:
    ss = [r.settings for r in table.results]

    def iters(n, t):
        return "?" if n is None else f"{n} × {t or '?'}"
    shape = _distinct(f"{s.forks if s.forks is not None else '?'} × "
                      f"({iters(s.warmup_iterations, s.warmup_time)}) × "
                      f"({iters(s.measurement_iterations, s.measurement_time)})" for s in ss)
    jvm = _distinct(" ".join(x for x in (s.vm_name, s.vm_version or s.jdk_version) if x)
                    for s in ss)
    rows = [("JMH version", _distinct(s.jmh_version for s in ss)),
            ("JVM", jvm), ("JVM binary", _distinct(s.jvm for s in ss)),
            ("JVM arguments", _distinct(" ".join(s.jvm_args) or "none" for s in ss)),
            ("Forks × warm-up (iterations × time) × measurement (iterations × time)", shape),
            ("Threads", _distinct(s.threads for s in ss)),
            ("Modes", ", ".join(f"{m} ({JMH_MODE_TEXT[m]})" for m in table.modes)),
            ("Results", f"{len(table.results)} (benchmark × params × mode)")]
    if table.blackhole_modes:
        rows.append(("Blackhole mode", ", ".join(table.blackhole_modes)))
    return [{"label": k, "value": v} for k, v in rows]


def _failed_warning(failures) -> dict[str, Any]:
    """The benchmarks that threw, as JMH's console output shows them."""
    without = sum(1 for _, f in failures if not f.has_result)
    return {"id": "failed",
            "text": (f"Failed: {len(failures)} benchmark(s) threw during the run. JMH has no "
                     f"result for {without} of them; the others' results come only from the "
                     f"iterations before the failure."),
            "items": [f"{f.what()} ({source}, line {f.line})" for source, f in failures]}


def methodology(report: jr.JmhReport) -> dict[str, Any]:
    warnings = []
    checks = (
        ("single_fork", lambda n, m: (
            f"Single fork: {n} of {m} results ran in one JVM fork, so their error bars cannot "
            f"show how much a fresh JVM (JIT decisions, memory layout) moves the score."),
         lambda t, e: entry_name(t, e)),
        ("wide_errors", lambda n, m: (
            f"Error bar wider than {jr.WIDE_ERROR_SHARE * 100:g} % of the score: {n} of {m} "
            f"results; their differences from other results are less certain than the scores "
            f"suggest."),
         lambda t, e: f"{entry_name(t, e)}: ± {pct_text(e.error_share)}"),
        ("no_error", lambda n, m: (
            f"No error bar: {n} of {m} results come from a single measured iteration (JMH "
            f"writes NaN); they cannot be told apart from noise."),
         lambda t, e: entry_name(t, e)),
    )
    total = sum(len(row.entries) for t in report.tables for row in t.rows)
    counts = {}
    if report.failures:
        warnings.append(_failed_warning(report.failures))
    for key, head, item in checks:
        items = [item(t, e) for t in report.tables for e in getattr(t, key)]
        counts[key] = len(items)
        if items:
            warnings.append({"id": key, "text": head(len(items), total), "items": items})
    return {
        "caption_id": f"jmh-methodology-{report.id}",
        "environment": labelled(report.manifest.environment, ENVIRONMENT_LABELS),
        "files": [{"id": t.spec.id, "title": t.spec.title, "json": t.source,
                   "console": t.console_source, "format": t.format,
                   "settings": _settings(t)} for t in report.tables],
        "warnings": warnings,
        "results_text": f"{total:,}",
        # the settings of every result, for prose (jmh-stat.html without row=)
        "jmh_version_text": _distinct(r.settings.jmh_version for t in report.tables
                                      for r in t.results),
        "forks_text": _distinct(r.settings.forks for t in report.tables for r in t.results),
        "warmup_text": _distinct(f"{r.settings.warmup_iterations} × {r.settings.warmup_time}"
                                 for t in report.tables for r in t.results),
        "measurement_text": _distinct(f"{r.settings.measurement_iterations} × "
                                      f"{r.settings.measurement_time}"
                                      for t in report.tables for r in t.results),
        "wide_errors_text": f"{counts['wide_errors']:,}",
        "single_fork_text": f"{counts['single_fork']:,}",
        "wide_share_text": f"{jr.WIDE_ERROR_SHARE * 100:g} %",
        "csv": jmh_csv_path(report.id),
        "manifest": report.manifest_path,
    }


# --- jmh_variants ---------------------------------------------------------------------------

def variants(table: jr.Table, run_id: str) -> dict[str, Any]:
    spec = table.spec
    rows = []
    for row in table.rows:
        cells = []
        for column, _ in table.columns:
            e = row.entries.get(column)
            if e is None:
                cells.append({"column": column, "missing": True, "text": "–", "ratio_text": "",
                              "relation": "none", "best": False, "wide_text": None})
                continue
            cells.append({"column": column, "missing": False, "variant": e.variant,
                          "text": score_text(e.result),
                          "score": e.result.score, "error": e.result.error,
                          "unit": unit_text(e.result.unit),
                          "ratio": None if e.ratio is None else float(f"{e.ratio:.6g}"),
                          "ratio_text": ratio_text(e) if spec.baseline else "",
                          "relation": e.relation, "best": e.best,
                          "wide_text": (f"error ± {pct_text(e.error_share)} of the score"
                                        if e.wide else None)})
        rows.append({"id": row.id, "label": row.label, "mode": row.mode, "cells": cells})
    base = (_column_label(table, spec.baseline) if spec.columns is not None and spec.baseline
            else _baseline_label(table))
    modes = "; ".join(f"{m}: {better_text(m)}" for m in table.modes)
    compared = (f" Each result against {base}"
                f"{' in its row' if spec.columns is not None else ''}: “faster” / “slower” "
                f"where the intervals do not overlap, ≈ where they do." if spec.baseline else "")
    return {
        "caption_id": f"jmh-{run_id}-{spec.id}",
        "caption": (f"{spec.title}: score ± error (half JMH's 99.9 % confidence interval) per "
                    f"{'row' if spec.columns is not None else 'variant'}"
                    f"{', a column per ' + _axis_word(spec) if spec.columns else ''}.{compared} "
                    f"Best of each {'row' if spec.columns is not None else 'mode'} in bold. "
                    f"{modes}."),
        "title": spec.title, "description": spec.description,
        "row_header": _row_header(table), "baseline_text": base,
        "compared": bool(spec.baseline),
        "columns": [{"id": c, "label": label} for c, label in table.columns],
        "rows": rows, "csv": jmh_csv_path(run_id), "json": table.source,
    }


def _baseline_label(table: jr.Table) -> str | None:
    for row in table.rows:
        for e in row.entries.values():
            if e.relation == "baseline":
                return row.label
    return None


def _axis_word(spec) -> str:
    return "method" if spec.columns == jr.BENCHMARK_AXIS else f"value of {spec.columns}"


def _row_header(table: jr.Table) -> str:
    if table.spec.columns is None:
        return "variant"
    names = sorted({k for row in table.rows for k in row.params})
    return ", ".join(names) if table.spec.columns == jr.BENCHMARK_AXIS else "method, params"


# --- jmh_memory -----------------------------------------------------------------------------

def _metric_text(e: jr.Entry, name: str) -> str:
    m = e.result.secondary_metrics.get(name)
    if m is None or m.score is None:
        return "–"
    unit = {"MB/sec": "MB/s"}.get(m.unit or "", m.unit or "")
    if name == "gc.count":
        return f"{m.score:,.0f}"
    return f"{fmt_score(m.score)} {unit}".strip()


def memory(table: jr.Table, run_id: str) -> dict[str, Any] | None:
    entries = {id(e) for e in table.gc_entries}
    if not entries:
        return None
    rows = []
    has_variant = table.spec.columns is not None
    for row in table.rows:
        for column, label in table.columns:
            e = row.entries.get(column)
            if e is None or id(e) not in entries:
                continue
            rows.append({"label": f"{label}, {row.label}" if has_variant else row.label,
                         "values": [_metric_text(e, name) for name in jr.GC_METRICS]})
    return {"caption_id": f"jmh-gc-{run_id}-{table.spec.id}",
            "caption": (f"{table.spec.title}, memory and GC from JMH's -prof gc: bytes "
                        f"allocated per operation, allocation rate, and the number and total "
                        f"time of GC cycles during the measured iterations (all forks; – where "
                        f"none happened)."),
            "headers": ["result"] + [GC_HEADERS[name] for name in jr.GC_METRICS],
            "rows": rows, "csv": jmh_csv_path(run_id)}


# --- jmh_percentiles ------------------------------------------------------------------------

def percentiles(table: jr.Table, run_id: str, chart: dict | None) -> dict[str, Any] | None:
    entries = table.sample_entries
    if not entries:
        return None
    rows = []
    for e in entries:
        p = e.result.primary.percentiles
        unit = unit_text(e.result.unit)
        rows.append({"label": entry_label(table, e),
                     "values": [f"{e.result.primary.samples or 0:,}"]
                     + [f"{fmt_score(p.get(k))} {unit}".strip() for k in PERCENTILE_LABELS]})
    return {"caption_id": f"jmh-pct-{run_id}-{table.spec.id}",
            "caption": (f"{table.spec.title}, sampling mode: time per operation at each "
                        f"percentile of JMH's samples (all forks), and the longest."),
            "headers": ["result", "samples", *PERCENTILE_LABELS.values()], "rows": rows,
            "chart": chart,
            "csv": jmh_csv_path(run_id)}


# --- charts ---------------------------------------------------------------------------------

def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _axis_label(mode: str, unit: str | None) -> str:
    u = unit_text(unit)
    return (f"throughput ({u})" if jr.HIGHER_IS_BETTER[mode] else f"time per operation ({u})")


def chart_set(report: jr.JmhReport) -> list[tuple[Chart, dict[str, Any], dict[str, Any]]]:
    """(chart, its job data, where the page shows it) for every chart of the run."""
    out = []
    for t in report.tables:
        many_modes = len(t.modes) > 1
        for s in t.sweeps:
            parts = [t.spec.id, "sweep", s.param] + [f"{k}-{v}" for k, v in s.fixed.items()]
            name = _slug("-".join(parts + ([s.mode] if many_modes else [])))
            fixed = ", ".join(f"{k} {v}" for k, v in s.fixed.items())
            where = f" at {fixed}" if fixed else ""
            labels = ", ".join(line.label for line in s.lines)
            alt = (f"{t.spec.title}: {_axis_label(s.mode, s.unit)} against {s.param}{where}, "
                   f"one line each for {labels}; error bars: JMH's 99.9 % confidence "
                   f"interval{'; log x axis' if s.log_x else ''}.")
            data = {"title": f"{t.spec.title}: against {s.param}{where}",
                    "xlabel": s.param + (" (log scale)" if s.log_x else ""),
                    "ylabel": _axis_label(s.mode, s.unit), "log_x": s.log_x,
                    "lines": [{"label": line.label, "color": color(line.index), "x": line.x,
                               "y": line.y, "error": line.error} for line in s.lines]}
            out.append((Chart("jmh_sweep", name, alt), data,
                        {"table": t.spec.id, "param": s.param,
                         "caption": f"{t.spec.title}: score against {s.param}{where}"}))
        samples = t.sample_entries
        if samples:
            curves = []
            for n, e in enumerate(samples):
                count = e.result.primary.samples or 0
                points = [(float(k), v, False) for k, v in sorted(
                    e.result.primary.percentiles.items(), key=lambda kv: float(kv[0]))
                    if float(k) >= 100.0 or 1.0 / (1.0 - float(k) / 100.0) <= max(count, 1)]
                curves.append({"label": entry_label(t, e), "color": color(n),
                               "count": max(count, 1), "points": points})
            unit = samples[0].result.unit
            data = {"title": f"{t.spec.title}: time per operation by percentile",
                    "ylabel": f"time per operation ({unit_text(unit)})", "curves": curves}
            alt = (f"{t.spec.title}, sampling mode: time per operation ({unit_text(unit)}) from "
                   f"p0 to the max, for {', '.join(c['label'] for c in curves)}.")
            out.append((Chart("jmh_spectrum", _slug(f"{t.spec.id}-spectrum"), alt), data,
                        {"table": t.spec.id, "param": None,
                         "caption": f"{t.spec.title}: percentile spectrum (sampling mode)"}))
    return out


def chart_jobs(report: jr.JmhReport) -> list[dict[str, Any]]:
    return [{"kind": chart.kind, "data": data, **chart.files(report.id)}
            for chart, data, _ in chart_set(report)]


def _chart_entry(report, chart: Chart, place, sizes) -> dict[str, Any]:
    entry = {**chart.files(report.id), "alt": chart.alt, "caption": place["caption"]}
    if sizes and entry["png"] in sizes:
        entry["width"], entry["height"] = sizes[entry["png"]]
    return entry


# --- the document ---------------------------------------------------------------------------

def run_document(report: jr.JmhReport,
                 sizes: dict[str, tuple[int, int]] | None = None) -> dict[str, Any]:
    from analysis.write.datafiles import SCHEMA_VERSION
    m = report.manifest
    charts = {}
    sweeps: dict[str, dict[str, list]] = {}
    spectra: dict[str, dict] = {}
    for chart, _, place in chart_set(report):
        entry = _chart_entry(report, chart, place, sizes)
        charts[chart.name] = entry
        if place["param"] is not None:
            sweeps.setdefault(place["table"], {}).setdefault(place["param"], []).append(entry)
        else:
            spectra[place["table"]] = entry
    doc: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "kind": "jmh", "id": report.id, "title": m.title, "date": m.date,
        "description": m.description, "tags": list(m.tags), "url": report_url(report.id),
        "manifest": report.manifest_path,
        "environment": labelled(m.environment, ENVIRONMENT_LABELS),
        # the runs index lists systems and load points: here the variants, no load points
        "systems": [{"id": f"{t.spec.id}-{c}", "label": label}
                    for t in report.tables for c, label in t.columns
                    if t.spec.columns is not None] or
                   [{"id": t.spec.id, "label": t.spec.title} for t in report.tables],
        "load_points": [],
        # the layout's order: per file its sections (which blocks it has, which sweeps)
        "jmh_tables": [{"id": t.spec.id, "title": t.spec.title,
                        "description": t.spec.description,
                        "sweep_params": list(sweeps.get(t.spec.id, {})),
                        "memory": memory(t, report.id) is not None,
                        "percentiles": t.spec.id in spectra} for t in report.tables],
        "jmh_methodology": methodology(report),
        "jmh_variants": {t.spec.id: variants(t, report.id) for t in report.tables},
    }
    blocks = {"jmh_memory": {t.spec.id: memory(t, report.id) for t in report.tables},
              "jmh_percentiles": {t.spec.id: percentiles(t, report.id, spectra.get(t.spec.id))
                                  for t in report.tables},
              "jmh_sweeps": sweeps}
    for name, block in blocks.items():
        block = {k: v for k, v in block.items() if v}
        if block:
            doc[name] = block
    doc["jmh_stat"] = {t.spec.id: stat(t) for t in report.tables}
    doc["charts"] = charts
    return doc


def stat(table: jr.Table) -> dict[str, Any]:
    """Row id -> column id -> the printed values of one result, for jmh-stat.html: score,
    error, ratio to the baseline, and `vs_<column>`: against every other column of the row."""
    out: dict[str, Any] = {}
    for row in table.rows:
        by_column = {}
        for column, e in row.entries.items():
            r = e.result
            fields = {"label": _column_label(table, column), "row_label": row.label,
                      "score_text": f"{fmt_score(r.score)} {unit_text(r.unit)}".strip(),
                      "error_text": f"± {fmt_score(r.error)}" if r.error is not None else "–",
                      "error_pct_text": pct_text(e.error_share),
                      "text": score_text(r), "ratio_text": ratio_text(e),
                      "alloc_norm_text": _metric_text(e, "gc.alloc.rate.norm"),
                      "alloc_rate_text": _metric_text(e, "gc.alloc.rate"),
                      "gc_count_text": _metric_text(e, "gc.count"),
                      "gc_time_text": _metric_text(e, "gc.time")}
            for other in row.entries:
                if other != column:
                    ratio, same = row.pairs[(column, other)]
                    fields[f"vs_{other}_text"] = ("≈" if same else
                                                  "–" if ratio is None else speed_text(ratio))
            by_column[column] = fields
        out[row.id] = by_column
    return out


# --- CSV and the page -----------------------------------------------------------------------

def results_csv(report: jr.JmhReport) -> str:
    """One row per benchmark x params x mode, with JMH's full numbers (no display rounding)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(JMH_CSV_COLUMNS)
    for t in report.tables:
        for r in t.results:
            ci = r.primary.confidence if r.primary and r.primary.confidence else (None, None)
            p = r.primary.percentiles if r.primary and r.mode == "sample" else {}
            row = [t.spec.id, r.benchmark, r.mode, jmh_params_key(r.params),
                   r.settings.threads, r.settings.forks,
                   r.primary.samples if r.primary else None, r.score, r.error, *ci, r.unit,
                   *[r.secondary.get(name) for name in jr.GC_METRICS],
                   *[p.get(k) for k in PERCENTILE_LABELS], r.source]
            w.writerow(["" if v is None else (repr(v) if isinstance(v, float) else v)
                        for v in row])
    return buf.getvalue()


def report_front_matter(report: jr.JmhReport) -> dict[str, Any]:
    m = report.manifest
    front = {"layout": "jmh-report", "title": m.title, "run": report.id, "date": m.date,
             "description": m.description, "tags": list(m.tags),
             # /reports/'s columns (pages.run_list_texts): the variants, and no offered load
             "systems_text": ", ".join(dict.fromkeys(label for t in report.tables
                                                     for _, label in t.columns)),
             "loads_text": "none: JMH benchmarks (" + ", ".join(t.spec.title
                                                               for t in report.tables) + ")"}
    charts = chart_set(report)
    if charts:   # og:image and the feed: the first chart's PNG
        front["image"] = "/" + charts[0][0].files(report.id)["png"]
    front["generated_by"] = GENERATOR
    return front


def report_text(report: jr.JmhReport, site_root, doc: dict[str, Any]) -> str:
    """The report page: front matter and the HTML of _layouts/jmh-report.html for `doc`
    (pages.page_text, issue 15)."""
    from analysis.write.pages import page_text
    return page_text(site_root, report_front_matter(report), doc, report_url(report.id))


def run_files(report: jr.JmhReport, site_root, in_feed: bool) -> RunFiles:
    """The JMH kind's `outputs` step (analysis/kinds.py): the CSV, the data document and the
    page; the charts' PNGs as for a load test (write/load_files.py)."""
    jobs = chart_jobs(report)
    doc = run_document(report, run_jobs.pixel_sizes(jobs))
    image = report_front_matter(report).get("image")
    png_use.keep_pngs(jobs, doc, None if in_feed else {image.lstrip("/")} if image else set())
    files = [OutputFile(jmh_csv_path(report.id), results_csv(report)),
             OutputFile(data_path(report.id, in_feed), dump_yaml(doc)),
             OutputFile(report_path(report.id), report_text(report, site_root, doc))]
    return RunFiles(files, jobs, report.warnings + [w for t in report.tables for w in t.warnings],
                    sum(len(t.results) for t in report.tables))
