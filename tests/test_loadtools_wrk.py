"""wrk and wrk2 console output (analysis/read/loadtools/wrk.py) against the real outputs in
tests/fixtures/loadtools/wrk{,2}/ (see their README.md). The expected numbers are what each file
prints, found by an independent parse here (plain regexes, our own unit table)."""
from __future__ import annotations

import re

import pytest

from analysis.errors import ResultsError
from analysis.read.loadtools import hgrm, locust, plaincsv, wrk
from tests.conftest import REPO

FIXTURES = REPO / "tests" / "fixtures" / "loadtools"
WRK_FILES = sorted((FIXTURES / "wrk").glob("wrk-*.txt"))
WRK2_FILES = sorted((FIXTURES / "wrk2").glob("wrk2-*.txt"))
UNIT_MS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 6e4, "h": 3.6e6}
SPECTRUM_ROW = re.compile(r"^\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s+([\d.]+|inf)$")


def _ms(text: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)([a-z]+)", text).groups()
    return float(number) * UNIT_MS[unit]


def _printed(path) -> dict:
    """What the file says, parsed here without the reader."""
    text = path.read_text()
    out = {"requests": int(re.search(r"^  (\d+) requests in ", text, re.M).group(1)),
           "duration_s": _ms(re.search(r" requests in (\S+),", text).group(1)) / 1000,
           "rate": float(re.search(r"^Requests/sec:\s+(\S+)$", text, re.M).group(1)),
           "non2xx": 0, "socket": [0, 0, 0, 0]}
    lat = re.search(r"^    Latency\s+(\S+)\s+(\S+)\s+(\S+)\s+", text, re.M).groups()
    out["mean"], out["stddev"], out["max"] = (_ms(x) for x in lat)
    if m := re.search(r"Non-2xx or 3xx responses: (\d+)", text):
        out["non2xx"] = int(m.group(1))
    if m := re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text):
        out["socket"] = [int(x) for x in m.groups()]
    head = text.split("Detailed Percentile spectrum")[0]
    out["percentiles"] = {float(p): _ms(v) for p, v in
                          re.findall(r"^\s*([\d.]+)%\s+(\S+)\s*$", head, re.M)}
    return out


@pytest.mark.parametrize("path", WRK_FILES + WRK2_FILES, ids=lambda p: p.name)
def test_summary_is_what_the_file_prints(path):
    fmt = "wrk2" if path.name.startswith("wrk2") else "wrk"
    got = wrk.read(str(path), fmt, {})
    want = _printed(path)
    assert got.requests == want["requests"]
    assert got.duration_s == pytest.approx(want["duration_s"])
    assert got.rate_rps == want["rate"]
    assert got.errors == want["non2xx"] + sum(want["socket"])
    assert got.timeouts == want["socket"][3]
    assert got.percentiles_ms == pytest.approx(want["percentiles"])
    if got.spectrum is None:     # the Thread Stats line; wrk2's footer is more precise
        assert (got.mean_ms, got.stddev_ms, got.max_ms) == \
            pytest.approx((want["mean"], want["stddev"], want["max"]))
    assert got.skipped == 0 and got.warnings == []
    assert got.info.format == fmt


def test_wrk_is_closed_loop_by_its_connections():
    got = wrk.read(str(FIXTURES / "wrk" / "wrk-latency.txt"), "wrk", {})
    assert (got.info.load_model, got.corrected) == ("closed", False)
    assert got.info.load_model_evidence.startswith("wrk -c 8 (closed loop")
    assert got.spectrum is None and got.uncorrected is None


def test_timeouts_and_non_2xx_are_counted_apart():
    timeouts = wrk.read(str(FIXTURES / "wrk" / "wrk-timeouts.txt"), "wrk", {})
    assert (timeouts.timeouts, timeouts.errors) == (10, 10)
    non2xx = wrk.read(str(FIXTURES / "wrk" / "wrk-non2xx.txt"), "wrk", {})
    assert (non2xx.timeouts, non2xx.errors) == (0, 640)


