"""The seam between Python and Liquid: the vocabulary is declared once and documented, the
includes only loop and print fields that the data files have, and every block the data file
writes is read by some include or layout."""
from __future__ import annotations

import json
import re

import pytest
import yaml

from analysis import vocabulary
from analysis.write import datafiles
from tests.conftest import REPO
from analysis.paths import find_data
from tests.helpers import SCENARIO_RUN, URL_RUN, closed_copy, wrk_run, result

DOCS = (REPO / "docs" / "data-format.md").read_text()
INCLUDES = sorted((REPO / "_includes").glob("*.html"))
TEMPLATES = INCLUDES + sorted((REPO / "_layouts").glob("*.html"))
# Data files written by the analysis from real logs: the demo run and the golden fixture runs.
DATA = [yaml.safe_load(p.read_text()) for p in
        (find_data(REPO, "pool-vs-virtual"),
         REPO / "tests" / "golden" / "site" / "oracle-demo.yml",
         REPO / "tests" / "golden" / "site" / "bench-short.yml")]
# A run with scenarios (issue 11): its document, and each scenario's block, which the includes
# given scenario=ID read as they read a run's document.
SCENARIO_DOC = yaml.safe_load((REPO / "tests" / "golden" / "site" / "scenarios-demo.yml").read_text())
SCENARIO_BLOCKS = list(SCENARIO_DOC["scenarios"].values())



def _history_doc() -> dict:
    """A series' history document (corpus_pages.history_document) of the synthetic series."""
    from analysis.corpus import cell_table, history
    from analysis.write.corpus_pages import history_document
    from tests import series_gen
    rows = cell_table.frame(series_gen.cell_rows(1, versions=8))
    return history_document("synthetic", history.series_history(rows))[0]


# The corpus-wide documents (issue 12): the demo's comparison and a synthetic history; and a
# JMH run's (issue 13: the golden of the fixture run, whose files hold every mode).
DATA += [yaml.safe_load((REPO / "_data" / "comparisons" / "pool-vs-virtual.yml").read_text()),
         _history_doc(), SCENARIO_DOC, *SCENARIO_BLOCKS,
         yaml.safe_load((REPO / "tests" / "golden" / "jmh" / "jmh-short.yml").read_text())]



def _closed_loop_docs() -> list[dict]:
    """Documents of closed-loop runs (issue 23: connections instead of offered rates), read
    from wrk's real outputs and from the scenario fixture: the fields only they carry."""
    import tempfile
    from pathlib import Path
    from analysis.derive.analyse import analyse_run
    from analysis.read.manifest import load_manifest
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp)
        wrk_run(site, "wrk-closed", "1")
        closed_copy(SCENARIO_RUN, site / "runs" / "scen-closed",
                     {"r50": 5, "r100": 10, "r200": 20})
        docs = [datafiles.run_document(analyse_run(load_manifest(site / "runs" / run_id,
                                                                 site / "runs"), site))
                for run_id in ("wrk-closed", "scen-closed")]
    return docs + list(docs[1]["scenarios"].values())


DATA += _closed_loop_docs()
# issue 25: a run whose two sides are scenarios of one system (its `flame_diffs` block)
DATA.append(yaml.safe_load(find_data(REPO, "fanout-curve").read_text()))


def _url_run_doc() -> dict:
    """The document of a run measured by URL with --find-knee (issue 24): its knee search and
    settle rule, which only such a run has."""
    import tempfile
    from pathlib import Path
    from analysis.derive.analyse import analyse_run
    from analysis.read.manifest import load_manifest
    with tempfile.TemporaryDirectory() as tmp:
        return datafiles.run_document(analyse_run(load_manifest(URL_RUN, URL_RUN.parent), Path(tmp)))


DATA.append(_url_run_doc())


def _warmup_run_doc() -> dict:
    """The URL run's document with run.yml's method.warmup (issue 32), which runs recorded
    before it lack: one entry per cell repetition, as bench/manifest.py writes it from the
    counts files (these cells had a fixed warm-up of their counts' warmup_s)."""
    import shutil
    import tempfile
    from pathlib import Path
    from analysis.derive.analyse import analyse_run
    from analysis.read.manifest import load_manifest
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp) / "url-knee"
        shutil.copytree(URL_RUN, run_dir)
        run = yaml.safe_load((run_dir / "run.yml").read_text())
        cells = [{"cell": c["counts"].removesuffix(".counts.json"),
                  "used_s": json.loads((run_dir / c["counts"]).read_text())["warmup_s"],
                  "reached": False} for c in run["cells"]]
        run["method"]["warmup"] = {"mode": "fixed", "min_s": cells[0]["used_s"],
                                   "max_s": cells[0]["used_s"], "rule": "fixed", "cells": cells}
        (run_dir / "run.yml").write_text(yaml.safe_dump(run, sort_keys=False))
        return datafiles.run_document(analyse_run(load_manifest(run_dir, run_dir.parent),
                                                  Path(tmp) / "out"))


