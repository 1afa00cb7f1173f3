"""-> `_reports/<run-id>.html`: one generated report page per run.

The page is front matter (what Jekyll and jekyll-seo-tag need: title, run id, date,
description, tags, image) and the report's HTML, rendered here from the run's data document by
the site's own `_layouts/report.html` and includes (write/liquid_pages.py, issue 15): Jekyll
only wraps it in `_layouts/default.html`. A run with scenarios also gets
`_reports/<run-id>/<scenario>.html`, one page per scenario. Front matter is dumped by PyYAML from
plain data, so any title is a string value. Generated pages carry `generated_by: loadcurve`;
only pages with that key are ever replaced or removed, so a page written by a person in
`_reports/` is never touched (such a page can still use `layout: report`: the layout reads
`_data/runs/<run-id>.yml`, there when some post or page names the run, png_use.runs_in_posts).
"""
from __future__ import annotations

import contextlib
import re
from concurrent.futures import Future
from pathlib import Path
from typing import Any, Callable

import yaml

from analysis.model import Run, Scenario
from analysis.vocabulary import closed_load_text, fmt_number
from analysis.write.yaml_text import dump_yaml
from analysis.paths import (REPORTS_DIR, chart_path, report_path, report_url,
                                  scenario_report_path, scenario_url)

GENERATOR = "loadcurve"


def report_front_matter(run: Run) -> dict[str, Any]:
    # a run with scenarios: its first scenario's load curve (chartset.py's prefixed name)
    first = run.scenarios[0].id if run.has_scenarios else None
    return {
        "layout": "report",
        "title": run.title,
        "run": run.id,
        "date": run.date,
        "description": run.description + _closed_loop_note(run),
        "tags": list(run.tags),
        **run_list_texts(run),
        # jekyll-seo-tag's og:image and the feed: a PNG, site-relative
        "image": "/" + chart_path(run.id, f"{first}-load-curve" if first else "load-curve", "png"),
        "generated_by": GENERATOR,
    }


def run_list_texts(run: Run) -> dict[str, str]:
    """What /reports/ prints of a run (issue 34), in the report's front matter so that every
    run has it, not only the runs a post names (whose document Jekyll reads): the systems, and
    the loads, per scenario when the scenarios' loads differ."""
    systems = dict.fromkeys(s.label for sc in run.scenarios for s in sc.systems)
    per_scenario = [(sc.label, _loads_text(sc.load_points)) for sc in run.scenarios]
    if len({text for _, text in per_scenario}) == 1:
        loads = per_scenario[0][1]
    else:
        loads = "; ".join(f"{label}: {text}" for label, text in per_scenario)
    return {"systems_text": ", ".join(systems), "loads_text": loads}


def _loads_text(load_points) -> str:
    """'25, 50, 100 req/s offered', '10, 50 connections', or both, in run.yml's order."""
    rates = [fmt_number(lp.offered_rate) for lp in load_points if lp.offered_rate is not None]
    closed = [lp for lp in load_points if lp.offered_rate is None]
    parts = [f"{', '.join(rates)} req/s offered"] if rates else []
    if closed:
        words = closed_load_text(closed[-1]).split(" ", 1)[1]
        parts.append(f"{', '.join(f'{lp.connections:,}' for lp in closed)} {words}")
    return "; ".join(parts)


def _closed_loop_note(run: Run) -> str:
    """Said in the description too, which the tag feeds carry as the report's summary: some
    cells were read from a closed-loop tool's files (issue 23)."""
    closed = sorted({c.imported.tool for c in run.cells()
                     if c.imported and c.imported.load_model == "closed"})
    if not closed:
        return ""
    return (f" Closed loop ({', '.join(closed)}): coordinated omission, the latencies leave "
            f"out the time requests waited to be sent.")


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


# `head: seo-report`: _layouts/default.html prints the page's SEO tags with
# _includes/seo-report.html, not jekyll-seo-tag's {% seo %} (the same bytes, ~2 ms a page less).
# That include joins the site's absolute root and the page's path as strings, which equals
# seo's URL normalisation only for paths of these characters (run and scenario ids, chart files).
HEAD = "seo-report"
PLAIN_PATH = re.compile(r"/[a-z0-9_./-]*")


# A line that seo's filters (markdownify | strip_html | normalize_whitespace | escape_once) give
# back as it is, so the include can print it without Kramdown (~1 ms a distinct title, 1.8 of
# the ~12 CPU s of a 1,000-run build's Jekyll step). It starts with an ASCII letter (no list,
# header, quote or code block), has single spaces and no other white space, and none of what
# Kramdown's span syntax, typographic symbols and smart quotes act on, or escape_once would change.
# tests/test_fast_templates.py holds it against Jekyll's own filters.
PLAIN_TEXT = re.compile(r"(?!.*(?:~~|\$\$|\{:|--|\.\.\.))[A-Za-z](?:[^\s*_`\[<>&\\'\"|]| (?=\S))*")


