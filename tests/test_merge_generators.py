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
from tests.helpers import oracle_program
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


def _site(tmp_path: Path, run_yml: str, files: dict[str, str], run_id: str = "merge") -> Path:
    """A site of one run (more: call again with another `run_id` before building)."""
    site = tmp_path / "site"
    run = site / "runs" / run_id
    for rel, text in files.items():
        (run / rel).parent.mkdir(parents=True, exist_ok=True)
        (run / rel).write_text(text, encoding="utf-8")
    (run / "run.yml").write_text(run_yml, encoding="utf-8")
    for sub in ("_includes", "_layouts"):
        shutil.copytree(REPO / sub, site / sub, dirs_exist_ok=True)
    return site


def _rows(site: Path, run_id: str = "merge") -> dict[str, dict]:
    with open(site / "assets" / "data" / run_id / "cells.csv", newline="") as f:
        return {row["system"]: row for row in csv.DictReader(f)}


def _split_run(site_root: Path, tool: str) -> None:
    """Run `split-<tool>`: the tool's whole file in one cell, the same split in three in
    another."""
    fixture, name, is_request = SPLIT[tool]
    text = (FIXTURES / fixture).read_text(encoding="utf-8")
    parts = split_round_robin(text, is_request)
    assert all(sum(map(is_request, p.splitlines())) > 0 for p in parts)
    files = {f"whole/{name}": text, **{f"split/{i}-{name}": p for i, p in enumerate(parts, 1)}}
    listed = ", ".join(f"split/{i}-{name}" for i in range(1, 4))
    _site(site_root, f"""\
title: t
date: 2026-11-26
description: d
systems: [{{id: whole, label: Whole}}, {{id: split, label: Split}}]
load_points: [{{id: r1, offered_rate: 10, duration_s: 5}}]
cells:
  - {{system: whole, load: r1, results: whole/{name}}}
  - {{system: split, load: r1, results: [{listed}]}}
""", files, run_id=f"split-{tool}")


PER_FILE_RUN = "per-file"


def _per_file_run(site_root: Path) -> list[str]:
    """Run `per-file`: vegeta's file split in three, one cell; returns the three parts."""
    fixture, name, is_request = SPLIT["vegeta"]
    text = (FIXTURES / fixture).read_text(encoding="utf-8")
    parts = split_round_robin(text, is_request)
    _site(site_root, f"""\
title: t
date: 2026-11-26
description: d
systems: [{{id: split, label: Split}}]
load_points: [{{id: r50, offered_rate: 50, duration_s: 5}}]
cells:
  - {{system: split, load: r50, results: [a/{name}, b/{name}, c/{name}]}}
""", {f"{d}/{name}": p for d, p in zip("abc", parts)}, run_id=PER_FILE_RUN)
    return parts


@pytest.fixture(scope="module")
def split_site(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess, list[str]]:
    """The split runs of every tool and the per-file run in one site, built once: one build's
    start and chart imports instead of one a run (the runs' outputs do not depend on each
    other: each run's data is its own)."""
    root = tmp_path_factory.mktemp("split")
    for tool in SPLIT:
        _split_run(root, tool)
    parts = _per_file_run(root)
    site = root / "site"
    return site, _build(site), parts


@pytest.mark.parametrize("tool", sorted(SPLIT))
def test_a_file_split_in_three_builds_the_whole_files_row(split_site, tool):
    site, proc, _ = split_site
    assert proc.returncode == 0, proc.stderr
    rows = _rows(site, f"split-{tool}")
    whole, split = rows["whole"], rows["split"]
    differ = {k: (whole[k], split[k]) for k in whole
              if k not in ("system", "system_label", "source") and whole[k] != split[k]}
    assert not differ
    assert int(whole["sent"] or whole["count"]) > 0


def test_the_per_generator_table_lists_each_file_with_its_own_counts(split_site):
    site, proc, parts = split_site
    name = SPLIT["vegeta"][1]
    assert proc.returncode == 0, proc.stderr
    page = (site / "_reports" / f"{PER_FILE_RUN}.html").read_text(encoding="utf-8")
    table = page[page.index("<h3>Load generators"):]
    table = table[:table.index("</table>")]
    for d, part in zip("abc", parts):
        rows = list(csv.reader(io.StringIO(part)))
        # vegeta's columns: timestamp, code, latency, ..., error text (index 5); a timeout is
        # Go's client timeout text, the other failures are errors
        timed = sum(1 for r in rows if "Client.Timeout exceeded" in r[5]
                    or "context deadline exceeded" in r[5])
        errors = sum(1 for r in rows if not 200 <= int(r[1]) < 400) - timed
        row = table[table.index(f"<code>runs/{PER_FILE_RUN}/{d}/{name}</code>"):]
        cells = [c.split("<")[0] for c in row.split("<td>")[1:7]]
        assert cells[0] == str(len(rows)) and cells[3:5] == [str(errors), str(timed)]
    assert "kept up" in table and "inside one interval" in table