DATA.append(_warmup_run_doc())

# What an include parameter holds (the include passes a piece of a block down).
PARAMS = {
    ("history-cell.html", "cell"): "cells[]",
    ("method.html", "method"): "method",
    ("environment-differences.html", "diffs"): "environment_differences",
    ("load-curve-cell.html", "cell"): "load_curve_table.rows[].cells[]",
    ("load-curve-note.html", "table"): "load_curve_table",
    ("load-curve-alone.html", "table"): "load_curve_table",
    ("jvm-attribution.html", "hotspots"): "jvm_hotspots",
    ("jvm-methods.html", "system"): "jvm_hotspots.systems[]",
    ("chart.html", "chart"): "charts.spectrum[]",
    ("flame-figure.html", "graph"): "flame_graphs.graphs.*.*.*",
    ("flame-graphs.html", "graphs"): "flame_graphs",
    ("flame-diffs.html", "diffs"): "flame_diffs",
    ("chart-set.html", "charts"): "charts.spectrum",
    ("jmh-values-table.html", "tbl"): "jmh_memory.*",
    ("summary-order.html", "table"): "summary_table",
    ("summary-order.html", "order"): "summary_table.orders[]",
    ("summary-cell.html", "cell"): "summary_table.orders[].groups[].rows[].cells[]",
}


def test_docs_name_every_statistic_column_and_block():
    for name, _, label in vocabulary.PERCENTILES:
        assert f"{name}_ms" in DOCS and f"{name}_text" in DOCS, name
    for key in vocabulary.LATENCY_KEYS:
        assert key in DOCS, key
    assert ",".join(vocabulary.SERIES_COLUMNS) in DOCS
    assert ",".join(vocabulary.TABLE_CSV_COLUMNS) in DOCS
    assert vocabulary.LATENCY_UNIT in DOCS and " / ".join(vocabulary.TABLE_LATENCY) in DOCS
    for text_name in vocabulary.CELL_TEXT_FIELDS.values():
        assert f"{text_name}_text" in DOCS, text_name
    for key in list(vocabulary.ENVIRONMENT_LABELS) + list(vocabulary.LOAD_GENERATOR_LABELS):
        assert f"{key}:" in DOCS, key
    assert f"schema_version: {datafiles.SCHEMA_VERSION}" in DOCS
    for block in list(DATA[0]) + list(SCENARIO_DOC) + list(SCENARIO_BLOCKS[0]):
        assert f"\n{block}:" in DOCS or f"\n  {block}:" in DOCS or f"\n    {block}:" in DOCS, \
            f"docs/data-format.md does not describe `{block}`"


def test_docs_name_every_jmh_block_and_column():
    from analysis.write import jmh_views
    assert ",".join(jmh_views.JMH_CSV_COLUMNS) in DOCS
    for block, value in DATA[-1].items():
        if block.startswith("jmh_"):
            assert f"\n{block}:" in DOCS, f"docs/data-format.md does not describe `{block}`"


def test_front_matter_fields_are_the_vocabularys(tmp_path):
    from analysis.write import pages
    assert tuple(pages.report_front_matter(result(tmp_path))) == vocabulary.REPORT_FRONT_MATTER


@pytest.mark.parametrize("path", INCLUDES, ids=lambda p: p.name)
def test_includes_only_loop_and_print(path):
    text = path.read_text()
    lines = text.count("\n")
    # seo-report.html is jekyll-seo-tag's template for one kind of page, reproduced byte for
    # byte (issue 15): seo's 24 output lines and the string filters seo applies, no data
    limit = 42 if path.name == "seo-report.html" else 30
    assert lines <= limit, f"{path.name}: {lines} lines (the limit is {limit})"
    for banned in (r"\|\s*where", r"\|\s*where_exp", r"\|\s*split", r"{%-?\s*case\b",
                   r"\|\s*replace", r"\|\s*plus", r"\|\s*append"):
        if path.name == "stat.html" and banned == r"\|\s*append":
            continue     # field=p99 -> the cell's p99_text: a key name, not text of the data
        assert not re.search(banned, text), f"{path.name} uses {banned}"


CAPTION = re.compile(r"<(caption|figcaption)\b[^>]*>(.*?)</\1>", re.S)