def test_seconds_are_converted():
    got = wrk.read(str(FIXTURES / "wrk" / "wrk-seconds.txt"), "wrk", {})
    assert got.percentiles_ms[90.0] == pytest.approx(1570.0)   # "1.57s "
    assert got.max_ms == pytest.approx(2000.0)


def _spectra(path):
    """The spectrum blocks of a wrk2 output: lists of (value, fraction, count) rows, footers."""
    blocks = []
    for block in path.read_text().split("Detailed Percentile spectrum:")[1:]:
        rows = [SPECTRUM_ROW.match(line).groups() for line in block.split("#[Mean")[0]
                .splitlines() if SPECTRUM_ROW.match(line)]
        total = int(re.search(r"Total count\s+=\s+(\d+)", block).group(1))
        mean = float(re.search(r"#\[Mean\s+=\s+([\d.]+)", block).group(1))
        blocks.append((rows, total, mean))
    return blocks


@pytest.mark.parametrize("name", ["wrk2-latency.txt", "wrk2-uncorrected.txt", "wrk2-short.txt"])
def test_wrk2_reads_the_whole_spectrum(name):
    path = FIXTURES / "wrk2" / name
    got = wrk.read(str(path), "wrk2", {})
    blocks = _spectra(path)
    summaries = [got] + ([got.uncorrected] if got.uncorrected else [])
    assert len(summaries) == len(blocks)
    for summary, (rows, total, mean) in zip(summaries, blocks):
        assert len(summary.spectrum) == len(rows)
        for i in (0, len(rows) // 2, -1):
            value, fraction, count, _ = rows[i]
            point = summary.spectrum[i]
            assert point.value_ms == float(value)
            assert point.percentile == pytest.approx(float(fraction) * 100)
            assert point.total_count == int(count)
        assert summary.spectrum[-1].total_count == total
        assert summary.mean_ms == mean
        values = [p.value_ms for p in summary.spectrum]
        levels = [p.percentile for p in summary.spectrum]
        assert values == sorted(values) and levels == sorted(levels)
        assert summary.spectrum[-1].percentile == 100.0


def test_wrk2_is_open_loop_and_corrected_with_the_uncorrected_beside_it():
    got = wrk.read(str(FIXTURES / "wrk2" / "wrk2-uncorrected.txt"), "wrk2", {})
    assert (got.info.tool, got.info.load_model, got.corrected) == ("wrk2", "open", True)
    assert "rate is not printed" in got.info.load_model_evidence
    assert got.uncorrected.corrected is False
    # the same requests, timed from the actual send: never slower at the median
    assert got.uncorrected.percentiles_ms[50.0] < got.percentiles_ms[50.0]
    # wrk2 resets its histogram at calibration: the spectrum holds fewer than "N requests"
    assert got.spectrum[-1].total_count < got.requests


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*/*")), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_only_the_right_reader_claims_a_fixture(path):
    if path.name == "README.md":
        return
    head = path.read_bytes()[:65536]
    claims = {m.__name__: m.sniff(head) for m in (wrk, hgrm, locust, plaincsv)}
    expected = {"wrk": "wrk", "wrk2": "wrk2", "hgrm": "hgrm"}.get(path.parent.name)
    if path.parent.name == "locust" and path.suffix == ".csv" and "failures" not in path.name:
        expected = {"history": "locust-history", "requests": "locust-requests",
                    "distribution": "locust-distribution"}.get(
                        path.stem.rsplit("_", 1)[-1], "locust-stats")
    if path.parent.name == "wrk2" and path.name == "wrk2-plain.txt":
        expected = "wrk2"       # calibration lines, no distribution
    assert sorted(v for v in claims.values() if v) == ([expected] if expected else [])


def test_a_short_wrk2_run_without_latency_reads_as_wrk_unless_named(tmp_path):
    """No calibration lines (under 10 s) and no --latency: the output is wrk's."""
    text = (FIXTURES / "wrk2" / "wrk2-short.txt").read_text()
    cut = text.split("  Latency Distribution")[0] + "  601 requests in 3.01s, 82.17KB read\n" \
        "Requests/sec:    199.89\nTransfer/sec:     27.33KB\n"
    path = tmp_path / "short.txt"
    path.write_text(cut)
    assert wrk.sniff(cut.encode()) == "wrk"
    got = wrk.read(str(path), "wrk2", {})
    assert (got.info.load_model, got.corrected) == ("open", True)
    assert "format: wrk2 was given" in got.info.load_model_evidence


def test_hand_made_units_and_unknown_lines(tmp_path):
    """Edge case, hand-made: wrk's us/m units, a line a Lua done() printed."""
    path = tmp_path / "units.txt"
    path.write_text("Running 2m test @ http://127.0.0.1:1/\n  1 threads and 2 connections\n"
                    "  Thread Stats   Avg      Stdev     Max   +/- Stdev\n"
                    "    Latency   850.00us  120.50us    1.20m    75.00%\n"
                    "    Req/Sec     1.20k     0.00     1.20k   100.00%\n"
                    "  Latency Distribution\n     50%  800.00us\n     99%    1.50s \n"
                    "  1000 requests in 2.00m, 1.00MB read\nRequests/sec:      8.33\n"
                    "Transfer/sec:      8.53KB\nmy script says hello\n")
    got = wrk.read(str(path), "wrk", {})
    assert got.mean_ms == pytest.approx(0.85) and got.max_ms == pytest.approx(72_000)
    assert got.percentiles_ms == pytest.approx({50.0: 0.8, 99.0: 1500.0})
    assert got.duration_s == pytest.approx(120.0)
    assert got.skipped == 1
    assert got.warnings == [f"{path}:12: not a line wrk or wrk2 prints (skipped)"]


def _without_last_rows(text: str) -> str:
    """The output with the spectrum's last two rows (the 100% one too) cut out."""
    lines = text.splitlines(keepends=True)
    footer = next(i for i, line in enumerate(lines) if line.startswith("#[Mean"))
    return "".join(lines[:footer - 2] + lines[footer:])


def _damaged(tmp_path, data: bytes):
    path = tmp_path / "damaged.txt"
    path.write_bytes(data)
    return str(path)


@pytest.mark.parametrize("cut,message", [
    (lambda t: t[:t.index("  19994 requests")], "no 'N requests in T, B read' line"),
    (lambda t: t[:t.index("#[Max")], "#[Max ...] footer line is missing"),
    (lambda t: _without_last_rows(t), "the last row counts"),
    # (a spectrum that ends with the file and has no footer is read when it reaches 100 %,
    # issue 33; this one stops in the middle)
    (lambda t: t[:len(t) // 3], "the distribution stops before its 100% row"),
    (lambda t: "garbage\n" + t, "not wrk output"),
])
def test_damaged_output_is_one_clear_error(tmp_path, cut, message):
    text = (FIXTURES / "wrk2" / "wrk2-latency.txt").read_text()
    with pytest.raises(ResultsError, match=re.escape(message)) as e:
        wrk.read(_damaged(tmp_path, cut(text).encode()), "wrk2", {})
    assert str(e.value).startswith(str(tmp_path / "damaged.txt") + ":")


@pytest.mark.parametrize("data,message", [
    (b"", "the file is empty"), (b"Running 1s test @ x\n\0\0\0", "binary data"),
    (b"Running 1s\xff\xfe", "not UTF-8"),
])
def test_empty_binary_or_not_text(tmp_path, data, message):
    with pytest.raises(ResultsError, match=message):
        wrk.read(_damaged(tmp_path, data), "wrk", {})
