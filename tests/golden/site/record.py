"""Re-record tests/golden/site/ (run through ./regen). See regen for what is recorded.

The expected numbers come from HdrHistogram's Java (javastats), never from our own output: the
golden data files are written only after `check_against_java` finds them equal to Java's
numbers (to the data file's rounding, 0.001 ms).

Three fixture runs:
- oracle-demo (schema 1, logs written by genhlog): every value a latency;
- scenarios-demo (schema 1 with `scenarios:`, issue 11; run.yml and logs written here, logs by
  genhlog): 3 scenarios x 12 systems x 2 repetitions, a 2-point load curve in `sleep`; per cell
  Java's statistics as for oracle-demo, and drops = sent - Java's count;
- bench-short (schema 2, recorded by `bench/run.sh --short`: pool2 and virtual at 5 and 200
  req/s, 2 repetitions, 2 s timeout): per repetition, Java's statistics of the *population*
  (the untagged intervals plus the `timeout` ones, whose values are the timeout), a statistic
  counted as censored when Java's value is at or above the timeout; per cell the median of
  the repetitions (of an even count the mean of the middle two, a lower bound when either is
  censored), counts summed.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
RUN = REPO / "tests" / "fixtures" / "runs" / "oracle-demo"
SHORT = REPO / "tests" / "fixtures" / "runs" / "bench-short"
ORACLE = Path(os.environ.get("LOADCURVE_SHARED", REPO.parent / "shared")) / "oracle"
PERCENTILES = {"p50_ms": "50", "p90_ms": "90", "p95_ms": "95", "p99_ms": "99", "p999_ms": "99.9"}
UNIT_PER_MS = 1000.0  # the fixture is recorded in microseconds

# file -> genhlog arguments: intervals, samples per second, seed, unit, mode
FILES = {
    "pool/r100.hlog": ("45", "100", "11", "us", "tagged"),
    "pool/r500.hlog": ("45", "300", "12", "us", "plain"),
    "virtual/r100.hlog": ("45", "100", "21", "us", "plain"),
    "virtual/r100-rep2.hlog": ("45", "110", "22", "us", "plain"),
    "virtual/r500.hlog": ("45", "500", "23", "us", "withempty"),
}
# cell (load/system) -> (files of its repetitions, tag)
CELLS = {
    "r100/pool": (["pool/r100.hlog"], "read"),
    "r100/virtual": (["virtual/r100.hlog", "virtual/r100-rep2.hlog"], None),
    "r500/pool": (["pool/r500.hlog"], None),
    "r500/virtual": (["virtual/r500.hlog"], None),
}


SCEN = REPO / "tests" / "fixtures" / "runs" / "scenarios-demo"
# (id, label, family, model, concurrency_limit): 5 servers, 12 targets
SCEN_SYSTEMS = [
    ("a-pool", "Server A, thread pool of 1", "Server A", "pool", 1),
    ("a-virtual", "Server A, virtual threads", "Server A", "virtual", None),
    ("a-loop", "Server A, event loop", "Server A", "event-loop", None),
    ("b-pool", "Server B, thread pool of 8", "Server B", "pool", 8),
    ("b-virtual", "Server B, virtual threads", "Server B", "virtual", None),
    ("c-pool", "Server C, thread pool of 8", "Server C", "pool", 8),
    ("c-virtual", "Server C, virtual threads", "Server C", "virtual", None),
    ("c-loop", "Server C, event loop", "Server C", "event-loop", None),
    ("d-virtual", "Server D, virtual threads", "Server D", "virtual", None),
    ("d-loop", "Server D, event loop", "Server D", "event-loop", None),
    ("e-pool", "Server E, thread pool of 8", "Server E", "pool", 8),
    ("e-loop", "Server E, event loop", "Server E", "event-loop", None),
]
# (id, label, endpoint, service_time_ms, load points, description)
SCEN_SCENARIOS = [
    ("sleep", "Sleep 5 ms", "/sleep?ms=5", 5, ["r50", "r100"],
     "Each request waits 5 ms (synthetic: the logs are genhlog's, the same body for all)."),
    ("cpu", "CPU ~1 ms", "/cpu", 1, ["r100"], "A fixed computation per request (synthetic)."),
    ("json", "JSON document", "/json", 0, ["r200"], "Build and serialize a document (synthetic)."),
]
SCEN_RATES = {"r50": 50, "r100": 100, "r200": 200}
SCEN_SECONDS = 6
SCEN_REPETITIONS = 2


def scenario_cells() -> list[dict]:
    """Every cell repetition of scenarios-demo with its genhlog arguments and `sent`: the
    offered requests, so drops = sent - recorded (a-pool records 80 of sleep's 100 req/s, a
    saturated cell; json's cells drop 0-2 requests a repetition)."""
    cells, seed = [], 100
    for sid, _, _, _, loads, _ in SCEN_SCENARIOS:
        for load in loads:
            for i, (system, *_rest) in enumerate(SCEN_SYSTEMS):
                for rep in range(1, SCEN_REPETITIONS + 1):
                    seed += 1
                    rate = SCEN_RATES[load]
                    recorded = 80 if (sid, load, system) == ("sleep", "r100", "a-pool") else rate
                    cells.append({
                        "scenario": sid, "system": system, "load": load, "repetition": rep,
                        "hlog": f"{sid}/{system}/{load}.{rep}.hlog",
                        "sent": rate * SCEN_SECONDS + ((i + rep) % 3 if sid == "json" else 0),
                        "_genhlog": (str(SCEN_SECONDS), str(recorded), str(seed), "us", "plain")})
    return cells


def generate_scenarios() -> None:
    """Write scenarios-demo: run.yml, then every log with genhlog."""
    import yaml
    cells = scenario_cells()
    run = {
        "schema_version": 1,
        "title": "Scenarios fixture: 12 targets in 3 scenarios (synthetic)",
        "date": "2026-11-23",
        "description": "A synthetic run written by the HdrHistogram oracle generator for "
                       "loadcurve's scenario tests (issue 11); not a measurement.",
        "tags": ["fixture", "synthetic"],
        "value_unit": "us",
        "scenarios": [{"id": sid, "label": label, "endpoint": endpoint, "service_time_ms": st,
                       "description": desc, "load_points": loads}
                      for sid, label, endpoint, st, loads, desc in SCEN_SCENARIOS],
        "systems": [{"id": i, "label": label, "family": family, "model": model,
                     **({"concurrency_limit": limit} if limit else {})}
                    for i, label, family, model, limit in SCEN_SYSTEMS],
        "load_points": [{"id": lid, "offered_rate": rate, "duration_s": SCEN_SECONDS}
                        for lid, rate in SCEN_RATES.items()],
        "environment": {"cpu": "synthetic (oracle generator)", "jdk": "HdrHistogram 2.2.2 GenHlog"},
        "load_generator": {"name": "../shared/oracle/genhlog", "model": "open"},
        "cells": [{k: v for k, v in c.items() if not k.startswith("_")} for c in cells],
    }
    header = ("# A FIXTURE, NOT A BENCHMARK: written by tests/golden/site/record.py (make golden),\n"
              "# every .hlog by ../shared/oracle/genhlog from fixed seeds; the golden _data is\n"
              "# checked against ../shared/oracle/javastats.\n")
    SCEN.mkdir(parents=True, exist_ok=True)
    (SCEN / "run.yml").write_text(header + yaml.safe_dump(run, sort_keys=False, width=100,
                                                          allow_unicode=True))
    for c in cells:
        (SCEN / c["hlog"]).parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([str(ORACLE / "genhlog"), str(SCEN / c["hlog"]), *c["_genhlog"]],
                       check=True)


def expected_scenarios() -> tuple[dict, dict]:
    """(javastats per repetition, expected cell fields) of scenarios-demo, keyed
    `<scenario>/<load>/<system>`."""
    per_rep: dict[str, list] = {}
    sent: dict[str, int] = {}
    for c in scenario_cells():
        key = f"{c['scenario']}/{c['load']}/{c['system']}"
        per_rep.setdefault(key, []).append(javastats_file(SCEN / c["hlog"]))
        sent[key] = sent.get(key, 0) + c["sent"]
    expected = {}
    for key, reps in per_rep.items():
        out = expected_cell(reps)
        out["sent"] = sent[key]
        out["drops"] = max(sent[key] - out["count"], 0)
        expected[key] = out
    return per_rep, expected


def generate() -> None:
    for rel, args in FILES.items():
        (RUN / rel).parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([str(ORACLE / "genhlog"), str(RUN / rel), *args], check=True)


def javastats_file(path: Path, tag: str | None = None) -> dict:
    out = subprocess.run([str(ORACLE / "javastats"), str(path), tag or "-",
                          ",".join(PERCENTILES.values())],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def population_log(src: Path, dst: Path) -> None:
    """The window population as one untagged log: the untagged intervals (answered) and the
    `timeout` ones (timed out, recorded at the timeout), `outside` dropped."""
    lines = []
    for ln in src.read_text().splitlines(keepends=True):
        if ln.startswith("Tag=outside,"):
            continue
        lines.append(ln[len("Tag=timeout,"):] if ln.startswith("Tag=timeout,") else ln)
    dst.write_text("".join(lines))


def median(values: list[tuple[float, bool]]) -> tuple[float, bool]:
    """(value, censored) median: censored sorts above every value."""
    ordered = sorted(values, key=lambda v: (v[1], v[0]))
    n = len(ordered)
    if n % 2:
        return ordered[n // 2]
    a, b = ordered[n // 2 - 1], ordered[n // 2]
    return (a[0] + b[0]) / 2.0, a[1] or b[1]


def expected_short(tmp: Path) -> tuple[dict, dict]:
    """(javastats per repetition, expected cell fields) for the bench-short fixture."""
    import yaml
    manifest = yaml.safe_load((SHORT / "run.yml").read_text())
    timeout_ms = float(manifest["load_generator"]["timeout_s"]) * 1000.0
    per_rep, cells = {}, {}
    for cell in manifest["cells"]:
        key = f"{cell['load']}/{cell['system']}"
        pop = tmp / (cell["hlog"].replace("/", "-"))
        population_log(SHORT / cell["hlog"], pop)
        stats = javastats_file(pop)
        counts = json.loads((SHORT / cell["counts"]).read_text())["window"]
        per_rep.setdefault(key, []).append({"javastats": stats, "window": counts})
    for key, reps in per_rep.items():
        out = {"count": sum(r["javastats"]["total_count"] for r in reps),
               "sent": sum(r["window"]["sent"] for r in reps),
               "completed": sum(r["window"]["completed"] for r in reps),
               "timed_out": sum(r["window"]["timed_out"] for r in reps),
               "errors": sum(r["window"]["errors"] for r in reps)}
        fields = {**{k: ("percentiles", p) for k, p in PERCENTILES.items()},
                  "max_ms": ("max", None), "mean_ms": ("mean", None)}
        for field, (stat, p) in fields.items():
            values = []
            for r in reps:
                js = r["javastats"]
                v = float(js["percentiles"][p] if p else js[stat]) / UNIT_PER_MS
                timed_out = r["window"]["timed_out"]
                if stat == "mean":
                    values.append((v, timed_out > 0))   # a bound once a request timed out
                else:
                    values.append((timeout_ms if v >= timeout_ms else v, v >= timeout_ms))
            value, censored = median(values)
            name = field[:-3]
            out[field] = None if censored else round(value, 3)
            if censored:
                out[f"{name}_at_least_ms"] = round(value, 3)
        cells[key] = out
    return per_rep, cells


def javastats(rel: str, tag: str | None) -> dict:
    """Java's statistics of one repetition's log of the oracle-demo fixture."""
    return javastats_file(RUN / rel, tag)


def expected_cell(reps: list[dict]) -> dict:
    """Java's numbers in the data file's units and rounding (ms, 3 decimals): per statistic the
    median of the repetitions' (of two, their mean), the count summed."""
    def ms(values):
        values = sorted(float(v) / UNIT_PER_MS for v in values)
        n = len(values)
        mid = values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2.0
        return round(mid, 3)
    out = {"count": sum(s["total_count"] for s in reps),
           "max_ms": ms([s["max"] for s in reps]), "mean_ms": ms([s["mean"] for s in reps]),
           "stddev_ms": ms([s["stddev"] for s in reps])}
    for key, p in PERCENTILES.items():
        out[key] = ms([s["percentiles"][p] for s in reps])
    return out


def doc_cells(doc: dict) -> dict[str, dict]:
    """The data file's cells by `<load>/<system>`, or `<scenario>/<load>/<system>` in a run
    with scenarios."""
    blocks = [(f"{sid}/", block) for sid, block in doc["scenarios"].items()] \
        if "scenarios" in doc else [("", doc)]
    return {f"{prefix}{load}/{system}": c for prefix, block in blocks
            for load, by_system in block["cells"].items() for system, c in by_system.items()}


def check_against_java(doc: dict, expected: dict) -> list[str]:
    problems = []
    cells = doc_cells(doc)
    if sorted(cells) != sorted(expected):
        problems.append(f"cells {sorted(cells)} != {sorted(expected)}")
    for key, want in expected.items():
        got = cells.get(key, {})
        for field, value in want.items():
            ours = got.get(field)
            same = ours == value or (isinstance(ours, float) and isinstance(value, float)
                                     and abs(ours - value) <= 0.0010001)   # both rounded
            if not same:
                problems.append(f"{key} {field}: ours {ours!r}, Java {value!r}")
    return problems


def build_fixture(site: Path, run: Path = RUN) -> Path:
    """Build a fixture run into `site` with our analysis; returns the data file."""
    shutil.copytree(run, site / "runs" / run.name)
    sys.path.insert(0, str(REPO))
    from analysis.commands import build
    from analysis.paths import find_data
    parser = argparse.ArgumentParser()
    build.add_arguments(parser)
    rc = build.run(parser.parse_args(["--runs", str(site / "runs"), "--site", str(site), "-q",
                                      "--jobs", "1"]))
    if rc != 0:
        raise SystemExit(f"build of the fixture failed (exit {rc})")
    return find_data(site, f"{run.name}")


def main() -> int:
    import yaml
    generate()
    generate_scenarios()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        stats = {key: [javastats(f, tag) for f in files]
                 for key, (files, tag) in CELLS.items()}
        (HERE / "javastats.json").write_text(json.dumps(stats, indent=1, sort_keys=True) + "\n")
        expected = {key: expected_cell(s) for key, s in stats.items()}
        short_stats, short_expected = expected_short(tmp)
        (HERE / "javastats-bench-short.json").write_text(
            json.dumps(short_stats, indent=1, sort_keys=True) + "\n")
        scen_stats, scen_expected = expected_scenarios()
        (HERE / "javastats-scenarios-demo.json").write_text(
            json.dumps(scen_stats, indent=1, sort_keys=True) + "\n")
        recorded = []
        for run, want in ((RUN, expected), (SHORT, short_expected), (SCEN, scen_expected)):
            site = tmp / f"site-{run.name}"
            data = build_fixture(site, run)
            problems = check_against_java(yaml.safe_load(data.read_text()), want)
            if problems:
                print(f"not recorded: {run.name}: our numbers differ from Java's:", *problems,
                      sep="\n  ", file=sys.stderr)
                return 1
            recorded.append((data, site / "assets" / "data" / run.name / "load-curve.csv"))
        for data, csv in recorded:
            shutil.copyfile(data, HERE / data.name)
        shutil.copyfile(recorded[0][1], HERE / "load-curve.csv")
        shutil.copyfile(recorded[1][1], HERE / "load-curve-bench-short.csv")
    print(f"recorded {HERE.relative_to(REPO)}: javastats.json, javastats-bench-short.json, "
          f"javastats-scenarios-demo.json, oracle-demo.yml, bench-short.yml, "
          f"scenarios-demo.yml, load-curve.csv, load-curve-bench-short.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
