"""The build state's load and one save at N runs (pipeline/runner.py: Build.load_state,
save_state): what every build that adds a run spends on .cache/loadcurve/state.json, which grows
with the corpus (~7 MB at 1,000 runs). A state of N records, each a copy of a real run's record
(a kept scale corpus's, ~120 outputs), is saved once by the code measured, then loaded and saved
again with one record added, in turns; with --before SRC the code before runs each turn too
(this, before, before, this, ...). Prints each turn's CPU seconds and the load average.

    .venv/bin/python bench/perf/state_cost.py DIR [--runs 1000] [--turns 3] [--before SRC]

DIR: a corpus kept by site_scale.py --keep (its state.json gives the record copied).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

TURN = r"""
import json, shutil, sys, tempfile, time
from pathlib import Path
from analysis.pipeline.runner import Build
corpus, runs, scratch = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
source = json.loads((corpus / ".cache/loadcurve/state.json").read_text())["runs"]
name, record = sorted(source.items())[-1]
text = json.dumps(record)
site = Path(tempfile.mkdtemp(dir=scratch))
try:
    (site / "runs").mkdir()
    build = Build(site / "runs", site, quiet=True, force=False, jobs=1)
    state = build.load_state()
    for i in range(runs):
        run_id = f"copy-{i:05d}"
        state["runs"][run_id] = json.loads(text.replace(name, run_id))
    build._state_changed = True
    build.save_state(state)
    build = Build(site / "runs", site, quiet=True, force=False, jobs=1)
    started = time.process_time()
    state = build.load_state()
    loaded = time.process_time()
    state["runs"]["added"] = {"inputs": "added", "outputs": {}}
    build._state_changed = True
    build.save_state(state)
    saved = time.process_time()
    print(f"load {loaded - started:.3f} s  save {saved - loaded:.3f} s")
finally:
    shutil.rmtree(site)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, help="a corpus kept by site_scale.py --keep")
    parser.add_argument("--runs", type=int, default=1000, help="records in the state")
    parser.add_argument("--turns", type=int, default=3, help="turns of each code (default 3)")
    parser.add_argument("--before", type=Path, metavar="SRC", help="the code before, in turns")
    args = parser.parse_args()
    sides = [("this", REPO)] + ([("before", args.before.resolve())] if args.before else [])
    with tempfile.TemporaryDirectory() as scratch:
        for i in range(args.turns):
            for name, source in (sides if i % 2 == 0 else sides[::-1]):
                load = "load %.2f" % os.getloadavg()[0]
                out = subprocess.run([sys.executable, "-c", TURN, str(args.corpus.resolve()),
                                      str(args.runs), scratch], capture_output=True, text=True,
                                     cwd=scratch,   # (not a tree whose analysis/ would win)
                                     env={**os.environ, "PYTHONPATH": str(source)})
                if out.returncode != 0:
                    sys.stdout.write(out.stderr[-2000:])
                    return 1
                print(f"{name:<7} {args.runs} runs: CPU {out.stdout.strip()}  [{load}]",
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
