"""Kinds of run as plug-ins (issue 35): analysis/kinds.py is the pipeline's one seam. A third
kind that only a test registers (tests/toy_kind.py: name,value pairs, a table and a bar chart)
is built into a page by the unchanged pipeline."""
from __future__ import annotations

import ast
import inspect
import json
import re
import shutil

import pytest
import yaml

from analysis import kinds
from analysis.derive import jmh_report
from analysis.pipeline.runner import Build
from tests import toy_kind
from tests.conftest import REPO

FRUIT_CSV = "name,value\napples,3\npears,12.5\nplums,0\n"


@pytest.fixture
def pairs_kind():
    kinds.register(toy_kind.PAIRS)
    yield toy_kind.PAIRS
    kinds.unregister(toy_kind.NAME)


def pairs_site(tmp_path):
    """A site with the kind's templates and one run of it, runs/fruit."""
    site = tmp_path / "site"
    (site / "_layouts").mkdir(parents=True)
    # (liquid_pages.template_root: a site with a report layout renders from its own templates)
    shutil.copy(REPO / "_layouts" / "report.html", site / "_layouts")
    for rel, text in toy_kind.TEMPLATES.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text)
    run = site / "runs" / "fruit"
    run.mkdir(parents=True)
    (run / "run.yml").write_text("kind: pairs\ntitle: Fruit\ndate: 2026-11-29\n"
                                 "description: Fruit in the bowl.\nfile: fruit.csv\n")
    (run / "fruit.csv").write_text(FRUIT_CSV)
    return site


def build(site) -> tuple[int, Build]:
    b = Build(site / "runs", site, quiet=True, force=False, jobs=1)
    return b.run(), b


def test_a_third_kind_builds_its_page_through_the_registry_alone(pairs_kind, tmp_path):
    site = pairs_site(tmp_path)
    status, b = build(site)
    assert (status, b.errors) == (0, [])
    page = (site / "_reports" / "fruit.html").read_text()
    assert page.startswith("---\n") and "generated_by: loadcurve" in page
    rows = re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td></tr>", page)
    assert rows == [("apples", "3"), ("pears", "12.5"), ("plums", "0")]
    assert '<img src="/assets/charts/fruit/pairs.svg" alt="Fruit: one bar per name">' in page
    svg = (site / "assets" / "charts" / "fruit" / "pairs.svg").read_text()
    widths = [float(w) for w in re.findall(r'<rect [^>]*width="([0-9.]+)"', svg)]
    assert widths == [81.6, 340.0, 0.0]      # 3 and 0 against the longest, 12.5
    doc = yaml.safe_load((site / "_rundata" / "fruit.yml").read_text())
    assert doc["pairs_table"]["caption"] == "3 values from runs/fruit/fruit.csv"
    # the build recorded the kind's files as the run's, so it removes them with the run
    state = json.loads((site / ".cache" / "loadcurve" / "state.json").read_text())
    assert sorted(state["runs"]["fruit"]["outputs"]) == [
        "_reports/fruit.html", "_rundata/fruit.yml", "assets/charts/fruit/pairs.svg"]
    shutil.rmtree(site / "runs" / "fruit")
    assert build(site)[0] == 0
    assert not (site / "_reports" / "fruit.html").exists()
    assert not (site / "assets" / "charts" / "fruit").exists()


def test_a_kind_that_is_not_registered_is_refused_naming_the_registered_ones(tmp_path):
    site = pairs_site(tmp_path)
    status, b = build(site)
    assert status == 1
    [error] = b.errors
    assert error.startswith("error: run fruit: ")
    assert error.endswith("site/runs/fruit/run.yml: line 1: kind: must be load or jmh, not "
                          "'pairs'")
    assert not (site / "_reports" / "fruit.html").exists()


def test_a_kinds_bad_input_fails_its_run_with_the_kinds_own_error(pairs_kind, tmp_path):
    site = pairs_site(tmp_path)
    (site / "runs" / "fruit" / "fruit.csv").write_text("name,value\napples,many\n")
    status, b = build(site)
    assert status == 1
    assert b.errors == ["error: run fruit: runs/fruit/fruit.csv: line 2: not a name and a "
                        "number"]


def test_the_pipeline_names_no_kind():
    # every kind is reached through the registry: the build's stages branch on none
    for path in sorted((REPO / "analysis" / "pipeline").glob("*.py")):
        text = path.read_text()
        assert not re.search(r"\bjmh\b|kind ==|kind !=", text), path.name


def test_each_kinds_steps_exist_and_its_includes_are_what_its_layouts_print():
    for kind in kinds.KINDS.values():
        for name in ("schema", "inputs", "derive", "outputs"):
            assert callable(kinds.step(kind, name)), (kind.name, name)
        printed = set()
        for layout in kind.layouts:
            text = (REPO / "_layouts" / layout).read_text()
            printed |= set(re.findall(r"\binclude ([\w-]+\.html)", text))
        assert printed == set(kind.includes), kind.name


def test_jmh_views_formats_the_report_without_calling_into_it():
    # write/jmh_views.py reads derive/jmh_report.py's records and constants; the selections
    # and comparisons it prints were made by the report (issue 35: no write <-> derive trips)
    tree = ast.parse((REPO / "analysis" / "write" / "jmh_views.py").read_text())
    used = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name) and node.value.id == "jr"}
    assert used
    called = sorted(name for name in used
                    if not name.isupper() and not inspect.isclass(getattr(jmh_report, name)))
    assert called == []
