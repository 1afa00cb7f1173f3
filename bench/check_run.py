"""Check a run that bench/run.sh measured: the analysis reads every cell, and counts agree.

For each cell repetition of <run-dir>/run.yml (schema 2), and each of its generators' files
(`hlog: [..]`, `counts: [..]` with run.sh --generators N): the counts file has every key of
counts schema 2 (bench/README.md); the analysis's .hlog reader reads the log without warnings;
its untagged count is the window's completed requests and its `timeout` tag count the window's
timed-out ones; sent = completed + timed_out + errors for the window, and with the abandoned
requests for the whole run; the window's sent + not_sent is the schedule's count; the log's
intervals match the counts file's (completed = untagged + outside, per interval; phases
warm-up, window, drain); the drain is at most the timeout; no latency is below the service
time (with scenarios: the scenario's floor, bench/catalog.py); a pool completes no more than its
ceiling; with scenarios, every cell names a scenario of run.yml and one of its load points. With
--saturated [SCENARIO/]SYSTEM/LOAD, that cell must have no window request answered in time. Prints one line per check and closes with
'N passed, N failed'. Exit status 1 when any check failed.

usage: python bench/check_run.py RUN_DIR [--saturated [SCENARIO/]SYSTEM/LOAD ...]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# The analysis side, in one place (its modules may move; only this block names them).
from analysis.read.hdr.log import read_hlog  # noqa: E402  (the path is set just above)

sys.path.insert(0, str(ROOT / "bench"))
import catalog  # noqa: E402

# Counts schema 2: the keys every counts file must have (nested: the keys of that object).
COUNTS_KEYS = {
    "schema_version": None, "offered_rate": None, "warmup_s": None, "duration_s": None,
    "timeout_s": None, "value_unit": None, "hlog_intervals": None, "start_epoch_ms": None,
    "window": {"start_s", "end_s", "start_epoch_ms", "end_epoch_ms", "sent", "completed",
               "timed_out", "errors", "not_sent"},
    "drain_s": None,
    "total": {"sent", "completed", "timed_out", "errors", "not_sent", "in_flight_at_end"},
    "in_flight": {"at_window_start", "at_window_end", "window_mean", "window_max"},
    "generator": {"cpu_s_window", "cpu_share_window"},
    "machine": {"cpu_share_window", "cores"},
    "server": None,
    "send_lag_us_window": {"p50", "p99", "p999", "max", "count"},
    "host_check": {"busy_share_before", "loadavg_1m_before", "waited_s", "verdict"},
    "achieved_send_rate": None, "achieved_completion_rate": None,
    "intervals": None,
}
INTERVAL_KEYS = {"t_s", "length_s", "phase", "sent", "completed", "timed_out", "errors",
                 "in_flight_mean", "in_flight_max"}


class Checks:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def check(self, name: str, ok: bool, detail: str = "") -> None:
        if ok:
            self.passed += 1
            print(f"ok   {name}")
        else:
            self.failed += 1
            print(f"FAIL {name}{': ' + detail if detail else ''}")


def missing_keys(counts: dict) -> list[str]:
    missing = []
    for key, inner in COUNTS_KEYS.items():
        if key not in counts:
            missing.append(key)
        elif inner and isinstance(counts[key], dict):
            missing += [f"{key}.{k}" for k in sorted(inner - counts[key].keys())]
        elif inner:
            missing.append(f"{key} (not an object)")
    for i, iv in enumerate(counts.get("intervals") or []):
        missing += [f"intervals[{i}].{k}" for k in sorted(INTERVAL_KEYS - iv.keys())]
    return missing


def cell_key(cell: dict) -> str:
    """[SCENARIO/]SYSTEM/LOAD"""
    return "/".join(x for x in (cell.get("scenario"), cell["system"], cell["load"]) if x)


def cell_files(cell: dict) -> list[tuple[str, str, str]]:
    """(name, hlog, counts) per generator of a cell: one, or each of a `--generators N` cell's
    lists (`hlog: [..]`, `counts: [..]`, in generator order)."""
    name = f"{cell_key(cell)}.{cell['repetition']}"
    if isinstance(cell["hlog"], str):
        return [(name, cell["hlog"], cell["counts"])]
    return [(f"{name}.g{i}", hlog, counts)
            for i, (hlog, counts) in enumerate(zip(cell["hlog"], cell["counts"]), 1)]


def check_cell(run_dir: Path, run: dict, cell: dict, checks: Checks) -> dict:
    """Checks each generator's files, then the cell; returns the cell's window outcomes (summed
    over its generators)."""
    name = f"{cell_key(cell)}.{cell['repetition']}"
    scenario = next((s for s in run.get("scenarios") or [] if s["id"] == cell.get("scenario")), None)
    if run.get("scenarios"):
        checks.check(f"{name}: a scenario of run.yml, at one of its load points",
                     scenario is not None and cell["load"] in scenario["load_points"])
        floor_ms = catalog.floor_ms(scenario["id"]) if scenario else None
    else:
        floor_ms = run.get("service_time_ms")
    files = cell_files(cell)
    generated = [check_generator(run_dir, *f, floor_ms, checks) for f in files]
    if len(files) > 1:
        n = len(files)
        checks.check(f"{name}: {n} generators, as many logs as counts files, in order, from one "
                     f"instant", len(cell["hlog"]) == len(cell["counts"])
                     and [(c.get("generator_index"), c.get("generators")) for c in generated]
                     == [(i, n) for i in range(1, n + 1)]
                     and len({c["start_epoch_ms"] for c in generated}) == 1,
                     json.dumps([(c.get("generator_index"), c["start_epoch_ms"]) for c in generated]))
    system = next(s for s in run["systems"] if s["id"] == cell["system"])
    if system.get("concurrency_limit") and floor_ms:
        # N workers holding each request at least S seconds complete at most N/S per second,
        # plus the N already in progress when the window opened.
        n, s = system["concurrency_limit"], floor_ms / 1000
        duration = generated[0]["duration_s"]
        done = sum(c["completed"] for counts in generated for c in counts["intervals"]
                   if c["phase"] == "window")
        checks.check(f"{name}: completions in the window within the pool's ceiling",
                     done <= n / s * duration + n, f"{done} > {n / s * duration + n:g}")
    if cell["repetition"] <= (run.get("method") or {}).get("jfr_repetitions", cell["repetition"]):
        checks.check(f"{name}: JFR recording present",
                     cell.get("jfr") is not None and (run_dir / cell["jfr"]).stat().st_size > 0)
    else:
        checks.check(f"{name}: no JFR recording beyond method.jfr_repetitions", cell.get("jfr") is None)
    return {k: sum(c["window"][k] for c in generated) for k in ("sent", "completed", "timed_out")}


def check_generator(run_dir: Path, name: str, hlog: str, counts_file: str, floor_ms,
                    checks: Checks) -> dict:
    """One generator's log and counts file agree; returns its counts."""
    counts = json.loads((run_dir / counts_file).read_text(encoding="utf-8"))
    checks.check(f"{name}: counts file schema 2 with every key",
                 counts.get("schema_version") == 2 and not missing_keys(counts),
                 ", ".join(missing_keys(counts)))
    window, total, intervals = counts["window"], counts["total"], counts["intervals"]
    checks.check(f"{name}: window sent = completed + timed_out + errors",
                 window["sent"] == window["completed"] + window["timed_out"] + window["errors"],
                 json.dumps(window))
    checks.check(f"{name}: run sent = completed + timed_out + errors + abandoned",
                 total["sent"] == total["completed"] + total["timed_out"] + total["errors"]
                 + total["in_flight_at_end"], json.dumps(total))
    scheduled = round(counts["offered_rate"] * counts["duration_s"])
    checks.check(f"{name}: window sent + not_sent = the schedule's {scheduled}",
                 window["sent"] + window["not_sent"] == scheduled, json.dumps(window))

    log = read_hlog(run_dir / hlog)
    checks.check(f"{name}: the analysis reads the .hlog without warnings", not log.warnings,
                 "; ".join(log.warnings))
    by_tag = {tag: log.select(tag) for tag in (None, "timeout", "outside")}
    untagged = sum(iv.total_count for iv in by_tag[None])
    timeouts = sum(iv.total_count for iv in by_tag["timeout"])
    checks.check(f"{name}: untagged count = window completed",
                 untagged == window["completed"], f"log {untagged}, counts {window['completed']}")
    checks.check(f"{name}: `timeout` tag count = window timed_out",
                 timeouts == window["timed_out"], f"log {timeouts}, counts {window['timed_out']}")
    checks.check(f"{name}: one interval per second in the log and the counts file",
                 len(by_tag[None]) == len(by_tag["timeout"]) == len(by_tag["outside"])
                 == len(intervals) == counts["hlog_intervals"]
                 and all(abs(iv.start_s - c["t_s"]) < 1e-3 and abs(iv.length_s - c["length_s"]) < 1e-3
                         for iv, c in zip(by_tag[None], intervals)),
                 f"log {len(by_tag[None])}, counts {len(intervals)}")
    per_interval = [a.total_count + b.total_count for a, b in zip(by_tag[None], by_tag["outside"])]
    checks.check(f"{name}: per interval, completed = untagged + outside",
                 per_interval == [c["completed"] for c in intervals],
                 f"log {per_interval}, counts {[c['completed'] for c in intervals]}")
    warmup, duration = counts["warmup_s"], counts["duration_s"]
    phases = [c["phase"] for c in intervals]
    expected = ["warmup"] * warmup + ["window"] * duration
    checks.check(f"{name}: phases: {warmup} warmup, {duration} window, then drain",
                 phases[:warmup + duration] == expected
                 and all(p == "drain" for p in phases[warmup + duration:])
                 and window["start_s"] == warmup and window["end_s"] == warmup + duration,
                 " ".join(phases))
    checks.check(f"{name}: drain within the timeout ({counts['drain_s']} s)",
                 0 <= counts["drain_s"] <= counts["timeout_s"] + 0.5)
    if untagged and floor_ms:
        low = log.merged(None).min
        checks.check(f"{name}: no latency below the service time ({floor_ms:g} ms)",
                     low >= floor_ms * 1000 * 0.999, f"min {low} us")
    return counts


