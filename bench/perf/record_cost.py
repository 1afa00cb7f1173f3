"""What recording each finished run costs a build's main process (runner.Build._record: the
listing of the run's output folders, its outputs' sizes, the state written every few seconds),
at the pace of the 1,000-run build from nothing (~0.23 s of wall time a run), for this tree's
runner and another tree's, turn by turn in one process (issue 36). Beside it, the corpus
table's CSV of N runs from nothing (cell_table.corpus_csv, the reduce step beside the charts),
and the build's "inputs" phase: the keys of N hard-linked copies of runs/pool-vs-virtual with no
key cache (cache.run_input_hashes on 2 jobs; wall, this process's CPU and its workers').

    .venv/bin/python bench/perf/record_cost.py --site SITE --before DIR [--runs 1000]

SITE: a built site (its state names the run whose outputs are copied, hard-linked, under N
run ids in a scratch folder); DIR: a tree to compare with (`git archive main | tar -x -C DIR`).
The clock the runner reads is a fake one that moves `--pace` seconds a run, so each tree's
state is written as often as in a real build of that pace; the CPU is this process's."""
from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def runner_of(tree: Path):
    """The `analysis` package of `tree`, imported afresh (the trees' modules never mix)."""
    for name in [m for m in sys.modules if m == "analysis" or m.startswith("analysis.")]:
        del sys.modules[name]
    sys.path.insert(0, str(tree))
    try:
        return importlib.import_module("analysis.pipeline.runner")
    finally:
        sys.path.remove(str(tree))


def make_site(source: Path, into: Path, n: int) -> tuple[list[str], list[list[str]]]:
    """N runs' outputs, hard links of one built run's; (run ids, each run's output list)."""
    state = json.loads((source / ".cache/loadcurve/state.json").read_text())
    model, entry = sorted(state["runs"].items())[0]
    ids = [f"r{i:04d}" for i in range(n)]
    outputs = []
    for run_id in ids:
        rels = [rel.replace(model, run_id) for rel in entry["outputs"]]
        for rel, new in zip(entry["outputs"], rels):
            (into / new).parent.mkdir(parents=True, exist_ok=True)
            os.link(source / rel, into / new)
        outputs.append(rels)
    (into / "runs").mkdir()
    return ids, outputs


def record_all(runner, site: Path, ids, outputs, pace: float) -> tuple[float, int]:
    """CPU seconds of recording every run (a state from nothing), and the state's writes."""
    shutil.rmtree(site / ".cache", ignore_errors=True)
    clock = [1000.0]
    real_clock, real_write = runner.time.monotonic, runner.atomic.write_record
    writes = [0]

    def write(path, text):
        writes[0] += 1
        return real_write(path, text)
    runner.time.monotonic = lambda: clock[0]
    runner.atomic.write_record = write
    try:
        build = runner.Build(site / "runs", site, quiet=True, force=True, jobs=1)
        state = build.load_state()
        started = time.process_time()
        for run_id, rels in zip(ids, outputs):
            build._record(state, run_id, "digest", rels)
            clock[0] += pace
        build.save_state(state)
        return time.process_time() - started, writes[0]
    finally:
        runner.time.monotonic, runner.atomic.write_record = real_clock, real_write


def cells_csvs(site: Path, ids: list[str]) -> None:
    """Each run's cells.csv its own copy, with its own run id in its rows (make_site's hard
    links of the model's name the model's run)."""
    from analysis.paths import run_cells_csv_path
    model = None
    for run_id in ids:
        path = site / run_cells_csv_path(run_id)
        text = path.read_text()
        header, _, rows = text.partition("\n")
        model = model or rows.split(",", 1)[0]
        path.unlink()
        path.write_text(header + "\n" + rows.replace("\n" + model + ",", "\n" + run_id + ",")
                        .replace(model + ",", run_id + ",", 1))


