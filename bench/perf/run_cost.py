"""What one run costs the build's map step (issue 15): CPU seconds per stage of analyse_task and
chart_task for one run, with this checkout's code and, optionally, an older commit's.

    .venv/bin/python bench/perf/run_cost.py [--run runs/pool-vs-virtual] [--before main]
        [--repeat 3] [--reverse]

A full build of N runs is N x (analyse_task + chart_task) spread over the worker processes, each
of which imports the code once and then takes run after run. So each measurement is one fresh
process that imports the modules ("imports"), builds the run once ("first": also pays what a
worker pays once, such as the first parse of a JVM's metadata event and matplotlib's font set-up)
and then builds a second copy of it under another run id ("next": what each further run of a
1,000-run corpus costs). Both copies are hard links to the same files, as in the scale corpus
(bench/perf/site_scale.py); no measured data is kept between them.

Stages, CPU seconds of the worker process (time.process_time; steadier than wall time when other
work shares the cores):
    hlog      read_hlog and read_counts (the .hlog and counts.json of every cell)
    jfr       summarize_jfr (every cell's recording), or summarize_and_fold where the tree
              folds the flame graphs' stacks in the same pass (issue 25)
    model     the rest of analyse_run (aggregation, statistics)
    data      the rest of analyse_task: chart plan, CSVs, the data file's YAML, the page
    yaml      the part of `data` spent in dump_yaml
    steady    the part of `model` spent judging steadiness (issue 32: steady.classify and the
              steady parts' figures), where the tree has it
    gc        the part of all stages spent in the garbage collector's collections
    charts    chart_task (every SVG and PNG)
    png       the part of `charts` spent on PNGs (matplotlib's figure, its drawing and the PNG's
              encoding: render._reused_figure, _draw_plot, _write_figure, draw_panels, where the tree has
              them); a scale-corpus run draws one, its og:image
The process is set up as a build's worker is: what the imports made is frozen (gc.freeze, as
workers.pool does before forking), and where the tree has workers.IN_WORKER it is set (its
tasks then settle the garbage collector first, workers.settle).
The code trees run interleaved, --repeat times each (the older tree first in each turn;
--reverse: this checkout first); the best (least disturbed) CPU time is printed with the
1-minute load average read just before that measurement.

    .venv/bin/python bench/perf/run_cost.py --before main --turns 20 [--reverse]

Turn by turn in one process, what a change of 1-3 % needs on a loaded machine (a fresh process
a measurement moved every stage by 5-25 % between two trees at load 10-20): the older tree's
package, copied as `analysis_before` (its imports renamed), is imported beside this
checkout's, and one worker-like process builds run after run (hard links of the run), the two
trees alternating (the older first; --reverse: this checkout first). Prints each tree's CPU ms
of analyse_task, chart_task and both (min, first quartile, median) and whether the two trees
wrote the same files on their first turn.

    .venv/bin/python bench/perf/run_cost.py --build 20 100 [--before main]

Whether those stages are a build's whole cost a run: a real build (`python -m analysis build`)
of N hard-linked copies of the run, for each N given, and the CPU seconds of its main process
and of its workers (getrusage: the workers are the build's reaped children). Between two sizes
the difference over the runs added is what each further run costs each side: the workers'
figure against `total` above (what the stages leave out: task dispatch, pickling, each
worker's settling) and the main process's share a run (waiting on, merging and recording the
results; the corpus pages' growth).

    .venv/bin/python bench/perf/run_cost.py --repeat 0 --build 200 --tasks \
        [--before DIR --repeat-builds 2]

--tasks records each worker task of those builds (RUN_COST_TASKS): its CPU, sys time, minor
faults, involuntary switches and collections, and prints per phase the tasks' CPU (the first
and the last tenth of the build apart: does a worker's task cost more as it ages?) against
all the workers' CPU. --repeat-builds K alternates the trees K times (ABAB... each tree first
once). The "workers" figure holds every reaped child, the input hashing's processes too.

Each fresh process's --json record also holds, before and after each run, the CPU of two
fixed pieces of work: `reference` (sha256 of 16 MB: compiled, no memory traffic) and
`interpreter` (a dict and string loop): which of them varies with the run's CPU from one
process to the next says whether the machine's pace or the code's work varied.
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
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PY = sys.executable
STAGES = ("hlog", "jfr", "model", "data", "yaml", "steady", "gc", "charts", "png")

# Prepended to both snippets below: the same interpreted work each time (dicts, strings, floats;
# ~20-40 ms). It leans on the caches and the branch predictor as the stages do, which other
# work on the machine shares; run beside a run or a task, it gives the machine's pace then.
FIXED_LOOP = r"""
import time as _time

