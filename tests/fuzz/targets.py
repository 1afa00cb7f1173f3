"""Fuzz targets: bytes in; the reader's data or its one documented error out, nothing else.

Shared by the coverage-guided harness (tests/fuzz/run.py, atheris, run by hand) and by
tests/test_hardening_corpus.py, which replays every file under tests/fuzz/corpus/<target>/ as a
regression test. A target raises (AssertionError or whatever escaped the reader) on a finding.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from analysis.errors import HlogError, JfrError, ManifestError

_DIR = Path(tempfile.mkdtemp(prefix="loadcurve-fuzz-"))
# Inputs above this size are skipped: the readers bound work by the bytes available, so large
# inputs only slow the fuzzer down.
MAX_INPUT = 1 << 20


def _write(name: str, data: bytes) -> Path:
    path = _DIR / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def hlog(data: bytes) -> None:
    """read_hlog: a log whose every interval answers percentiles, or one HlogError naming the
    file; every warning names the file too."""
    from analysis.read.hdr.log import read_hlog
    if len(data) > MAX_INPUT:
        return
    path = _write("fuzz.hlog", data)
    try:
        log = read_hlog(path)
    except HlogError as exc:
        assert str(exc).startswith(str(path)), str(exc)
        return
    for warning in log.warnings:
        assert warning.startswith(f"{path}:"), warning
    for interval in log.intervals:
        h = interval.histogram
        assert h.total_count >= 0
        if h.total_count:
            assert h.value_at_percentile(99.0) <= h.max
    for tag in log.tags():
        try:
            log.merged(tag=tag).value_at_percentile(50)
        except HlogError:
            pass


def manifest(data: bytes) -> None:
    """load_manifest: a Manifest, or one ManifestError listing bounded one-line problems."""
    from analysis.read.manifest import load_manifest
    if len(data) > MAX_INPUT:
        return
    run_dir = _DIR / "runs" / "fuzz"
    _write("runs/fuzz/run.yml", data)
    try:
        load_manifest(run_dir, run_dir.parent)
    except ManifestError as exc:
        assert exc.problems and str(exc).startswith(str(run_dir / "run.yml"))
        for problem in exc.problems:
            assert len(problem) < 2000, f"unbounded problem ({len(problem)} chars)"
            assert "\n" not in problem and "\r" not in problem, f"multi-line problem {problem!r:.300}"


def jfr(data: bytes) -> None:
    """summarize_jfr: a summary, or one JfrError naming the file."""
    from analysis.derive.jvm_summary import summarize_jfr
    if len(data) > MAX_INPUT:
        return
    path = _write("fuzz.jfr", data)
    try:
        summary = summarize_jfr(path)
    except JfrError as exc:
        assert str(path) in str(exc), str(exc)
        return
    assert isinstance(summary, dict)


TARGETS = {"hlog": hlog, "manifest": manifest, "jfr": jfr}
SUFFIX = {"hlog": ".hlog", "manifest": ".yml", "jfr": ".jfr"}

if os.environ.get("LOADCURVE_FUZZ_KEEP") is None:
    import atexit
    import shutil
    atexit.register(shutil.rmtree, _DIR, ignore_errors=True)
