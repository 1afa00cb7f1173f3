"""A third kind of run, for the tests only (tests/test_kinds.py registers it): a CSV of
name,value pairs, shown as a table and a bar chart. It is what docs/architecture.md, "A new
kind of run", walks through: its four steps use the package's shared parts (run.yml's checks,
paths, YAML, the page renderer) and nothing of the pipeline knows of it.

    runs/<id>/run.yml:  kind: pairs, title, date, description, tags, file (the CSV)
    runs/<id>/<file>:   name,value lines (a header line `name,value` first)
"""
from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from analysis.errors import LoadcurveError, ManifestError
from analysis.kinds import RunKind
from analysis.paths import data_path, repo_relative, report_path, report_url
from analysis.read.checks import Problems, header_at, relpath_at, unknown_keys
from analysis.vocabulary import fmt_number
from analysis.write.pages import GENERATOR, page_text
from analysis.write.run_files import OutputFile, RunFiles
from analysis.write.yaml_text import dump_yaml

NAME = "pairs"
LAYOUT = "pairs-report"
TOP_KEYS = {"kind", "title", "date", "description", "tags", "file"}
CHART_WIDTH, BAR_HEIGHT, LABEL_WIDTH = 480, 22, 140

PAIRS = RunKind(
    name=NAME, label="name,value",
    schema=f"{__name__}:check_manifest", inputs=f"{__name__}:input_files",
    derive=f"{__name__}:derive", outputs=f"{__name__}:outputs",
    layouts=(f"{LAYOUT}.html",), includes=("pairs-table.html", "pairs-chart.html"),
    post_hint="write the post by hand: its includes take run=")

# The templates a site needs for the kind (loops and prints only, as every include).
TEMPLATES = {
    f"_layouts/{LAYOUT}.html": """---
layout: default
---
{%- assign report = site.data.runs[page.run] -%}
<article class="report">
  <h1>{{ report.title | escape }}</h1>
  <p>{{ report.description | escape }}</p>
  {% include pairs-table.html block=report %}
  {% include pairs-chart.html block=report %}
</article>
""",
    "_includes/pairs-table.html": """<table class="pairs">
<caption>{{ include.block.pairs_table.caption | escape }}</caption>
<tr><th>name</th><th>value</th></tr>
{%- for row in include.block.pairs_table.rows %}
<tr><td>{{ row.name | escape }}</td><td>{{ row.value_text }}</td></tr>
{%- endfor %}
</table>
""",
    "_includes/pairs-chart.html": """<figure><img src="{{ include.block.pairs_chart.svg | relative_url }}" alt="{{ include.block.pairs_chart.alt | escape }}"></figure>
""",
}


@dataclass
class PairsManifest:
    run_id: str
    run_dir: Path
    path: Path
    title: str
    date: str
    description: str
    file: str
    tags: list[str] = field(default_factory=list)
    kind: str = NAME

    def resolve(self, relpath: str) -> Path:
        return self.run_dir / relpath


@dataclass
class PairsRun:
    manifest: PairsManifest
    source: str                       # the CSV, repo-relative
    pairs: list[tuple[str, float]]    # in the file's order


def check_manifest(data: dict, text: str, run_dir: Path, path: Path) -> PairsManifest:
    problems = Problems(text)
    unknown_keys(data, TOP_KEYS, (), problems)
    title, date, description, tags = header_at(data, problems)
    file = relpath_at(data, "file", (), problems, run_dir)
    if "file" not in data:
        problems.add(("file",), "required: the CSV of name,value pairs")
    if problems.items:
        raise ManifestError(problems.messages(), path=path)
    return PairsManifest(run_dir.name, run_dir, path, title, date, description, file, tags)


def input_files(manifest: PairsManifest) -> list[str]:
    return [manifest.file]


def derive(manifest: PairsManifest, site_root: Path, map_fn=map) -> PairsRun:
    source = repo_relative(manifest.resolve(manifest.file), site_root)
    rows = list(csv.reader(io.StringIO(manifest.resolve(manifest.file).read_text())))
    if rows[:1] != [["name", "value"]]:
        raise LoadcurveError("the first line must be name,value", path=source)
    pairs = []
    for n, row in enumerate(rows[1:], start=2):
        try:
            name, value = row[0], float(row[1])
        except (IndexError, ValueError):
            raise LoadcurveError(f"line {n}: not a name and a number", path=source) from None
        if not math.isfinite(value) or value < 0:
            raise LoadcurveError(f"line {n}: a bar needs a value of 0 or more", path=source)
        pairs.append((name, value))
    return PairsRun(manifest, source, pairs)


def bar_chart(run: PairsRun) -> str:
    """One horizontal bar a pair, the longest the whole width."""
    top = max((v for _, v in run.pairs), default=0.0) or 1.0
    height = BAR_HEIGHT * len(run.pairs)
    bars = [f'<rect x="{LABEL_WIDTH}" y="{i * BAR_HEIGHT + 3}" '
            f'width="{(CHART_WIDTH - LABEL_WIDTH) * v / top:.1f}" height="{BAR_HEIGHT - 6}"/>'
            f'<text x="{LABEL_WIDTH - 6}" y="{i * BAR_HEIGHT + 16}" text-anchor="end">{name}</text>'
            for i, (name, v) in enumerate(run.pairs)]
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{CHART_WIDTH}" height="{height}" '
            f'viewBox="0 0 {CHART_WIDTH} {height}">' + "".join(bars) + "</svg>\n")


def outputs(run: PairsRun, site_root: Path, in_feed: bool) -> RunFiles:
    m = run.manifest
    chart = f"assets/charts/{m.run_id}/pairs.svg"
    doc: dict[str, Any] = {
        "kind": NAME, "id": m.run_id, "title": m.title, "date": m.date,
        "description": m.description, "tags": list(m.tags), "url": report_url(m.run_id),
        "pairs_table": {"caption": f"{len(run.pairs)} values from {run.source}",
                        "rows": [{"name": name, "value_text": fmt_number(v)}
                                 for name, v in run.pairs]},
        "pairs_chart": {"svg": chart, "alt": f"{m.title}: one bar per name"},
    }
    front = {"layout": LAYOUT, "title": m.title, "run": m.run_id, "date": m.date,
             "description": m.description, "tags": list(m.tags), "generated_by": GENERATOR}
    files = [OutputFile(chart, lambda: bar_chart(run).encode()),
             OutputFile(data_path(m.run_id, in_feed), dump_yaml(doc)),
             OutputFile(report_path(m.run_id),
                        page_text(site_root, front, doc, report_url(m.run_id)))]
    return RunFiles(files, chart_jobs=[], cells=len(run.pairs))
