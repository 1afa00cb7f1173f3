"""What a build's start imports (issue 36): a build that renders no page (nothing changed, a run
removed) asks which templates render the pages and which pages are generated, and needs no
python-liquid for that (its import, ~0.2 CPU s with babel and asyncio, was most of such a
build's start)."""
from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import REPO

# what runner.Build._run asks of the templates and the pages before it knows a run changed
NO_RENDER = """
import sys
from pathlib import Path
from analysis.pipeline import runner
from analysis.pipeline.cache import templates_version
from analysis.write.pages import is_generated, stale_reports
root = Path(sys.argv[1])
templates_version(root)
stale_reports(root, set())
is_generated(root / "README.md")
print(sorted({name.split(".")[0] for name in sys.modules} & {"liquid", "babel"}))
"""


def _run(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", script, *args], cwd=REPO, capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})


def test_a_build_that_renders_no_page_imports_no_liquid():
    out = _run(NO_RENDER, str(REPO))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[]"]


def test_the_templates_version_still_follows_the_baseurl(tmp_path, monkeypatch):
    # (site_templates holds what liquid_pages had: the same site and baseurl hashed)
    from analysis.pipeline.cache import templates_version
    for folder in ("_layouts", "_includes"):
        (tmp_path / folder).mkdir()
    (tmp_path / "_layouts" / "report.html").write_text("{{ page.title }}")
    (tmp_path / "_config.yml").write_text("baseurl: /a\n")
    first = templates_version(tmp_path)
    (tmp_path / "_config.yml").write_text("baseurl: /b\n")
    os.utime(tmp_path / "_config.yml", ns=(1, 1))
    assert templates_version(tmp_path) != first
    monkeypatch.setenv("LOADCURVE_URL", "https://host/a")
    assert templates_version(tmp_path) == first
