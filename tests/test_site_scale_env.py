"""bench/perf/site_scale.py measures `make site`: the scripts around Jekyll run on the Python
that `make site` gives them (PY, the venv's), not on whatever `python3` is first on PATH."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

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
