"""Analyse runs/ into _data, charts and report pages (only the runs whose inputs changed).

For each run folder under --runs: validate run.yml, read its .hlog files, write
_data/runs/<run-id>.yml, CSV series under assets/data/<run-id>/, charts under
assets/charts/<run-id>/ and the page _reports/<run-id>.md. A content-hash cache (inputs, manifest
and the analysis code) skips runs that did not change; --force redoes them all. A broken run is
reported on one `error:` line and skipped; the others still build; the exit status is then 1.
Outputs are written atomically, so an interrupted build leaves the previous files intact; a lock
(.cache/loadcurve/build.lock) keeps two builds of one tree apart.

Exit status: 0 all runs built, 1 some run failed (or the lock is held), 2 internal error.
"""
from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import multiprocessing
import os
import stat
import sys
import time
import traceback
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from analysis import atomic
from analysis.datafiles import repo_relative
from analysis.errors import BuildError, LoadcurveError
from analysis.pages import REPORTS_DIR

STATE_VERSION = 1
CACHE_DIR = ".cache/loadcurve"
# Folders holding only generated files; a stale output is removed only if it lies in one.
GENERATED_DIRS = ("_data/runs", "assets/charts", "assets/data", "_reports")
PACKAGE_DIR = Path(__file__).resolve().parent


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runs", default="runs", help="folder of run folders (default: runs)")
    parser.add_argument("--site", default=".",
                        help="site root that receives _data/, assets/ and _reports/ (default: .)")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="no progress on stderr (errors and warnings still printed)")
    parser.add_argument("--force", action="store_true",
                        help="re-analyse and re-draw every run, even if unchanged")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="worker processes for analysis and charts (default: 2)")


# --- lock -----------------------------------------------------------------------------------

class BuildLock:
    """An exclusive flock on .cache/loadcurve/build.lock; the kernel drops it if we die."""

    def __init__(self, path: Path):
        self.path = path
        self.fd: int | None = None

    def __enter__(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
            os.close(fd)
            raise BuildError(f"another build is running on this tree (pid {holder})",
                             path=self.path, hint="wait for it to finish, then build again")
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self.fd = fd
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)  # releases the lock; the file stays (removing it would race)
            self.fd = None


# --- hashing --------------------------------------------------------------------------------

def code_version() -> str:
    """Hash of the analysis package's source and the library versions that shape the output."""
    h = hashlib.sha256()
    for path in sorted(PACKAGE_DIR.rglob("*")):
        if path.is_file() and path.suffix in (".py", ".j2", ".md", ".txt") \
                and "__pycache__" not in path.parts:
            h.update(path.relative_to(PACKAGE_DIR).as_posix().encode() + b"\0")
            h.update(path.read_bytes())
    try:
        from importlib.metadata import version
        for dist in ("matplotlib", "numpy", "PyYAML", "Jinja2"):
            h.update(f"{dist}={version(dist)}\0".encode())
    except Exception:  # noqa: BLE001 - metadata missing: the source hash still applies
        pass
    return h.hexdigest()


class FileHashes:
    """sha256 of files, re-read only when size or mtime changed (like git's index)."""

    def __init__(self, path: Path):
        self.path = path
        try:
            self.entries = json.loads(path.read_text())
            if not isinstance(self.entries, dict):
                self.entries = {}
        except (OSError, ValueError):
            self.entries = {}
        self.dirty = False
        self.seen: set[str] = set()

    def digest(self, path: Path) -> str:
        """Raises NotRegularFile for a FIFO, device or socket: reading one would block forever
        (a FIFO with no writer) or never end (/dev/zero)."""
        st = path.stat()
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(path)
        key = str(path.resolve())
        self.seen.add(key)
        cached = self.entries.get(key)
        if cached and cached[0] == st.st_size and cached[1] == st.st_mtime_ns:
            return cached[2]
        h = hashlib.sha256()
        # O_NONBLOCK and a second check on the open file: a file swapped for a FIFO after the
        # stat above must not block the open (for a regular file the flag changes nothing).
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with open(fd, "rb") as f:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise NotRegularFile(path)
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        self.entries[key] = [st.st_size, st.st_mtime_ns, h.hexdigest()]
        self.dirty = True
        return h.hexdigest()

    def save(self) -> None:
        """Write the cache, forgetting files this build did not look at (deleted runs)."""
        stale = set(self.entries) - self.seen
        if stale:
            for key in stale:
                del self.entries[key]
            self.dirty = True
        if self.dirty:
            atomic.write_text(self.path, json.dumps(self.entries, sort_keys=True))
            self.dirty = False


