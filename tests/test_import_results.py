"""`python -m analysis import FILE`: what a result file holds (issue 23).

Until the readers are merged, the command is driven through a stub reader registered in the
test (a module under analysis.read.loadtools, put into FORMATS): it reads `start_ms,latency_ms,
status` lines, or a summary line, without any of the real readers. Expected percentiles are
nearest-rank over the raw values, computed here (values below 2048 units are exact in
HdrHistogram, so Java's rule gives exactly them).
"""
from __future__ import annotations

import json
import math
import sys
import types

import numpy as np
import pytest

from analysis import cli
from analysis.errors import ResultsError
from analysis.read import loadtools
from analysis.read.hdr.log import read_hlog
from analysis.read.loadtools.results import RequestSamples, ResultSummary, ToolInfo
from tests.conftest import REPO

KEYS = ["format", "tool", "version", "per_request", "load_model", "requests", "errors",
        "timed_out", "duration_s", "latency_ms", "latency_upper_bounds"]
T0 = 1_700_000_000_000


def _sniff(head: bytes):
    if head.startswith(b"#stub-summary"):
        return "stub-summary"
    return "stub-csv" if head.startswith(b"#stub") else None


def _read(path, fmt, options):
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    if fmt == "stub-summary":
        return ResultSummary(path=path, info=ToolInfo(fmt, "Stub", None, "whatever", "closed",
                                                      "-c 10"),
                             requests=1000, errors=3, duration_s=10.0,
                             percentiles_ms={50.0: 1.5, 99.0: 9.25})
    rows, warnings = [], []
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split(",")
        if len(fields) != 3:
            warnings.append(f"{path}:{number}: expected 3 fields (skipped)")
            continue
        rows.append([float(x) for x in fields])
    if not rows:
        raise ResultsError("no usable row", path=path, line=len(lines))
    a = np.array(rows)
    status = a[:, 2].astype(np.int32)
    return RequestSamples(path=path, info=ToolInfo(fmt, "Stub", "1.2", "send to last byte",
                                                   "open", "-R 100"),
                          start_ms=a[:, 0], latency_ns=(a[:, 1] * 1_000_000).astype(np.int64),
                          ok=status < 400, timed_out=status == 0, status=status,
                          native_unit="ms", warnings=warnings, skipped=len(warnings))


@pytest.fixture
def stub(monkeypatch):
    module = types.ModuleType("analysis.read.loadtools.stubtool")
    module.sniff, module.read = _sniff, _read
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setattr(loadtools, "FORMATS", {"stub-csv": ("stubtool", "a stub CSV"),
                                               "stub-summary": ("stubtool", "a stub summary")})
    monkeypatch.setattr(loadtools, "READER_MODULES", ("stubtool",))
    return module


