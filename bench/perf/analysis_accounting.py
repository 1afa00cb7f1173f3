"""What issue 10's accounting costs the analysis: the analysis stage (read every cell's .hlog,
counts and .jfr, aggregate, write the data document; no charts) of one run, timed with this
checkout's code and with an older commit's, on the same logs.

    .venv/bin/python bench/perf/analysis_accounting.py [--run runs/pool-vs-virtual]
        [--before ac7dcc8] [--repeat 3]

The older code reads schema 1 only, so it gets a copy of the run whose run.yml is turned into
schema 1 (no `method`, no `counts`, no `drain`): the same .hlog and .jfr files without the
accounting. Target (issue 10): the new code < 1.2 x the old. Prints the best wall and CPU
time of --repeat runs of each, interleaved, each in a fresh process (imports excluded); on a
shared machine the CPU time is the steadier figure.
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
from analysis.derive.analyse import analyse_run
from analysis.write.datafiles import run_document
run_dir = Path(sys.argv[1])
started = time.perf_counter(), time.process_time()
run = analyse_run(load_manifest(run_dir, run_dir.parent), run_dir.parent.parent)
run_document(run)
print(time.perf_counter() - started[0], time.process_time() - started[1])
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


def once(code: Path, run_dir: Path) -> tuple[float, float]:
    """(wall s, CPU s) of one analysis in a fresh process."""
    out = subprocess.run([PY, "-c", TIMED, str(run_dir)], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(code)}, check=True)
    wall, cpu = out.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", type=Path, default=REPO / "runs" / "pool-vs-virtual")
    ap.add_argument("--before", default="ac7dcc8", help="the commit to compare with")
    ap.add_argument("--repeat", type=int, default=5)
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
        # interleaved, so that load from elsewhere on the machine hits both alike
        runs = [(once(old_code, old_run), once(REPO, new_run)) for _ in range(args.repeat)]
    for i, what in ((0, "wall"), (1, "CPU")):
        before = min(r[0][i] for r in runs)
        after = min(r[1][i] for r in runs)
        print(f"analysis of {args.run.name} (no charts), best {what} time of {args.repeat}: "
              f"before ({args.before}, no accounting) {before:.2f} s, after {after:.2f} s: "
              f"{(after / before - 1) * 100:+.1f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