def interpreter_cpu():
    t = _time.process_time()
    table = {}
    for i in range(60000):
        key = f"cell-{i % 997}"
        table[key] = table.get(key, 0.0) + i * 0.5
    sorted(table.items())
    return _time.process_time() - t
"""

CHILD = FIXED_LOOP + r"""
import json, os, sys, time
from pathlib import Path
cpu = time.process_time
t0 = cpu()
import analysis.derive.analyse, analysis.read.hdr.log, analysis.read.counts, analysis.read.jfr
import analysis.write.charts.render, analysis.write.datafiles, analysis.write.pages
import analysis.write.yaml_text, analysis.pipeline.stages as stages
imports = cpu() - t0
spent = {}

# A build's worker: forked from a process that froze what its imports made (workers.pool), and
# in newer trees told it is one (workers.start), so that it settles between tasks.
import gc
gc.freeze()
try:
    import analysis.pipeline.workers as workers
    workers.IN_WORKER[0] = True
except (ImportError, AttributeError):
    pass
collecting = [0.0]

def collection(phase, info):
    if phase == "start":
        collecting[0] = cpu()
    else:
        spent["gc"] = spent.get("gc", 0.0) + cpu() - collecting[0]

gc.callbacks.append(collection)

def timed(module, name, stage):
    inner = getattr(module, name)
    def wrapper(*a, **k):
        t = cpu()
        try:
            return inner(*a, **k)
        finally:
            spent[stage] = spent.get(stage, 0.0) + cpu() - t
    setattr(module, name, wrapper)

timed(analysis.derive.analyse, "read_hlog", "hlog")
timed(analysis.derive.analyse, "read_counts", "hlog")
timed(analysis.derive.analyse, "summarize_jfr", "jfr")
if hasattr(analysis.derive.analyse, "summarize_and_fold"):   # the JFR pass since issue 25
    timed(analysis.derive.analyse, "summarize_and_fold", "jfr")
timed(analysis.derive.analyse, "analyse_run", "run")
try:   # issue 32's classification, where the tree has it (both readers call it by module)
    import analysis.derive.steady as steady_module
    timed(steady_module, "classify", "steady")
    timed(analysis.derive.analyse, "steady_part", "steady")
except ImportError:
    pass
timed(analysis.write.yaml_text, "dump_yaml", "yaml")
for name in ("_reused_figure", "_draw_plot", "_write_figure", "draw_panels"):   # the PNGs
    if hasattr(analysis.write.charts.render, name):
        timed(analysis.write.charts.render, name, "png")
runs_root, site = sys.argv[1], sys.argv[2]
out = {"imports": imports}
import hashlib, resource
REFERENCE = bytes(range(256)) * (64 * 1024)   # 16 MB

def reference_cpu():
    # the same C loop each time (sha256 of 16 MB, no allocation, no Python): where its CPU
    # varies as much as a run's does, the machine's pace varied, not the code's work
    t = cpu()
    hashlib.sha256(REFERENCE).digest()
    return cpu() - t

