"""What the `model` stage of one run costs (issue 36, row 1): analyse_run with its reads taken
out, so that only the aggregation and statistics are timed.

    .venv/bin/python bench/perf/model_cost.py [--run runs/pool-vs-virtual] --before DIR
        [--turns 20] [--reverse]
    .venv/bin/python bench/perf/model_cost.py --instructions [--source DIR] [--runs 4]
    .venv/bin/python bench/perf/model_cost.py --budget [--source DIR] [--runs 20]
    .venv/bin/python bench/perf/model_cost.py --profile [--sort tottime]

run_cost.py's `model` is analyse_run less read_hlog, read_counts and the JFR pass; inside one
worker-like process those reads are the larger part and their CPU moves with the moment. Here
each tree's readers are called once per input file (a first analyse_run, which also pays what a
worker pays once), their results kept, and every later analyse_run gets the kept objects back:
what is left is the model stage, its `steady` part (steady.classify, steady_part) and its
collections. The kept objects are the readers' own and the model stage only reads them: the
run model of a kept-input call is compared with a fresh one's (`pickle`), and with the other
tree's.

--before DIR (a `git archive` of the older commit): that tree's package, copied as
`analysis_before` with its imports renamed (run_cost.package_as), is imported beside this
checkout's and the two trees take turns in one process (the older first; --reverse: this
checkout first). Prints each tree's CPU ms of a model stage (min, first quartile, median), its
steady part and its collections, with the 1-minute load average before and after.

--instructions: instructions under callgrind (valgrind) of one tree's model stage: the
difference between a process that does the set-up and --runs model stages and one that does
the set-up only, divided by --runs (the machine's pace does not move it; repeatable within
~0.1 %). --source DIR measures that tree instead of this checkout.

--budget: each piece's CPU ms a run (wrappers around the functions the stage calls, --runs
runs; a piece inside another counts in both), with --source DIR for an older tree.

--profile: cProfile (CPU time) of --runs model stages after the set-up, its --sort column's
first 45 lines.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_cost import package_as  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
PY = sys.executable

CHILD = r"""
import gc, json, os, pickle, sys, time
os.environ["MPLBACKEND"] = "Agg"
run_dir, runs_root, site, mode = sys.argv[1:5]
n = int(sys.argv[5])
packages = sys.argv[6:]
cpu = time.process_time
spent = {}
trees = []
for pkg in packages:
    analyse = __import__(pkg + ".derive.analyse", fromlist=["x"])
    steady = __import__(pkg + ".derive.steady", fromlist=["x"])
    manifest_module = __import__(pkg + ".read.manifest", fromlist=["x"])
    kept = {}

    def keeping(inner, name, kept=kept):
        def read(path, *a, **k):
            key = (name, os.fspath(path))   # (one run folder: its paths are its keys)
            if key not in kept:
                kept[key] = inner(path, *a, **k)
            return kept[key]
        return read

    for name in ("read_hlog", "read_counts", "summarize_jfr", "summarize_and_fold"):
        setattr(analyse, name, keeping(getattr(analyse, name), name))

    def timed(module, name, stage, pkg=pkg):
        inner = getattr(module, name)
        def wrapper(*a, **k):
            t = cpu()
            try:
                return inner(*a, **k)
            finally:
                spent[(pkg, stage)] = spent.get((pkg, stage), 0.0) + cpu() - t
        setattr(module, name, wrapper)

    timed(steady, "classify", "steady")
    timed(analyse, "steady_part", "steady")
    manifest = manifest_module.load_manifest(__import__("pathlib").Path(run_dir),
                                             __import__("pathlib").Path(runs_root))
    trees.append((pkg, analyse, manifest))

collecting = [0.0, None]

def collection(phase, info):
    if phase == "start":
        collecting[0] = cpu()
    elif collecting[1] is not None:
        spent[(collecting[1], "gc")] = spent.get((collecting[1], "gc"), 0.0) + cpu() - collecting[0]

gc.callbacks.append(collection)
from pathlib import Path
fresh = {}
for pkg, analyse, manifest in trees:
    # the first call reads (and keeps) every input; the second is the first on kept inputs
    fresh[pkg] = pickle.dumps(analyse.analyse_run(manifest, Path(site)))
    again = pickle.dumps(analyse.analyse_run(manifest, Path(site)))
    if again != fresh[pkg]:
        sys.exit(pkg + ": the run model on kept inputs differs from a fresh one")
