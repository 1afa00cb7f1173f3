"""`python -m analysis build`: golden data checked against Java, the cache, reproducible output,
failures isolated per run, the lock, kill -9 safety, stale outputs, injection strings as data."""
from __future__ import annotations

import argparse
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO, SHARED
from analysis.paths import find_data
from tests.helpers import ENV, GENERATED, GOLDEN, build, make_site, snapshot

pytestmark = pytest.mark.slow     # (make check leaves it out; make test runs it)

SHORT = REPO / "tests" / "fixtures" / "runs" / "bench-short"
ORACLE = SHARED / "oracle"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The fixture run built once, shared by the read-only tests below."""
    site = make_site(tmp_path_factory.mktemp("built"))
    out = build(site, "--jobs", "2")
    assert out.returncode == 0, out.stderr
    return site


def test_golden_data_file(built):
    data = find_data(built, "oracle-demo")
    assert data.read_bytes() == (GOLDEN / "oracle-demo.yml").read_bytes(), \
        "data differs from the golden; if intended, run `make golden`"
    assert (built / "assets/data/oracle-demo/load-curve.csv").read_bytes() == \
        (GOLDEN / "load-curve.csv").read_bytes()


def test_numbers_equal_hdrhistogram_java(built):
    """Every latency in the data file equals HdrHistogram's Java (javastats) on the same logs,
    converted us -> ms, the median of the repetitions, rounded to 3 decimals."""
    from tests.golden.site.record import check_against_java, expected_cell
    java = json.loads((GOLDEN / "javastats.json").read_text())
    doc = yaml.safe_load(find_data(built, "oracle-demo").read_text())
    assert check_against_java(doc, {key: expected_cell(reps) for key, reps in java.items()}) == []


@pytest.fixture(scope="module")
def built_short(tmp_path_factory) -> Path:
    """The harness's short run (schema 2: repetitions, a saturated and censored cell)."""
    site = tmp_path_factory.mktemp("short") / "site"
    shutil.copytree(SHORT, site / "runs" / SHORT.name)
    out = build(site, "--jobs", "2")
    assert out.returncode == 0, out.stderr
    return site


def test_golden_data_file_of_a_run_with_repetitions_and_censoring(built_short):
    data = find_data(built_short, "bench-short")
    assert data.read_bytes() == (GOLDEN / "bench-short.yml").read_bytes(), \
        "data differs from the golden; if intended, run `make golden`"
    assert (built_short / "assets/data/bench-short/load-curve.csv").read_bytes() == \
        (GOLDEN / "load-curve-bench-short.csv").read_bytes()


def test_censored_numbers_equal_java_on_each_repetition(built_short, tmp_path):
    """javastats on each repetition's population (answered + timed out at the timeout), a
    statistic at or above the timeout counted censored, medians over the repetitions."""
    from tests.golden.site.record import check_against_java, expected_short
    _, want = expected_short(tmp_path) if (ORACLE / "javastats").is_file() else (None, None)
    if want is None:
        pytest.skip("no ../shared/oracle/javastats")
    doc = yaml.safe_load(find_data(built_short, "bench-short").read_text())
    assert check_against_java(doc, want) == []
    pool = doc["cells"]["r200"]["pool2"]
    assert pool["p50_ms"] is None and pool["p50_at_least_ms"] == 2000.0
    assert pool["sent"] == pool["completed"] + pool["timed_out"] + pool["errors"]
    assert "goodput" in pool["saturation"]