@pytest.mark.parametrize("cell, message", [
    ("{system: a, load: r1, results: []}", "results: an empty list"),
    ("{system: a, load: r1, results: [x.csv, 3]}", "results[1]: must be a path"),
    ("{system: a, load: r1, results: [x.csv, y.csv, x.csv]}", "'x.csv' is given twice"),
    ("{system: a, load: r1, results: [x.csv, ../y.csv]}", "leaves the run folder"),
    ("{system: a, load: r1, hlog: [a.hlog, b.hlog], counts: [a.json]}",
     "1 counts file for 2 `hlog:` files"),
    ("{system: a, load: r1, hlog: a.hlog, counts: [a.json, b.json]}",
     "2 counts files for 1 `hlog:` file"),
    ("{system: a, load: r1, counts: [a.json, b.json]}", "need as many `hlog:`"),
    ("{system: a, load: r1, results: [x.csv, y.csv], summary: s.txt}", "takes no `summary:`"),
])
def test_lists_of_files_are_checked_with_the_line_they_are_on(tmp_path, cell, message):
    from analysis.errors import ManifestError
    from analysis.read.manifest import load_manifest
    run = tmp_path / "bad"
    run.mkdir()
    (run / "run.yml").write_text(
        "title: t\ndate: 2026-11-26\ndescription: d\nvalue_unit: ms\n"
        "systems: [{id: a, label: A}]\n"
        "load_points: [{id: r1, offered_rate: 1, duration_s: 1}]\n"
        f"cells:\n  - {cell}\n", encoding="utf-8")
    with pytest.raises(ManifestError) as err:
        load_manifest(run)
    assert message in str(err.value) and "line 8" in str(err.value), str(err.value)


def test_a_summary_beside_per_request_files_is_refused_naming_it(tmp_path):
    fixture, name, is_request = SPLIT["hey"]
    text = (FIXTURES / fixture).read_text(encoding="utf-8")
    summary = (FIXTURES / "hey" / "summary.txt").read_text(encoding="utf-8")
    site = _site(tmp_path, """\
title: t
date: 2026-11-26
description: d
systems: [{id: a, label: A}]
load_points: [{id: r1, offered_rate: 10, duration_s: 5}]
cells:
  - {system: a, load: r1, results: [one.csv, two.txt]}
""", {"one.csv": text, "two.txt": summary})
    proc = _build(site)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "runs/merge/two.txt" in proc.stderr and "one kind of file per cell" in proc.stderr


GENERATORS = REPO / "tests" / "fixtures" / "generators"


@pytest.fixture(scope="module")
def java_union(oracle, tmp_path_factory) -> list[str]:
    """The java command line that runs UnionLogs (compiled here against the oracle's jar)."""
    return oracle_program(oracle, tmp_path_factory.mktemp("union-classes"), "UnionLogs")


def _counts_by_value(h) -> dict[int, int]:
    """value (the lowest of its bucket) -> count, whatever the histogram's layout."""
    kept = h.counts > 0
    return dict(zip(h.layout.lowest_value_at(h.indices[kept]).tolist(),
                    h.counts[kept].tolist()))


def test_two_generator_logs_merge_to_hdrhistogram_javas_union(java_union, oracle, tmp_path):
    from analysis.derive.merge import merge_logs
    from analysis.read.hdr.log import read_hlog
    from analysis.read.hdr.log_writer import hlog_text
    logs = [GENERATORS / "r200.1.g1.hlog", GENERATORS / "r200.1.g2.hlog"]
    java = tmp_path / "java-union.hlog"
    subprocess.run(java_union + [str(java), "1000"] + [str(p) for p in logs], check=True)
    ours = merge_logs([read_hlog(p) for p in logs])
    theirs = read_hlog(java)
    # (end times are left out: a length written at 3 decimals and read back can move the end
    # by 1 ms in Java's own reader)
    assert [(iv.tag, iv.start_ms, iv.total_count) for iv in ours.intervals] == \
        [(iv.tag, iv.start_ms, iv.total_count) for iv in theirs.intervals]
    for a, b in zip(ours.intervals, theirs.intervals):
        assert _counts_by_value(a.histogram) == _counts_by_value(b.histogram)
    written = tmp_path / "ours.hlog"
    written.write_text(hlog_text(ours.intervals, 1000.0), encoding="utf-8")
    for tag in (None, "timeout"):
        outputs = []
        for log in (java, written):
            args = [str(oracle / "hlp"), "-i", str(log), "-outputValueUnitRatio", "1000"]
            proc = subprocess.run(args + (["-tag", tag] if tag else []), capture_output=True,
                                  text=True, check=True)
            outputs.append(proc.stdout)
        assert outputs[0] == outputs[1] and "Total count" in outputs[0]
    total = sum(iv.total_count for iv in ours.intervals if iv.tag is None)
    assert total == sum(iv.total_count for p in logs for iv in read_hlog(p).intervals
                        if iv.tag is None)


