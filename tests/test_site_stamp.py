"""`make site` skips Jekyll when nothing it reads changed since its last build and the site folder
is as that build left it (scripts/site_stamp.py, run by scripts/build-site.sh), and a build holds
the mirrored trees outside the site folder while Jekyll runs: after every build, skipped, failed
or not, the site is the one GitHub Pages builds."""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import (PINNED_TIME, TREES, assert_same_site, github_pages_build,
                           small_site)

pytestmark = pytest.mark.site

SKIPPED = "Jekyll: nothing it reads changed"
REPO = Path(__file__).resolve().parents[1]


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


# -- only the report pages that changed are rendered again (issue 36) ----------------------------

REPORT_SOURCES = ("_layouts", "_includes", "_posts", "_data", "_reports", "_comparisons",
                  "comparisons", "reports", "feed", "tags.html", "feed.xml", "index.html")


def report_site(src: Path) -> Path:
    """small_site with the repository's layouts, posts and generated report pages, at a
    build time after their dates (a report dated after it would not be written)."""
    small_site(src)
    for name in REPORT_SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, src / name, dirs_exist_ok=True,
                            ignore=shutil.ignore_patterns("__pycache__"))
        elif (REPO / name).is_file():
            shutil.copy2(REPO / name, src / name)
    config = src / "_config.yml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        PINNED_TIME, 'time: "2030-01-01 00:00:00 +0000"\n'), encoding="utf-8")
    return src


def report_outputs(site: Path) -> dict[str, int]:
    return {p.relative_to(site).as_posix(): p.stat().st_mtime_ns
            for p in (site / "reports").rglob("index.html") if p.parent != site / "reports"}


# What a build leaves in the source that a GitHub Pages build neither reads nor publishes.
BUILD_RECORDS = {".jekyll-metadata", ".jekyll-cache", ".cache"}


