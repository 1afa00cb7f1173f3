"""What issue 10's accounting costs the analysis: the analysis stage (read every cell's .hlog,
counts and .jfr, aggregate, write the data document; no charts) of one run, timed with this
checkout's code and with an older commit's, on the same logs.

    .venv/bin/python bench/perf/analysis_accounting.py [--run runs/pool-vs-virtual]
        [--before ac7dcc8] [--repeat 3]

The older code reads schema 1 only, so it gets a copy of the run whose run.yml is turned into
schema 1 (no `method`, no `counts`, no `drain`): the same .hlog and .jfr files without the
accounting. Target (issue 10): the new code < 1.2 x the old. Prints the best of --repeat runs
of each, in a fresh process each time (imports excluded from the timing).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
PY = sys.executable
TIMED = """
import sys, time
from pathlib import Path
from analysis.read.manifest import load_manifest
from analysis.analyse import analyse_run
from analysis.write.datafiles import run_document
run_dir = Path(sys.argv[1])
started = time.perf_counter()
run = analyse_run(load_manifest(run_dir, run_dir.parent), run_dir.parent.parent)
run_document(run)
print(time.perf_counter() - started)
"""


def as_schema_1(src: Path, dst: Path) -> None:
    """A copy of a schema-2 run (files hard-linked) whose run.yml the old code can read."""
    shutil.copytree(src, dst, copy_function=os.link)
    manifest = yaml.safe_load((src / "run.yml").read_text())
    manifest["schema_version"] = 1
    manifest.pop("method", None)
    manifest.get("load_generator", {}).pop("drain", None)
    for cell in manifest.get("cells", []):
        cell.pop("counts", None)
        if cell.get("jfr") is None:
            cell.pop("jfr", None)
    (dst / "run.yml").unlink()
    (dst / "run.yml").write_text(yaml.safe_dump(manifest, sort_keys=False, allow_unicode=True))


def best(code: Path, run_dir: Path, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        out = subprocess.run([PY, "-c", TIMED, str(run_dir)], capture_output=True, text=True,
                             env={**os.environ, "PYTHONPATH": str(code)}, check=True)
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return min(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", type=Path, default=REPO / "runs" / "pool-vs-virtual")
    ap.add_argument("--before", default="ac7dcc8", help="the commit to compare with")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        old_code = tmp / "old"
        old_code.mkdir()
        archive = subprocess.run(["git", "-C", str(REPO), "archive", args.before, "analysis"],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(old_code)], input=archive, check=True)
        site = tmp / "site"
        (site / "runs").mkdir(parents=True)
        new_run = site / "runs" / args.run.name
        shutil.copytree(args.run.resolve(), new_run, copy_function=os.link)
        old_site = tmp / "old-site"
        (old_site / "runs").mkdir(parents=True)
        old_run = old_site / "runs" / args.run.name
        as_schema_1(args.run.resolve(), old_run)
        before = best(old_code, old_run, args.repeat)
        after = best(REPO, new_run, args.repeat)
    print(f"analysis of {args.run.name} (no charts), best of {args.repeat}: "
          f"before ({args.before}, no accounting) {before:.2f} s, after {after:.2f} s: "
          f"{(after / before - 1) * 100:+.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
