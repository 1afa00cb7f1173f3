"""Local builds publish the big static trees themselves (scripts/mirror_static.py, run by
scripts/build-site.sh): the site must be the one GitHub Pages builds from _config.yml alone, file
for file and byte for byte, on the first build and after runs change, and no build may write
into a source file through a hard link."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.sitebuild import assemble
from tests.helpers import (CHROOT_ENV, TREES, assert_same_site, files, github_pages_build,
                           odd_files, small_site)

pytestmark = pytest.mark.site


def local_build(src: Path, dest: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PY": sys.executable}
    env.pop("LOADCURVE_URL", None)
    env.pop("LOADCURVE_MIRROR", None)
    result = subprocess.run(["bash", str(src / "scripts" / "build-site.sh"),
                             "--destination", str(dest)], capture_output=True, text=True,
                            env=env, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def sources(src: Path) -> dict[str, bytes]:
    return {p.relative_to(src).as_posix(): p.read_bytes()
            for tree in TREES for p in sorted((src / tree).rglob("*"))
            if p.is_file() and not p.is_symlink()}


def test_the_local_build_publishes_what_github_pages_builds(tmp_path):
    """The repository's site with its real runs, charts and CSVs (and the fixtures)."""
    src = assemble(tmp_path / "src")
    odd_files(src)
    github_pages_build(src, tmp_path / "pages")
    result = local_build(src, tmp_path / "local")
    assert "Configuration file: " + str(src / ".cache" / "site-mirror.yml") in result.stdout
    assert_same_site(tmp_path / "local", tmp_path / "pages")
    run_file = "runs/pool-vs-virtual/run.yml"
    assert (tmp_path / "local" / run_file).stat().st_ino == (src / run_file).stat().st_ino
    pages = files(tmp_path / "pages")
    assert "runs/odd/.htaccess" in pages and "runs/odd/sp ace é.txt" in pages
    assert "runs/odd/a.tmp" not in pages and "runs/odd/private" not in pages
    assert "runs/odd/only-skipped" not in pages and "runs/odd/empty" not in pages


def test_changes_between_builds_are_mirrored_and_sources_never_written(tmp_path):
    src = small_site(tmp_path / "src")
    local, n = tmp_path / "local", 0

    def compare() -> None:
        nonlocal n
        n += 1
        github_pages_build(src, tmp_path / f"pages{n}")
        assert_same_site(local, tmp_path / f"pages{n}")

    local_build(src, local)
    compare()
    # a run removed, a run added, a file replaced (a new inode), a file edited in place, a
    # file turned into a folder, a published file renamed to a skipped name
    shutil.rmtree(src / "runs" / "r2")
    (src / "assets" / "charts" / "r3").mkdir()
    (src / "assets" / "charts" / "r3" / "c.svg").write_text("<svg/>\n")
    (src / "assets" / "data" / "r1" / "a.csv.new").write_text("replaced\n")
    os.replace(src / "assets" / "data" / "r1" / "a.csv.new", src / "assets" / "data" / "r1" / "a.csv")
    with open(src / "runs" / "r1" / "a.csv", "a") as f:
        f.write("appended in place\n")
    (src / "runs" / "r1" / "sub" / "b.hlog").unlink()
    (src / "runs" / "r1" / "sub" / "b.hlog").mkdir()
    (src / "runs" / "r1" / "sub" / "b.hlog" / "inner.txt").write_text("now a folder\n")
    os.rename(src / "assets" / "charts" / "r1" / "a.csv", src / "assets" / "charts" / "r1" / "_a.csv")
    before = sources(src)
    result = local_build(src, local)
    assert "mirror runs/:" in result.stderr
    compare()
    assert sources(src) == before
    # a file Jekyll takes for a page: runs/ goes back to Jekyll for that build, and Jekyll's
    # page (written in place) must not land in the source through a link; a name ending in `.`
    # (Jekyll 3 publishes it, 4 does not): assets/data/ goes back to Jekyll too
    (src / "runs" / "r1" / "page.yml").write_text("---\ntitle: x\n---\n{{ site.title }}\n")
    (src / "assets" / "data" / "r1" / "trailing.").write_text("x\n")
    before = sources(src)
    result = local_build(src, local)
    assert "warning: runs/r1/page.yml starts with a '---' line" in result.stderr
    assert "warning: assets/data/r1/trailing.: a name ending in '.'" in result.stderr
    overlay = (src / ".cache" / "site-mirror.yml").read_text()
    assert '"runs/"' not in overlay and '"assets/data/"' not in overlay
    assert '"assets/charts/"' in overlay
    compare()
    assert sources(src) == before
    (src / "runs" / "r1" / "page.yml").unlink()
    (src / "assets" / "data" / "r1" / "trailing.").unlink()
    local_build(src, local)
    compare()
    assert (local / "runs" / "r1" / "a.csv").stat().st_ino == (src / "runs" / "r1" / "a.csv").stat().st_ino
    # Jekyll copying into a site the mirror made (GitHub Pages' way, `jekyll serve`) removes
    # each file before writing it: the sources stay as they were
    before = sources(src)
    github_pages_build(src, local)
    assert sources(src) == before