def source_digest(src: Path) -> str:
    """sha256 over the source's paths and contents (a link: its target), build records aside."""
    digest = hashlib.sha256()
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if rel.parts[0] in BUILD_RECORDS or (path.is_dir() and not path.is_symlink()):
            continue
        digest.update(rel.as_posix().encode() + b"\0")
        digest.update(os.readlink(path).encode() if path.is_symlink() else path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


class Builds:
    """Builds of one source, each compared with a clean GitHub Pages build of it."""

    def __init__(self, src: Path, tmp_path: Path):
        self.src, self.dest, self.pages = src, tmp_path / "local", tmp_path / "pages"
        self.forced: set[str] = set()
        # the source the clean build in self.pages was made from: a step that changes only the
        # site folder, or only how it is built, compares with that build again (a whole Jekyll
        # build of the report site saved each time)
        self.pages_source: str | None = None

    def rebuilt(self, changed: set[str] | None = None) -> set[str]:
        """Build as `make site` does (the tag feeds and the report index, then the Jekyll
        step); the report pages written. The pages expected (`changed`; None: all) must be
        among them, and no other but those rendered for their change in the build before
        (Jekyll keeps no record of a page rendered for its flag, so renders it once more)."""
        before = report_outputs(self.dest)
        subprocess.run([sys.executable, str(self.src / "scripts" / "tag_feeds.py"), str(self.src)],
                       check=True, capture_output=True)
        assert built(self.src, self.dest)
        after = report_outputs(self.dest)
        source = source_digest(self.src)
        if source != self.pages_source:
            # (a plain Jekyll build removes the source's .jekyll-metadata: it builds a copy)
            for folder in (self.pages, self.pages.with_name("pages-src")):
                shutil.rmtree(folder, ignore_errors=True)
            shutil.copytree(self.src, self.pages.with_name("pages-src"), symlinks=True)
            github_pages_build(self.pages.with_name("pages-src"), self.pages)
            self.pages_source = source
        assert_same_site(self.dest, self.pages)
        written = {rel for rel, mtime in after.items() if before.get(rel) != mtime}
        expected = set(after) if changed is None else changed
        assert expected <= written <= expected | self.forced, (written, expected)
        self.forced = set(changed or ())
        return written

    def read_reports(self) -> list[str] | None:
        """The files of _reports/ the last build's Jekyll read; None: all of them (no overlay
        kept any out). The pages left out keep their outputs (keep_files)."""
        overlay = json.loads("\n".join(
            line for line in (self.src / ".cache" / "site-partial.yml").read_text().splitlines()
            if not line.startswith("#")))
        if "_reports/" not in overlay.get("exclude", []):
            return None
        kept = set(overlay["keep_files"])
        # (each included as a pattern naming no file: its last character in brackets)
        read = sorted("_reports/" + re.sub(r"\[(.)\]$", r"\1", p).replace("\\", "")
                      for p in overlay["include"] if p.endswith("]"))
        for rel in (p.relative_to(self.src).as_posix() for p in (self.src / "_reports").rglob("*.html")):
            if rel not in read:
                name = rel[len("_reports/"):-len(".html")]
                assert f"reports/{name}/index.html" in kept, rel
        return read


def test_only_changed_report_pages_are_rendered_and_the_site_is_a_clean_builds(tmp_path):
    src = report_site(tmp_path / "src")
    builds = Builds(src, tmp_path)
    first_build(src, builds.dest)
    assert len(report_outputs(builds.dest)) >= 10
    # a run added, and pages rewritten, one a scenario's (in a folder of _reports/): those
    # pages alone (the runs index, tags and feeds list the new one). One build for both: each
    # page is named in what must be written, and any other page written fails it, so neither
    # change can hide the other's (a Jekyll build of the report site saved)
    text = (src / "_reports" / "pool-vs-virtual.html").read_text(encoding="utf-8")
    (src / "_reports" / "pool-copy.html").write_text(
        re.sub(r"(?m)^title: .*$", "title: A copy of the pool run", text, count=1),
        encoding="utf-8")
    for rel in ("vegeta-vs-hey.html", "many-servers/sleep.html"):
        with open(src / "_reports" / rel, "a", encoding="utf-8") as page:
            page.write("<p>appended</p>\n")
    builds.rebuilt({"reports/pool-copy/index.html", "reports/vegeta-vs-hey/index.html",
                    "reports/many-servers/sleep/index.html"})
    # ... and Jekyll read those pages alone of _reports/: the lists print every report from
    # _data/report_pages.yml
    assert builds.read_reports() == ["_reports/many-servers/sleep.html",
                                     "_reports/pool-copy.html", "_reports/vegeta-vs-hey.html"]
    assert "A copy of the pool run" in (builds.dest / "reports" / "index.html").read_text()
    tags = (builds.dest / "tags" / "index.html").read_text()
    assert "A copy of the pool run" in tags and "Run report: " in tags
    # what the default layout around them reads: every page again. A post's title is in the
    # "Written up in" line of the reports of the runs it names; an include is in all of them
    post = next((src / "_posts").glob("*thread-pool-vs-virtual-threads.md"))
    post.write_text(re.sub(r"(?m)^title: .*$", "title: A retitled post",
                           post.read_text(encoding="utf-8"), count=1), encoding="utf-8")
    builds.rebuilt()
    assert builds.read_reports() is None
    assert "A retitled post" in \
        (builds.dest / "reports" / "pool-copy" / "index.html").read_text()
    with open(src / "_includes" / "footer.html", "a", encoding="utf-8") as include:
        include.write("<!-- changed -->\n")
    builds.rebuilt()
    # a page removed; a page not generated by the analysis (it may read anything): rendered
    # on every build
    (src / "_reports" / "pool-copy.html").unlink()
    (src / "_reports" / "by-hand.html").write_text(
        "---\ntitle: By hand\ndate: 2026-01-02\ndescription: x\n---\n"
        "<p>{{ site.data.runs.size }} run documents</p>\n", encoding="utf-8")
    builds.rebuilt({"reports/by-hand/index.html"})
    assert builds.read_reports() == ["_reports/by-hand.html"]
    assert not (builds.dest / "reports" / "pool-copy").exists()
    (src / "_data" / "runs" / "extra.yml").write_text("title: extra\n", encoding="utf-8")
    builds.rebuilt({"reports/by-hand/index.html"})
    # the site folder touched by hand: everything again
    (builds.dest / "reports" / "vegeta-vs-hey" / "index.html").write_text("edited\n")
    builds.rebuilt()
    # always everything, and no incremental record left behind, when asked
    assert built(src, builds.dest, LOADCURVE_SKIP_JEKYLL="0")
    assert not (src / ".jekyll-metadata").exists()
    builds.rebuilt()


def reachable_templates(layout: str) -> dict[str, str]:
    """A layout and every include it reaches, by file name."""
    found, todo = {}, [REPO / "_layouts" / layout]
    while todo:
        path = todo.pop()
        if path.name in found or not path.is_file():
            continue
        found[path.name] = path.read_text(encoding="utf-8")
        todo += [REPO / "_includes" / name for name in
                 re.findall(r"{%-?\s*include\s+([\w./-]+)", found[path.name])]
    return found


def test_the_default_layout_reads_no_data_but_the_authors():
    """site_stamp.py renders a generated report page again only when its file or the wrapper
    inputs changed, and counts only _data/authors among the data: the layout around the pages
    and its includes must read no other data (the run documents change with every run)."""
    templates = reachable_templates("default.html")
    assert {"seo-report.html", "run-posts.html", "header.html"} <= set(templates)
    reads = {(name, m) for name, text in templates.items()
             for m in re.findall(r"site\.data(?:\.\w+|\[[^\]]*\])?", text)}
    assert reads and {m for _, m in reads} == {"site.data.authors"}, reads


def test_the_source_digest_sees_what_a_pages_build_reads_and_not_the_build_records(tmp_path):
    """Builds.rebuilt compares with the clean build before when this digest is unchanged: a
    change Jekyll reads must change it, the records a local build leaves must not."""
    src = tmp_path / "src"
    (src / "_reports").mkdir(parents=True)
    (src / "_reports" / "a.html").write_text("a\n")
    (src / "runs").mkdir()
    (src / "runs" / "link").symlink_to("../_reports")
    first = source_digest(src)
    for record in (".jekyll-metadata", ".cache/site-stamp.json", ".jekyll-cache/x"):
        (src / record).parent.mkdir(parents=True, exist_ok=True)
        (src / record).write_text("written by a build\n")
    assert source_digest(src) == first
    (src / ".htaccess").write_text("Options -Indexes\n")
    assert source_digest(src) != first
    changed = source_digest(src)
    (src / "_reports" / "a.html").write_text("b\n")
    assert source_digest(src) != changed
    changed = source_digest(src)
    (src / "_reports" / "a.html").rename(src / "_reports" / "b.html")
    assert source_digest(src) != changed
    changed = source_digest(src)
    (src / "runs" / "link").unlink()
    (src / "runs" / "link").symlink_to("../elsewhere")
    assert source_digest(src) != changed