class NotRegularFile(Exception):
    def __init__(self, path: Path):
        super().__init__(str(path))
        self.path = path


def not_regular_error(path: Path, site_root: Path) -> BuildError:
    """The one error for a FIFO, device or socket among a run's inputs."""
    return BuildError("not a regular file", path=repo_relative(path, site_root))


def run_input_hash(run_dir: Path, site_root: Path, code: str, hashes: FileHashes) -> str:
    """Hash of everything a run's outputs depend on: its files, where it sits, the code.

    Raises BuildError for an entry of the run folder that is not a regular file (FIFO, device,
    socket, also through a symlink that stays inside the run): hashing it would hang the build,
    and the analysis could not read it either."""
    h = hashlib.sha256()
    h.update(code.encode() + b"\0")
    h.update(os.path.relpath(run_dir.absolute(), site_root.absolute()).encode() + b"\0")
    root = run_dir.resolve()
    for dirpath, dirnames, filenames in os.walk(run_dir):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            rel = path.relative_to(run_dir).as_posix()
            try:
                real = path.resolve()
                if root not in real.parents:
                    h.update(f"{rel}\0outside\0".encode())  # the manifest check reports it
                    continue
                h.update(f"{rel}\0{hashes.digest(real)}\0".encode())
            except NotRegularFile:
                raise not_regular_error(path, site_root) from None
            except OSError:
                h.update(f"{rel}\0unreadable\0".encode())
    return h.hexdigest()


def check_regular_inputs(manifest, site_root: Path) -> None:
    """The manifest's data files (.hlog, .jfr) that exist must be regular files. The hashing
    walk already refuses others; this guards the reads themselves (a file swapped after it)."""
    from analysis.manifest import default_jfr
    for cell in manifest.cells:
        for rel in (cell.hlog, cell.jfr or default_jfr(manifest, cell)):
            if not rel:
                continue
            path = manifest.resolve(rel)
            try:
                mode = path.stat().st_mode
            except OSError:
                continue  # missing: the analysis reports it
            if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
                raise not_regular_error(path, site_root)


# --- per-run work (runs in worker processes) ------------------------------------------------

def _fail(run_id: str, exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, LoadcurveError):
        return {"run": run_id, "ok": False, "error": str(exc)}
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
        return {"run": run_id, "ok": False, "error": f"{where}{exc.strerror or exc}"}
    detail = traceback.format_exc() if os.environ.get("LOADCURVE_DEBUG") else ""
    return {"run": run_id, "ok": False, "internal": True, "detail": detail,
            "error": f"internal error: {type(exc).__name__}: {exc} (re-run with "
                     f"LOADCURVE_DEBUG=1 for a traceback, and please report it)"}


def analyse_task(run_dir: str, runs_root: str, site_root: str) -> dict[str, Any]:
    """Validate, analyse and write one run's data files and page; return its chart jobs."""
    from analysis import charts, datafiles, pages
    from analysis.analyse import analyse_run
    from analysis.manifest import load_manifest

    run_id = Path(run_dir).name
    site = Path(site_root)
    try:
        manifest = load_manifest(Path(run_dir), Path(runs_root))
        check_regular_inputs(manifest, site)
        result = analyse_run(manifest, site)
        section, jobs = charts.chart_plan(result)
        result["charts"] = section
        doc = datafiles.run_document(result)
        outputs = []

        def write(rel: str, text: str) -> None:
            atomic.write_text(site / rel, text)
            outputs.append(rel)

        for c in result["cells"]:
            write(datafiles.series_csv_path(run_id, c["system"], c["load"]),
                  datafiles.series_csv(c["series"]))
        write(datafiles.table_csv_path(run_id), datafiles.table_csv(doc))
        write(datafiles.data_path(run_id), datafiles.dump_yaml(doc))
        outputs.append(pages.write_report(site, manifest))
        for job in jobs:
            outputs += [job["svg"], job["png"]]
        return {"run": run_id, "ok": True, "outputs": outputs, "chart_jobs": jobs,
                "warnings": result["warnings"], "cells": len(result["cells"])}
    except Exception as exc:  # noqa: BLE001 - one run's failure must not stop the others
        return _fail(run_id, exc)


def chart_task(run_id: str, jobs: list[dict[str, Any]], site_root: str) -> dict[str, Any]:
    from analysis import charts
    try:
        problems = [w for job in jobs for w in charts.render_job(job, site_root)]
        return {"run": run_id, "ok": True, "charts": len(jobs), "warnings": problems}
    except Exception as exc:  # noqa: BLE001
        return _fail(run_id, exc)


# --- the build ------------------------------------------------------------------------------

