"""Analyse runs/ into _data, charts and report pages (only the runs whose inputs changed).

For each run folder under --runs: validate run.yml, read its .hlog files, write its data
document (_data/runs/<run-id>.yml when a post names the run, else _rundata/<run-id>.yml), CSV
series under assets/data/<run-id>/, charts under assets/charts/<run-id>/ and the page
_reports/<run-id>.html, rendered from _layouts/ and _includes/. A content-hash cache (inputs,
manifest, the analysis code and those templates) skips runs that did not change; --force redoes
them all. A broken run is
reported on one `error:` line and skipped; the others still build; the exit status is then 1.
Outputs are written atomically, so an interrupted build leaves the previous files intact; a lock
(.cache/loadcurve/build.lock) keeps two builds of one tree apart.

Exit status: 0 all runs built, 1 some run failed (or the lock is held), 2 internal error.
"""
from __future__ import annotations

import argparse
import contextlib
import os
from pathlib import Path

from analysis.pipeline.cache import CACHE_DIR
from analysis.pipeline.lock import BuildLock
from analysis.pipeline.runner import Build, dask_executor
from analysis.errors import BuildError


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
    parser.add_argument("--executor", choices=("process", "dask"), default="process",
                        help="where the per-run map step runs: a local process pool "
                             "(default), or dask.distributed (a LocalCluster of --jobs "
                             "workers, or the scheduler at --dask-address)")
    parser.add_argument("--dask-address", metavar="ADDRESS",
                        help="with --executor dask: a running scheduler (tcp://host:8786) "
                             "whose workers see --runs and --site at the same paths")


def run(args: argparse.Namespace) -> int:
    site_root = Path(args.site)
    if not site_root.is_dir():
        raise BuildError("no such folder", path=site_root, hint="give the site root with --site")
    with BuildLock(site_root / CACHE_DIR / "build.lock"), contextlib.ExitStack() as stack:
        executor = None
        if args.executor == "dask":
            executor = stack.enter_context(dask_executor(max(1, args.jobs), args.dask_address))
        return Build(Path(args.runs), site_root, quiet=args.quiet, force=args.force,
                     jobs=args.jobs, executor=executor).run()
