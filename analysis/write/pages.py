"""-> `_reports/<run-id>.md`: one generated report page per run (front matter only).

The page carries only what Jekyll and jekyll-seo-tag need before the data is read (layout, title,
run id, date, description, tags, image); the layout reads every number from
`_data/runs/<run-id>.yml`. Front matter is dumped by PyYAML from plain data, so any title is a
string value. Generated pages carry `generated_by: loadcurve`; only pages with that key are
ever replaced or removed, so a page written by a person in `_reports/` is never touched.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from analysis import atomic
from analysis.model import Run
from analysis.write.yaml_text import dump_yaml
from analysis.write.paths import REPORTS_DIR, chart_path, report_path

GENERATOR = "loadcurve"


def report_front_matter(run: Run) -> dict[str, Any]:
    return {
        "layout": "report",
        "title": run.title,
        "run": run.id,
        "date": run.date,
        "description": run.description,
        "tags": list(run.tags),
        # jekyll-seo-tag's og:image and the feed: a PNG, site-relative
        "image": "/" + chart_path(run.id, "load-curve", "png"),
        "generated_by": GENERATOR,
    }


def report_text(run: Run) -> str:
    return ("---\n" + dump_yaml(report_front_matter(run)) + "---\n")


def write_report(site_root: Path, run: Run) -> str:
    rel = report_path(run.id)
    atomic.write_text(Path(site_root) / rel, report_text(run))
    return rel


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
    return [p for p in sorted(folder.glob("*.md"))
            if p.is_file() and not p.is_symlink() and p.stem not in run_ids and is_generated(p)]