for label in ("first", "next"):
    run_dir = os.path.join(runs_root, sys.argv[3 if label == "first" else 4])
    spent.clear()
    reference, interpreter = reference_cpu(), interpreter_cpu()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    collections = [g["collections"] for g in gc.get_stats()]
    t = cpu()
    r = stages.analyse_task(run_dir, runs_root, site, False)
    analyse = cpu() - t
    if not r["ok"]:
        sys.exit(r["error"])
    t = cpu()
    c = stages.chart_task(r["run"], r["chart_jobs"], site)
    charts = cpu() - t
    if not c["ok"]:
        sys.exit(c["error"])
    hlog, jfr, run = spent.get("hlog", 0.0), spent.get("jfr", 0.0), spent.get("run", 0.0)
    out[label] = {"hlog": hlog, "jfr": jfr, "model": run - hlog - jfr, "data": analyse - run,
                  "yaml": spent.get("yaml", 0.0), "steady": spent.get("steady", 0.0),
                  "gc": spent.get("gc", 0.0),
                  "charts": charts, "png": spent.get("png", 0.0),
                  "total": analyse + charts, "n_charts": len(r["chart_jobs"])}
    after = resource.getrusage(resource.RUSAGE_SELF)
    out[label].update({
        "reference": reference, "reference_after": reference_cpu(),
        "interpreter": interpreter, "interpreter_after": interpreter_cpu(),
        "sys": after.ru_stime - usage.ru_stime, "minflt": after.ru_minflt - usage.ru_minflt,
        "majflt": after.ru_majflt - usage.ru_majflt,
        # (switches forced by other processes of this machine: ~0 when it is quiet, so a
        # spread left then comes from outside the guest)
        "nivcsw": after.ru_nivcsw - usage.ru_nivcsw,
        "collections": [g["collections"] - c for g, c in zip(gc.get_stats(), collections)]})
print(json.dumps(out))
"""


TURNS = r"""
import filecmp, gc, json, os, sys, time
os.environ["MPLBACKEND"] = "Agg"
import analysis_before.pipeline.stages as before_stages
import analysis.pipeline.stages as this_stages
gc.freeze()
for workers in (__import__("analysis_before.pipeline.workers").pipeline.workers,
                __import__("analysis.pipeline.workers").pipeline.workers):
    if hasattr(workers, "IN_WORKER"):
        workers.IN_WORKER[0] = True
runs_root, sites, turns, reverse = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1"
names = sorted(os.listdir(runs_root))
cpu = time.process_time
trees = [("before", before_stages), ("this", this_stages)]
if reverse:
    trees.reverse()

def one(stages, name, site):
    t = cpu()
    r = stages.analyse_task(os.path.join(runs_root, name), runs_root, site, False)
    if not r["ok"]:
        sys.exit(r["error"])
    analyse = cpu() - t
    c = stages.chart_task(r["run"], r["chart_jobs"], site)
    if not c["ok"]:
        sys.exit(c["error"])
    return analyse, cpu() - t - analyse

def differing(d):
    out = d.diff_files + d.left_only + d.right_only
    for sub in d.subdirs.values():
        out += differing(sub)
    return out

for label, stages in trees:      # a worker's first run: its set-up
    one(stages, names[0], os.path.join(sites, label))
spent = {label: [] for label, _ in trees}
same = None
for i in range(turns):
    name = names[1 + i % (len(names) - 1)]
    for label, stages in trees:
        spent[label].append(one(stages, name, os.path.join(sites, label)))
    if same is None:
        same = not differing(filecmp.dircmp(*(os.path.join(sites, l) for l in ("before", "this"))))
print(json.dumps({"spent": spent, "same": same}))
"""


def package_as(tree: Path, name: str) -> None:
    """`tree`'s analysis/ copied as `name`/ beside it, every import of the package renamed (the
    pipeline names its steps' modules in strings too: analysis/kinds.py)."""
    shutil.copytree(tree / "analysis", tree / name)
    for path in (tree / name).rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        text = re.sub(r"\bfrom analysis\b", f"from {name}", text)
        text = re.sub(r"\bimport analysis\.", f"import {name}.", text)
        text = re.sub(r"^(\s*)import analysis$", rf"\1import {name} as analysis", text,
                      flags=re.M)
        text = re.sub(r"""(f?["'])analysis\.""", rf"\1{name}.", text)
        path.write_text(text, encoding="utf-8")


