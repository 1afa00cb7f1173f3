"""-> `_drafts/<date>-<run-id>.md`: a methodology post drafted from the run model's shape (front
matter, methodology from run.yml, includes for every table and chart, TODO where prose goes)."""
from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import jinja2

from analysis.model import Run
from analysis.vocabulary import (ENVIRONMENT_LABELS, LOAD_GENERATOR_LABELS, closed_load_text,
                                 fmt_number, labelled, load_order)
from analysis.write.yaml_text import dump_yaml
from analysis.paths import chart_path

TEMPLATE_DIR = Path(__file__).resolve().parent / "templates"


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


def render_draft(run: Run) -> str:
    """The draft post for a run (its shape: no statistics are needed to draft)."""
    # a run with scenarios (issue 11): the summary table, then a section per scenario
    scenario = run.scenarios[0]
    scenarios = [{"id": sc.id, "label": sc.label, "description": sc.description,
                  "loads": [lp.id for lp in sc.load_points]}
                 for sc in run.scenarios] if run.has_scenarios else []
    curve = f"{scenario.id}-load-curve" if scenarios else "load-curve"
    points = scenario.load_points if not scenarios else sorted(
        {lp.id: lp for sc in run.scenarios for lp in sc.load_points}.values(),
        key=load_order)
    front = {"layout": "post", "title": run.title, "date": run.date,
             "description": run.description, "tags": list(run.tags), "run": run.id,
             "image": "/" + chart_path(run.id, curve, "png")}
    env_items = [f"{item['label']}: {text(item['value'])}"
                 for item in labelled(run.environment, ENVIRONMENT_LABELS)]
    return environment().get_template("post.md.j2").render(
        front_matter=dump_yaml(front), run_id=run.id,
        service_time_ms=(not scenarios and scenario.service_time_ms
                         and fmt_number(scenario.service_time_ms)),
        scenarios=scenarios,
        systems=scenario.systems,
        # every key the template asks about, None where run.yml has none (schema 2 has no
        # connections: StrictUndefined would fail the draft)
        load_generator={**dict.fromkeys(LOAD_GENERATOR_LABELS), **run.load_generator}
        if run.load_generator else {},
        load_points=[_load_point(lp) for lp in points],
        environment=env_items, repetitions=run.repetitions)


def _load_point(lp) -> dict:
    """A load point as the draft lists it: its offered rate (and clients), or a closed loop's
    connections (`load_text`, issue 23)."""
    if lp.closed:
        return {"id": lp.id, "load_text": closed_load_text(lp), "offered": None,
                "clients": None, "per_client": None,
                # (a draft is made before any file is read: a duration from the files is not known)
                "duration_text": "the duration its files state" if lp.duration_s is None
                else f"{fmt_number(lp.duration_s)} s"}
    return {"id": lp.id, "load_text": None, "offered": fmt_number(lp.offered_rate), "clients": lp.clients,
            "per_client": lp.clients and fmt_number(round(lp.rate_per_client, 3)),
            "duration_text": f"{fmt_number(lp.duration_s)} s"}


def draft_path(drafts: Path, run: Run) -> Path:
    return drafts / f"{run.date}-{run.id}.md"
