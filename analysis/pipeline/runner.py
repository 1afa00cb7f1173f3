"""The build of a whole runs/ folder: find the changed runs, run their stages over worker
processes, record what each wrote, remove what a gone run left."""
from __future__ import annotations

import contextlib
import errno
import importlib
import json
import os
import stat
import sys
import time
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

from analysis import atomic
from analysis.pipeline.cache import (CACHE_DIR, LINK_PROBLEM, STATE_VERSION, RunKeys,
                                  code_version, run_input_hashes, stray_links,
                                  templates_version)
from analysis.pipeline import native_walk, state_text, workers
from analysis.pipeline.one_run import ForkAtFirstRead, reads_then_drawer
from analysis.pipeline.generated_pages import GeneratedPages
from analysis.pipeline.stages import analyse_task, chart_task
from analysis.errors import BuildError
from analysis.paths import REPORTS_DIR, data_path, repo_relative, report_path
from analysis.write.charts.png_use import runs_in_posts
from analysis.write.pages import rendering_on

# Folders holding only generated files; a stale output is removed only if it lies in one.
GENERATED_DIRS = ("_data/runs", "_rundata", "assets/charts", "assets/data", "_reports")
# The last build's `error:` lines, one a line (empty when none); `make site` lists them last.
ERRORS_FILE = CACHE_DIR + "/errors.txt"
# runs' outputs checked by one thread at least (fewer: one thread, as a thread costs ~0.1 ms)
OUTPUTS_PER_THREAD = 32