def turns(before: Path, run: Path, n: int, reverse: bool, tmp: Path) -> dict:
    package_as(before, "analysis_before")
    runs_root = tmp / "turn-runs"
    for i in range(min(n, 8) + 1):      # (hard links: a first run, then runs taken in turn)
        shutil.copytree(run.resolve(), runs_root / f"{run.name}-{i}", copy_function=os.link)
    sites = tmp / "turn-sites"
    load = os.getloadavg()[0]
    out = subprocess.run([PY, "-c", TURNS, str(runs_root), str(sites), str(n),
                          "1" if reverse else "0"], capture_output=True, text=True, cwd=REPO,
                         env={**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{before}",
                              "MPLBACKEND": "Agg"})
    if out.returncode != 0:
        sys.exit(f"error: the turns failed: {out.stderr.strip()[-600:]}")
    return {**json.loads(out.stdout.strip().splitlines()[-1]), "load": load,
            "load_after": os.getloadavg()[0]}


def print_turns(result: dict, before: str, n: int, reverse: bool) -> None:
    first = "this checkout" if reverse else before
    print(f"turn by turn in one process, {n} turns, {first} first, CPU ms a run "
          f"[1-min load average {result['load']:.2f} -> {result['load_after']:.2f}]")
    print(f"the two trees' files of the first turn: {'the same' if result['same'] else 'DIFFER'}")
    for label, title in (("before", before), ("this", "this checkout")):
        spent = result["spent"][label]
        for part, pick in (("analyse", lambda a, c: a), ("charts", lambda a, c: c),
                           ("total", lambda a, c: a + c)):
            v = sorted(pick(a, c) * 1000 for a, c in spent)
            print(f"{title[:24]:<26}{part:<9}min {v[0]:7.1f}  q1 {v[len(v) // 4]:7.1f}  "
                  f"median {v[len(v) // 2]:7.1f}")


BUILD = FIXED_LOOP + r"""
import json, os, resource, sys
tasks_dir = os.environ.get("RUN_COST_TASKS")
if tasks_dir:
    # Each worker task's own CPU, faults and collections, appended to a file of the worker's:
    # the stages' wrappers are set on both modules before the pool forks, under the stages'
    # names, so the tasks are pickled by reference to them.
    import gc, time
    import analysis.pipeline.runner as runner, analysis.pipeline.stages as stages

    def recorded(inner, phase):
        def task(*args, **kwargs):
            interpreter = interpreter_cpu()
            before, t, w = resource.getrusage(resource.RUSAGE_SELF), time.process_time(), \
                time.perf_counter()
            collections = [g["collections"] for g in gc.get_stats()]
            result = inner(*args, **kwargs)
            after = resource.getrusage(resource.RUSAGE_SELF)
            with open(os.path.join(tasks_dir, f"{os.getpid()}.jsonl"), "a") as log:
                log.write(json.dumps({
                    "phase": phase, "cpu": time.process_time() - t, "interpreter": interpreter,
                    "wall": time.perf_counter() - w, "start": w,
                    "user": after.ru_utime - before.ru_utime,
                    "sys": after.ru_stime - before.ru_stime,
                    "minflt": after.ru_minflt - before.ru_minflt,
                    "majflt": after.ru_majflt - before.ru_majflt,
                    "nivcsw": after.ru_nivcsw - before.ru_nivcsw,
                    "maxrss_kb": after.ru_maxrss,
                    "collections": [g["collections"] - c
                                    for g, c in zip(gc.get_stats(), collections)],
                    "process_cpu": after.ru_utime + after.ru_stime}) + "\n")
            return result
        task.__module__, task.__qualname__ = inner.__module__, inner.__qualname__
        return task

    for name, phase in (("analyse_task", "analyse"), ("chart_task", "charts")):
        wrapper = recorded(getattr(stages, name), phase)
        setattr(stages, name, wrapper)
        setattr(runner, name, wrapper)
from analysis.cli import main
code = main(sys.argv[1:])
own, workers = (resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
print(json.dumps({"code": code, "main": own.ru_utime + own.ru_stime,
                  "workers": workers.ru_utime + workers.ru_stime}))
"""