def test_data_file_shape(built):
    doc = yaml.safe_load(find_data(built, "oracle-demo").read_text())
    assert list(doc)[:3] == ["schema_version", "id", "title"] and doc["schema_version"] == 5
    pool = next(s for s in doc["systems"] if s["id"] == "pool")
    assert pool["predicted_ceiling_rps"] == 400.0                 # 2 workers / 5 ms
    assert pool["measured_peak_rps"] == 304.4
    cell = {(load, system): c for load, by_system in doc["cells"].items()
            for system, c in by_system.items()}
    assert cell[("r500", "pool")]["saturated"] is True            # 304/s of 500 offered
    assert cell[("r500", "pool")]["drops"] == 22500 - cell[("r500", "pool")]["count"]
    assert cell[("r100", "virtual")]["repetitions"] == 2
    low, median, high = cell[("r100", "virtual")]["spread"]["p99_ms"]
    assert low <= median <= high and median == cell[("r100", "virtual")]["p99_ms"]
    for chart in [doc["charts"]["load_curve"], *doc["charts"]["spectrum"]]:
        assert (built / chart["svg"]).is_file() and chart["alt"]
    # no post names the run: only the og:image chart (the load curve) has a PNG (png_use.py)
    assert (built / doc["charts"]["load_curve"]["png"]).is_file()
    assert not any("png" in chart for chart in doc["charts"]["spectrum"])
    assert list((built / "assets" / "charts").rglob("*.png")) == \
        [built / doc["charts"]["load_curve"]["png"]]
    for c in cell.values():
        assert (built / c["source"]).is_file() and (built / c["intervals_csv"]).is_file()
    page = (built / "_reports" / "oracle-demo.html").read_text()
    front = yaml.safe_load(page.split("---\n")[1])
    # the report's HTML follows, rendered here from _layouts/report.html (liquid_pages.py)
    assert front["run"] == "oracle-demo" and front["layout"] == "default"
    assert '<h2 id="load-curve">Load curve</h2>' in page
    assert (built / front["image"].lstrip("/")).is_file()


def test_second_build_is_cached_and_fast(built):
    before = snapshot(built)
    mtimes = {p: (built / p).stat().st_mtime_ns for p in before}
    sys.path.insert(0, str(REPO))
    from analysis.commands import build as build_module
    parser = argparse.ArgumentParser()
    build_module.add_arguments(parser)
    args = parser.parse_args(["--runs", str(built / "runs"), "--site", str(built), "-q"])
    started = time.perf_counter()
    assert build_module.run(args) == 0
    assert time.perf_counter() - started < 1.0
    out = build(built)
    assert out.returncode == 0 and "oracle-demo: up to date" in out.stderr
    assert snapshot(built) == before
    assert {p: (built / p).stat().st_mtime_ns for p in before} == mtimes


def test_two_builds_are_byte_identical(built, tmp_path):
    other = make_site(tmp_path)
    out = build(other, "--jobs", "1")
    assert out.returncode == 0, out.stderr
    assert snapshot(other) == snapshot(built)


def test_only_changed_runs_are_rebuilt(tmp_path):
    site = make_site(tmp_path, "a", "b", mini=True)
    assert build(site, "-q").returncode == 0
    first = snapshot(site)
    forced = build(site, "--force", "-q")
    assert forced.returncode == 0 and forced.stderr == ""
    assert snapshot(site) == first                      # a forced rebuild: the same bytes
    (site / "runs" / "b" / "run.yml").write_text(
        (site / "runs" / "b" / "run.yml").read_text().replace("Oracle fixture", "Changed fixture"))
    out = build(site)
    assert out.returncode == 0, out.stderr
    assert "a: up to date" in out.stderr and "b: analyse" in out.stderr
    assert "Changed fixture" in find_data(site, "b").read_text()


