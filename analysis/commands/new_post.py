"""Draft a methodology post for a run into _drafts/ (never overwrites a draft).

`python -m analysis new-post RUN-ID` reads runs/RUN-ID/run.yml and writes
_drafts/<date>-<run-id>.md: front matter, the methodology filled in from the manifest, the
load-curve table, ceiling and charts as Liquid includes that read _data/runs/RUN-ID.yml, and
TODO markers where the author writes the prose. Run `python -m analysis build` so the data
exists before previewing the draft (`jekyll serve --drafts`).
"""
from __future__ import annotations

import argparse
import html
from pathlib import Path
from typing import Any

import jinja2

from analysis import atomic
from analysis.aggregate import rate_per_client
from analysis.write.datafiles import dump_yaml, fmt_number, labelled
from analysis.write.paths import chart_path
from analysis.errors import LoadcurveError
from analysis.read.manifest import ENVIRONMENT_LABELS, ID_RE, load_manifest

TEMPLATE_DIR = Path(__file__).resolve().parents[1] / "write" / "templates"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_id", metavar="RUN-ID", help="a folder name under --runs")
    parser.add_argument("--runs", default="runs", help="folder of run folders (default: runs)")
    parser.add_argument("--drafts", default="_drafts", help="where drafts go (default: _drafts)")


def text(value: Any) -> str:
    """A manifest string made inert in a Markdown post: HTML escaped, and Liquid's braces as
    entities so `{{ site }}` or `{% include %}` in a title prints instead of running."""
    escaped = html.escape(str(value), quote=True)
    return escaped.replace("{", "&#123;").replace("}", "&#125;")


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
        # Liquid owns {{ }} and {% %} in the output; Jinja2 uses other delimiters.
        block_start_string="<%", block_end_string="%>",
        variable_start_string="<<", variable_end_string=">>",
        comment_start_string="<#", comment_end_string="#>",
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True,
        autoescape=False)
    env.filters["text"] = text
    return env


def render_draft(manifest) -> str:
    front = {"layout": "post", "title": manifest.title, "date": manifest.date,
             "description": manifest.description, "tags": list(manifest.tags),
             "run": manifest.run_id,
             "image": "/" + chart_path(manifest.run_id, "load-curve", "png")}
    reps = max(c.repetition for c in manifest.cells)
    env_items = [f"{item['label']}: {text(item['value'])}"
                 for item in labelled(manifest.environment, ENVIRONMENT_LABELS)]
    return environment().get_template("post.md.j2").render(
        front_matter=dump_yaml(front), run_id=manifest.run_id,
        service_time_ms=manifest.service_time_ms and fmt_number(manifest.service_time_ms),
        systems=manifest.systems, load_generator=manifest.load_generator,
        load_points=[{"id": lp.id, "offered": fmt_number(lp.offered_rate), "clients": lp.clients,
                      "per_client": lp.clients and fmt_number(round(rate_per_client(lp.offered_rate, lp.clients), 3)),
                      "duration_s": fmt_number(lp.duration_s)} for lp in manifest.load_points],
        environment=env_items, repetitions=reps)


def draft_path(drafts: Path, manifest) -> Path:
    return drafts / f"{manifest.date}-{manifest.run_id}.md"


def run(args: argparse.Namespace) -> int:
    if not ID_RE.match(args.run_id):
        raise LoadcurveError(f"{args.run_id!r} is not a run id (a-z, 0-9, '-' and '_')")
    runs = Path(args.runs)
    run_dir = runs / args.run_id
    if not run_dir.is_dir():
        raise LoadcurveError("no such run folder", path=run_dir,
                             hint=f"the run ids are the folder names in {runs}")
    manifest = load_manifest(run_dir, runs)
    path = draft_path(Path(args.drafts), manifest)
    try:
        atomic.create_text(path, render_draft(manifest))
    except FileExistsError:
        raise LoadcurveError("a draft already exists; not overwriting it", path=path,
                             hint="edit it, or move it away to draft again") from None
    print(path)
    return 0
