"""A comparison page is computed again only when one of its inputs changed
(corpus/comparison_memo.py): a build that changes another run of the corpus leaves it as it is,
and each of its inputs - a compared run's cell table or spectra, a flame stack file it looks
for, its declaration, the code, a file it wrote gone - makes it computed again, to the same
files a build from nothing writes."""
from __future__ import annotations

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

RUNS = ["wrk-v1", "wrk-v2"]
DATA = "_data/comparisons/ab.yml"
PAGE = "_comparisons/ab.md"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("memo") / "site"
    wrk_run(site, "wrk-v1", "1")
    wrk_run(site, "wrk-v2", "2")
    for folder in ("_layouts", "_includes"):
        shutil.copytree(REPO / folder, site / folder)
    shutil.copy2(REPO / "_config.yml", site / "_config.yml")
    (site / "comparisons").mkdir()
    (site / "comparisons" / "ab.yml").write_text(
        "title: B against A\ndescription: d\nbaseline: wrk-v1:a\ncandidate: wrk-v1:b\n"
        "metric: p99\n")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-m", "analysis", "build", "--runs", "runs", "-q"],
                         cwd=site, capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    return site


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
def test_a_changed_input_computes_the_comparison_again(site, computed, tmp_path, change):
    first = corpus_pages.reduce(site, RUNS, code="code 1")
    if change == "code":
        code = "code 2"
    else:
        change(site)
        code = "code 1"
    computed.clear()
    again = _again(site, first, code)
    assert computed == [1]
    assert again.inputs[DATA]["key"] != first.inputs[DATA]["key"] or change is _a_chart_gone
    fresh = tmp_path / "fresh"
    shutil.copytree(site, fresh, symlinks=True)
    shutil.rmtree(fresh / "assets" / "comparisons")
    (fresh / DATA).unlink()
    (fresh / PAGE).unlink()
    from_nothing = corpus_pages.reduce(fresh, RUNS, code=code)
    assert _outputs(site, again) == _outputs(fresh, from_nothing)