def test_a_post_naming_a_run_gives_every_chart_of_it_a_png(tmp_path):
    """Feed readers show a post's charts through their <img>: a run a post names gets every
    PNG; when no post names it any more, the rebuild removes all but the og:image one."""
    site = make_site(tmp_path, "a", "b", mini=True)
    (site / "_posts").mkdir()
    post = site / "_posts" / "2026-01-01-a.md"
    post.write_text('---\ntitle: A\n---\n{% include chart-set.html run="a" %}\n')
    assert build(site, "-q").returncode == 0
    doc = yaml.safe_load(find_data(site, "a").read_text())
    pngs = {c["png"] for c in doc["charts"]["spectrum"]} | {doc["charts"]["load_curve"]["png"]}
    assert len(pngs) == 2 and all((site / p).is_file() for p in pngs)
    assert len(list((site / "assets" / "charts" / "b").glob("*.png"))) == 1
    # the named run's document is where Jekyll and the post's includes read it; the other's not
    assert sorted(p.name for p in (site / "_data" / "runs").iterdir()) == ["a.yml"]
    assert sorted(p.name for p in (site / "_rundata").iterdir()) == ["b.yml"]
    post.write_text("---\ntitle: A\n---\nNo run named.\n")
    out = build(site)
    assert "a: analyse" in out.stderr and "b: up to date" in out.stderr, out.stderr
    assert [p.name for p in (site / "assets" / "charts" / "a").glob("*.png")] == ["load-curve.png"]
    assert not list((site / "_data" / "runs").iterdir())
    assert sorted(p.name for p in (site / "_rundata").iterdir()) == ["a.yml", "b.yml"]


def test_broken_run_fails_alone(tmp_path):
    site = make_site(tmp_path, "good", "broken", mini=True)
    manifest = site / "runs" / "broken" / "run.yml"
    manifest.write_text(manifest.read_text().replace("title:", "titel:"))
    out = build(site)
    assert out.returncode == 1
    errors = [ln for ln in out.stderr.splitlines() if ln.startswith("error:")]
    assert errors == [f"error: run broken: {Path('runs/broken/run.yml')}: title: required; "
                      f"line 2: titel: unknown key (allowed: cells, co_correction, cpu_accounting, date, "
                      f"description, environment, jfr_attribution, load_generator, load_points, "
                      f"method, scenarios, schema_version, series, service_time_ms, systems, "
                      f"tags, title, value_unit, version, window)"]
    assert "Traceback" not in out.stderr
    assert find_data(site, "good").is_file()
    assert not find_data(site, "broken").exists()


def test_unreadable_hlog_names_run_and_file(tmp_path):
    site = make_site(tmp_path)
    (site / "runs" / "oracle-demo" / "pool" / "r500.hlog").write_text("not a log\n")
    out = build(site)
    assert out.returncode == 1
    line = next(ln for ln in out.stderr.splitlines() if ln.startswith("error:"))
    assert line.startswith("error: run oracle-demo: ") and "pool/r500.hlog" in line


def test_missing_hlog_leaves_the_cell_out(tmp_path):
    site = make_site(tmp_path, mini=True)
    (site / "runs" / "oracle-demo" / "pool" / "r100.hlog").unlink()
    out = build(site)
    assert out.returncode == 0, out.stderr
    assert "warning: run oracle-demo: runs/oracle-demo/pool/r100.hlog: missing" in out.stderr
    doc = yaml.safe_load(find_data(site, "oracle-demo").read_text())
    assert "pool" not in doc["cells"]["r100"]
    table = doc["load_curve_table"]
    assert table["missing"] == [{"load": "r100", "system": "pool",
                                 "file": "runs/oracle-demo/pool/r100.hlog"}]
    row = table["rows"][0]
    assert row["cells"][0]["missing"] is True and row["cells"][1]["count_text"] == "9,850"


def test_lock_keeps_two_builds_apart(tmp_path):
    """The holder is named as the kernel knows it (a pid written in the file may be stale)."""
    site = make_site(tmp_path)
    lock = site / ".cache" / "loadcurve" / "build.lock"
    lock.parent.mkdir(parents=True)
    with open(lock, "w") as held:
        fcntl.lockf(held, fcntl.LOCK_EX)   # (the build's lock: a POSIX record lock)
        held.write("4242\n")
        held.flush()
        out = build(site)
    assert out.returncode == 1
    pid = os.getpid()
    assert out.stderr.strip().splitlines() == [
        f"error: {Path('.cache/loadcurve/build.lock')}: another build is running on this tree "
        f"(pid {pid}) (wait for it to finish, or stop it with `kill {pid}`, then build again)"]
    assert not (site / "_data").exists()