def main(capsys, *args):
    code = cli.main(["import", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def per_request(tmp_path):
    rng = np.random.default_rng(5)
    n = 2000
    start = T0 + np.sort(rng.uniform(0, 20_000, n))
    latency = rng.integers(1, 1500, n)
    status = np.where(rng.random(n) < 0.02, 500, 200)
    status[::400] = 0                     # timed out
    path = tmp_path / "run.stub"
    text = "#stub\n" + "".join(f"{s!r},{l},{c}\n" for s, l, c in zip(start.tolist(), latency.tolist(), status.tolist()))
    path.write_text(text + "garbage line\n")
    return path, start, latency, status


def nearest_rank(values, p):
    ranked = np.sort(values)
    return float(ranked[max(1, math.ceil(p / 100 * ranked.size)) - 1])


def test_json_has_exactly_the_keys_and_java_exact_percentiles(stub, per_request, capsys):
    path, start, latency, status = per_request
    code, out, err = main(capsys, str(path), "--json", "-q")
    assert code == 0, err
    doc = json.loads(out)
    assert list(doc) == KEYS
    answered = latency[(status > 0) & (status < 400)]
    timed_out = int((status == 0).sum())
    population = answered.size + timed_out

    def censored_rank(p):
        """Nearest rank over answered + timed out: a rank among the timed out is not known."""
        rank = max(1, math.ceil(p / 100 * population))
        return float(np.sort(answered)[rank - 1]) if rank <= answered.size else None
    assert doc == {
        "format": "stub-csv", "tool": "Stub", "version": "1.2", "per_request": True,
        "load_model": "open", "requests": 2000, "errors": int((status >= 400).sum()),
        "timed_out": timed_out, "duration_s": (start.max() - start.min()) / 1000,
        "latency_ms": {"50": censored_rank(50), "90": censored_rank(90), "99": censored_rank(99),
                       "99.9": censored_rank(99.9), "max": None},
        "latency_upper_bounds": []}
    assert doc["latency_ms"]["99.9"] is None          # 5 timed out of 1,970: p99.9 among them
    # every request is answered, failed or timed out, and counted once
    assert doc["requests"] == answered.size + doc["errors"] + doc["timed_out"]
    assert f"warning: {path}:2002: expected 3 fields (skipped)" in err


def test_text_output_names_what_the_file_holds(stub, per_request, capsys):
    path, _, _, status = per_request
    code, out, _ = main(capsys, str(path))
    assert code == 0
    rows = dict(line.split(None, 1) for line in out.splitlines())
    assert rows["format"] == "stub-csv (a stub CSV)"
    assert rows["tool"] == "Stub 1.2" and rows["per_request"] == "true"
    assert rows["load_model"] == "open (-R 100)"
    assert rows["requests"].startswith("2,000 (timed out: 5)")
    assert "1 line(s) of the file skipped" in rows["requests"]
    assert rows["latency_ms"].startswith("p50 ")


def test_a_summary_shows_only_what_it_holds(stub, tmp_path, capsys):
    path = tmp_path / "summary.txt"
    path.write_text("#stub-summary\n")
    code, out, _ = main(capsys, str(path), "--json")
    assert code == 0
    doc = json.loads(out)
    assert list(doc) == KEYS
    assert doc["per_request"] is False and doc["load_model"] == "closed"
    assert doc["latency_ms"] == {"50": 1.5, "90": None, "99": 9.25, "99.9": None, "max": None}
    assert doc["version"] is None and doc["requests"] == 1000
    code, out, _ = main(capsys, str(path))
    assert "p90 -" in out and "(version not in the file)" in out
    code, _, err = main(capsys, str(path), "--hlog", str(tmp_path / "x.hlog"))
    assert code == 1 and "is a summary" in err


def test_hlog_writes_the_converted_log(stub, per_request, tmp_path, capsys):
    path, start, latency, status = per_request
    out_path = tmp_path / "out" / "run.hlog"
    code, _, err = main(capsys, str(path), "--hlog", str(out_path), "-q")
    assert code == 0, err
    log = read_hlog(out_path)
    assert log.warnings == []
    assert log.merged(None).total_count == int(((status > 0) & (status < 400)).sum())
    assert log.merged("error").total_count == int((status >= 400).sum())
    assert log.merged("timeout").total_count == int((status == 0).sum())
    assert log.merged(None).max == latency[(status > 0) & (status < 400)].max()
    assert out_path.read_text().startswith("#[Converted by loadcurve from run.stub (Stub 1.2,")


def test_progress_for_big_files_and_quiet_with_q(stub, per_request, capsys, monkeypatch):
    from analysis.commands import import_results
    monkeypatch.setattr(import_results, "PROGRESS_BYTES", 0)
    path = per_request[0]
    _, _, err = main(capsys, str(path), "--json")
    assert "import: " in err and "recording 2,000 requests" in err
    _, _, err = main(capsys, str(path), "--json", "-q")
    assert "import: " not in err


@pytest.mark.parametrize("content, message", [
    (b"", "the file is empty"),
    (b"  \n\n", "the file is empty"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", "not a result file of a known load tool"),
    (b"#stub\nnot,numbers\n", ":2: no usable row"),
])
def test_bad_files_give_one_error_line(stub, tmp_path, capsys, content, message):
    path = tmp_path / "bad.file"
    path.write_bytes(content)
    code, out, err = main(capsys, str(path))
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"error: {path}")
    assert message in err and "Traceback" not in err


def test_binary_bytes_in_a_forced_text_format_are_one_error(stub, tmp_path, capsys):
    path = tmp_path / "bin.stub"
    path.write_bytes(b"#stub\n\xff\xfe\x00\x01")
    code, _, err = main(capsys, str(path), "--format", "stub-csv")
    assert code == 1 and err.startswith(f"error: {path}: not text")


@pytest.mark.parametrize("make, message", [
    (lambda p: None, "no such file"),
    (lambda p: p.mkdir(), "is a directory, not a result file"),
])
def test_missing_file_or_directory(stub, tmp_path, capsys, make, message):
    path = tmp_path / "x"
    make(path)
    code, _, err = main(capsys, str(path))
    assert code == 1 and err == f"error: {path}: {message}\n"


def test_an_unknown_format_names_the_known_ones(stub, per_request, capsys):
    code, _, err = main(capsys, str(per_request[0]), "--format", "nope")
    assert code == 1 and "unknown format 'nope'" in err and "stub-csv" in err


def test_a_spectrums_p99_is_its_first_row_above_and_said_to_be_an_upper_bound(capsys):
    """No row of this .hgrm (HistogramLogProcessor's) sits at 0.99 or 0.999: p99 and p99.9 are
    the first rows above, upper bounds. HdrHistogram's Java on the same log
    (`../shared/oracle/javastats tests/fixtures/hlog/java-jHiccup-2.0.6.logV1.hlog - 99,99.9`)
    gives p99 = 1241513983 ns and p99.9 = 1837105151 ns: at or below them."""
    path = REPO / "tests/fixtures/loadtools/hgrm/jhiccup-v1.hgrm"
    rows = [line.split() for line in path.read_text().splitlines()
            if line.strip() and line.split()[0][0].isdigit()]
    first_above = {level: next(float(r[0]) for r in rows if float(r[1]) >= level)
                   for level in (0.99, 0.999)}
    assert not any(float(r[1]) in (0.99, 0.999) for r in rows)
    code, out, _ = main(capsys, str(path), "--json")
    doc = json.loads(out)
    assert code == 0 and list(doc) == KEYS
    assert doc["latency_ms"]["99"] == first_above[0.99] == 1283.46
    assert doc["latency_ms"]["99.9"] == first_above[0.999] == 1837.11
    assert doc["latency_upper_bounds"] == ["99", "99.9"]
    assert 1241.513983 <= doc["latency_ms"]["99"] and 1837.105151 <= doc["latency_ms"]["99.9"]
    assert doc["latency_ms"]["50"] == 0.39          # a row sits at 0.5: exact, not a bound
    code, out, _ = main(capsys, str(path))
    assert "p50 0.39  p90 0.43  p99 ≤ 1283.46  p99.9 ≤ 1837.11  max 1895.83" in out
