"""The reduce step's charts (a series' history, a comparison) follow a change of the drawing
code without `build --force`: the build is run by a copy of the analysis package whose palette
differs (a real code change, so the code digests change as they would after an edit), and its
history and comparison charts must then equal a `--force` build's by that copy, byte for byte.
And a comparison whose document is as the last build wrote it is not parsed again, unless its
data file changed since. And a comparison is computed again only when one of its inputs changed
(corpus/comparison_memo.py): a build that changes another run of the corpus leaves it as it is,
and each of its inputs - a compared run's cell table or spectra, a flame stack file it looks
for, its declaration, the code, a file it wrote gone - makes it computed again."""
from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.corpus import compare
from analysis.write import corpus_pages
from tests.conftest import REPO
from tests.helpers import wrk_run

FIRST_COLOUR = "#0072B2"
CHART_DIRS = ("assets/history", "assets/comparisons")


def _build(site: Path, code: Path, *args: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(code),
           # the copy compiles nothing: the helpers of this tree are the same source
           "LOADCURVE_NATIVE_CACHE": str(REPO / ".cache" / "native")}
    out = subprocess.run([sys.executable, "-m", "analysis", "build", "--runs", "runs", "-q",
                          *args], cwd=site, capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr[-3000:]


def _charts(site: Path) -> dict[str, Path]:
    return {p.relative_to(site).as_posix(): p for top in CHART_DIRS
            for p in sorted((site / top).rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("redraw") / "site"
    wrk_run(site, "wrk-v1", "1")
    wrk_run(site, "wrk-v2", "2")
    for folder in ("_layouts", "_includes"):     # (the pages' templates: the site's own)
        shutil.copytree(REPO / folder, site / folder)
    shutil.copy2(REPO / "_config.yml", site / "_config.yml")
    (site / "comparisons").mkdir()
    (site / "comparisons" / "ab.yml").write_text(
        "title: B against A\ndescription: d\nbaseline: wrk-v1:a\ncandidate: wrk-v1:b\n"
        "metric: p99\n")
    _build(site, REPO)
    return site


def test_a_change_of_drawing_code_redraws_history_and_comparison_charts(built, tmp_path):
    site = tmp_path / "site"
    shutil.copytree(built, site, symlinks=True)

    edited = tmp_path / "code"
    shutil.copytree(REPO / "analysis", edited / "analysis",
                    ignore=shutil.ignore_patterns("__pycache__"))
    plots = edited / "analysis" / "write" / "charts" / "plots.py"
    text = plots.read_text()
    assert FIRST_COLOUR in text
    plots.write_text(text.replace(FIRST_COLOUR, "#123456"))

    fresh = tmp_path / "fresh"
    shutil.copytree(site, fresh, symlinks=True)
    _build(site, edited)                 # the drawing code changed since the last build
    _build(fresh, edited, "--force")
    charts, forced = _charts(site), _charts(fresh)
    assert any(rel.startswith("assets/history/") for rel in charts)
    assert any(rel.startswith("assets/comparisons/") for rel in charts)
    assert set(charts) == set(forced)
    stale = [rel for rel in charts if not filecmp.cmp(charts[rel], forced[rel], shallow=False)]
    assert not stale, f"charts still drawn by the old code: {stale}"
    assert "#123456" in (site / next(r for r in charts if r.endswith(".svg"))).read_text()


SAFE_LOAD = corpus_pages.yaml.safe_load


def _not_a_comparison(text):
    if "candidate: wrk-v1:b" in text:
        raise AssertionError("the comparison's document parsed again")
    return SAFE_LOAD(text)


def test_an_untouched_comparison_is_not_parsed_and_a_touched_one_is(built, tmp_path,
                                                                   monkeypatch):
    site = tmp_path / "site"
    shutil.copytree(built, site, symlinks=True)
    runs = ["wrk-v1", "wrk-v2"]
    data = site / "_data" / "comparisons" / "ab.yml"
    first = corpus_pages.reduce(site, runs)
    assert data.as_posix()[len(site.as_posix()) + 1:] in first.memo
    written = data.read_bytes()
    with monkeypatch.context() as patch:
        patch.setattr(corpus_pages.yaml, "safe_load", _not_a_comparison)
        again = corpus_pages.reduce(site, runs, known=first.memo)
    assert again.drawn == 0 and again.memo == first.memo

    data.write_text(data.read_text().replace("title: B against A", "title: edited"))
    touched = corpus_pages.reduce(site, runs, known=first.memo)
    assert touched.drawn > 0
    assert data.read_bytes() == written


# --- the comparison's memo ------------------------------------------------------------------

RUNS = ["wrk-v1", "wrk-v2"]
DATA = "_data/comparisons/ab.yml"
PAGE = "_comparisons/ab.md"


@pytest.fixture
def site(built, tmp_path) -> Path:
    copy = tmp_path / "site"
    shutil.copytree(built, copy, symlinks=True)
    return copy


@pytest.fixture
def computed(monkeypatch) -> list[int]:
    """One entry per comparison computed (compare.compare_frames called)."""
    calls: list[int] = []
    real = compare.compare_frames

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)
    monkeypatch.setattr(compare, "compare_frames", counted)
    return calls


def _outputs(site: Path, step) -> dict[str, bytes]:
    rels = {rel for rel in step.written if rel.startswith(("_data/comparisons/",
                                                           "assets/comparisons/"))}
    return {rel: (site / rel).read_bytes() for rel in sorted(rels | {PAGE})}


def _again(site: Path, first, code: str = "code 1"):
    return corpus_pages.reduce(site, RUNS, known=first.memo, code=code, kept=first.inputs)


def _rewrite(path: Path) -> None:
    """The same bytes written anew, as a run's build writes its files (a new inode and mtime)."""
    data = path.read_bytes()
    path.unlink()
    path.write_bytes(data)


def test_the_build_keeps_each_comparisons_inputs(built):
    state = json.loads((built / ".cache" / "loadcurve" / "corpus.json").read_text())
    kept = state["comparison_inputs"][DATA]
    assert DATA in kept["written"] and kept["page"] == (built / PAGE).read_text()
    assert any(p.startswith("assets/data/wrk-v1/") and p.endswith(".cpu.folded")
               for p in kept["probes"])


def test_a_comparison_whose_inputs_are_unchanged_is_not_computed_again(site, computed):
    first = corpus_pages.reduce(site, RUNS, code="code 1")
    assert computed == [1] and DATA in first.inputs
    before = _outputs(site, first)
    # another run of the corpus built again: none of the comparison's inputs
    _rewrite(site / "assets" / "data" / "wrk-v2" / "cells.csv")
    _rewrite(site / "assets" / "data" / "wrk-v2" / "spectra.csv")
    again = _again(site, first)
    assert computed == [1]
    assert again.inputs == first.inputs and again.memo == first.memo
    assert again.written == first.written and not again.errors
    assert _outputs(site, again) == before
    (site / PAGE).unlink()          # the page is written from what the memo kept
    _again(site, again)
    assert computed == [1] and _outputs(site, again) == before


def _cells(site: Path) -> None:
    _rewrite(site / "assets" / "data" / "wrk-v1" / "cells.csv")


def _spectra(site: Path) -> None:
    _rewrite(site / "assets" / "data" / "wrk-v1" / "spectra.csv")


def _flame_stacks(site: Path) -> None:
    state = corpus_pages.reduce(site, RUNS, code="code 1").inputs[DATA]
    probe = site / state["probes"][0]
    probe.parent.mkdir(parents=True, exist_ok=True)
    probe.write_text("main;work 3\n")   # one side only: no graph, but looked for


def _declaration(site: Path) -> None:
    spec = site / "comparisons" / "ab.yml"
    spec.write_text(spec.read_text().replace("title: B against A", "title: B, then A"))


def _a_chart_gone(site: Path) -> None:
    next((site / "assets" / "comparisons" / "ab").glob("*.svg")).unlink()


@pytest.mark.parametrize("change", [_cells, _spectra, _flame_stacks, _declaration,
                                    _a_chart_gone, "code"])
def test_a_changed_input_computes_the_comparison_again(site, computed, change):
    first = corpus_pages.reduce(site, RUNS, code="code 1")
    if change == "code":
        code = "code 2"
    else:
        change(site)
        code = "code 1"
    computed.clear()
    again = _again(site, first, code)
    assert computed == [1] and not again.errors
    assert again.inputs[DATA]["key"] != first.inputs[DATA]["key"] or change is _a_chart_gone
    assert set(_outputs(site, again)) == set(_outputs(site, first))
    if change is _declaration:
        assert "title: B, then A" in (site / PAGE).read_text()
