"""Hardening (issue 6): hostile manifests, broken runs through the CLI, kill -9 and concurrent
builds, files written by people left alone.

What the other suites already cover is not repeated here: the .hlog and JFR readers' own fuzzing
(test_hlog_codec.py, test_jfr_fuzz.py), a held lock, one kill at the chart stage and one broken
manifest (test_build.py), escaping of a hand-written data file (test_site.py). The site-level
end-to-end checks (injection, odd values, reproducible `_site/`) are in test_hardening_site.py;
the fuzzer's regression corpus is replayed by test_hardening_corpus.py.
"""
from __future__ import annotations

import math
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis.pipeline.cache import code_version
from analysis.errors import ManifestError
from analysis.read.manifest import Manifest, load_manifest
from analysis.paths import find_data
from tests.helpers import (ENV, authored, build, edit_manifest, encode, log_line, make_site,
                           snapshot, time_limit, write_log)

pytestmark = pytest.mark.slow     # (make check leaves it out; make test runs it)

# A valid manifest; the fuzzers below replace parts of it.
VALID = {
    "title": "A run", "date": "2026-11-22", "description": "d", "value_unit": "us",
    "tags": ["jvm"], "service_time_ms": 5,
    "systems": [{"id": "pool", "label": "Pool", "concurrency_limit": 2}],
    "load_points": [{"id": "r25", "offered_rate": 25, "clients": 5, "duration_s": 30}],
    "environment": {"cpu": "x", "cores": 2}, "load_generator": {"model": "open", "timeout_s": 15},
    "cells": [{"system": "pool", "load": "r25", "sent": 10}],
}
LONG_MAX = 2**63 - 1


def change(tree: Path) -> None:
    """Inputs B: every output of the run changes."""
    edit_manifest(tree / "runs" / "one", lambda m: (
        m["load_points"][0].update(offered_rate=120), m.update(title=m["title"] + " B")))


def load_text(tmp_path: Path, text: str | bytes, seconds: int = 10) -> Manifest | ManifestError:
    """Write run.yml and load it: a Manifest, or the ManifestError it raised. Any other
    exception (or a hang) fails the calling test."""
    run_dir = tmp_path / "runs" / "fuzz"
    run_dir.mkdir(parents=True, exist_ok=True)
    target = run_dir / "run.yml"
    target.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    with time_limit(seconds):
        try:
            return load_manifest(run_dir, run_dir.parent)
        except ManifestError as exc:
            assert exc.problems, "a ManifestError must list its problems"
            for problem in exc.problems:
                assert isinstance(problem, str) and problem
                assert "\n" not in problem and "\r" not in problem, f"one line: {problem!r:.300}"
                assert len(problem) < 2000, f"unbounded message ({len(problem)} chars)"
            assert str(exc).startswith(str(target)), "the error must name the file"
            return exc


# --- the manifest loader, fuzzed -----------------------------------------------------------

hostile_values = st.one_of(
    st.none(), st.booleans(),
    st.integers(), st.sampled_from([LONG_MAX, LONG_MAX + 1, -(2**63) - 1, 10**30, 10**4000]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.sampled_from(["\u202e\u0000", "ünïcödé ✓ 🚀", "\ud7ff", "<script>alert(1)</script>",
                     "{{ site }}", "../../etc/passwd", "/etc/passwd", "a" * 5000, "2026-13-45",
                     "r25", "pool", "open", "ms"]),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)
# every place a value can sit in a manifest: top-level keys, and the keys of each nested entry
PLACES = ([(k,) for k in VALID] + [("systems", 0, k) for k in ("id", "label", "concurrency_limit",
          "description", "nope")] + [("load_points", 0, k) for k in ("id", "offered_rate",
          "clients", "duration_s")] + [("environment", k) for k in ("cpu", "cores", "x")]
          + [("load_generator", k) for k in ("model", "timeout_s", "connections")]
          + [("cells", 0, k) for k in ("system", "load", "hlog", "jfr", "tag", "sent", "errors",
                                       "repetition")] + [("schema_version",), ("x",)])


def replaced(place: tuple, value) -> dict:
    doc = yaml.safe_load(yaml.safe_dump(VALID))  # a deep copy
    target = doc
    for part in place[:-1]:
        target = target[part]
    target[place[-1]] = value
    return doc


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=st.lists(st.tuples(st.sampled_from(PLACES), hostile_values), min_size=1,
                        max_size=4))