gc.collect()
gc.freeze()

def one(pkg, analyse, manifest):
    t = cpu()
    analyse.analyse_run(manifest, Path(site))
    return cpu() - t

if mode == "instructions":
    for i in range(n):
        one(*trees[0])
    print(json.dumps({"done": n}))
elif mode == "budget":
    # each piece's CPU, by wrappers of the functions the model stage calls (a piece inside
    # another is in both: read_repetition holds the per-repetition ones)
    pieces = {
        "derive.analyse": ["read_repetition", "merged", "combine", "jvm_for_data", "default_jfr",
                           "repo_relative", "steady_part", "pauses_on_series_axis", "jvm_window",
                           "server_cpu_window", "read_knee_search", "front_matter_like"],
        "derive.aggregate": ["build_run", "build_scenario", "build_cell", "interval_series",
                             "percentile_spectrum", "histogram_stats"],
        "derive.overload": ["censored_stats", "queue_growth", "host_health", "window_rates"],
        "derive.steady": ["classify", "window_series"],
        "derive.flame_profiles": ["cell_profiles", "flame_pairs"],
    }
    pkg = packages[0]
    costs = {}
    for module_name, names in pieces.items():
        module = __import__(f"{pkg}.{module_name}", fromlist=["x"])
        for name in names:
            inner = getattr(module, name, None)
            if inner is None:
                continue
            label = f"{module_name.split('.')[-1]}.{name}"

            def wrapper(*a, _inner=inner, _label=label, **k):
                t = cpu()
                try:
                    return _inner(*a, **k)
                finally:
                    costs[_label] = costs.get(_label, 0.0) + cpu() - t
            setattr(module, name, wrapper)
    if not hasattr(trees[0][1], "merged"):     # an older tree: the log's own sum
        log_class = __import__(f"{pkg}.read.hdr.log", fromlist=["x"]).HlogLog
        inner_merged = log_class.merged

        def merged(*a, **k):
            t = cpu()
            try:
                return inner_merged(*a, **k)
            finally:
                costs["analyse.merged"] = costs.get("analyse.merged", 0.0) + cpu() - t
        log_class.merged = merged
    total = sum(one(*trees[0]) for i in range(n))
    print(f"analyse_run on kept inputs: {total / n * 1000:.2f} ms a run ({n} runs)")
    for label, value in sorted(costs.items(), key=lambda kv: -kv[1]):
        print(f"  {label:34}{value / n * 1000:8.2f}")
elif mode == "profile":
    import cProfile, pstats
    # CPU time, not wall time: on a shared machine a wall clock charges the other processes'
    # turns to whatever function was running
    prof = cProfile.Profile(time.process_time)
    for i in range(n):
        prof.runcall(one, *trees[0])
    stats = pstats.Stats(prof)
    if os.environ.get("MODEL_COST_DUMP"):
        stats.dump_stats(os.environ["MODEL_COST_DUMP"])
    stats.sort_stats(os.environ.get("MODEL_COST_SORT", "tottime")).print_stats(45)
else:
    out = {pkg: {"model": [], "steady": [], "gc": []} for pkg in packages}
    for i in range(n):
        for pkg, analyse, manifest in trees:
            for stage in ("steady", "gc"):
                spent.pop((pkg, stage), None)
            collecting[1] = pkg
            out[pkg]["model"].append(one(pkg, analyse, manifest))
            collecting[1] = None
            for stage in ("steady", "gc"):
                out[pkg][stage].append(spent.get((pkg, stage), 0.0))
    same = None
    if len(packages) == 2:
        # the two trees' classes have different module names: compare the models' text
        a, b = (pickle.loads(fresh[p]) for p in packages)
        same = repr(a).replace(packages[0] + ".", "") == repr(b).replace(packages[1] + ".", "")
    print(json.dumps({"spent": out, "same": same}))