def test_without_the_mirror_jekyll_copies_everything(tmp_path):
    src = small_site(tmp_path / "src")
    env = {**os.environ, "PY": sys.executable, "LOADCURVE_MIRROR": "0"}
    result = subprocess.run(["bash", str(src / "scripts" / "build-site.sh"), "--destination",
                             str(tmp_path / "local")], capture_output=True, text=True, env=env,
                            timeout=600)
    assert result.returncode == 0, result.stderr
    github_pages_build(src, tmp_path / "pages")
    assert_same_site(tmp_path / "local", tmp_path / "pages")
    assert (tmp_path / "local" / "runs" / "r1" / "a.csv").stat().st_nlink == 1


def test_the_overlay_works_on_jekyll_3(jekyll3_root, tmp_path):
    """GitHub Pages' generation (bullseye's Jekyll 3.9): `exclude: [runs/, ...]` keeps the trees
    out, `keep_files` keeps the mirror's files from the cleaner, and the site is the one Jekyll 3
    builds from _config.yml alone."""
    work = jekyll3_root / "tmp" / f"loadcurve-mirror-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    try:
        src = small_site(work / "src", bundle_checked=False)
        (src / "Gemfile").unlink()        # plain Jekyll: bundler would refuse 3.9
        config = yaml.safe_load((src / "_config.yml").read_text(encoding="utf-8"))
        (src / ".cache").mkdir()
        (src / ".cache" / "site-base.yml").write_text(json.dumps({"exclude": config["exclude"]}))
        mirror = subprocess.run([sys.executable, "scripts/mirror_static.py", "--config",
                                 ".cache/site-base.yml", "--dest", str(work / "local"),
                                 "--overlay", ".cache/site-mirror.yml", *TREES],
                                cwd=src, capture_output=True, text=True, timeout=120)
        assert mirror.returncode == 0, mirror.stderr
        inside = f"/{work.relative_to(jekyll3_root)}"
        for dest, configs in (("local", "_config.yml,.cache/site-mirror.yml"),
                              ("pages", "_config.yml")):
            result = subprocess.run(
                ["chroot", str(jekyll3_root), *CHROOT_ENV, "sh", "-c",
                 f"cd {inside}/src && jekyll build --config {configs} -d {inside}/{dest}"],
                capture_output=True, text=True, timeout=600)
            assert result.returncode == 0, result.stdout + result.stderr
        assert_same_site(work / "local", work / "pages")
        assert (work / "local" / "runs" / "r1" / "a.csv").stat().st_nlink == 2   # kept, not copied
    finally:
        shutil.rmtree(work, ignore_errors=True)