@pytest.mark.parametrize("path", INCLUDES, ids=lambda p: p.name)
def test_captions_come_from_view_blocks(path):
    """A caption is English the view code writes (issue 26), so the includes print it: with
    the Liquid and the links taken out, no word is left. (summary-order.html joins the table's
    caption and the order's label with "Rows".)"""
    for _, caption in CAPTION.findall(path.read_text()):
        words = re.sub(r"{{.*?}}|{%.*?%}|<a\b.*?</a>", "", caption, flags=re.S)
        if path.name == "summary-order.html":
            words = words.replace(" Rows ", "")
        assert not re.search(r"[A-Za-z]", words), f"{path.name}: caption text {words.strip()!r}"


def _resolve(path: str, doc) -> list:
    """The values at a dotted path with [] for list elements (and dict values for maps keyed
    by ids); [] when nothing is there."""
    values = [doc]
    for part in path.split("."):
        many = part.endswith("[]")
        key = part[:-2] if many else part
        nxt = []
        for v in values:
            if isinstance(v, dict) and key in v:
                nxt.append(v[key])
            elif key == "*" and isinstance(v, dict):
                nxt.extend(v.values())
        if many:
            nxt = [x for v in nxt for x in (v if isinstance(v, list) else v.values())]
        values = nxt
    return values


def _printed_fields(path) -> list[tuple[str, str]]:
    """(data path, expression) of each `var.field` an include prints or tests, with `var`
    resolved through its assign / for / include parameter."""
    text = path.read_text()
    names: dict[str, str] = {}
    for name, param in re.findall(r"assign (\w+) = include\.(\w+)", text):
        names[name] = PARAMS.get((path.name, param), "")
    # block=: the run's document (a scenario's block has the same view blocks); a block keyed
    # by an include parameter (jmh_variants[include.table]): any key (`*`)
    for name, rest in re.findall(r"assign (\w+) = include\.block((?:\.\w+|\[include\.\w+\])*)",
                                 text):
        names[name] = re.sub(r"\[include\.\w+\]", ".*", rest).lstrip(".")
    for param in re.findall(r"include\.(\w+)\.", text):
        names[f"include.{param}"] = PARAMS.get((path.name, param), "")
    changed = True
    while changed:
        changed = False
        for name, source in re.findall(r"for (\w+) in ([\w.]+)", text):
            head, _, tail = source.partition(".")
            if head == "include":
                param, _, tail = tail.partition(".")
                head = f"include.{param}"
            if head in names and name not in names:
                names[name] = ".".join(x for x in (names[head], tail) if x) + "[]"
                changed = True
    out = []
    for expr in re.findall(r"(?:{{|{%-?\s*(?:if|elsif|unless))\s*([\w.]+)", text):
        head, _, tail = expr.rpartition(".")
        base = head.split(".")[0]
        key = "include." + head.split(".")[1] if base == "include" and "." in head else base
        if key not in names or not tail or tail in ("size", "first", "last"):
            continue
        prefix = names[key]
        rest = head[len(key):].lstrip(".")
        out.append((".".join(x for x in (prefix, rest, tail) if x), expr))
    return out


@pytest.mark.parametrize("path", INCLUDES, ids=lambda p: p.name)
def test_every_field_an_include_prints_is_in_the_data(path):
    for data_path, expr in _printed_fields(path):
        parent, _, field = data_path.rpartition(".")
        holders = [v for doc in DATA for v in _resolve(parent, doc) if isinstance(v, dict)] \
            if parent else DATA
        if not holders and parent.endswith("[]"):
            lists = [v for doc in DATA for v in _resolve(parent[:-2], doc)]
            if lists and not any(lists):
                continue     # a list that is empty in every data file (no missing .hlog)
        assert holders, f"{path.name}: `{expr}` -> {parent}: no such block in the data"
        assert any(field in h for h in holders), f"{path.name}: `{expr}`: no `{field}` in {parent}"


def test_every_block_is_read_by_some_include_or_layout():
    read = "\n".join(p.read_text() for p in TEMPLATES)
    for doc in DATA:
        if doc in SCENARIO_BLOCKS:
            continue     # (systems, load_points, cells: read by stat.html, as a run's are)
        for key, value in doc.items():
            if isinstance(value, (dict, list)):
                assert re.search(rf"\.{key}\b", read), f"block `{key}` is read by no template"


def test_the_printed_texts_come_from_the_vocabularys_formats():
    for doc in DATA[:3]:   # the runs (comparison and history documents have no cells map)
        for by_system in doc["cells"].values():
            for cell in by_system.values():
                assert cell["p99_text"] == vocabulary.fmt_censored(
                    cell["p99_ms"], cell.get("p99_at_least_ms"))
                assert cell["count_text"] == vocabulary.fmt_count(cell["count"])
    table = DATA[0]["load_curve_table"]
    assert table["latency_header"] == "p50 / p95 / p99 / p99.9 / max"
    assert [x["name"] for x in table["rows"][0]["cells"][0]["latency"]] == \
        list(vocabulary.TABLE_LATENCY)
