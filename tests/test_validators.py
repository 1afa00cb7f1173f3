"""Third-party validators on the built site: the Nu HTML checker (npm `vnu-jar`, the W3C's
checker) on every page and SVG, and Debian's `jing` on every Atom feed against RFC 4287's
RELAX NG schema (tests/schemas/atom.rnc). Both must report no error.

The tools are installed by `make test` (npm ci) and .ci/run (apt-get install jing); without one,
its tests fail in CI and skip elsewhere, saying what to install.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import need
from tests.sitebuild import REPO, shared_site

pytestmark = pytest.mark.site

VNU = REPO / "node_modules" / "vnu-jar" / "build" / "dist" / "vnu.jar"
ATOM_RNC = REPO / "tests" / "schemas" / "atom.rnc"


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    return shared_site(tmp_path_factory)


def vnu(*paths: Path) -> dict[str, list[str]]:
    """The Nu checker's errors by file (-Xss8m: its parser recurses deeply on big tables)."""
    need(VNU.exists(), f"{VNU.relative_to(REPO)} (npm ci)")
    need(shutil.which("java") is not None, "java 17+ (apt-get install openjdk-17-jdk-headless)")
    result = subprocess.run(["java", "-Xss8m", "-jar", str(VNU), "--errors-only", "--also-check-svg",
                             "--format", "json", "--exit-zero-always", *map(str, paths)],
                            capture_output=True, text=True, timeout=600)
    errors: dict[str, list[str]] = {}
    for m in json.loads(result.stderr or result.stdout)["messages"]:
        where = m.get("url", "?").removeprefix("file:")
        errors.setdefault(where, []).append(f"{m.get('lastLine', '?')}: {m['message']}")
    return errors


def jing(*paths: Path) -> subprocess.CompletedProcess:
    need(shutil.which("jing") is not None, "Debian's jing (apt-get install jing)")
    return subprocess.run(["jing", "-c", str(ATOM_RNC), *map(str, paths)],
                          capture_output=True, text=True, timeout=300)


def feeds(site: Path) -> list[Path]:
    return [site / "feed.xml", site / "feed" / "regressions.xml",
            *sorted((site / "feed" / "by_tag").glob("*.xml"))]


def test_nu_checker_finds_no_error_in_pages_and_svgs(site):
    files = sorted(site.rglob("*.html")) + sorted(site.rglob("*.svg"))
    assert len(files) > 10
    errors = vnu(*files)
    assert not errors, json.dumps(errors, indent=1)[:4000]


def test_every_feed_is_valid_atom(site):
    found = feeds(site)
    assert len(found) >= 4 and (site / "feed/by_tag/virtual-threads.xml") in found
    result = jing(*found)
    assert result.returncode == 0, result.stdout + result.stderr


def test_validators_report_errors(tmp_path):
    """The checks above can fail: each tool finds the error in a broken document."""
    page = tmp_path / "bad.html"
    page.write_text("<!DOCTYPE html><html lang=en><title>x</title><p><div></p>")
    svg = tmp_path / "bad.svg"
    svg.write_text('<svg xmlns="http://www.w3.org/2000/svg"><nonsense/></svg>')
    assert set(vnu(page, svg)) == {str(page), str(svg)}
    atom = tmp_path / "bad.xml"
    atom.write_text('<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title></feed>')
    result = jing(atom)
    assert result.returncode != 0 and "missing required elements" in result.stdout