class Build:
    def __init__(self, runs_root: Path, site_root: Path, *, quiet: bool, force: bool, jobs: int,
                 executor: Executor | None = None):
        self.runs_root = runs_root
        # The map step (analyse_task, chart_task: one run or chart batch in, files out) runs on
        # `executor` when given (any concurrent.futures.Executor whose workers see runs_root and
        # site_root at the same paths; the caller shuts it down), else on a process pool.
        self.executor = executor
        self.site_root = site_root
        self.quiet = quiet
        self.force = force
        self.jobs = max(1, jobs)
        self.cache = site_root / CACHE_DIR
        self.state_path = self.cache / "state.json"
        self._state_text = ""        # what save_state last wrote or load_state read
        self._state_saved_at = 0.0
        self._state_write_s = 0.0    # how long the last write of the state took
        # each run's record in the state and its JSON text (_state_json)
        self._record_texts: dict[str, tuple[Any, str]] = {}
        # whether the state was changed since it was last written or read: at 1,000 runs a
        # dump of it to compare with the file takes ~0.15 s, and a build that added a run
        # made two of them after its one change
        self._state_changed = True
        # pages.is_generated's answers (runs_in_posts), with the report pages this build wrote
        self.generated = GeneratedPages(self.cache)
        self._reduced = ""           # the reduce step's inputs digest once it ran in this build
        # wall seconds of each phase of the build, printed on its last progress line: at 1,000
        # runs what grows with the corpus is found here (bench/perf/site_scale.py shows it)
        self.phases: dict[str, float] = {}
        self._lap = time.monotonic()
        self.failed: list[str] = []
        # The `error:` lines, printed after everything else (a long build's errors would scroll
        # away among the progress lines) and kept in ERRORS_FILE for `make site` to list last.
        self.errors: list[str] = []
        # A bug (not bad input) in any run makes the exit status 2, so scripts can tell them apart.
        self.internal_failure = False

    def say(self, text: str) -> None:
        workers.check_ctrl_c()
        if not self.quiet:
            print(text, file=sys.stderr, flush=True)

    def error(self, run_id: str, message: str, *, internal: bool = False) -> None:
        self.failed.append(run_id)
        self.internal_failure |= internal
        self.errors.append(f"error: run {run_id}: {message}")

    def report_errors(self) -> None:
        for line in self.errors:
            print(line, file=sys.stderr, flush=True)
        atomic.write_text(self.site_root / ERRORS_FILE, "".join(f"{e}\n" for e in self.errors))

    def run_outputs(self, run_id: str) -> set[str]:
        """Every generated file of a run that exists, whether recorded or not (a run that failed
        half-way through may have written some)."""
        root = f"{self.site_root}/"   # (string paths: pathlib cost ~20 ms a run of a build)
        found = {rel for rel in (data_path(run_id), data_path(run_id, in_posts=False),
                                 report_path(run_id),
                                 report_path(run_id)[:-len(".html")] + ".md")   # (issue 15)
                 if _is_file(root + rel)}
        for top in ("assets/charts", "assets/data", REPORTS_DIR):   # (_reports/<id>/: scenarios)
            folder = f"{root}{top}/{run_id}"
            if not _is_real_dir(folder):
                continue
            with os.scandir(folder) as entries:
                for entry in entries:
                    # the listing's file type answers without a stat; a link is followed, as
                    # Path.is_file does (a dangling link or a loop: not a file)
                    if entry.is_file() if not entry.is_symlink() else _is_file(entry.path):
                        found.add(f"{top}/{run_id}/{entry.name}")
        return found

    def forget_failed(self, state: dict[str, Any]) -> None:
        """A run that failed gets no page: its outputs from an earlier build are removed (the
        site is built from the good runs; stale numbers must not stay published)."""
        for run_id in sorted(set(self.failed)):
            if run_id.startswith(".") or "/" in run_id:
                continue
            entry = state["runs"].pop(run_id, None)
            self._state_changed |= entry is not None
            rels = set((entry or {}).get("outputs", {})) | self.run_outputs(run_id)
            n = self.remove_outputs(rels)
            if n:
                self.say(f"{run_id}: failed; deleted its {n} generated files from earlier builds")
        self.save_state(state)

    def load_state(self) -> dict[str, Any]:
        try:
            text = self.state_path.read_text()
            # (the records' texts cut from a file a save wrote: its first save dumps none)
            cut = state_text.records(self.state_path, text, STATE_VERSION)
            state = json.loads(text) if cut is None else cut[0]
            if state.get("version") == STATE_VERSION and isinstance(state.get("runs"), dict):
                self._state_text = text
                self._state_changed = False
                if cut is not None:
                    self._record_texts = cut[1]
                return state
        except (OSError, ValueError, AttributeError):
            pass
        return {"version": STATE_VERSION, "runs": {}}

    def save_state(self, state: dict[str, Any], every_s: float = 0.0) -> None:
        """Write the build state unless it is what was last written; `every_s`: not again
        within that many seconds, nor within 20 times what the last write took (the runs'
        records during a build: at 1,000 runs one write of its 7 MB - a flush of the disk
        and its own - takes 0.1-0.2 s, and a write per finished run took the main process
        ~100 s of the workers' cores). A run done but not yet saved when the build is killed
        is rebuilt by the next build, its outputs replaced whole."""
        now = time.monotonic()
        if not self._state_changed or every_s and now - self._state_saved_at < max(
                every_s, 20 * self._state_write_s):
            return
        text = self._state_json(state)
        if text != self._state_text:
            atomic.write_record(self.state_path, text)   # (after its outputs reach the disk)
            state_text.written(self.state_path)
            self._state_text = text
        self._state_changed = False
        self._state_saved_at = time.monotonic()
        self._state_write_s = self._state_saved_at - now

    def _state_json(self, state: dict[str, Any]) -> str:
        """json.dumps(state, sort_keys=True, separators=(",", ":")), the same text, from each
        run's record's text as last made (a record is replaced, never changed in place: _record,
        load_state): a build dumped the whole state every 2 s, 0.07 s of its 1,000 runs' JSON
        to change one or a few records."""
        runs = state.get("runs")
        if sorted(state) != ["runs", "version"] or not isinstance(runs, dict) \
                or not all(type(k) is str for k in runs):
            return json.dumps(state, sort_keys=True, separators=(",", ":"))
        made = self._record_texts
        texts = {}
        for run_id in sorted(runs):
            entry = runs[run_id]
            known = made.get(run_id)
            if known is None or known[0] is not entry:
                known = (entry, json.dumps(run_id) + ":"
                         + json.dumps(entry, sort_keys=True, separators=(",", ":")))
            texts[run_id] = known
        self._record_texts = texts   # (a gone run's text goes)
        return ('{"runs":{' + ",".join(text for _, text in texts.values()) + '},"version":'
                + json.dumps(state["version"], sort_keys=True, separators=(",", ":")) + "}")

    def discover(self) -> list[Path]:
        if not self.runs_root.is_dir():
            raise BuildError("no such folder", path=self.runs_root,
                             hint="give the folder of run folders with --runs")
        return sorted((p for p in self.runs_root.iterdir()
                       if p.is_dir() and not p.name.startswith(".")), key=lambda p: p.name)

    def outputs_intact(self, entry: dict[str, Any]) -> bool:
        root = f"{self.site_root}/"   # (string paths: a no-change build checks ~60,000 files)
        outputs = entry.get("outputs", {})
        walker = native_walk.get()
        if walker is not None:
            return walker.sizes_match(root, outputs)
        for rel, size in outputs.items():
            try:
                if os.stat(root + rel).st_size != size:
                    return False
            except OSError:
                return False
        return True

    def all_outputs_intact(self, entries: list[dict[str, Any]]):
        """outputs_intact of each entry, in order. The compiled check lets go of the
        interpreter lock, so many runs' are spread over the build's threads (~120,000 stat
        calls at 1,000 runs: 0.17 s of one core in an add's "outputs check")."""
        threads = min(self.jobs, len(entries) // OUTPUTS_PER_THREAD)
        if threads <= 1 or native_walk.get() is None:
            return map(self.outputs_intact, entries)
        from concurrent.futures import ThreadPoolExecutor
        step = -(-len(entries) // threads)
        with ThreadPoolExecutor(max_workers=threads) as pool:
            chunks = pool.map(lambda at: [self.outputs_intact(e) for e in entries[at:at + step]],
                              range(0, len(entries), step))
            return iter([ok for chunk in chunks for ok in chunk])

    def remove_outputs(self, rels) -> int:
        """Delete generated files we recorded writing (only inside the generated folders)."""
        removed = 0
        for rel in sorted(rels):
            if not any(rel.startswith(d + "/") for d in GENERATED_DIRS) or ".." in rel.split("/"):
                continue
            path = self.site_root / rel
            if rel.startswith(REPORTS_DIR + "/"):
                from analysis.write.pages import is_generated
                if not is_generated(path):
                    continue
            try:
                path.unlink()
                removed += 1
            except FileNotFoundError:
                continue
            parent = path.parent
            # drop the run's own now-empty folder (assets/charts/<id>/), never a shared one
            if parent.parent.as_posix().endswith(("assets/charts", "assets/data", REPORTS_DIR)):
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
        if self.executor is not None:
            return self.executor
        if self.jobs <= 1 or tasks <= 1:
            return None
        return workers.pool(min(self.jobs, tasks))

    def run(self) -> int:
        previous = workers.catch_ctrl_c()
        try:
            status = self._run()
            workers.check_ctrl_c()
            return status
        finally:
            workers.release_ctrl_c(previous)

    def lap(self, phase: str) -> None:
        now = time.monotonic()
        self.phases[phase] = self.phases.get(phase, 0.0) + now - self._lap
        self._lap = now

    def _run(self) -> int:
        started = self._lap = time.monotonic()
        run_dirs = self.discover()
        if self.remove_temp_leftovers():
            self.say("removed temporary files left by an interrupted build")
        state = self.load_state()
        # a change to a layout or include (the pages' templates) re-renders every run
        drawing_code = code_version()
        code = drawing_code + templates_version(self.site_root)
        hashes = RunKeys(self.cache)
        # (the one file-hash cache of builds before RunKeys: 18 MB at 1,000 runs, now unused)
        (self.cache / "files.json").unlink(missing_ok=True)
        present = {p.name for p in run_dirs}
        self.lap("state")

        for link in stray_links(self.runs_root):   # (symlinked run folders: analyse_task)
            self.errors.append(f"error: {repo_relative(link, self.site_root)}: {LINK_PROBLEM}")
        todo: list[tuple[Path, str]] = []
        # runs some post names get every chart's PNG (png_use): a post citing a run, or no
        # longer citing it, changes the run's outputs, so it is part of the run's digest
        generated = self.generated
        self.in_feed = runs_in_posts(self.site_root, present, generated.is_generated)
        generated.save()
        self.lap("posts")
        digests = list(run_input_hashes(run_dirs, self.site_root, code, hashes, self.jobs))
        hashes.save()
        self.lap("inputs")
        keyed = []
        for run_dir, digest in zip(run_dirs, digests):
            if isinstance(digest, BuildError):  # a FIFO or device among the inputs: skip it
                self.error(run_dir.name, str(digest))
                continue
            if run_dir.name in self.in_feed:
                digest += "+feed"
            entry = state["runs"].get(run_dir.name)
            same = not self.force and entry and entry.get("inputs") == digest
            keyed.append((run_dir, digest, entry if same else None))
        intact = self.all_outputs_intact([entry for _, _, entry in keyed if entry is not None])
        for run_dir, digest, entry in keyed:
            if entry is not None and next(intact):
                self.say(f"{run_dir.name}: up to date")
                continue
            todo.append((run_dir, digest))
        self.lap("outputs check")

        # Runs whose folder is gone: their generated files go too.
        for run_id in sorted(set(state["runs"]) - present):
            n = self.remove_outputs(state["runs"][run_id].get("outputs", {}))
            del state["runs"][run_id]
            self._state_changed = True
            self.save_state(state, every_s=2.0)
            self.say(f"{run_id}: run removed; deleted {n} generated files")
        from analysis.write.pages import stale_reports
        for page in stale_reports(self.site_root, present):
            page.unlink()
            self.say(f"{page.stem}: run removed; deleted {page.relative_to(self.site_root)}")

        def reduce() -> None:
            self._reduce(sorted(present - set(self.failed)), code, drawing_code)

        self.lap("removed runs")
        if todo:
            self._build(todo, state, while_charts=reduce)
            self.lap("pool shutdown")
        self.forget_failed(state)
        generated.save()   # (with the pages written by this build: _record)
        self.lap("state")
        reduce()   # (a no-op when nothing failed while the charts were drawn)
        self.lap("corpus")
        total = len(run_dirs)
        failed = set(self.failed)
        built = sum(1 for d, _ in todo if d.name not in failed)
        up_to_date = total - len(todo) - len(failed - {d.name for d, _ in todo})
        self.say(f"built {built} of {total} runs ({up_to_date} up to date, "
                 f"{len(failed)} failed) in {time.monotonic() - started:.2f} s; "
                 + ", ".join(f"{phase} {s:.2f}" for phase, s in self.phases.items()))
        self.report_errors()
        if self.internal_failure:
            return 2
        return 1 if self.errors else 0

    def _build(self, todo: list[tuple[Path, str]], state: dict[str, Any],
               while_charts=lambda: None) -> None:
        """Analyse the runs, then draw their charts; `while_charts` runs in this process once
        the chart tasks are handed to the workers (the reduce step needs the data files only:
        at 1,000 runs it takes ~0.8 s, which adding one run then spends beside the charts)."""
        n = len(todo)
        digests = {d.name: digest for d, digest in todo}
        order = {d.name: i for i, (d, _) in enumerate(todo, start=1)}
        # pandas and matplotlib load once, before the workers fork (the main process needs
        # pandas anyway). One changed run on several workers (a run added): this process
        # never draws, so the workers load matplotlib themselves after the run's reads
        importlib.import_module("analysis.corpus.cell_table")
        one_run = n == 1 and self.jobs > 1 and self.executor is None
        if not one_run:
            importlib.import_module("analysis.write.charts.render")
        pool = self._pool(n)
        reads = None
        try:
            # Stage 1: validate + analyse + data files, one task per run.
            for run_dir, _ in todo:
                self.say(f"[{order[run_dir.name]}/{n}] {run_dir.name}: analyse")
            args = [(str(d), str(self.runs_root), str(self.site_root), d.name in self.in_feed)
                    for d, _ in todo]
            if pool is None and one_run:
                # one run changed (a run added): its repetitions are read on every core, by
                # workers forked at the first read, once this process has imported the run's
                # kind's readers (they inherit them); then one worker loads the chart code
                # and another renders the pages while this process writes the run's other
                # files (pipeline/one_run.py)
                reads = ForkAtFirstRead(lambda: self._pool(self.jobs))
                try:
                    with rendering_on(reads.render):
                        results = [analyse_task(*args[0], map_fn=reads_then_drawer(reads))]
                finally:
                    pool = reads.pool
            elif pool is None:
                results = [analyse_task(*a) for a in args]
            else:
                results = list(pool.map(analyse_task, *zip(*args)))
            self.lap("analyse")
            ok = {}
            for res in results:
                stop_on_machine_fault(res)
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
                # one changed run: a task per chart, so the workers finish together (charts
                # differ in cost up to 3x)
                step = 1 if n == 1 else len(jobs) or 1
                # (a run without charts - a JMH run may have none - gets one empty batch, so
                # that it is recorded too)
                for i in range(0, len(jobs) or 1, step):
                    batches.append((run_id, jobs[i:i + step]))
            if pool is None and len(batches) > 1:
                pool = self._pool(len(batches))
            pending = {run_id: sum(1 for b in batches if b[0] == run_id) for run_id in ok}
            for run_id in ok:
                self.say(f"[{order[run_id]}/{n}] {run_id}: charts "
                         f"({len(ok[run_id]['chart_jobs'])})")
            if reads is not None and reads.pool is not None:
                chart_results = reads.hand_charts(batches, str(self.site_root))
            elif pool is None:
                chart_results = (chart_task(r, j, str(self.site_root)) for r, j in batches)
            else:
                # (Executor.map submits every task at once: the workers start on them now)
                chart_results = pool.map(chart_task, *zip(*[(r, j, str(self.site_root))
                                                            for r, j in batches])) \
                    if batches else []
            self.lap("charts handed out")
            try:
                while_charts()
                beside_charts = None
            except Exception as exc:  # noqa: BLE001 - raised once the charts are recorded
                beside_charts = exc
            self.lap("corpus beside charts")
            for res in chart_results:
                stop_on_machine_fault(res)
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
            self.lap("charts")
            if beside_charts is not None:
                raise beside_charts
        except BaseException:
            # interrupted (Ctrl-C) or failed: the workers' tasks in hand are not waited for
            if pool is not None and pool is not self.executor:
                workers.stop(pool)
            raise
        finally:
            if reads is not None:
                reads.release()
            if pool is not None and pool is not self.executor:
                pool.shutdown(wait=True, cancel_futures=True)

    def _reduce(self, run_ids: list[str], code: str, drawing_code: str) -> None:
        """What needs every run at once: the corpus cell table, series histories, the
        regressions feed's data and comparison pages (analysis/write/corpus_pages.py);
        skipped when none of its inputs changed (analysis/pipeline/corpus_cache.py). Its
        charts are all redrawn when the code that drew them is not `drawing_code`."""
        from analysis.pipeline import corpus_cache
        started = time.monotonic()
        digest = corpus_cache.inputs_digest(self.site_root, run_ids, code)
        if digest == self._reduced:
            return   # done in this build already (beside the charts)
        if not self.force and corpus_cache.up_to_date(self.cache, self.site_root, digest):
            self.say("corpus: unchanged")
            self._reduced = digest
            return
        from analysis.write.corpus_pages import reduce
        drawn_by, known, kept = corpus_cache.last(self.cache)
        step = reduce(self.site_root, run_ids, redraw=self.force or drawn_by != drawing_code,
                      known=known, code=drawing_code, kept=kept)
        for message in step.warnings:
            print(f"warning: {message}", file=sys.stderr, flush=True)
        # listed last with the runs' errors (report_errors), and they make the build exit 1
        self.errors.extend(f"error: {message}" for message in step.errors)
        if not step.errors:
            corpus_cache.record(self.cache, self.site_root, "" if step.warnings else digest,
                                step.written, drawing_code, step.memo, step.inputs)
        self._reduced = digest
        self.say(f"corpus: cell table, histories and comparisons in "
                 f"{time.monotonic() - started:.2f} s ({step.drawn} charts drawn)")

    def _record(self, state: dict[str, Any], run_id: str, digest: str, outputs: list[str]) -> None:
        """Remember what the run's outputs came from; remove outputs it no longer has."""
        workers.check_ctrl_c()
        # what the last build recorded, and any other generated file of the run (a page or
        # data document that moved: _reports/<id>.md before issue 15, _data/runs/ <-> _rundata/)
        old = set(state["runs"].get(run_id, {}).get("outputs", {})) | self.run_outputs(run_id)
        root = f"{self.site_root}/"
        sizes = {rel: os.stat(root + rel).st_size for rel in outputs}
        self.remove_outputs(old - set(sizes))
        for rel in sizes:
            if rel.startswith(REPORTS_DIR + "/") and rel.endswith(".html"):
                self.generated.written(self.site_root / rel)
        state["runs"][run_id] = {"inputs": digest, "outputs": dict(sorted(sizes.items()))}
        self._state_changed = True
        self.save_state(state, every_s=2.0)


# The errors pathlib's is_file and is_dir answer False to (Python 3.11); any other is raised.
_ABSENT = (errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP)


def _is_file(path: str) -> bool:
    """Path(path).is_file(), without building a Path."""
    return stat.S_ISREG(_mode(os.stat, path))


def _is_real_dir(path: str) -> bool:
    """Path(path).is_dir() and not Path(path).is_symlink(): a folder, not a link to one."""
    return stat.S_ISDIR(_mode(os.lstat, path))


def _mode(stat_fn, path: str) -> int:
    """The file's st_mode by `stat_fn`, 0 (no type) where pathlib would answer False."""
    try:
        return stat_fn(path).st_mode
    except OSError as exc:
        if exc.errno not in _ABSENT:
            raise
        return 0
    except ValueError:
        return 0


def stop_on_machine_fault(res: dict[str, Any]) -> None:
    """A task that found the disk full or read-only ends the build: no run is to blame (none
    loses its pages from earlier builds, as a failed run does), and the next would fail alike.
    The outputs written so far are whole (analysis/atomic.py); the next build redoes the rest."""
    if res.get("stop"):
        raise BuildError(res["error"])


@contextlib.contextmanager
def dask_executor(workers: int, address: str | None = None):
    """A dask.distributed Executor (Client.get_executor()): on the scheduler at `address`
    (a real cluster, whose workers must see the runs and the site at the same paths), else on
    a LocalCluster of `workers` single-threaded worker processes."""
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise BuildError("--executor dask needs dask.distributed",
                         hint="install it: pip install -r requirements-dev.txt") from None
    with contextlib.ExitStack() as stack:
        if address is None:
            cluster = stack.enter_context(LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None))
            address = cluster
        client = stack.enter_context(Client(address))
        yield client.get_executor()
