"""`make site` skips Jekyll when nothing it reads changed since its last build and the site folder
is as that build left it (scripts/site_stamp.py, run by scripts/build-site.sh), and a build holds
the mirrored trees outside the site folder while Jekyll runs: after every build, skipped, failed
or not, the site is the one GitHub Pages builds."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import TREES, assert_same_site, github_pages_build, small_site

pytestmark = pytest.mark.site

SKIPPED = "Jekyll: nothing it reads changed"


def build(src: Path, dest: Path, **env_extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PY": sys.executable, **env_extra}
    for name in ("LOADCURVE_URL", "LOADCURVE_MIRROR", "LOADCURVE_SKIP_JEKYLL"):
        if name not in env_extra:
            env.pop(name, None)
    return subprocess.run(["bash", str(src / "scripts" / "build-site.sh"), "--destination",
                           str(dest)], capture_output=True, text=True, env=env, timeout=600)


def built(src: Path, dest: Path, **env_extra: str) -> bool:
    """Build; True when Jekyll ran, False when it was skipped."""
    result = build(src, dest, **env_extra)
    assert result.returncode == 0, result.stdout + result.stderr
    return SKIPPED not in result.stdout


def first_build(src: Path, dest: Path) -> None:
    """Jekyll runs; bundler may write Gemfile.lock on that first build (a changed input, so the
    second build runs Jekyll again); from the third on, nothing changed."""
    assert built(src, dest)
    build(src, dest)


def mtimes(site: Path) -> dict[str, int]:
    return {p.relative_to(site).as_posix(): p.stat().st_mtime_ns
            for p in site.rglob("*") if p.is_file()}


def test_skipped_only_when_nothing_jekyll_reads_or_wrote_changed(tmp_path):
    src, dest = small_site(tmp_path / "src"), tmp_path / "local"
    first_build(src, dest)
    before = mtimes(dest)
    assert not built(src, dest)
    assert mtimes(dest) == before
    # a change inside a mirrored tree: the mirror publishes it, Jekyll is not needed
    (src / "runs" / "r1" / "new.csv").write_text("new\n")
    assert not built(src, dest)
    assert (dest / "runs" / "r1" / "new.csv").read_text() == "new\n"
    # a page, the config, a hidden-but-included file: each rebuilds
    (src / "index.html").write_text("<p>changed</p>\n")
    assert built(src, dest)
    assert (dest / "index.html").read_text() == "<p>changed</p>\n"
    assert not built(src, dest)
    with open(src / "_config.yml", "a", encoding="utf-8") as config:
        config.write("# a comment\n")
    assert built(src, dest)
    (src / ".htaccess").write_text("Options -Indexes\n")
    assert built(src, dest)
    # files Jekyll never reads: no build
    (src / "scripts" / "notes.txt").write_text("excluded\n")
    (src / ".hidden").write_text("hidden\n")
    assert not built(src, dest)
    # the site folder touched: a page deleted, a page edited
    (dest / "index.html").unlink()
    assert built(src, dest)
    assert (dest / "index.html").is_file()
    (dest / "index.html").write_text("edited by hand\n")
    assert built(src, dest)
    assert (dest / "index.html").read_text() == "<p>changed</p>\n"
    # asked not to skip; another destination
    assert built(src, dest, LOADCURVE_SKIP_JEKYLL="0")
    assert built(src, tmp_path / "other")
    assert built(src, dest)
    github_pages_build(src, tmp_path / "pages")
    assert_same_site(dest, tmp_path / "pages")


def test_held_trees_come_back_after_a_failed_or_killed_build(tmp_path):
    src, dest = small_site(tmp_path / "src"), tmp_path / "local"
    first_build(src, dest)
    # Jekyll fails (a Liquid syntax error): the trees are back, and the next build runs
    (src / "broken.html").write_text("---\n---\n{% if %}\n")
    result = build(src, dest)
    assert result.returncode != 0
    for tree in TREES:
        assert (dest / tree / "r1" / "a.csv").is_file(), tree
    assert not (src / ".cache" / "site-held").exists()
    (src / "broken.html").unlink()
    assert built(src, dest)
    # a build killed while the trees were held: the next one puts them back
    held = src / ".cache" / "site-held"
    (held / "assets").mkdir(parents=True)
    os.rename(dest / "runs", held / "runs")
    os.rename(dest / "assets" / "charts", held / "assets" / "charts")
    assert not built(src, dest)
    assert not held.exists()
    github_pages_build(src, tmp_path / "pages")
    assert_same_site(dest, tmp_path / "pages")
    assert (dest / "runs" / "r1" / "a.csv").stat().st_ino == \
        (src / "runs" / "r1" / "a.csv").stat().st_ino
