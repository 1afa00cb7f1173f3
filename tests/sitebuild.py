"""Build the Jekyll site for the site and browser tests, in a temporary folder.

The source is the repository as it is (templates, posts, and whatever `python -m analysis build`
generated, which is committed), plus the files under tests/fixtures/site/ that the repository
lacks: the injection run, its report and post, and the scenario fixture run (analysed here).
Fixture runs get placeholder charts, CSVs and logs; real runs get nothing, so a real page that
links a missing file fails the link check.
"""
from __future__ import annotations

import atexit
import fcntl
import functools
import importlib.util
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import yaml

from tests import conftest

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "site"
# Top-level names never copied: not part of the site, or big and irrelevant to it. Jekyll's
# records too: tests/test_publish.py builds the repository itself (--incremental writes, then
# removes, .jekyll-metadata in it), and a copy made meanwhile by another xdist worker failed
# with FileNotFoundError on that file.
SKIP = {".git", ".venv", "_site", ".jekyll-cache", ".jekyll-metadata", ".pytest_cache",
        ".hypothesis", ".cache", "tests", "analysis", "bench", "docs", "__pycache__", "vendor",
        "node_modules"}


def _copy_tree(src: Path, dest: Path) -> None:
    """runs/ may hold tens of MB of logs and recordings: hard-link those (nothing writes to
    them); copy everything else, so no build step can write through a link into the repo."""
    def link_or_copy(s, d):
        try:
            os.link(s, d)
        except OSError:
            shutil.copy2(s, d)
    copy = link_or_copy if src.name == "runs" else shutil.copy2
    shutil.copytree(src, dest, copy_function=copy, dirs_exist_ok=True, symlinks=True)


def _png(width: int = 160, height: int = 90) -> bytes:
    """A valid grey PNG, so the browser test can see a fixture image load."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    raw = b"".join(b"\x00" + b"\xc8" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


SVG = ('<svg xmlns="http://www.w3.org/2000/svg" width="640" height="360" viewBox="0 0 640 360">'
       '<rect width="640" height="360" fill="#eee"/><text x="20" y="40" font-size="24">fixture chart'
       '</text></svg>\n')


def _placeholders(site: Path, data: dict) -> None:
    """Write a stand-in for every file a fixture run's data links, unless it exists."""
    paths = [data["manifest"]]
    if "load_curve_table" in data:
        paths.append(data["load_curve_table"]["csv"])
    cells = [c for by_system in data.get("cells", {}).values() for c in by_system.values()]
    paths += [c.get("source") for c in cells]
    paths += [c.get("intervals_csv") for c in cells]
    paths += [c.get("jvm", {}).get("source") for c in cells]
    charts = data.get("charts", {})
    for name, value in charts.items():
        if name == "load_curve" or (isinstance(value, dict) and "svg" in value):
            value = [value]      # one chart (gc_tail; a JMH run's charts: a map name -> chart)
        elif isinstance(value, dict):    # spectrum_by_load: the spectra again, by load point
            value = list(value.values())
        for chart in value:
            paths += [chart["svg"], chart.get("png"), chart.get("narrow_svg")]
    for block in ("jmh_variants", "jmh_methodology"):   # a JMH run: its files and CSV
        entries = data.get(block, {})
        entries = entries.get("files", []) + [entries] if block == "jmh_methodology" \
            else list(entries.values())
        paths += [e.get(k) for e in entries for k in ("csv", "json", "console")]
    for rel in filter(None, paths):
        target = site / rel
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if rel.endswith(".png"):
            target.write_bytes(_png())
        elif rel.endswith(".svg"):
            target.write_text(SVG)
        else:
            target.write_text("# fixture placeholder\n")


def assemble(dest: Path, raw_runs: bool = True) -> Path:
    """The site source: the repository plus the fixtures it lacks. Returns `dest`.
    `raw_runs=False` leaves out the repository's runs/ (~107 MB of logs and recordings that no
    template reads and Jekyll copies into every build) for tests that read only the pages;
    the fixture runs are still added."""
    dest.mkdir(parents=True, exist_ok=True)
    for entry in REPO.iterdir():
        if entry.name in SKIP or (entry.name == "runs" and not raw_runs):
            continue
        if entry.is_dir():
            _copy_tree(entry, dest / entry.name)
        else:
            shutil.copy2(entry, dest / entry.name)
    for src in FIXTURE.rglob("*"):
        target = dest / src.relative_to(FIXTURE)
        if target.parent.name == "_reports" and target.with_suffix(".html").exists():
            continue   # the generated page is there (a fixture page would take its URL)
        if src.is_file() and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)
            if src.parent.parent.name == "_data" and src.suffix == ".yml":
                _placeholders(dest, yaml.safe_load(src.read_text()))
    _add_scenario_run(dest)
    tag_feeds().write(dest)  # the fixtures' tags get their feed pages, as `make site` gives
    return dest


# The fixture run with scenarios (issue 11), analysed for real (data, pages, CSVs and charts) so
# that the site tests see its report, its scenario pages and their true sizes.
SCENARIO_RUN = REPO / "tests" / "fixtures" / "runs" / "scenarios-demo"
SCENARIO_POST = FIXTURE / "_posts" / "2026-01-04-scenarios-fixture.md"