class Build:
    def __init__(self, runs_root: Path, site_root: Path, *, quiet: bool, force: bool, jobs: int):
        self.runs_root = runs_root
        self.site_root = site_root
        self.quiet = quiet
        self.force = force
        self.jobs = max(1, jobs)
        self.cache = site_root / CACHE_DIR
        self.state_path = self.cache / "state.json"
        self.failed: list[str] = []
        # A bug (not bad input) in any run makes the exit status 2, so scripts can tell them apart.
        self.internal_failure = False

    def say(self, text: str) -> None:
        if not self.quiet:
            print(text, file=sys.stderr, flush=True)

    def error(self, run_id: str, message: str, *, internal: bool = False) -> None:
        self.failed.append(run_id)
        self.internal_failure |= internal
        print(f"error: run {run_id}: {message}", file=sys.stderr, flush=True)

    def load_state(self) -> dict[str, Any]:
        try:
            state = json.loads(self.state_path.read_text())
            if state.get("version") == STATE_VERSION and isinstance(state.get("runs"), dict):
                return state
        except (OSError, ValueError, AttributeError):
            pass
        return {"version": STATE_VERSION, "runs": {}}

    def save_state(self, state: dict[str, Any]) -> None:
        atomic.write_text(self.state_path, json.dumps(state, sort_keys=True, indent=1))

    def discover(self) -> list[Path]:
        if not self.runs_root.is_dir():
            raise BuildError("no such folder", path=self.runs_root,
                             hint="give the folder of run folders with --runs")
        return sorted((p for p in self.runs_root.iterdir()
                       if p.is_dir() and not p.name.startswith(".")), key=lambda p: p.name)

    def outputs_intact(self, entry: dict[str, Any]) -> bool:
        for rel, size in entry.get("outputs", {}).items():
            try:
                if (self.site_root / rel).stat().st_size != size:
                    return False
            except OSError:
                return False
        return True

    def remove_outputs(self, rels) -> int:
        """Delete generated files we recorded writing (only inside the generated folders)."""
        removed = 0
        for rel in sorted(rels):
            if not any(rel.startswith(d + "/") for d in GENERATED_DIRS) or ".." in rel.split("/"):
                continue
            path = self.site_root / rel
            if rel.startswith(REPORTS_DIR + "/"):
                from analysis.pages import is_generated
                if not is_generated(path):
                    continue
            try:
                path.unlink()
                removed += 1
            except FileNotFoundError:
                continue
            parent = path.parent
            # drop the run's own now-empty folder (assets/charts/<id>/), never a shared one
            if parent.parent.as_posix().endswith(("assets/charts", "assets/data")):
                try:
                    parent.rmdir()
                except OSError:
                    pass
        return removed

    def remove_temp_leftovers(self) -> int:
        """Delete temporary files (`.<name>.<random>.tmp`, analysis/atomic.py) that a killed
        build left in the generated folders. Safe: we hold the lock, no build is writing."""
        removed = 0
        for top in GENERATED_DIRS + (CACHE_DIR,):
            folder = self.site_root / top
            if not folder.is_dir():
                continue
            for path in folder.rglob(".*.tmp"):
                if path.is_file() and not path.is_symlink():
                    path.unlink()
                    removed += 1
        return removed

    def _pool(self, tasks: int):
        if self.jobs <= 1 or tasks <= 1:
            return None
        # fork: workers start in milliseconds and inherit the imported modules
        ctx = multiprocessing.get_context("fork")
        return ProcessPoolExecutor(max_workers=min(self.jobs, tasks), mp_context=ctx)

    def run(self) -> int:
        started = time.monotonic()
        run_dirs = self.discover()
        if self.remove_temp_leftovers():
            self.say("removed temporary files left by an interrupted build")
        state = self.load_state()
        code = code_version()
        hashes = FileHashes(self.cache / "files.json")
        present = {p.name for p in run_dirs}

        todo: list[tuple[Path, str]] = []
        for run_dir in run_dirs:
            try:
                digest = run_input_hash(run_dir, self.site_root, code, hashes)
            except BuildError as exc:  # a FIFO or device among the inputs: skip this run
                self.error(run_dir.name, str(exc))
                continue
            entry = state["runs"].get(run_dir.name)
            if not self.force and entry and entry.get("inputs") == digest \
                    and self.outputs_intact(entry):
                self.say(f"{run_dir.name}: up to date")
                continue
            todo.append((run_dir, digest))
        hashes.save()

        # Runs whose folder is gone: their generated files go too.
        for run_id in sorted(set(state["runs"]) - present):
            n = self.remove_outputs(state["runs"][run_id].get("outputs", {}))
            del state["runs"][run_id]
            self.save_state(state)
            self.say(f"{run_id}: run removed; deleted {n} generated files")
        from analysis.pages import stale_reports
        for page in stale_reports(self.site_root, present):
            page.unlink()
            self.say(f"{page.stem}: run removed; deleted {page.relative_to(self.site_root)}")

        if todo:
            self._build(todo, state)
        total = len(run_dirs)
        failed = set(self.failed)
        built = sum(1 for d, _ in todo if d.name not in failed)
        up_to_date = total - len(todo) - len(failed - {d.name for d, _ in todo})
        self.say(f"built {built} of {total} runs ({up_to_date} up to date, "
                 f"{len(failed)} failed) in {time.monotonic() - started:.2f} s")
        if self.internal_failure:
            return 2
        return 1 if self.failed else 0

    def _build(self, todo: list[tuple[Path, str]], state: dict[str, Any]) -> None:
        n = len(todo)
        digests = {d.name: digest for d, digest in todo}
        order = {d.name: i for i, (d, _) in enumerate(todo, start=1)}
        pool = self._pool(n)
        try:
            # Stage 1: validate + analyse + data files, one task per run.
            for run_dir, _ in todo:
                self.say(f"[{order[run_dir.name]}/{n}] {run_dir.name}: analyse")
            args = [(str(d), str(self.runs_root), str(self.site_root)) for d, _ in todo]
            if pool is None:
                results = [analyse_task(*a) for a in args]
            else:
                results = list(pool.map(analyse_task, *zip(*args)))
            ok = {}
            for res in results:
                for w in res.get("warnings", []):
                    print(f"warning: run {res['run']}: {w}", file=sys.stderr, flush=True)
                if not res["ok"]:
                    self.error(res["run"], res["error"], internal=res.get("internal", False))
                    if res.get("detail"):
                        print(res["detail"], file=sys.stderr)
                    continue
                self.say(f"[{order[res['run']]}/{n}] {res['run']}: data ({res['cells']} cells)")
                ok[res["run"]] = res

            # Stage 2: charts, spread over the workers in chunks (one figure costs ~0.1 s); every
            # run has at least its load-curve chart, so each is recorded when its last batch ends.
            batches = []
            for run_id, res in ok.items():
                jobs = res["chart_jobs"]
                step = max(1, -(-len(jobs) // self.jobs)) if n == 1 else len(jobs) or 1
                for i in range(0, len(jobs), step):
                    batches.append((run_id, jobs[i:i + step]))
            if pool is None and len(batches) > 1:
                pool = self._pool(len(batches))
            pending = {run_id: sum(1 for b in batches if b[0] == run_id) for run_id in ok}
            for run_id in ok:
                self.say(f"[{order[run_id]}/{n}] {run_id}: charts "
                         f"({len(ok[run_id]['chart_jobs'])})")
            if pool is None:
                chart_results = (chart_task(r, j, str(self.site_root)) for r, j in batches)
            else:
                chart_results = pool.map(chart_task, *zip(*[(r, j, str(self.site_root))
                                                            for r, j in batches])) \
                    if batches else []
            for res in chart_results:
                run_id = res["run"]
                for w in res.get("warnings", []):
                    print(f"warning: run {run_id}: {w}", file=sys.stderr, flush=True)
                if not res["ok"]:
                    if run_id not in self.failed:
                        self.error(run_id, res["error"], internal=res.get("internal", False))
                    continue
                pending[run_id] -= 1
                if pending[run_id] == 0 and run_id not in self.failed:
                    self._record(state, run_id, digests[run_id], ok[run_id]["outputs"])
                    self.say(f"[{order[run_id]}/{n}] {run_id}: done")
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)

    def _record(self, state: dict[str, Any], run_id: str, digest: str, outputs: list[str]) -> None:
        """Remember what the run's outputs came from; remove outputs it no longer has."""
        old = set(state["runs"].get(run_id, {}).get("outputs", {}))
        sizes = {}
        for rel in outputs:
            sizes[rel] = (self.site_root / rel).stat().st_size
        self.remove_outputs(old - set(sizes))
        state["runs"][run_id] = {"inputs": digest, "outputs": dict(sorted(sizes.items()))}
        self.save_state(state)


def run(args: argparse.Namespace) -> int:
    site_root = Path(args.site)
    if not site_root.is_dir():
        raise BuildError("no such folder", path=site_root, hint="give the site root with --site")
    with BuildLock(site_root / CACHE_DIR / "build.lock"):
        return Build(Path(args.runs), site_root, quiet=args.quiet, force=args.force,
                     jobs=args.jobs).run()