def test_a_harness_cell_of_two_generators_builds_with_their_sums(tmp_path, oracle):
    import json as _json

    import yaml

    from analysis.paths import find_data
    names = ("r200.1.g1", "r200.1.g2")
    files = {f"jdk-virtual/{n}.{ext}": (GENERATORS / f"{n}.{ext}").read_text(encoding="utf-8")
             for n in names for ext in ("hlog", "counts.json")}
    site = _site(tmp_path, """\
schema_version: 2
title: t
date: 2026-11-29
description: d
value_unit: us
systems: [{id: jdk-virtual, label: JDK virtual}]
load_points: [{id: r200, offered_rate: 200, duration_s: 4}]
load_generator: {model: open, timeout_s: 2}
cells:
  - system: jdk-virtual
    load: r200
    repetition: 1
    hlog: [jdk-virtual/r200.1.g1.hlog, jdk-virtual/r200.1.g2.hlog]
    counts: [jdk-virtual/r200.1.g1.counts.json, jdk-virtual/r200.1.g2.counts.json]
""", files)
    proc = _build(site)
    assert proc.returncode == 0, proc.stderr
    counts = [_json.loads(files[f"jdk-virtual/{n}.counts.json"]) for n in names]
    with open(site / "assets" / "data" / "merge" / "cells.csv", newline="") as f:
        row = next(csv.DictReader(f))
    for key in ("sent", "completed", "timed_out", "errors", "not_sent"):
        assert int(row[key]) == sum(c["window"][key] for c in counts), key
    doc = yaml.safe_load(find_data(site, "merge").read_text(encoding="utf-8"))
    gens = doc["methodology"]["generators"]
    assert [r["sent_text"] for r in gens[0]["rows"]] == [str(c["window"]["sent"]) for c in counts]
    # The cell links the generators' logs added, published beside the run's data; HdrHistogram
    # Java reads from it the count, maximum and p99 the row gives (values in us)
    merged = "assets/data/merge/merged/jdk-virtual/r200.1.hlog"
    assert doc["cells"]["r200"]["jdk-virtual"]["source"] == merged
    proc = subprocess.run([str(oracle / "javastats"), str(site / merged), "-", "99"],
                          capture_output=True, text=True, check=True)
    java = _json.loads(proc.stdout)
    assert java["total_count"] == int(row["count"]) == sum(c["window"]["completed"]
                                                           for c in counts)
    assert java["max"] / 1000 == pytest.approx(float(row["max_ms"]), rel=1e-12)
    assert java["percentiles"]["99"] / 1000 == pytest.approx(float(row["p99_ms"]), rel=1e-12)


def _import(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "analysis", "import", *args, "-q"], env=ENV,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("tool", ["jmeter", "vegeta"])
def test_import_of_three_parts_prints_the_whole_files_figures_and_a_line_per_file(tmp_path,
                                                                                   tool):
    fixture, name, is_request = SPLIT[tool]
    text = (FIXTURES / fixture).read_text(encoding="utf-8")
    paths = []
    for i, part in enumerate(split_round_robin(text, is_request), 1):
        paths.append(tmp_path / f"{i}-{name}")
        paths[-1].write_text(part, encoding="utf-8")
    whole = _import(str(FIXTURES / fixture), "--json")
    merged = _import(*map(str, paths), "--json")
    assert whole.returncode == 0 and merged.returncode == 0, merged.stderr
    doc, files = json.loads(merged.stdout), None
    files = doc.pop("files")
    assert doc == json.loads(whole.stdout)
    assert [f["file"] for f in files] == list(map(str, paths))
    for key in ("requests", "errors", "timed_out"):
        assert sum(f[key] for f in files) == doc[key]
    for f, path in zip(files, paths):
        assert f["requests"] == sum(map(is_request, path.read_text().splitlines()))
    # the merge's .hlog is the whole file's, but for the comment naming the file
    logs = []
    for args, out in (([str(FIXTURES / fixture)], "whole.hlog"), (list(map(str, paths)),
                                                                  "merged.hlog")):
        assert _import(*args, "--hlog", str(tmp_path / out)).returncode == 0
        logs.append((tmp_path / out).read_text(encoding="utf-8").splitlines()[1:])
    assert logs[0] == logs[1] and len(logs[0]) > 5
    printed = _import(*map(str, paths))
    lines = printed.stdout.splitlines()
    assert lines[0].endswith("(merged)") and len(
        [line for line in lines if line.startswith("  ")]) == 3


def test_import_of_summaries_adds_counts_and_says_percentiles_cannot_be_merged(tmp_path):
    paths = [FIXTURES / "hey" / "summary.txt", FIXTURES / "hey" / "same-run.txt"]
    merged = _import(*map(str, paths), "--json")
    assert merged.returncode == 0, merged.stderr
    doc = json.loads(merged.stdout)
    assert all(v is None for k, v in doc["latency_ms"].items() if k != "max")
    assert doc["requests"] == sum(f["requests"] for f in doc["files"])
    assert doc["latency_ms"]["max"] == max(f["latency_ms"]["max"] for f in doc["files"])
    printed = _import(*map(str, paths))
    assert "percentiles cannot be merged from summaries: give per-request files or interval " \
           "logs" in printed.stdout