def check_run(run_dir: Path, saturated: list[str], checks: Checks) -> None:
    run = yaml.safe_load((run_dir / "run.yml").read_text(encoding="utf-8"))
    method = run.get("method") or {}
    checks.check(f"{run_dir.name}: run.yml schema 2, value_unit us, method recorded",
                 run.get("schema_version") == 2 and run.get("value_unit") == "us"
                 and {"repetitions", "order", "order_seed", "drain", "host_check"} <= method.keys()
                 and run["load_generator"].get("drain") is True, json.dumps(method, default=str))
    reps = {}
    outcomes = {}
    for cell in run["cells"]:
        window = check_cell(run_dir, run, cell, checks)
        key = cell_key(cell)
        reps.setdefault(key, []).append(cell["repetition"])
        outcomes.setdefault(key, []).append(window)
    n = method.get("repetitions")
    checks.check(f"{run_dir.name}: every cell has repetitions 1..{n}",
                 all(sorted(r) == list(range(1, (n or 0) + 1)) for r in reps.values()),
                 json.dumps(reps))
    for key in saturated:
        windows = outcomes.get(key, [])
        checks.check(f"{key}: saturated: no window request answered in time, all timed out",
                     bool(windows) and all(w["completed"] == 0 and w["timed_out"] == w["sent"] > 0
                                           for w in windows), json.dumps(windows))


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("run_dir", type=Path)
    p.add_argument("--saturated", action="append", default=[], metavar="SYSTEM/LOAD")
    args = p.parse_args(argv)
    checks = Checks()
    try:
        check_run(args.run_dir, args.saturated, checks)
    except Exception as exc:  # noqa: BLE001 - any failure to read is a failed check
        checks.check("the run can be read", False, f"{type(exc).__name__}: {exc}")
    print(f"{checks.passed} passed, {checks.failed} failed")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