def is_plain_text(value: Any) -> bool:
    return isinstance(value, str) and PLAIN_TEXT.fullmatch(value) is not None


def seo_head(front: dict[str, Any], url: str) -> dict[str, Any]:
    """The front-matter keys that give the page the fast head, when the include prints what
    seo would for it (a title, date and description, a plain URL and image path), and tell it
    which of the title and description it may print without Kramdown."""
    paths = [url] + ([front["image"]] if "image" in front else [])
    plain = all(isinstance(p, str) and PLAIN_PATH.fullmatch(p) and "/." not in p for p in paths)
    complete = all(front.get(key) for key in ("title", "date", "description"))
    if not (plain and complete):
        return {}
    return {"head": HEAD, **{f"plain_{key}": True for key in ("title", "description")
                             if is_plain_text(front[key])}}


# Where the pages' HTML is rendered: None in this process; else a function that takes
# (render_html, *its arguments) and returns a future of its result. A build adding one run
# lends its workers (pipeline/runner.py), which sit idle while this process writes the run's
# other files: the render with python-liquid's import and the templates' parse (~0.3 CPU s)
# leaves the build's critical path.
_render_on: Callable[..., Future] | None = None


@contextlib.contextmanager
def rendering_on(submit: Callable[..., Future]):
    """Pages made inside this block are rendered by `submit` (Executor.submit's signature)
    and their text is a function that waits for the HTML (run_files.Content)."""
    global _render_on
    previous, _render_on = _render_on, submit
    try:
        yield
    finally:
        _render_on = previous


def render_html(site_root: Path, layout: str, page: dict[str, Any], run_id: str,
                doc: dict[str, Any]) -> str:
    # (imported here: every build asks this module which pages are generated, stale_reports,
    # and only one that renders a page needs python-liquid)
    from analysis.write import liquid_pages
    return liquid_pages.render_page(site_root, layout, page, run_id, doc)


def page_text(site_root: Path, front: dict[str, Any], doc: dict[str, Any],
              url: str) -> str | Callable[[], str]:
    """A generated page: front matter, then the HTML its layout gives for the run's document
    (a function that waits for it, inside rendering_on). The front matter names Jekyll's plain
    `default` layout; `layout` names the one rendered."""
    args = (site_root, front["layout"], {**front, "url": url}, front["run"], doc)
    # (Jekyll 4 then skips Liquid on the page; 3.10 ignores the key and finds none to run)
    head = "---\n" + dump_yaml({**front, "layout": "default", **seo_head(front, url),
                                "render_with_liquid": False}) + "---\n"
    if _render_on is None:
        return head + render_html(*args)
    html = _render_on(render_html, *args)
    # (a template's BuildError, raised over there, is raised here by result())
    return lambda: head + html.result()


def report_pages(site_root: Path, run: Run,
                 doc: dict[str, Any]) -> list[tuple[str, str | Callable[[], str]]]:
    """(path, text) of the run's report page and, for a run with scenarios, one page per
    scenario (inside rendering_on, each text a function that waits for the page)."""
    pages = [(report_path(run.id),
              page_text(site_root, report_front_matter(run), doc, report_url(run.id)))]
    for scenario in run.scenarios if run.has_scenarios else ():
        front = scenario_front_matter(run, scenario)
        pages.append((scenario_report_path(run.id, scenario.id),
                      page_text(site_root, front, doc, front["permalink"])))
    return pages


def is_generated(path: Path) -> bool:
    """True for a page this tool wrote: front matter with `generated_by: loadcurve`. Reads
    the front matter only (a report is tens of KB of HTML after it; the build asks this of
    every page under _reports/ on every run)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read(8192)
            if not text.startswith("---\n"):
                return False
            while "\n---\n" not in text[3:]:
                more = f.read(65536)
                if not more:
                    return False
                text += more
    except (OSError, UnicodeDecodeError):
        return False
    front_text = text[4:text.find("\n---\n", 3)]
    if "generated_by" not in front_text:
        return False
    try:
        front = yaml.safe_load(front_text)
    except (yaml.YAMLError, RecursionError, ValueError):
        return False
    return isinstance(front, dict) and front.get("generated_by") == GENERATOR


def stale_reports(site_root: Path, run_ids: set[str]) -> list[Path]:
    """Generated report pages whose run no longer exists (pages written by people excluded)."""
    folder = Path(site_root) / REPORTS_DIR
    if not folder.is_dir():
        return []
    # _reports/<run>.html, and the scenario pages _reports/<run>/<scenario>.html (.md: the
    # pages of builds before issue 15)
    pages = [(p, p.stem) for ext in ("md", "html") for p in folder.glob(f"*.{ext}")] + \
        [(p, p.parent.name) for ext in ("md", "html") for p in folder.glob(f"*/*.{ext}")]
    return [p for p, run_id in sorted(pages)
            if p.is_file() and not p.is_symlink() and run_id not in run_ids and is_generated(p)]