def test_valid_manifest_with_hostile_values_gives_a_manifest_or_one_error(tmp_path, changes):
    """Structure-aware: a valid manifest with one to four values replaced by wrong types, huge
    or non-finite numbers, odd unicode, paths that leave the run. Only ManifestError may come
    out, and a manifest that loads holds only what validation promises."""
    doc = yaml.safe_load(yaml.safe_dump(VALID))  # a deep copy
    for place, value in changes:
        _replace_in(doc, place, value)
    try:
        text = yaml.safe_dump(doc, allow_unicode=True)
    except (yaml.YAMLError, UnicodeEncodeError, ValueError):
        return  # not expressible as YAML (e.g. a lone surrogate); nothing to load
    out = load_text(tmp_path, text)
    if isinstance(out, Manifest):
        for lp in out.load_points:
            for v in (lp.offered_rate, lp.duration_s):
                assert isinstance(v, (int, float)) and 0 < v and math.isfinite(float(v))
                assert isinstance(v, float) or v <= LONG_MAX
        for cell in out.cells:
            assert not cell.hlog.startswith("/") and ".." not in cell.hlog.split("/")
        assert isinstance(out.title, str) and out.title.strip()


def _replace_in(doc: dict, place: tuple, value) -> None:
    """Set doc[place] = value, unless an earlier change removed the way there."""
    target = doc
    try:
        for part in place[:-1]:
            target = target[part]
        target[place[-1]] = value
    except (KeyError, IndexError, TypeError):
        pass


yaml_fragments = st.sampled_from([
    "&a [x, y]", "*a", "&b {k: v}", "*b", "!!python/object/apply:os.system ['true']",
    "!!python/name:os.system", "!!binary aGVsbG8=", "!!set {a, b}", "!!omap [a: 1]", "~",
    "2026-11-22", "1e400", "0x7fffffffffffffff", "0o777", "1_000", ".nan", "-.inf", "'quoted'",
    '"esc \\u0000"', "|\n  block", ">-\n  folded", "[", "]", "{", "}", "- ", ": ", "? ", "#",
    "\t", "\ufeff", "%YAML 1.1\n---", "---", "...", "<<: *b", "!custom x",
])


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.tuples(st.sampled_from(list(VALID) + ["x", "schema_version"]),
                                st.lists(yaml_fragments, min_size=1, max_size=3)),
                      min_size=1, max_size=8))
def test_random_yaml_syntax_gives_a_manifest_or_one_error(tmp_path, parts):
    """Text-level: keys with values made of YAML's sharper edges (anchors, aliases, merge keys,
    tags, directives, odd scalars) glued together, often invalid."""
    text = "".join(f"{k}: {' '.join(frags)}\n" for k, frags in parts)
    load_text(tmp_path, text)


