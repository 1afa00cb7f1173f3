"""A run's report and a scenario's page print one body (_includes/report-body.html, issue 26):
the sections are written once, and the body prints the block its layout gives it. No include
looks a run up by its id: a layout or a post gives each the run's document or a scenario's block
(block=), and the include prints its own view block of it.

(That both layouts render as they did is test_liquid_pages' and the site tests' work; this is
the structure, checked without a build.)
"""
from __future__ import annotations

import re

from tests.conftest import REPO

LAYOUTS = {name: (REPO / "_layouts" / f"{name}.html").read_text() for name in ("report", "scenario")}
BODY = (REPO / "_includes" / "report-body.html").read_text()
INCLUDE = re.compile(r"{%-?\s*include\s+([\w.-]+)")
INCLUDES = sorted((REPO / "_includes").glob("*.html"))
# A run's document read from site.data in any spelling: site.data.runs[...], .runs.x, ["runs"]
RUNS_LOOKUP = re.compile(r"""site\.data\s*(?:\.\s*runs\b|\[\s*["']runs["']\s*\])""")
# An include tag given a run or scenario id, as includes took them before issue 26
ID_PARAMETER = re.compile(r"{%-?\s*include\s+[\w.-]+\.html\b[^%]*?\s(?:run|scenario)=")
# Where include tags are written: templates, posts, the new-post template, the docs that show them
USAGES = [*INCLUDES, *(REPO / "_layouts").glob("*.html"), *(REPO / "_posts").glob("*.md"),
          *(REPO / "tests" / "fixtures" / "site" / "_posts").glob("*.md"),
          REPO / "analysis" / "write" / "templates" / "post.md.j2", REPO / "README.md",
          *(REPO / "docs").glob("*.md")]


def test_both_layouts_print_the_shared_body():
    for name, text in LAYOUTS.items():
        assert INCLUDE.findall(text).count("report-body.html") == 1, name


def test_no_section_of_the_body_is_written_in_a_layout_again():
    body_includes = set(INCLUDE.findall(BODY))
    body_headings = set(re.findall(r'<h2 id="([\w-]+)"', BODY))
    assert {"load-curve-table.html", "ceiling.html", "jvm-hotspots.html"} <= body_includes
    assert {"load-curve", "gc-tail"} <= body_headings
    for name, text in LAYOUTS.items():
        assert not body_includes & set(INCLUDE.findall(text)), name
        assert not body_headings & set(re.findall(r'<h2 id="([\w-]+)"', text)), name


def test_the_body_prints_the_block_it_is_given():
    assert "include.block." in BODY
    assert "site.data" not in BODY
    assert "{% include report-body.html block=report %}" in LAYOUTS["report"]
    assert "{% include report-body.html block=scen %}" in LAYOUTS["scenario"]
    assert not ID_PARAMETER.search(BODY)
    assert len(re.findall(r"\sblock=include\.block\b", BODY)) == 7   # the seven sections


def test_no_include_looks_a_run_up():
    """The layouts resolve the page's run (and scenario) once; an include that read
    site.data.runs itself would take an id again and need the whole corpus in python-liquid."""
    assert len(INCLUDES) > 30
    looking = [p.name for p in INCLUDES if RUNS_LOOKUP.search(p.read_text())]
    assert looking == []


def test_no_include_tag_passes_a_run_or_scenario_id():
    """Every include tag in the templates, posts, the new-post draft and the docs passes blocks:
    an include given run= now prints a missing-data marker (or nothing) instead of its table."""
    assert all(p.is_file() for p in USAGES) and len(USAGES) > 50
    passing = [f"{p.relative_to(REPO)}: {m.group(0)}" for p in USAGES
               for m in ID_PARAMETER.finditer(p.read_text())]
    assert passing == []
    assert any("block=" in p.read_text() for p in (REPO / "_posts").glob("*.md"))