@functools.lru_cache(maxsize=1)
def scenario_run_build() -> Path:
    """`python -m analysis build` of the scenario fixture alone: once per pytest run, shared by
    the workers (about 9 CPU s each when every worker made its own), else once per process."""
    if conftest.SHARED_TMP is None:
        root = Path(tempfile.mkdtemp(prefix="loadcurve-scenarios-"))
        atexit.register(shutil.rmtree, root, True)
        _analyse_scenario_run(root)
        return root
    return _built_once(conftest.SHARED_TMP / "scenario-run", _analyse_scenario_run)


def _built_once(folder: Path, make) -> Path:
    """`make(folder)` run by the first process to ask, while the others wait on a lock; a
    build that failed half-way (no `built` mark) is made again."""
    with open(folder.with_name(folder.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        built = folder / "built"
        if not built.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            built.touch()
    return folder


def _analyse_scenario_run(root: Path) -> None:
    shutil.copytree(SCENARIO_RUN, root / "runs" / SCENARIO_RUN.name)
    # the fixture post naming the run, so its data document goes where the post's includes
    # read it (_data/runs/, not _rundata/), as in a site with that post
    (root / "_posts").mkdir()
    shutil.copy2(SCENARIO_POST, root / "_posts" / SCENARIO_POST.name)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run([sys.executable, "-m", "analysis", "build", "--runs", "runs", "-q"],
                            cwd=root, capture_output=True, text=True, timeout=600, env=env)
    if result.returncode != 0:
        raise AssertionError(f"analysis of {SCENARIO_RUN.name} failed:\n{result.stderr}")


def _add_scenario_run(dest: Path) -> None:
    run_id = SCENARIO_RUN.name
    if (dest / "_data" / "runs" / f"{run_id}.yml").exists():
        return
    built = scenario_run_build()
    for rel in (f"_data/runs/{run_id}.yml", f"_reports/{run_id}.html", f"_reports/{run_id}",
                f"assets/charts/{run_id}", f"assets/data/{run_id}", f"runs/{run_id}"):
        src = built / rel
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, target, dirs_exist_ok=True)
        else:
            shutil.copy2(src, target)


def tag_feeds():
    """scripts/tag_feeds.py as a module (scripts/ is not a package)."""
    spec = importlib.util.spec_from_file_location("tag_feeds", REPO / "scripts" / "tag_feeds.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(source: Path, destination: Path, *extra_config: str) -> subprocess.CompletedProcess:
    """`jekyll build` through scripts/jekyll.sh (bundler when it resolves). `extra_config` are
    YAML snippets layered over _config.yml (e.g. a url for the browser test)."""
    configs = [str(source / "_config.yml")]
    for i, text in enumerate(extra_config):
        overlay = source.parent / f"config_overlay_{i}.yml"  # outside the source: not published
        overlay.write_text(text)
        configs.append(str(overlay))
    return subprocess.run(
        ["bash", str(REPO / "scripts" / "jekyll.sh"), "build", "--source", str(source),
         "--destination", str(destination), "--config", ",".join(configs)],
        capture_output=True, text=True, timeout=600)


def rerender_reports(src: Path) -> None:
    """Every generated report page rendered again from its run's data document, as a build
    whose baseurl changed does (analysis/write/liquid_pages.py reads it when rendering)."""
    from analysis.write.pages import is_generated, page_text
    from analysis.paths import find_data
    from analysis.read.checks import load_yaml
    # The data documents were most of this step's time (~30 CPU s through PyYAML's Python
    # parser, once per page): each is read once, by libyaml where that reads the same, and
    # shared by its run's report and scenario pages as the build's report_pages shares it.
    docs: dict[str, dict] = {}
    for path in sorted((src / "_reports").rglob("*.html")):
        if not is_generated(path):
            continue
        front = yaml.safe_load(path.read_text().split("---\n")[1])
        run_id = front["run"]
        if run_id not in docs:
            docs[run_id] = load_yaml(find_data(src, run_id).read_text(), yaml.SafeLoader)
        doc = docs[run_id]
        layout = "scenario" if "scenario" in front else \
            "jmh-report" if "jmh_tables" in doc else "report"
        url = front.get("permalink") or f"/reports/{front['run']}/"
        path.write_text(page_text(src, {**front, "layout": layout}, doc, url))


def build_site(tmp: Path, *extra_config: str, prepare=None, raw_runs: bool = True) -> Path:
    """Assemble and build into tmp/site; fails with Jekyll's output when the build fails.
    `prepare(source)` runs between the two; `raw_runs`: as `assemble`'s."""
    source = assemble(tmp / "src", raw_runs=raw_runs)
    if prepare is not None:
        prepare(source)
    out = tmp / "site"
    result = build(source, out, *extra_config)
    if result.returncode != 0:
        raise AssertionError(f"jekyll build failed:\n{result.stdout}\n{result.stderr}")
    (tmp / "build.log").write_text(result.stdout + result.stderr)
    return out


def shared_build(tmp_path_factory, name: str, *extra_config: str, raw_runs: bool = True) -> Path:
    """`build_site(<shared root>/name, *extra_config)` once per `pytest` run, for the tests
    that only read it: under pytest-xdist the workers share the first one's build, waiting on a
    lock while it runs, so a ~1-minute build is not made per worker or per module."""
    tmp = _built_once(conftest.shared_tmp(tmp_path_factory) / name,
                      lambda folder: build_site(folder, *extra_config, raw_runs=raw_runs))
    return tmp / "site"


def shared_site(tmp_path_factory) -> Path:
    """The plain site (no extra config), for every test that only reads it or its source
    (`<site>/../src`; test_site.py, test_validators.py, test_jekyll3.py)."""
    return shared_build(tmp_path_factory, "shared-site")