def build_cpu(code: Path, run: Path, n: int, tmp: Path, tasks: bool = False) -> dict:
    """A whole build of `n` hard-linked copies of `run` with the code of `code`: CPU seconds of
    its main process and of its workers, wall seconds, the load average before it."""
    corpus = Path(tempfile.mkdtemp(dir=tmp))
    for i in range(n):
        shutil.copytree(run.resolve(), corpus / "runs" / f"{run.name}-{i:04d}",
                        copy_function=os.link)
    (corpus / "site").mkdir()
    env = {**os.environ, "PYTHONPATH": str(code), "MPLBACKEND": "Agg"}
    if tasks:
        (corpus / "tasks").mkdir()
        env["RUN_COST_TASKS"] = str(corpus / "tasks")
    load = os.getloadavg()[0]
    started = time.perf_counter()
    out = subprocess.run([PY, "-c", BUILD, "build", "--runs", str(corpus / "runs"), "--site",
                          str(corpus / "site"), "--force", *([] if tasks else ["-q"])],
                         capture_output=True, text=True, cwd=code, env=env)
    wall = time.perf_counter() - started
    recorded = task_records(corpus / "tasks") if tasks else None
    shutil.rmtree(corpus)
    result = json.loads(out.stdout.strip().splitlines()[-1]) if out.returncode == 0 else {}
    if result.get("code") != 0:
        sys.exit(f"error: {code}: the build of {n} runs failed: {out.stderr.strip()[-400:]}")
    phases = re.search(r"built \d+ of \d+ runs .*", out.stderr)
    return {**result, "wall": wall, "load": load, "tasks": recorded,
            "phases": phases.group(0) if phases else ""}


def task_records(folder: Path) -> dict:
    """The workers' task records (RUN_COST_TASKS): per worker, its tasks in order."""
    return {path.stem: [json.loads(line) for line in path.read_text().splitlines()]
            for path in sorted(folder.glob("*.jsonl"))}