def test_kill_9_mid_build_leaves_old_outputs_intact(tmp_path):
    site = make_site(tmp_path, mini=True)
    assert build(site, "-q").returncode == 0
    old = snapshot(site)
    # change the data so every output is rewritten, then kill the build while it draws
    manifest = site / "runs" / "oracle-demo" / "run.yml"
    manifest.write_text(manifest.read_text().replace("offered_rate: 100", "offered_rate: 120"))
    proc = subprocess.Popen([sys.executable, "-m", "analysis", "build", "--runs", "runs", "--force"],
                            cwd=site, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env=ENV)
    for line in proc.stderr:
        if ": charts" in line:
            break
    time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    now = snapshot(site)
    # A kill during a write leaves that write's hidden temp file (`.<name>.<random>.tmp`,
    # analysis/atomic.py) next to the intact old output; the next build removes it (below).
    now = {rel: h for rel, h in now.items()
           if not (rel.rsplit("/", 1)[-1].startswith(".") and rel.endswith(".tmp"))}
    assert set(now) == set(old)  # nothing lost, no half-named files among the outputs
    for rel in now:
        data = (site / rel).read_bytes()
        if rel.endswith(".yml"):
            yaml.safe_load_all(data.decode())
        elif rel.endswith(".html"):   # a report page: YAML front matter, then HTML
            yaml.safe_load(data.decode().split("---\n")[1])
        elif rel.endswith(".png"):
            assert data.startswith(b"\x89PNG") and data.endswith(b"IEND\xaeB`\x82"), rel
        elif rel.endswith(".svg"):
            assert data.rstrip().endswith(b"</svg>"), rel
    out = build(site)
    assert out.returncode == 0, out.stderr
    doc = yaml.safe_load(find_data(site, "oracle-demo").read_text())
    assert doc["load_points"][0]["offered_rate"] == 120
    # temp files a killed build left behind are gone: generated folders hold generated files
    assert not [p for top in GENERATED for p in (site / top).rglob("*.tmp")]


def test_removed_run_takes_its_generated_files_and_nothing_else(tmp_path):
    site = make_site(tmp_path, "keep", "gone", mini=True)
    (site / "_reports").mkdir()
    hand_page = site / "_reports" / "notes.md"
    hand_page.write_text("---\ntitle: written by a person\n---\n")
    hand_gone = site / "_reports" / "gone-notes.md"
    hand_gone.write_text("hand-written\n")
    (site / "_data").mkdir()
    (site / "_data" / "authors.yml").write_text("- me\n")
    assert build(site, "-q").returncode == 0
    assert (site / "assets" / "charts" / "gone").is_dir()
    shutil.rmtree(site / "runs" / "gone")
    out = build(site)
    assert out.returncode == 0, out.stderr
    assert "gone: run removed" in out.stderr
    assert not find_data(site, "gone").exists()
    assert not (site / "_reports" / "gone.html").exists()
    assert not (site / "assets" / "charts" / "gone").exists()
    assert not (site / "assets" / "data" / "gone").exists()
    assert hand_page.is_file() and hand_gone.is_file() and (site / "_data" / "authors.yml").is_file()
    assert find_data(site, "keep").is_file()


def test_injection_strings_survive_as_data(tmp_path):
    site = make_site(tmp_path, mini=True)
    title = "<script>alert(1)</script> \"><img src=x onerror=alert(1)> {{ site }} {% include x %}"
    label = "Pool: {{ page.title }} 'quoted' — ünïcode\nsecond line"
    manifest = site / "runs" / "oracle-demo" / "run.yml"
    data = yaml.safe_load(manifest.read_text())
    data["title"] = title
    data["systems"][0]["label"] = label
    data["tags"] = ["{% raw %}x"]
    manifest.write_text(yaml.safe_dump(data, allow_unicode=True))
    out = build(site, "-q")
    assert out.returncode == 0, out.stderr
    doc = yaml.safe_load(find_data(site, "oracle-demo").read_text())
    assert doc["title"] == title and doc["tags"] == ["{% raw %}x"]
    assert doc["systems"][0]["label"] == label and doc["load_curve_table"]["systems"][0]["label"] == label
    page = (site / "_reports" / "oracle-demo.html").read_text()
    assert page.startswith("---\n") and page.split("---\n")[2].startswith("<article")
    assert yaml.safe_load(page.split("---\n")[1])["title"] == title


