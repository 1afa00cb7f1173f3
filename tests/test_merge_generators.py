"""Issue 33: a cell measured by several load generators (`results: [..]`, `hlog: [..]`).

A per-request file of each tool split round robin into three files (its header kept in each)
must build a cell whose load-curve row equals the whole file's: the merge puts the samples
together before recording them, so nothing of the split can show. Two `.hlog` files of two
generator processes must merge to what HdrHistogram's own Java adds (tests/oracle/UnionLogs.java
writes the union with HistogramLogWriter; HistogramLogProcessor prints its distribution).
"""
from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.test_imported_runs import ENV, FIXTURES, _build

pytestmark = pytest.mark.slow

# tool -> (fixture, file name, what marks a line as one request's)
SPLIT = {
    "jmeter": ("jmeter/jmeter5-default.jtl", "r.jtl", lambda line: line[:1].isdigit()),
    "gatling": ("gatling/gatling-3.12.0-open.simulation.log", "simulation.log",
                lambda line: line.startswith("REQUEST\t")),
    "k6": ("k6/handmade-arrival-rate.ndjson", "points.ndjson",
           lambda line: '"metric":"http_req_duration","type":"Point"' in line),
    "vegeta": ("vegeta/results.csv", "results.csv", lambda line: bool(line.strip())),
    "hey": ("hey/requests.csv", "requests.csv", lambda line: line[:1].isdigit()),
}


def split_round_robin(text: str, is_request, parts: int = 3) -> list[str]:
    """Request lines dealt to the parts in turn; the lines before the first request (the
    header) in every part, any other line in the first."""
    lines = text.splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if is_request(line))
    out = [lines[:first] for _ in range(parts)]
    dealt = 0
    for line in lines[first:]:
        if is_request(line):
            out[dealt % parts].append(line)
            dealt += 1
        else:
            out[0].append(line)
    return ["".join(p) for p in out]


def _site(tmp_path: Path, run_yml: str, files: dict[str, str]) -> Path:
    site = tmp_path / "site"
    run = site / "runs" / "merge"
    for rel, text in files.items():
        (run / rel).parent.mkdir(parents=True, exist_ok=True)
        (run / rel).write_text(text, encoding="utf-8")
    (run / "run.yml").write_text(run_yml, encoding="utf-8")
    for sub in ("_includes", "_layouts"):
        shutil.copytree(REPO / sub, site / sub)
    return site


def _rows(site: Path) -> dict[str, dict]:
    with open(site / "assets" / "data" / "merge" / "cells.csv", newline="") as f:
        return {row["system"]: row for row in csv.DictReader(f)}


@pytest.mark.parametrize("tool", sorted(SPLIT))
def test_a_file_split_in_three_builds_the_whole_files_row(tmp_path, tool):
    fixture, name, is_request = SPLIT[tool]
    text = (FIXTURES / fixture).read_text(encoding="utf-8")
    parts = split_round_robin(text, is_request)
    assert all(sum(map(is_request, p.splitlines())) > 0 for p in parts)
    files = {f"whole/{name}": text, **{f"split/{i}-{name}": p for i, p in enumerate(parts, 1)}}
    listed = ", ".join(f"split/{i}-{name}" for i in range(1, 4))
    site = _site(tmp_path, f"""\
title: t
date: 2026-11-26
description: d
systems: [{{id: whole, label: Whole}}, {{id: split, label: Split}}]
load_points: [{{id: r1, offered_rate: 10, duration_s: 5}}]
cells:
  - {{system: whole, load: r1, results: whole/{name}}}
  - {{system: split, load: r1, results: [{listed}]}}
""", files)
    proc = _build(site)
    assert proc.returncode == 0, proc.stderr
    rows = _rows(site)
    whole, split = rows["whole"], rows["split"]
    differ = {k: (whole[k], split[k]) for k in whole
              if k not in ("system", "system_label", "source") and whole[k] != split[k]}
    assert not differ
    assert int(whole["sent"] or whole["count"]) > 0
