"""Draft a methodology post for a run into _drafts/ (never overwrites a draft).

`python -m analysis new-post RUN-ID` reads runs/RUN-ID/run.yml and writes
_drafts/<date>-<run-id>.md: front matter, the methodology filled in from the manifest, the
load-curve table, ceiling and charts as Liquid includes that read _data/runs/RUN-ID.yml, and
TODO markers where the author writes the prose. Run `python -m analysis build` so the data
exists before previewing the draft (`jekyll serve --drafts`).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from analysis import atomic
from analysis.derive.aggregate import build_run
from analysis.errors import LoadcurveError
from analysis.kinds import kind_of
from analysis.read.manifest import ID_RE, load_manifest
from analysis.write.post import draft_path, render_draft


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_id", metavar="RUN-ID", help="a folder name under --runs")
    parser.add_argument("--runs", default="runs", help="folder of run folders (default: runs)")
    parser.add_argument("--drafts", default="_drafts", help="where drafts go (default: _drafts)")


def run(args: argparse.Namespace) -> int:
    if not ID_RE.match(args.run_id):
        raise LoadcurveError(f"{args.run_id!r} is not a run id (a-z, 0-9, '-' and '_')")
    runs = Path(args.runs)
    run_dir = runs / args.run_id
    if not run_dir.is_dir():
        raise LoadcurveError("no such run folder", path=run_dir,
                             hint=f"the run ids are the folder names in {runs}")
    manifest = load_manifest(run_dir, runs)
    kind = kind_of(manifest)
    if kind.post_hint is not None:
        raise LoadcurveError(f"new-post drafts load-test runs; this is a {kind.label} run "
                             f"(kind: {kind.name})", path=manifest.path, hint=kind.post_hint)
    run = build_run(manifest)
    path = draft_path(Path(args.drafts), run)
    try:
        atomic.create_text(path, render_draft(run))
    except FileExistsError:
        raise LoadcurveError("a draft already exists; not overwriting it", path=path,
                             hint="edit it, or move it away to draft again") from None
    print(path)
    return 0