"""


def child(code_path: str, args: list[str], run: Path, site: Path,
          prefix: list[str] = ()) -> subprocess.CompletedProcess:
    runs_root = run.resolve().parent
    # (python -c puts its working folder first on sys.path: the first tree's, whose
    # `analysis` is the one measured)
    return subprocess.run([*prefix, PY, "-c", CHILD, str(run.resolve()), str(runs_root),
                           str(site), *args], capture_output=True, text=True,
                          cwd=code_path.split(os.pathsep)[0],
                          env={**os.environ, "PYTHONPATH": code_path, "MPLBACKEND": "Agg",
                               "PYTHONHASHSEED": "0"})


def instructions(code: Path, run: Path, n: int, tmp: Path) -> tuple[int, int]:
    """(instructions of the set-up only, of the set-up and n model stages) under callgrind."""
    counts = []
    for runs in (0, n):
        out_file = tmp / f"callgrind.{runs}"
        r = child(str(code), ["instructions", str(runs), "analysis"], run, tmp / "site",
                  prefix=["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}"])
        if r.returncode != 0:
            sys.exit(f"error: callgrind failed: {r.stderr.strip()[-600:]}")
        summary = re.search(r"^summary:\s*(\d+)", out_file.read_text(), re.M)
        counts.append(int(summary.group(1)))
    return counts[0], counts[1]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--run", type=Path, default=REPO / "runs" / "pool-vs-virtual")
    p.add_argument("--before", type=Path, help="an older tree (git archive) to take turns with")
    p.add_argument("--turns", type=int, default=20)
    p.add_argument("--reverse", action="store_true")
    p.add_argument("--instructions", action="store_true")
    p.add_argument("--source", type=Path, default=REPO)
    p.add_argument("--runs", type=int, default=4)
    p.add_argument("--profile", action="store_true")
    p.add_argument("--budget", action="store_true")
    p.add_argument("--sort", default="tottime")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="model-cost-") as name:
        tmp = Path(name)
        if args.budget:
            r = child(str(args.source), ["budget", str(args.runs), "analysis"], args.run,
                      tmp / "site")
            if r.returncode != 0:
                sys.exit(f"error: the budget failed: {r.stderr.strip()[-600:]}")
            print(f"{args.source} [1-min load average {os.getloadavg()[0]:.2f}]")
            print(r.stdout, end="")
            return 0
        if args.profile:
            r = subprocess.run([PY, "-c", CHILD, str(args.run.resolve()),
                                str(args.run.resolve().parent), str(tmp / "site"), "profile",
                                str(args.runs), "analysis"], text=True, cwd=args.source,
                               env={**os.environ, "PYTHONPATH": str(args.source),
                                    "MODEL_COST_SORT": args.sort, "MPLBACKEND": "Agg"})
            return r.returncode
        if args.instructions:
            base, total = instructions(args.source.resolve(), args.run, args.runs, tmp)
            print(f"{args.source}: set-up {base:,} instructions, with {args.runs} model stages "
                  f"{total:,}: {(total - base) / args.runs:,.0f} a model stage")
            return 0
        if args.before is None:
            p.error("--before DIR, --instructions or --profile")
        before = tmp / "before"
        shutil.copytree(args.before / "analysis", before / "analysis")
        package_as(before, "analysis_before")
        packages = ["analysis_before", "analysis"]
        if args.reverse:
            packages.reverse()
        load = os.getloadavg()[0]
        r = child(f"{REPO}{os.pathsep}{before}", ["turns", str(args.turns), *packages], args.run,
                  tmp / "site")
        if r.returncode != 0:
            sys.exit(f"error: the turns failed: {r.stderr.strip()[-600:]}")
        result = json.loads(r.stdout.strip().splitlines()[-1])
        print(f"model stage turn by turn in one process, {args.turns} turns, "
              f"{'this checkout' if args.reverse else args.before} first, CPU ms "
              f"[1-min load average {load:.2f} -> {os.getloadavg()[0]:.2f}]")
        print(f"the two trees' run models: {'the same' if result['same'] else 'DIFFER'}")
        for pkg in ("analysis_before", "analysis"):
            title = str(args.before) if pkg == "analysis_before" else "this checkout"
            for stage, values in result["spent"][pkg].items():
                v = sorted(x * 1000 for x in values)
                print(f"{title[-24:]:<26}{stage:<8}min {v[0]:7.2f}  q1 {v[len(v) // 4]:7.2f}  "
                      f"median {v[len(v) // 2]:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
