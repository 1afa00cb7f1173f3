"""Publishing: the tag feed pages, the one-build URL override and its placeholder warning, and
the GitHub Pages workflow."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from analysis.paths import find_data

from tests.sitebuild import REPO, tag_feeds

pytestmark = pytest.mark.site


def post(folder: Path, name: str, tags: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("---\n" + yaml.safe_dump({"title": name, "tags": tags}) + "---\n")


def test_tag_feed_pages_one_per_tag_and_stale_ones_removed(tmp_path):
    module = tag_feeds()
    post(tmp_path / "_posts", "2026-01-01-a.md", ["virtual-threads", "C++", "C#", "{{ site }}"])
    post(tmp_path / "_reports", "r.md", ["http", "virtual-threads"])
    hand = tmp_path / "feed" / "by_tag" / "hand-written.xml"
    hand.parent.mkdir(parents=True)
    hand.write_text("---\nlayout: atom\ntag: x\n---\n")
    module.write(tmp_path)
    pages = {p.name: yaml.safe_load(p.read_text().split("---")[1])["tag"]
             for p in (tmp_path / "feed" / "by_tag").glob("*.xml")}
    assert pages.pop("hand-written.xml") == "x"     # not ours: left alone
    assert pages["virtual-threads.xml"] == "virtual-threads" and pages["http.xml"] == "http"
    assert sorted(pages.values()) == sorted({"virtual-threads", "C++", "C#", "{{ site }}", "http"})
    assert module.write(tmp_path) == []             # a second run changes nothing
    post(tmp_path / "_posts", "2026-01-01-a.md", ["virtual-threads"])
    removed = module.write(tmp_path)
    assert len(removed) == 3 and all(r.startswith("removed ") for r in removed), removed


def build_site_script(tmp_path: Path, url: str | None) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(Path.home()), "LANG": "C.UTF-8"}
    if url is not None:
        env["LOADCURVE_URL"] = url
    return subprocess.run(["bash", str(REPO / "scripts" / "build-site.sh"),
                           "--destination", str(tmp_path / "site")],
                          capture_output=True, text=True, env=env, timeout=600)


def test_placeholder_url_is_warned_about_loudly(tmp_path):
    config = yaml.safe_load((REPO / "_config.yml").read_text())
    if config["url"] != "https://loadcurve.example.org":
        pytest.skip("url in _config.yml is set: nothing to warn about")
    result = build_site_script(tmp_path, None)
    assert result.returncode == 0, result.stderr
    assert "WARNING: url in _config.yml is the placeholder" in result.stderr
    assert "make site URL=" in result.stderr


def test_url_override_sets_url_and_baseurl_for_one_build(tmp_path):
    before = (REPO / "_config.yml").read_bytes()
    result = build_site_script(tmp_path, "https://bench.example.net/lc")
    assert result.returncode == 0, result.stderr
    assert "WARNING" not in result.stderr
    home = (tmp_path / "site" / "index.html").read_text()
    assert '<link rel="canonical" href="https://bench.example.net/lc/" />' in home
    assert 'href="/lc/assets/css/site.css"' in home
    feed = (tmp_path / "site" / "feed.xml").read_text()
    assert "<id>https://bench.example.net/lc/feed.xml</id>" in feed
    assert (REPO / "_config.yml").read_bytes() == before


@pytest.mark.parametrize("url", ["https://x.example/", "ftp://x.example", "https://x.example/\"a"])
def test_a_malformed_url_is_one_error_line(tmp_path, url):
    result = build_site_script(tmp_path, url)
    assert result.returncode == 1
    assert result.stderr.startswith("error: URL must look like") and result.stderr.count("\n") == 1


def test_pages_workflow_builds_with_make_and_deploys_with_the_official_actions():
    flow = yaml.safe_load((REPO / ".github" / "workflows" / "pages.yml").read_text())
    steps = [s for job in flow["jobs"].values() for s in job["steps"]]
    uses = [s["uses"].split("@")[0] for s in steps if "uses" in s]
    for action in ("actions/configure-pages", "actions/upload-pages-artifact", "actions/deploy-pages"):
        assert action in uses, action
    run = [s["run"] for s in steps if "run" in s]
    assert any(r.startswith("make site URL=") for r in run), run
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-pages-artifact"))
    assert upload["with"]["path"] == "_site"
    assert flow["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}


# What a copy of the repository for `scripts/site.sh` leaves out (runs/ is made by the test).
NOT_COPIED = {".git", ".venv", "_site", ".jekyll-cache", ".cache", "tests", "bench", "runs",
              "node_modules", ".pytest_cache", ".hypothesis", "__pycache__", "vendor", "docs"}


def _site_sh(src: Path) -> subprocess.CompletedProcess:
    import os
    import sys
    env = {**os.environ, "PY": sys.executable, "RUNS": "runs"}
    env.pop("LOADCURVE_URL", None)
    return subprocess.run(["bash", "scripts/site.sh"], cwd=src, capture_output=True, text=True,
                          env=env, timeout=900)


def test_make_site_publishes_every_good_run_when_one_fails(tmp_path):
    """Issue 14's partial publishing, through the script `make site` runs: analysis, tag feeds
    and Jekyll. One run breaks, one holds a symbolic link: the site is built from the good run,
    the broken run's page (built before) goes, no link reaches _site, errors come last."""
    import shutil
    src = tmp_path / "src"
    src.mkdir()
    for entry in REPO.iterdir():
        if entry.name in NOT_COPIED:
            continue
        if entry.is_dir():
            shutil.copytree(entry, src / entry.name, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(entry, src / entry.name)
    fixture = REPO / "tests" / "fixtures" / "runs" / "oracle-demo"
    for run_id in ("good", "bad", "linked"):
        shutil.copytree(fixture, src / "runs" / run_id)
        manifest = src / "runs" / run_id / "run.yml"
        doc = yaml.safe_load(manifest.read_text())
        doc["load_points"] = doc["load_points"][:1]
        doc["cells"] = [c for c in doc["cells"] if c["load"] == doc["load_points"][0]["id"]]
        manifest.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    (src / "runs" / "linked" / "secret.txt").symlink_to("/etc/hostname")

    first = _site_sh(src)
    assert first.returncode == 1, first.stderr
    site = src / "_site"
    assert (site / "reports" / "good" / "index.html").is_file()
    assert (site / "reports" / "bad" / "index.html").is_file()
    assert not (site / "reports" / "linked").exists()
    links = [p for p in site.rglob("*") if p.is_symlink()]
    assert links == [] and not (site / "runs" / "linked" / "secret.txt").exists()
    # kept out of Jekyll's input (not removed from _site afterwards, the last resort)
    assert "warning: runs/linked/secret.txt is a symbolic link: not published" in first.stderr
    assert "removed: the site publishes regular files only" not in first.stderr
    assert (site / "runs" / "linked" / "run.yml").is_file()       # its regular files are data
    tail = first.stderr.rstrip("\n").splitlines()[-2:]
    assert tail[0].startswith("The site was built without the run(s) that failed; 1 error")
    assert tail[1].startswith("error: run linked: runs/linked/secret.txt: is a symbolic link")

    manifest = src / "runs" / "bad" / "run.yml"
    manifest.write_text(manifest.read_text().replace("title:", "titel:"))
    second = _site_sh(src)
    assert second.returncode == 1
    assert (site / "reports" / "good" / "index.html").is_file()
    assert not (site / "reports" / "bad").exists()
    assert not (src / "_reports" / "bad.html").exists()
    assert not find_data(src, "bad").exists()
    errors = second.stderr.rstrip("\n").splitlines()[-2:]
    assert errors[0].startswith("error: run bad: ") and errors[1].startswith("error: run linked: ")