def print_tasks(label: str, n: int, build: dict) -> None:
    """What the workers spent inside their tasks, per phase, against all their CPU."""
    by_worker = build["tasks"]
    records = [r for worker in by_worker.values() for r in worker]
    inside = sum(r["cpu"] for r in records)
    # each worker's own CPU when its last task ended, less its tasks': the pool's loop
    # (unpickling the call, pickling the result), the worker's start, its idle polling
    # (less the fixed loops the recorder ran)
    last = sum(worker[-1]["process_cpu"] for worker in by_worker.values()) \
        - sum(r.get("interpreter", 0.0) for r in records)
    print(f"{label[:24]:<26}{n:>5} runs, {len(by_worker)} workers: tasks {inside:7.2f} CPU s, "
          f"outside tasks {last - inside:6.2f}, after the last task "
          f"{build['workers'] - last:6.2f}; main {build['main']:6.2f}")
    for phase in ("analyse", "charts"):
        rs = [r for r in records if r["phase"] == phase]
        if not rs:
            continue
        cpus = sorted(r["cpu"] for r in rs)
        gens = [sum(r["collections"][g] for r in rs) for g in range(3)]
        print(f"{'':<26}{phase:<8} {len(rs):5} tasks: CPU {sum(cpus):7.2f} s (a task: min "
              f"{cpus[0]:.3f} median {cpus[len(cpus) // 2]:.3f} max {cpus[-1]:.3f}), sys "
              f"{sum(r['sys'] for r in rs):6.2f}, minflt {sum(r['minflt'] for r in rs) / len(rs):8.0f}"
              f" a task, collections {gens}, max rss {max(r['maxrss_kb'] for r in rs) / 1024:.0f} MB")
        # the same phase's tasks in the build's first and last tenth: does a task cost more
        # as the worker ages?
        tenth = max(1, len(rs) // 10)
        ordered = sorted(rs, key=lambda r: r["start"])
        early, late = ordered[:tenth], ordered[-tenth:]
        print(f"{'':<26}{'':<8} first tenth {sum(r['cpu'] for r in early) / len(early):.3f} s a "
              f"task, last tenth {sum(r['cpu'] for r in late) / len(late):.3f} s")
        # the fixed loop run before each task: if the tasks' CPU moves with it, what varied
        # from task to task was the machine's pace (the code and its data are the same)
        loops = [r["interpreter"] for r in ordered[1:]]
        if len(loops) > 2 and min(loops) < max(loops):
            import statistics
            cpus = [r["cpu"] for r in ordered[1:]]
            print(f"{'':<26}{'':<8} the fixed loop before each task: {min(loops) * 1000:.1f}-"
                  f"{max(loops) * 1000:.1f} ms; its correlation with the task's CPU "
                  f"{statistics.correlation(loops, cpus):.2f}")
    print(f"{'':<26}{build['phases']}")


def print_builds(trees: dict, builds: dict, sizes: list[int]) -> None:
    print("whole builds (`python -m analysis build --force`), CPU s [1-min load average before]")
    for label in trees:
        for n in sizes:
            for b in builds[label][n]:
                print(f"{label[:24]:<26}{n:>5} runs: main {b['main']:7.2f}  workers "
                      f"{b['workers']:8.2f}  wall {b['wall']:7.1f} s [{b['load']:.2f}]")
                if b.get("tasks"):
                    print_tasks(label, n, b)
        for n1, n2 in zip(sizes, sizes[1:]):
            # (each size's least CPU of its builds)
            a, b = ({k: min(x[k] for x in builds[label][m]) for k in ("main", "workers")}
                    for m in (n1, n2))
            print(f"{label[:24]:<26}a run more ({n1} -> {n2}): main "
                  f"{(b['main'] - a['main']) / (n2 - n1):.3f} s, workers "
                  f"{(b['workers'] - a['workers']) / (n2 - n1):.3f} s")


# What the build reads from the code's tree: the package, and the site's templates and
# settings (report pages are rendered from _layouts/_includes in newer trees).
EXPORTED = ("analysis", "_layouts", "_includes", "_config.yml")


def export(rev: str, into: Path) -> Path:
    """What the build needs of commit `rev` (git archive), to time an older tree's code."""
    into.mkdir(parents=True)
    present = subprocess.run(["git", "-C", str(REPO), "ls-tree", "--name-only", rev],
                             capture_output=True, text=True, check=True).stdout.split()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev,
                              *[p for p in EXPORTED if p in present]],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def measure(code: Path, runs_root: Path, names: tuple[str, str], tmp: Path) -> dict:
    """One fresh worker-like process: imports, the first run, the next run."""
    site = Path(tempfile.mkdtemp(dir=tmp))
    load = os.getloadavg()[0]
    out = subprocess.run([PY, "-c", CHILD, str(runs_root), str(site), *names],
                         capture_output=True, text=True, cwd=code,
                         env={**os.environ, "PYTHONPATH": str(code), "MPLBACKEND": "Agg"})
    shutil.rmtree(site)
    if out.returncode != 0:
        sys.exit(f"error: {code}: the timed build failed: {out.stderr.strip()[-400:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    result["load"] = load
    return result


def best(results: list[dict], key: str, stage: str | None) -> tuple[float, float]:
    """(least CPU seconds, load average then) over the repeats."""
    pick = min(results, key=lambda r: r[key] if stage is None else r[key][stage])
    return (pick[key] if stage is None else pick[key][stage]), pick["load"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", type=Path, default=REPO / "runs" / "pool-vs-virtual")
    ap.add_argument("--before", help="a commit to compare with (its analysis/ is exported)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="print every measurement as JSON")
    ap.add_argument("--reverse", action="store_true",
                    help="this checkout first in each turn (the other order of --before)")
    ap.add_argument("--turns", type=int, metavar="N",
                    help="with --before: N turns of each tree in one process (see above)")
    ap.add_argument("--build", type=int, nargs="+", metavar="N",
                    help="also whole builds of N copies of the run (two sizes or more: the "
                         "CPU of each run added, main process and workers)")
    ap.add_argument("--tasks", action="store_true",
                    help="with --build: record each worker task's CPU, faults and collections")
    ap.add_argument("--repeat-builds", type=int, default=1, metavar="K",
                    help="with --build: K builds of each size and tree, the trees alternating")
    args = ap.parse_args()
    if not (args.run / "run.yml").is_file():
        print(f"error: {args.run}: no run.yml (give a run folder)", file=sys.stderr)
        return 2
    if args.turns and not args.before:
        print("error: --turns compares two trees: give --before COMMIT", file=sys.stderr)
        return 2
    if args.turns:
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            result = turns(export(args.before, tmp / "before"), args.run, args.turns,
                           args.reverse, tmp)
        print_turns(result, args.before, args.turns, args.reverse)
        return 0 if result["same"] else 1
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        trees = {"this checkout": REPO}
        if args.before:
            trees = {args.before: export(args.before, tmp / "before"), **trees}
        runs_root = tmp / "runs"
        names = (args.run.name + "-a", args.run.name + "-b")
        for name in names:
            shutil.copytree(args.run.resolve(), runs_root / name, copy_function=os.link)
        results: dict[str, list[dict]] = {label: [] for label in trees}
        order = list(trees.items())[::-1] if args.reverse else list(trees.items())
        for _ in range(args.repeat):   # interleaved: load from elsewhere hits every tree alike
            for label, code in order:
                results[label].append(measure(code, runs_root, names, tmp))
        sizes = sorted(set(args.build or ()))
        builds: dict[str, dict[int, dict]] = {label: {} for label in trees}
        for n in sizes:
            for turn in range(args.repeat_builds):
                # (ABAB, and BABA from the second turn on: each tree goes first once)
                for label, code in (order if turn % 2 == 0 else order[::-1]):
                    builds[label].setdefault(n, []).append(
                        build_cpu(code, args.run, n, tmp, args.tasks))
    if args.json:
        print(json.dumps(results, indent=1))
    if not args.repeat:
        print_builds(trees, builds, sizes)
        return 0
    n_charts = next(iter(results.values()))[0]["next"]["n_charts"]
    print(f"one run ({args.run.name}, {n_charts} charts): best CPU s of {args.repeat} "
          f"interleaved fresh processes [1-min load average then]")
    print(f"{'stage':<10}" + "".join(f"{label[:24]:>28}" for label in trees))
    rows = [("imports", "imports", None)] + [(f"first {s}", "first", s) for s in ("total",)] + \
        [(s, "next", s) for s in STAGES + ("total",)
         if all(s in r["next"] for rs in results.values() for r in rs)]
    for title, key, stage in rows:
        cells = [best(results[label], key, stage) for label in trees]
        print(f"{title:<10}" + "".join(f"{f'{cpu:.3f} s [{load:.2f}]':>28}"
                                       for cpu, load in cells))
    print("(stages other than imports/first: the second run in the same process, as each run "
          "after a worker's first)")
    print_spread(results)
    if sizes:
        print_builds(trees, builds, sizes)
    return 0


def print_spread(results: dict[str, list[dict]]) -> None:
    """The "next" run's CPU over the fresh processes, beside the fixed loops' CPU in the same
    processes: does the run's spread follow the machine's pace?"""
    import statistics
    for label, runs in results.items():
        nexts = [r["next"] for r in runs if "interpreter" in r["next"]]
        if len(nexts) < 3:
            continue
        total = [n["total"] for n in nexts]
        loop = [(n["interpreter"] + n["interpreter_after"]) / 2 for n in nexts]
        sha = [n["reference"] for n in nexts]
        switches = [n["nivcsw"] for n in nexts]
        print(f"{label[:24]:<26}next total {min(total):.3f}-{max(total):.3f} s; sha256 loop "
              f"{min(sha) * 1000:.1f}-{max(sha) * 1000:.1f} ms; interpreted loop "
              f"{min(loop) * 1000:.1f}-{max(loop) * 1000:.1f} ms, its correlation with the "
              f"total {statistics.correlation(loop, total):.2f}; involuntary switches "
              f"{min(switches)}-{max(switches)}")


if __name__ == "__main__":
    sys.exit(main())