def corpus_csv_cost(cell_table, site: Path, ids: list[str]) -> tuple[float, str]:
    """CPU seconds of the corpus CSV of `ids` from nothing (no blocks kept), and its text."""
    from analysis.paths import CELLS_CSV
    df = cell_table.read_runs(site, ids)
    (site / cell_table.CELL_BLOCKS).unlink(missing_ok=True)
    (site / CELLS_CSV).unlink(missing_ok=True)
    started = time.process_time()
    text = cell_table.corpus_csv(site, df)
    return time.process_time() - started, text


def inputs_cost(cache, site: Path, dirs: list[Path], jobs: int) -> tuple[float, float, list]:
    """Wall and CPU seconds (this process and its children) of keying `dirs` from nothing."""
    import resource
    shutil.rmtree(site / ".cache", ignore_errors=True)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    started, cpu = time.monotonic(), time.process_time()
    keys = cache.RunKeys(site / ".cache/loadcurve")
    digests = [str(d) for d in cache.run_input_hashes(dirs, site, "code", keys, jobs)]
    keys.save()
    wall, cpu = time.monotonic() - started, time.process_time() - cpu
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    child = after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime
    return wall, cpu + child, digests


def in_turns(trees: dict[str, Path], turns: int):
    """(label, tree) of each tree once a turn, the order reversed every other turn."""
    for turn in range(turns):
        yield from list(trees.items())[::1 if turn % 2 == 0 else -1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--site", type=Path, required=True, help="a built site")
    ap.add_argument("--before", type=Path, required=True, help="a tree to compare with")
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--pace", type=float, default=0.23, help="wall seconds a run")
    ap.add_argument("--turns", type=int, default=2)
    args = ap.parse_args()
    trees = {"before": args.before.resolve(), "this tree": REPO}
    with tempfile.TemporaryDirectory(dir=args.site.parent) as tmp:
        site = Path(tmp)
        ids, outputs = make_site(args.site.resolve(), site, args.runs)
        texts = {}
        for label, tree in in_turns(trees, args.turns):
            runner = runner_of(tree)
            load = os.getloadavg()[0]
            cpu, writes = record_all(runner, site, ids, outputs, args.pace)
            texts[label] = (site / ".cache/loadcurve/state.json").read_text()
            print(f"{label:<10} {args.runs} runs recorded: {cpu:6.2f} CPU s, "
                  f"{cpu / args.runs * 1000:5.1f} ms a run, {writes} state writes "
                  f"[load {load:.2f}]", flush=True)
        same = len(set(texts.values())) == 1
        print("the two trees' states:", "identical" if same else "DIFFERENT")
        cells_csvs(site, ids)
        csvs = {}
        for label, tree in in_turns(trees, args.turns):
            runner_of(tree)
            cell_table = importlib.import_module("analysis.corpus.cell_table")
            load = os.getloadavg()[0]
            cpu, csvs[label] = corpus_csv_cost(cell_table, site, ids)
            print(f"{label:<10} corpus CSV of {args.runs} runs from nothing: {cpu:6.2f} CPU s, "
                  f"{cpu / args.runs * 1000:5.2f} ms a run [load {load:.2f}]", flush=True)
        same_csv = len(set(csvs.values())) == 1
        print("the two trees' corpus CSVs:", "identical" if same_csv else "DIFFERENT")
        dirs = []
        for run_id in ids:
            shutil.copytree(REPO / "runs" / "pool-vs-virtual", site / "runs" / run_id,
                            copy_function=os.link)
            dirs.append(site / "runs" / run_id)
        keys = {}
        for label, tree in in_turns(trees, args.turns):
            runner_of(tree)
            cache = importlib.import_module("analysis.pipeline.cache")
            load = os.getloadavg()[0]
            wall, cpu, keys[label] = inputs_cost(cache, site, dirs, 2)
            print(f"{label:<10} inputs of {args.runs} runs from nothing, 2 jobs: {wall:6.2f} s,"
                  f" {cpu:6.2f} CPU s with its workers' [load {load:.2f}]", flush=True)
        same_keys = len({tuple(k) for k in keys.values()}) == 1
        print("the two trees' run keys:", "identical" if same_keys else "DIFFERENT")
    return 0 if same and same_csv and same_keys else 1


if __name__ == "__main__":
    sys.exit(main())