def test_missing_runs_folder_is_one_error(tmp_path):
    out = subprocess.run([sys.executable, "-m", "analysis", "build", "--runs", "nope"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=60,
                         env=ENV)
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [
        "error: nope: no such folder (give the folder of run folders with --runs)"]


def test_jfr_hot_methods_and_attribution_reach_the_data(tmp_path):
    """A cell with a recording and a manifest with jfr_attribution: `jvm_hotspots` prints the
    hot methods and the attribution with the counts the JDK's `jfr print` gives for the same
    recording (tests/golden/jfr), not numbers taken from our own reader's output."""
    site = make_site(tmp_path, mini=True)
    run = site / "runs" / "oracle-demo"
    shutil.copyfile(REPO / "tests" / "fixtures" / "jfr" / "jdk25-profile.jfr.gz",
                    run / "pool" / "r100.jfr.gz")
    data = yaml.safe_load((run / "run.yml").read_text())
    next(c for c in data["cells"] if (c["system"], c["load"]) == ("pool", "r100"))["jfr"] = \
        "pool/r100.jfr.gz"
    data["jfr_attribution"] = [{"pattern": r"Workload\$Hashing\..*", "label": "hashing"},
                               {"pattern": r"java\.util\..*", "label": "sorting"}]
    (run / "run.yml").write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    out = build(site, "-q")
    assert out.returncode == 0, out.stderr
    doc = yaml.safe_load(find_data(site, "oracle-demo").read_text())

    golden = json.loads((REPO / "tests" / "golden" / "jfr" / "jdk25-profile.json").read_text())
    n, self_n, total_n = golden["samples"], golden["self_samples"], golden["total_samples"]

    def pct(k):
        return f"{100 * k / n:.1f}"

    hs = doc["jvm_hotspots"]
    (pool,) = hs["systems"]                      # the only cell with a recording
    assert pool["system"] == "pool" and pool["label"] == "Platform pool (2 threads)"
    (row,) = pool["loads"]
    assert (row["load"], row["offered"], row["samples"]) == ("r100", "100", f"{n:,}")
    top = sorted(self_n, key=lambda m: -self_n[m])[:5]
    assert len({self_n[m] for m in top}) == 5, "the golden's top 5 have no ties"
    assert row["methods"] == [{"method": m, "self_pct": pct(self_n[m]),
                               "total_pct": pct(total_n[m])} for m in top]
    assert hs["attribution_labels"] == ["hashing", "sorting", "other"]
    by = {a["label"]: a for a in row["attribution"]}
    # every sample with a Hashing frame is the hashing thread's (it never calls java.util)
    hashing = total_n["Workload$Hashing.crunch"]
    assert by["hashing"] == {"label": "hashing", "samples": str(hashing), "pct": pct(hashing)}
    assert sum(int(a["samples"]) for a in row["attribution"]) == n
    assert int(by["sorting"]["samples"]) > 0 and int(by["other"]["samples"]) > 0


def test_front_matter_line_in_a_manifest_is_warned_about(tmp_path):
    # Jekyll 3.10 (GitHub Pages) would render such a run.yml as a page, Liquid and all.
    site = make_site(tmp_path, "dashes", mini=True)
    manifest = site / "runs" / "dashes" / "run.yml"
    manifest.write_text("--- \n" + manifest.read_text())
    out = build(site, "-q")
    assert out.returncode == 0, out.stderr
    assert ("warning: run dashes: runs/dashes/run.yml:1: starts with a '---' line"
            in out.stderr), out.stderr
    manifest.write_text(manifest.read_text().replace("--- \n", "", 1))
    assert "'---'" not in build(site, "-q").stderr


def test_partial_failed_run_loses_its_old_outputs_and_errors_come_last(tmp_path):
    site = make_site(tmp_path, "good", "bad", mini=True)
    assert build(site, "-q").returncode == 0
    bad_files = [find_data(site, "bad"), site / "_reports" / "bad.html",
                 site / "assets" / "charts" / "bad", site / "assets" / "data" / "bad"]
    assert all(p.exists() for p in bad_files)
    good_before = {k: v for k, v in snapshot(site).items() if "bad" not in k}
    manifest = site / "runs" / "bad" / "run.yml"
    manifest.write_text(manifest.read_text().replace("title:", "titel:"))
    out = build(site)
    assert out.returncode == 1
    lines = out.stderr.splitlines()
    assert lines[-1].startswith("error: run bad: ") and "titel" in lines[-1]
    assert [ln for ln in lines if ln.startswith("error:")] == [lines[-1]]
    assert "bad: failed; deleted its" in out.stderr
    assert not any(p.exists() for p in bad_files)       # no page, no stale numbers
    # the good run's outputs are untouched; the corpus-wide cell table loses the bad run's rows
    corpus_table = "assets/data/cells.csv"
    assert ({k: v for k, v in snapshot(site).items() if "bad" not in k and k != corpus_table}
            == {k: v for k, v in good_before.items() if k != corpus_table})
    assert ",bad," not in (site / corpus_table).read_text()
    assert (site / ".cache" / "loadcurve" / "errors.txt").read_text() == lines[-1] + "\n"
    # fixed: it is built again (a failed run is never cached as done)
    manifest.write_text(manifest.read_text().replace("titel:", "title:"))
    out = build(site, "-q")
    assert out.returncode == 0, out.stderr
    assert all(p.exists() for p in bad_files)
    assert (site / ".cache" / "loadcurve" / "errors.txt").read_text() == ""


@pytest.mark.parametrize("where,target,words", [
    ("notes.txt", "run.yml", "is a symbolic link;"),                  # inside the run
    ("pool/copy.hlog", "r100.hlog", "is a symbolic link;"),           # inside, unnamed by run.yml
    ("extra", "pool", "is a symbolic link;"),                         # a folder inside
    ("passwd.txt", "/etc/passwd", "pointing outside the run folder"),  # not named by run.yml
])
def test_symlink_in_a_run_is_refused(tmp_path, where, target, words):
    site = make_site(tmp_path, "good", "linked", mini=True)
    link = site / "runs" / "linked" / where
    link.symlink_to(target)
    out = build(site)
    assert out.returncode == 1
    errors = [ln for ln in out.stderr.splitlines() if ln.startswith("error:")]
    assert errors == [f"error: run linked: runs/linked/{where}: {words} runs/ is published as "
                      "regular files only (Jekyll would publish the link itself): replace it "
                      "with a copy of the file"] if "outside" not in words else \
        [f"error: run linked: runs/linked/{where}: is a symbolic link pointing outside the run "
         "folder; runs/ is published as regular files only (Jekyll would publish the link "
         "itself): replace it with a copy of the file"]
    assert find_data(site, "good").is_file()
    assert not find_data(site, "linked").exists()


def test_symlinked_run_folder_and_stray_links_in_runs_are_refused(tmp_path):
    site = make_site(tmp_path, "good", mini=True)
    (site / "runs" / "alias").symlink_to("good")               # a run folder inside runs/
    (site / "runs" / "README.md").symlink_to("/etc/passwd")     # not a run at all
    out = build(site)
    assert out.returncode == 1
    errors = sorted(ln for ln in out.stderr.splitlines() if ln.startswith("error:"))
    assert len(errors) == 2, out.stderr
    assert errors[0].startswith("error: run alias: runs/alias: the run folder is a symbolic link")
    assert errors[1].startswith("error: runs/README.md: is a symbolic link; runs/ is published")
    assert find_data(site, "good").is_file()
