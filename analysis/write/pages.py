"""-> `_reports/<run-id>.md`: one generated report page per run (front matter only).

The page carries only what Jekyll and jekyll-seo-tag need before the data is read (layout, title,
run id, date, description, tags, image); the layout reads every number from
`_data/runs/<run-id>.yml`; a run with scenarios also gets `_reports/<run-id>/<scenario>.md`, one
page per scenario. Front matter is dumped by PyYAML from plain data, so any title is a
string value. Generated pages carry `generated_by: loadcurve`; only pages with that key are
ever replaced or removed, so a page written by a person in `_reports/` is never touched.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from analysis import atomic
from analysis.model import Run, Scenario
from analysis.write.yaml_text import dump_yaml
from analysis.write.paths import (REPORTS_DIR, chart_path, report_path, scenario_report_path,
                                  scenario_url)

GENERATOR = "loadcurve"


def report_front_matter(run: Run) -> dict[str, Any]:
    # a run with scenarios: its first scenario's load curve (chartset.py's prefixed name)
    first = run.scenarios[0].id if run.has_scenarios else None
    return {
        "layout": "report",
        "title": run.title,
        "run": run.id,
        "date": run.date,
        "description": run.description,
        "tags": list(run.tags),
        # jekyll-seo-tag's og:image and the feed: a PNG, site-relative
        "image": "/" + chart_path(run.id, f"{first}-load-curve" if first else "load-curve", "png"),
        "generated_by": GENERATOR,
    }


def scenario_front_matter(run: Run, scenario: Scenario) -> dict[str, Any]:
    """A scenario's page of a run with scenarios (issue 11): no tags, so the feeds and the tag
    pages list the run's report only; `scenario` keeps it out of the list of runs."""
    return {
        "layout": "scenario",
        "title": f"{scenario.label} - {run.title}",
        "run": run.id,
        "scenario": scenario.id,
        "date": run.date,
        "description": scenario.description or run.description,
        "permalink": scenario_url(run.id, scenario.id),
        "image": "/" + chart_path(run.id, f"{scenario.id}-load-curve", "png"),
        "generated_by": GENERATOR,
    }


def og_images(run: Run) -> set[str]:
    """The charts pages use as og:image (site-relative PNG paths): png_use draws these."""
    fronts = [report_front_matter(run)] + [scenario_front_matter(run, sc) for sc in run.scenarios
                                           if run.has_scenarios]
    return {front["image"].lstrip("/") for front in fronts}


def report_text(run: Run) -> str:
    return ("---\n" + dump_yaml(report_front_matter(run)) + "---\n")


def write_report(site_root: Path, run: Run) -> list[str]:
    """The run's report page and, for a run with scenarios, one page per scenario."""
    rel = report_path(run.id)
    atomic.write_text(Path(site_root) / rel, report_text(run))
    written = [rel]
    for scenario in run.scenarios if run.has_scenarios else ():
        rel = scenario_report_path(run.id, scenario.id)
        atomic.write_text(Path(site_root) / rel,
                          "---\n" + dump_yaml(scenario_front_matter(run, scenario)) + "---\n")
        written.append(rel)
    return written


def is_generated(path: Path) -> bool:
    """True for a page this tool wrote: front matter with `generated_by: loadcurve`."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if not text.startswith("---\n"):
        return False
    end = text.find("\n---\n", 4)
    if end < 0:
        return False
    try:
        front = yaml.safe_load(text[4:end])
    except yaml.YAMLError:
        return False
    return isinstance(front, dict) and front.get("generated_by") == GENERATOR


def stale_reports(site_root: Path, run_ids: set[str]) -> list[Path]:
    """Generated report pages whose run no longer exists (pages written by people excluded)."""
    folder = Path(site_root) / REPORTS_DIR
    if not folder.is_dir():
        return []
    # _reports/<run>.md, and the scenario pages _reports/<run>/<scenario>.md
    pages = [(p, p.stem) for p in folder.glob("*.md")] + \
        [(p, p.parent.name) for p in folder.glob("*/*.md")]
    return [p for p, run_id in sorted(pages)
            if p.is_file() and not p.is_symlink() and run_id not in run_ids and is_generated(p)]
