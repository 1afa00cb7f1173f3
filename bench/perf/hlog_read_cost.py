"""CPU seconds of the build's hlog stage alone, side by side with another tree: `read_hlog` of
every bundled run's interval logs (runs/**/*.hlog), `--passes` times in one fresh process per
tree and turn, the trees taking turns (both orders), the 1-minute load average beside each.

    .venv/bin/python bench/perf/hlog_read_cost.py --source DIR [--turns 3] [--passes 5]

DIR: another tree (`git archive REV | tar -x -C DIR`) whose code reads the same logs. The
first pass of each process (imports, the compiled objects' loads) is left out of the figure;
what is printed is the CPU seconds of the other passes, per pass and per log. Checks that both
trees read the same intervals (their total counts, a digest of every histogram's entries).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

READ = """
import hashlib, json, sys, time
from pathlib import Path
from analysis.read.hdr.log import read_hlog
logs = sorted(str(p) for p in Path(sys.argv[1]).rglob("*.hlog"))
passes = int(sys.argv[2])
digest = hashlib.sha256()
cpu = []
for k in range(passes):
    t = time.process_time()
    for path in logs:
        log = read_hlog(path)
        if k == 0:
            for iv in log.intervals:
                h = iv.histogram
                digest.update(h.indices.tobytes() + h.counts.tobytes())
    cpu.append(time.process_time() - t)
print(json.dumps({"logs": len(logs), "cpu": cpu[1:], "digest": digest.hexdigest()}))
"""


def one(tree: Path, passes: int) -> dict:
    proc = subprocess.run([sys.executable, "-c", READ, str(REPO / "runs"), str(passes)],
                          cwd=tree, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, required=True, help="the other tree")
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--passes", type=int, default=5)
    args = parser.parse_args()
    trees = {"this": REPO, "other": args.source.resolve()}
    figures: dict[str, list[float]] = {name: [] for name in trees}
    digests = set()
    for turn in range(args.turns):
        order = list(trees) if turn % 2 == 0 else list(reversed(trees))
        for name in order:
            got = one(trees[name], args.passes)
            digests.add(got["digest"])
            per_pass = statistics.median(got["cpu"])
            figures[name].append(per_pass)
            print(f"turn {turn + 1} {name:5}: {per_pass:.3f} CPU s a pass of {got['logs']} logs "
                  f"({per_pass / got['logs'] * 1000:.2f} ms a log)  load "
                  f"{os.getloadavg()[0]:.2f}", flush=True)
    this, other = (statistics.median(figures[n]) for n in ("this", "other"))
    print(f"median: this {this:.3f} s, other {other:.3f} s a pass: {other / this:.2f}x")
    if len(digests) != 1:
        print("the trees read DIFFERENT histograms")
        return 1
    print("same histograms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
