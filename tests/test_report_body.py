"""A run's report and a scenario's page print one body (_includes/report-body.html, issue 26):
the sections are written once, and the body prints the block its layout gives it.

(That both layouts render as they did is test_liquid_pages' and the site tests' work; this is
the structure, checked without a build.)
"""
from __future__ import annotations

import re

from tests.conftest import REPO

LAYOUTS = {name: (REPO / "_layouts" / f"{name}.html").read_text() for name in ("report", "scenario")}
BODY = (REPO / "_includes" / "report-body.html").read_text()
INCLUDE = re.compile(r"{%-?\s*include\s+([\w.-]+)")
# The run-or-scenario look-up by ids: what the includes a post calls with run=ID [scenario=ID]
# do (docs/data-format.md lists them); a page has its block and passes it down.
LOOKUP = re.compile(r"site\.data\.runs\[include\.run\]\.scenarios\[include\.scenario\]")
POST_INCLUDES = {"load-curve-table.html", "ceiling.html", "where-the-time-went.html", "cpu-accounting.html",
                 "host-health.html", "jvm-table.html", "jvm-hotspots.html",
                 "percentile-plot.html", "stat.html"}


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
    assert "{% include report-body.html block=report " in LAYOUTS["report"]
    assert "{% include report-body.html block=scen " in LAYOUTS["scenario"]


def test_only_the_includes_posts_call_with_ids_look_a_scenario_block_up():
    looking = {p.name for p in (REPO / "_includes").glob("*.html") if LOOKUP.search(p.read_text())}
    assert looking == POST_INCLUDES