def billion_laughs(levels: int = 9, width: int = 9) -> str:
    lines = [f"l0: &a0 [{', '.join(['lol'] * width)}]"]
    lines += [f"l{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


BASE = yaml.safe_dump(VALID)
HOSTILE = {
    # 9^9 values if expanded; each as unknown keys, and aliased into every kind of field
    "billion-laughs": billion_laughs() + BASE,
    "bomb-in-number": billion_laughs() + BASE.replace("service_time_ms: 5", "service_time_ms: *a8"),
    "bomb-in-date": billion_laughs().replace("l", "m") + BASE.replace("date: '2026-11-22'", "date: *a8"),
    "bomb-in-version": billion_laughs() + "schema_version: *a8\n" + BASE,
    "bomb-in-unit": billion_laughs() + BASE.replace("value_unit: us", "value_unit: *a8"),
    "bomb-in-systems": billion_laughs() + BASE.replace("systems:", "old_systems:") + "systems: *a8\n",
    "bomb-in-tags": billion_laughs() + BASE.replace("tags:", "old_tags:") + "tags: *a8\n",
    "recursive-list": "tags: &t [*t]\n" + BASE.replace("tags:", "old_tags:"),
    "recursive-map": "environment: &e {cpu: *e}\n" + BASE.replace("environment:", "old_env:"),
    "recursive-version": "schema_version: &v [*v]\n" + BASE,
    "recursive-system": BASE.replace("systems:", "old_systems:") + "systems: &s [{id: *s, label: *s}]\n",
    "deep-nesting": "tags: " + "[" * 20000 + "]" * 20000 + "\n" + BASE.replace("tags:", "old:"),
    "deep-mapping": "tags: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n" + BASE.replace("tags:", "old:"),
    "int-5000-digits": BASE.replace("offered_rate: 25", "offered_rate: " + "9" * 5000),
    "int-400-digits": BASE.replace("offered_rate: 25", "offered_rate: " + "9" * 400),
    "long-max-plus-one": BASE.replace("duration_s: 30", f"duration_s: {LONG_MAX + 1}"),
    "float-overflow": BASE.replace("offered_rate: 25", "offered_rate: 1.0e+400"),
    "nan": BASE.replace("offered_rate: 25", "offered_rate: .nan"),
    "huge-string": BASE.replace("title: A run", "title: " + "x" * 2_000_000),
    "nul-and-controls": BASE.replace("title: A run", 'title: "\\0\\x1b[31m\\u202e"'),
    "not-utf8": BASE.encode().replace(b"A run", b"A \xff\xfe run"),
    "bom": "\ufeff" + BASE,
    "tab-indent": BASE.replace("  ", "\t"),
    "python-object-apply": BASE.replace("title: A run", "title: !!python/object/apply:os.system ['touch PWNED']"),
    "python-object-new": BASE.replace("title: A run", "title: !!python/object/new:os.system ['touch PWNED']"),
    "python-name": BASE.replace("title: A run", "title: !!python/name:os.system"),
    "python-module": BASE.replace("title: A run", "title: !!python/module:os"),
    "python-tuple": BASE.replace("title: A run", "title: !!python/tuple [a, b]"),
    "merge-key": "base: &b {id: pool, label: P}\n" + BASE.replace("- concurrency_limit: 2", "- <<: *b"),
    "two-documents": BASE + "---\n" + BASE,
    "empty": "",
    "only-comment": "# nothing\n",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_yaml_is_one_manifest_error_quickly(tmp_path, monkeypatch, name):
    """YAML bombs, recursive aliases, python tags, numbers no float holds, non-UTF-8: one
    ManifestError in bounded time (10 s), never a hang, RecursionError or ValueError; and the
    safe loader never runs anything."""
    monkeypatch.chdir(tmp_path)
    out = load_text(tmp_path, HOSTILE[name])
    assert not (tmp_path / "PWNED").exists()
    if name not in ("bom", "tab-indent", "merge-key", "nul-and-controls", "huge-string"):
        assert isinstance(out, ManifestError), f"{name} loaded: {out!r:.300}"


def test_numbers_up_to_long_max_are_accepted(tmp_path):
    doc = replaced(("load_points", 0, "offered_rate"), LONG_MAX)
    doc["cells"][0]["sent"] = LONG_MAX
    m = load_text(tmp_path, yaml.safe_dump(doc))
    assert isinstance(m, Manifest), m
    assert m.load_points[0].offered_rate == LONG_MAX and m.cells[0].sent == LONG_MAX


# --- broken runs through the CLI -----------------------------------------------------------


def _drop_duration(doc):
    del doc["load_points"][0]["duration_s"]


def _hlog(path: str):
    def change(doc):
        doc["cells"][0]["hlog"] = path
    return change


# run id -> (how to break it, what its one error line must contain)
BREAKAGES = {
    "bad-yaml": (lambda d: (d / "run.yml").write_text("title: [unclosed\n"), ["run.yml", "not valid YAML"]),
    "missing-field": (lambda d: edit_manifest(d, _drop_duration), ["run.yml", "duration_s", "required"]),
    "corrupt-hlog": (lambda d: (d / "pool" / "r100.hlog").write_bytes(
        b"#[Histogram log format version 1.3]\n0.000,1.000,0.001,HISTFAAAAIN42i2M0QkCQQxEc2+zu\x00\xff\n"),
        ["pool/r100.hlog"]),
    "dotdot": (lambda d: edit_manifest(d, _hlog("../../etc/passwd")), ["run.yml", "hlog", "../../etc/passwd"]),
    "absolute": (lambda d: edit_manifest(d, _hlog("/etc/passwd")), ["run.yml", "hlog", "absolute"]),
    "symlink-out": (lambda d: ((d / "pool" / "r100.hlog").unlink(),
                               os.symlink("/etc/passwd", d / "pool" / "r100.hlog")),
                    ["run.yml", "pool/r100.hlog", "outside"]),
    "symlink-dir-out": (lambda d: (shutil.rmtree(d / "pool"), os.symlink("/etc", d / "pool")),
                        ["run.yml", "outside"]),
    "symlink-manifest": (lambda d: (shutil.copy(d / "run.yml", d.parent.parent / "outside.yml"),
                                    (d / "run.yml").unlink(),
                                    os.symlink(d.parent.parent / "outside.yml", d / "run.yml")),
                         ["run.yml", "outside"]),
    "unit-typo": (lambda d: edit_manifest(d, lambda m: m.update(value_unit="µs")), ["run.yml", "value_unit"]),
    "huge-rate": (lambda d: edit_manifest(d, lambda m: m["load_points"][0].update(
        offered_rate=10**400)), ["run.yml", "offered_rate"]),
    "Bad.Name": (lambda d: None, ["Bad.Name", "run id"]),
    "not-utf8": (lambda d: (d / "run.yml").write_bytes(b"title: \xff\xfe\n"), ["run.yml", "UTF-8"]),
    "no-manifest": (lambda d: (d / "run.yml").unlink(), ["run.yml", "missing"]),
    "python-tag": (lambda d: (d / "run.yml").write_text(
        (d / "run.yml").read_text().replace("title:", "title: !!python/object/apply:os.system ['touch PWNED'] #")),
        ["run.yml", "not valid YAML"]),
}


@pytest.fixture(scope="module")
def broken_build(tmp_path_factory):
    """One build of a tree with one good run and every kind of broken run beside it."""
    tmp = tmp_path_factory.mktemp("broken")
    site = make_site(tmp, "good", *BREAKAGES, mini=True)
    outside = tmp / "elsewhere"
    shutil.copytree(site / "runs" / "good", outside)
    os.symlink(outside, site / "runs" / "linked-run")      # a run folder escaping runs/
    (site / "_posts").mkdir()
    (site / "_posts" / "2026-01-01-a-post.md").write_text("---\ntitle: by hand\n---\nText.\n")
    for run_id, (breaker, _) in BREAKAGES.items():
        breaker(site / "runs" / run_id)
    before = authored(site)
    out = build(site, "--jobs", "2", timeout=240)
    return site, out, before


def test_each_broken_run_is_one_error_line_naming_run_and_file(broken_build):
    site, out, _ = broken_build
    assert out.returncode == 1, out.stderr
    errors = [ln for ln in out.stderr.splitlines() if ln.startswith("error:")]
    for run_id, (_, needles) in BREAKAGES.items():
        mine = [ln for ln in errors if ln.startswith(f"error: run {run_id}: ")]
        assert len(mine) == 1, (run_id, errors)
        for needle in needles:
            assert needle in mine[0], (run_id, needle, mine[0])
    linked = [ln for ln in errors if ln.startswith("error: run linked-run: ")]
    assert len(linked) == 1 and "outside" in linked[0], errors
    assert len(errors) == len(BREAKAGES) + 1, errors


def test_broken_runs_never_print_a_traceback_or_internal_error(broken_build):
    _, out, _ = broken_build
    assert "Traceback" not in out.stderr and "internal error" not in out.stderr, out.stderr
    assert all(ln.startswith(("error: ", "warning: ", "[", "built ", "corpus: ")) for ln in
               out.stderr.splitlines()), out.stderr


def test_the_good_run_still_builds_and_broken_ones_write_nothing(broken_build):
    site, _, _ = broken_build
    doc = yaml.safe_load(find_data(site, "good").read_text())
    assert doc["id"] == "good" and doc["cells"]
    assert (site / "_reports" / "good.html").is_file()
    assert sorted(p.stem for folder in ("_data/runs", "_rundata") if (site / folder).is_dir()
                  for p in (site / folder).iterdir()) == ["good"]
    assert sorted(p.name for p in (site / "assets" / "charts").iterdir()) == ["good"]
    assert not (site / "PWNED").exists() and not (site / "runs" / "python-tag" / "PWNED").exists()


def test_broken_build_leaves_authored_files_alone(broken_build):
    site, _, before = broken_build
    assert authored(site) == before


# --- kill -9 at random moments, and concurrent builds ---------------------------------------

def start_build(site: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "analysis", "build", "--runs", "runs", *args],
                            cwd=site, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, env=ENV)


def outputs(site: Path) -> dict[str, bytes]:
    """The generated files (temp files left by a killed writer excluded)."""
    return {rel: (site / rel).read_bytes() for rel in snapshot(site)
            if not Path(rel).name.endswith(".tmp")}


def check_parses(files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        if rel.endswith(".yml"):
            list(yaml.safe_load_all(data.decode()))
        elif rel.endswith(".html"):   # a report page: YAML front matter, then its HTML
            assert data.startswith(b"---\n") and data.rstrip().endswith(b"</article>"), rel
            yaml.safe_load(data.decode().split("---\n")[1])
        elif rel.endswith(".png"):
            assert data.startswith(b"\x89PNG") and data.endswith(b"IEND\xaeB`\x82"), rel
        elif rel.endswith(".svg"):
            assert data.rstrip().endswith(b"</svg>"), rel


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> tuple[Path, dict[str, bytes], str]:
    """A tree with one small run, built once (state A); tests copy it. Outputs do not depend on
    where the tree sits (test_build.py checks that), so a copy's build must give these bytes."""
    site = make_site(tmp_path_factory.mktemp("reference"), "one", mini=True)
    (site / "_posts").mkdir()
    (site / "_posts" / "2026-01-01-p.md").write_text("---\ntitle: by hand\n---\n")
    assert build(site, "-q").returncode == 0
    return site, outputs(site), code_version()


def copy_of(reference_site: Path, dest: Path) -> Path:
    shutil.copytree(reference_site, dest, symlinks=True)
    return dest


def test_kill_9_at_random_moments_leaves_old_or_new_files_never_half(reference, tmp_path):
    """From A, change the inputs to B (built once elsewhere for reference), then kill -9 builds
    of B at random moments over the build's whole length (seeded; LOADCURVE_KILL_SEED repeats
    a run, the seed is in every message). After every kill each generated file is byte-equal
    to A's or to B's and parses; the next build completes to exactly B; people's files are
    untouched."""
    seed = int(os.environ.get("LOADCURVE_KILL_SEED", random.randrange(1 << 30)))
    rng = random.Random(seed)
    old = reference[1]
    ref = copy_of(reference[0], tmp_path / "b")
    change(ref)
    started = time.monotonic()
    assert build(ref, "-q").returncode == 0
    length = time.monotonic() - started
    new = outputs(ref)
    # every .yml of the run changes (the corpus-wide regressions list has no series here)
    assert set(new) == set(old) and all(new[k] != old[k] for k in new
                                        if k.endswith(".yml") and k != "_data/regressions.yml")

    site = copy_of(reference[0], tmp_path / "a")
    change(site)
    before = authored(site)
    for moment in sorted(rng.uniform(0.05, length) for _ in range(3)):
        proc = start_build(site, "--force")
        time.sleep(moment)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        now = outputs(site)
        assert set(now) == set(old), (seed, moment, set(now) ^ set(old))
        torn = [rel for rel in now if now[rel] not in (old[rel], new[rel])]
        assert not torn, f"seed {seed}, kill at {moment:.2f} s: torn files {torn}"
        check_parses(now)
    out = build(site)
    assert out.returncode == 0, (seed, out.stderr)
    assert outputs(site) == new, seed
    assert authored(site) == before
    again = build(site)   # the state recorded after the kills is right: nothing left to do
    assert again.returncode == 0, (seed, again.stderr)
    if code_version() == reference[2]:    # (the analysis code is edited while tests run)
        assert ": up to date" in again.stderr, (seed, again.stderr)


def test_forced_rebuild_killed_leaves_every_file_byte_equal(reference, tmp_path):
    """Same inputs, --force, killed as analysis starts and as charts are drawn: every file is
    byte-equal to the earlier build after each kill, and after the next build."""
    site = copy_of(reference[0], tmp_path / "s")
    old = reference[1]
    for stage in (": analyse", ": charts"):
        proc = start_build(site, "--force")
        for line in proc.stderr:
            if stage in line:
                break
        time.sleep(0.15)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        assert outputs(site) == old, stage
    assert build(site, "-q").returncode == 0 and outputs(site) == old


def test_temp_files_left_by_a_killed_writer_are_cleaned_by_the_next_build(reference, tmp_path):
    """Generated folders hold only generated files, even after a kill -9 mid-write (this
    failed until build.py learned to sweep them; kept as a regression test)."""
    site = copy_of(reference[0], tmp_path / "s")
    # exactly what atomic.write_bytes leaves when killed mid-write
    stray = [find_data(site, "one").parent / ".one.yml.k1ll3d.tmp",
             site / "assets" / "charts" / "one" / ".load-curve.svg.k1ll3d.tmp"]
    for path in stray:
        path.write_bytes(b"half a fi")
    assert build(site, "-q").returncode == 0
    assert [p for p in stray if p.exists()] == []


def test_two_builds_at_once_wait_or_fail_clearly_and_never_corrupt(reference, tmp_path):
    site = tmp_path / "s"
    shutil.copytree(reference[0] / "runs", site / "runs")
    shutil.copytree(reference[0] / "_posts", site / "_posts")
    before = authored(site)
    procs = [start_build(site) for _ in range(2)]
    results = [(p.wait(timeout=240), p.stderr.read()) for p in procs]
    codes = sorted(code for code, _ in results)
    assert codes in ([0, 0], [0, 1]), results
    for code, err in results:
        assert "Traceback" not in err
        if code == 1:
            errors = [ln for ln in err.splitlines() if ln.startswith("error:")]
            assert len(errors) == 1 and "another build is running" in errors[0], err
    assert outputs(site) == reference[1]
    assert authored(site) == before
    out = build(site)
    assert out.returncode == 0 and outputs(site) == reference[1], out.stderr
    if code_version() == reference[2]:    # (the analysis code is edited while tests run)
        assert out.stderr.count(": up to date") == 1, out.stderr


# --- exit codes ------------------------------------------------------------------------------

def run_build_in_process(site: Path, capsys) -> tuple[int, str]:
    from analysis.cli import main
    cwd = os.getcwd()
    os.chdir(site)
    try:
        code = main(["build", "--runs", "runs", "--jobs", "1", "-q"])
    finally:
        os.chdir(cwd)
    return code, capsys.readouterr().err


def test_a_bug_in_one_run_is_exit_2_and_one_line(tmp_path, monkeypatch, capsys):
    site = make_site(tmp_path, "good", "buggy", mini=True)
    from analysis.derive import analyse
    real = analyse.analyse_run

    def buggy(manifest, *args, **kwargs):
        if manifest.run_id == "buggy":
            raise ZeroDivisionError("simulated bug")
        return real(manifest, *args, **kwargs)
    monkeypatch.setattr(analyse, "analyse_run", buggy)
    monkeypatch.delenv("LOADCURVE_DEBUG", raising=False)
    code, err = run_build_in_process(site, capsys)
    errors = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith("error: run buggy: internal error: "
                                                     "ZeroDivisionError: simulated bug")
    assert "Traceback" not in err and find_data(site, "good").is_file()
    assert code == 2


def test_exit_codes_of_user_errors(tmp_path, capsys):
    """1: a run that fails (bad input) or a missing --runs folder; 0: everything built."""
    site = make_site(tmp_path, "good", mini=True)
    assert run_build_in_process(site, capsys)[0] == 0
    (site / "runs" / "bad").mkdir()
    code, err = run_build_in_process(site, capsys)
    assert code == 1 and "error: run bad: " in err
    shutil.rmtree(site / "runs")
    code, err = run_build_in_process(site, capsys)
    assert code == 1 and err.strip().startswith("error: runs: no such folder")


@pytest.mark.skipif(not os.environ.get("LOADCURVE_SLOW"),
                    reason="about 20 s: set LOADCURVE_SLOW=1 (a 24-hour log through the build)")
def test_a_24_hour_log_builds(tmp_path):
    """86,400 one-second intervals (13 MB of log) through the whole build: every interval in the
    CSV, the charts drawn, in bounded time."""
    import numpy as np
    from analysis.read.hdr.histogram import Histogram, layout_for
    run = tmp_path / "runs" / "day"
    (run / "s").mkdir(parents=True)
    layout = layout_for(1, 3_600_000_000, 3)
    rng = np.random.default_rng(1)
    payloads = [encode(Histogram.from_values(layout, rng.integers(1000, 50000, 20)))
                for _ in range(64)]
    write_log(run / "s" / "l.hlog", [log_line(payloads[i % 64], float(i)) for i in range(86400)])
    (run / "run.yml").write_text(yaml.safe_dump({
        "title": "A day", "date": "2026-01-01", "description": "24 h", "value_unit": "us",
        "systems": [{"id": "s", "label": "S"}],
        "load_points": [{"id": "l", "offered_rate": 20, "duration_s": 86400}]}))
    out = build(tmp_path, timeout=180)
    assert out.returncode == 0, out.stderr
    doc = yaml.safe_load(find_data(tmp_path, "day").read_text())
    (cell,) = [c for by_system in doc["cells"].values() for c in by_system.values()]
    assert cell["count"] == 86400 * 20
    csv = (tmp_path / cell["intervals_csv"]).read_text().splitlines()
    assert len(csv) == 1 + 86400
    assert all((tmp_path / c["svg"]).is_file() for c in doc["charts"]["latency_over_time"])


# A run whose input is not a regular file (a FIFO; a device such as /dev/zero the same) used to
# hang the build: build.run_input_hash -> FileHashes.digest opened and read every file of the
# run folder, blocking forever on a FIFO (and reading /dev/zero without end). The build now
# refuses such an entry with one error for that run; the other runs still build.
def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _device(path: Path) -> None:
    try:
        os.mknod(path, 0o644 | __import__("stat").S_IFCHR, os.makedev(1, 5))  # like /dev/zero
    except PermissionError:
        pytest.skip("creating a device node needs root")


@pytest.mark.parametrize("make", [_fifo, _device], ids=["fifo", "device"])
def test_a_fifo_in_a_run_folder_is_one_error_not_a_hang(tmp_path, make):
    site = make_site(tmp_path, "good", "fifo", mini=True)
    hlog = site / "runs" / "fifo" / "pool" / "r100.hlog"
    hlog.unlink()
    make(hlog)
    out = build(site, timeout=90)
    assert out.returncode == 1
    errors = [ln for ln in out.stderr.splitlines() if ln.startswith("error:")]
    assert errors == ["error: run fifo: runs/fifo/pool/r100.hlog: not a regular file"]
    assert find_data(site, "good").is_file()
    assert not find_data(site, "fifo").exists()


def test_a_fifo_anywhere_in_a_run_folder_even_through_a_symlink_is_refused(tmp_path):
    site = make_site(tmp_path, "fifo", mini=True)
    run = site / "runs" / "fifo"
    (run / "extra").mkdir()
    os.mkfifo(run / "extra" / "pipe")              # not named by run.yml: hashed all the same
    (run / "notes.txt").symlink_to("extra/pipe")   # a symlink that stays inside the run
    out = build(site, timeout=90)
    assert out.returncode == 1
    errors = [ln for ln in out.stderr.splitlines() if ln.startswith("error:")]
    assert errors == ["error: run fifo: runs/fifo/notes.txt: not a regular file"]  # first found
    (run / "notes.txt").unlink()
    out = build(site, timeout=90)
    assert out.returncode == 1
    errors = [ln for ln in out.stderr.splitlines() if ln.startswith("error:")]
    assert errors == ["error: run fifo: runs/fifo/extra/pipe: not a regular file"]


def test_hgrm_refuses_a_fifo_instead_of_blocking_on_it(tmp_path):
    pipe = tmp_path / "in.hlog"
    os.mkfifo(pipe)  # a FIFO, not /dev/zero: blocks without eating memory while it hangs
    out = subprocess.run([sys.executable, "-m", "analysis", "hgrm", "-i", str(pipe)],
                         capture_output=True, text=True, timeout=8, env=ENV)
    assert out.returncode == 1
    assert "not a regular file" in out.stderr
