"""bench/perf/site_scale.py measures `make site`: the scripts around Jekyll run on the Python
that `make site` gives them (PY, the venv's), not on whatever `python3` is first on PATH."""
from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def load_site_scale():
    spec = importlib.util.spec_from_file_location("site_scale", REPO / "bench/perf/site_scale.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_measured_steps_get_the_python_make_site_passes(tmp_path, monkeypatch):
    monkeypatch.delenv("PY", raising=False)
    site_scale = load_site_scale()
    lines: list[tuple[float, str]] = []
    site_scale.timed(["sh", "-c", 'printf "%s\\n" "${PY:-python3}"'], tmp_path, lines)
    assert [line for _, line in lines] == [sys.executable]


def test_a_corpus_gets_its_gemfile_lock_before_the_first_timed_build(tmp_path):
    """As `make site`'s jekyll-deps step does: else bundler writes the lock inside the first
    build, and code that does not settle it renders every page on the next build (the first
    add), which is not what a user's second `make site` costs."""
    if shutil.which("bundle") is None:
        pytest.skip("bundler is not installed")
    shutil.copy2(REPO / "Gemfile", tmp_path / "Gemfile")
    load_site_scale().settle_bundle(tmp_path)
    assert (tmp_path / "Gemfile.lock").is_file()
