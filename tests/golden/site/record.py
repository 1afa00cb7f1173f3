"""Re-record tests/golden/site/ (run through ./regen). See regen for what is recorded.

The expected numbers come from HdrHistogram's Java (javastats), never from our own output: the
golden data file is written only after `check_against_java` finds it equal to Java's numbers.
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


def generate() -> None:
    for rel, args in FILES.items():
        (RUN / rel).parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([str(ORACLE / "genhlog"), str(RUN / rel), *args], check=True)


def javastats(files: list[str], tag: str | None, tmp: Path) -> dict:
    path = RUN / files[0]
    if len(files) > 1:
        # Java adds repetitions when their interval lines sit in one log: keep the first file's
        # header, append the others' interval lines.
        path = tmp / "repetitions.hlog"
        lines = (RUN / files[0]).read_text().splitlines(keepends=True)
        for rel in files[1:]:
            lines += [ln for ln in (RUN / rel).read_text().splitlines(keepends=True)
                      if ln.strip() and not ln.startswith(("#", '"'))]
        path.write_text("".join(lines))
    out = subprocess.run([str(ORACLE / "javastats"), str(path), tag or "-",
                          ",".join(PERCENTILES.values())],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def expected_cell(stats: dict) -> dict:
    """Java's numbers in the data file's units and rounding (ms, 3 decimals)."""
    def ms(v):
        return round(float(v) / UNIT_PER_MS, 3)
    out = {"count": stats["total_count"], "max_ms": ms(stats["max"]), "mean_ms": ms(stats["mean"]),
           "stddev_ms": ms(stats["stddev"])}
    for key, p in PERCENTILES.items():
        out[key] = ms(stats["percentiles"][p])
    return out


def check_against_java(doc: dict, expected: dict) -> list[str]:
    problems = []
    cells = {f"{load}/{system}": c for load, by_system in doc["cells"].items()
             for system, c in by_system.items()}
    if sorted(cells) != sorted(expected):
        problems.append(f"cells {sorted(cells)} != {sorted(expected)}")
    for key, want in expected.items():
        got = cells.get(key, {})
        for field, value in want.items():
            if got.get(field) != value:
                problems.append(f"{key} {field}: ours {got.get(field)!r}, Java {value!r}")
    return problems


def build_fixture(site: Path) -> Path:
    """Build the fixture run into `site` with our analysis; returns the data file."""
    shutil.copytree(RUN, site / "runs" / RUN.name)
    sys.path.insert(0, str(REPO))
    from analysis.commands import build
    parser = argparse.ArgumentParser()
    build.add_arguments(parser)
    rc = build.run(parser.parse_args(["--runs", str(site / "runs"), "--site", str(site), "-q",
                                      "--jobs", "1"]))
    if rc != 0:
        raise SystemExit(f"build of the fixture failed (exit {rc})")
    return site / "_data" / "runs" / f"{RUN.name}.yml"


def main() -> int:
    import yaml
    generate()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        stats = {key: javastats(files, tag, tmp) for key, (files, tag) in CELLS.items()}
        (HERE / "javastats.json").write_text(json.dumps(stats, indent=1, sort_keys=True) + "\n")
        expected = {key: expected_cell(s) for key, s in stats.items()}
        site = tmp / "site"
        data = build_fixture(site)
        problems = check_against_java(yaml.safe_load(data.read_text()), expected)
        if problems:
            print("not recorded: our numbers differ from Java's:", *problems, sep="\n  ",
                  file=sys.stderr)
            return 1
        shutil.copyfile(data, HERE / data.name)
        shutil.copyfile(site / "assets" / "data" / RUN.name / "load-curve.csv",
                        HERE / "load-curve.csv")
    print(f"recorded {HERE.relative_to(REPO)}: javastats.json, {data.name}, load-curve.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
