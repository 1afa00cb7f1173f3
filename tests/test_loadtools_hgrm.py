""".hgrm percentile distributions (analysis/read/loadtools/hgrm.py).

The fixtures were printed by HdrHistogram's own HistogramLogProcessor (tests/fixtures/loadtools/
hgrm/README.md). Read back, each must equal the distribution our Histogram computes from the
same .hlog (tests/fixtures/hlog/, copies of the same corpus files) within the precision HLP
printed: the .hgrm is the outside tool's, the Histogram ours, and they meet in the middle.
"""
from __future__ import annotations

import re

import pytest

from analysis.errors import ResultsError
from analysis.read.hdr.distribution import percentile_distribution
from analysis.read.hdr.log import read_hlog
from analysis.read.loadtools import hgrm, wrk
from tests.conftest import REPO

FIXTURES = REPO / "tests" / "fixtures" / "loadtools" / "hgrm"
HLOG = REPO / "tests" / "fixtures" / "hlog"

# fixture -> (.hlog, tag, HLP -outputValueUnitRatio, ticks per half, value_unit_ms)
CASES = {
    "jhiccup-v1.hgrm": ("java-jHiccup-2.0.6.logV1.hlog", None, 1e6, 5, 1.0),
    "jhiccup-v2-us.hgrm": ("java-jHiccup-2.0.7S.logV2.hlog", None, 1e3, 5, 1e-3),
    "jhiccup-v2-csv.hgrm": ("java-jHiccup-2.0.7S.logV2.hlog", None, 1e6, 5, 1.0),
    "tagged-A-ticks2.hgrm": ("java-tagged-Log.logV2.hlog", "A", 1e6, 2, 1.0),
}


def _decimals(path) -> int:
    """How many decimals HLP printed the values with (the histogram's significant digits)."""
    first_row = next(line for line in path.read_text().splitlines()
                     if re.match(r"^\s*[\d.]+[ ,]+[\d.]+[ ,]+\d+", line))
    return len(first_row.strip().split(",")[0].split()[0].split(".")[1])


@pytest.mark.parametrize("name", sorted(CASES))
def test_hlp_output_read_back_equals_our_histogram_of_the_same_log(name):
    source, tag, ratio, ticks, unit_ms = CASES[name]
    got = hgrm.read(str(FIXTURES / name), "hgrm", {"value_unit_ms": unit_ms})
    hist = read_hlog(HLOG / source).merged(tag)
    rows = percentile_distribution(hist, ticks)
    half_unit_ms = 0.5 * 10 ** -_decimals(FIXTURES / name) * unit_ms
    assert len(got.spectrum) == len(rows)
    for point, (value, level, count) in zip(got.spectrum, rows):
        assert point.total_count == count
        assert point.percentile == pytest.approx(level, abs=1e-9)
        assert abs(point.value_ms - value / ratio * unit_ms) <= half_unit_ms * 1.0001
    assert got.requests == hist.total_count
    assert abs(got.max_ms - hist.max / ratio * unit_ms) <= half_unit_ms * 1.0001
    if got.mean_ms is not None:     # the CSV form has no footer
        assert abs(got.mean_ms - hist.mean / ratio * unit_ms) <= half_unit_ms * 1.0001
        assert abs(got.stddev_ms - hist.stddev / ratio * unit_ms) <= half_unit_ms * 1.0001
    assert got.info.tool == "HistogramLogProcessor"
    assert got.skipped == 0


def test_headline_percentiles_are_only_the_rows_printed_at_them():
    got = hgrm.read(str(FIXTURES / "jhiccup-v1.hgrm"), "hgrm", {})
    text = (FIXTURES / "jhiccup-v1.hgrm").read_text()
    for level, fraction in ((50.0, "0.500000000000"), (90.0, "0.900000000000")):
        value = re.search(rf"^\s*([\d.]+) {fraction}", text, re.M).group(1)
        assert got.percentiles_ms[level] == float(value)
    assert 99.0 not in got.percentiles_ms          # no row at 0.99 with 5 ticks per half
    assert " 0.990000000000 " not in text


def test_text_and_csv_forms_of_one_log_agree():
    text = hgrm.read(str(FIXTURES / "jhiccup-v2-us.hgrm"), "hgrm", {"value_unit_ms": 1e-3})
    csv = hgrm.read(str(FIXTURES / "jhiccup-v2-csv.hgrm"), "hgrm", {})
    assert [p.total_count for p in text.spectrum] == [p.total_count for p in csv.spectrum]
    for a, b in zip(text.spectrum, csv.spectrum):
        assert a.value_ms == pytest.approx(b.value_ms, abs=0.005)


def test_wrk2_spectrum_cut_out_reads_like_the_wrk2_output():
    alone = hgrm.read(str(FIXTURES / "wrk2-spectrum.hgrm"), "hgrm", {})
    whole = wrk.read(str(FIXTURES.parent / "wrk2" / "wrk2-latency.txt"), "wrk2", {})
    assert alone.spectrum == whole.spectrum
    assert (alone.mean_ms, alone.max_ms) == (whole.mean_ms, whole.max_ms)
    assert alone.info.tool == "HdrHistogram"
    assert alone.requests == int(re.search(r"Total count\s+=\s+(\d+)",
                                           (FIXTURES / "wrk2-spectrum.hgrm").read_text())[1])


def _write(tmp_path, text: str) -> str:
    path = tmp_path / "d.hgrm"
    path.write_text(text)
    return str(path)


def test_a_bad_row_is_skipped_and_reported(tmp_path):
    lines = (FIXTURES / "jhiccup-v1.hgrm").read_text().splitlines(keepends=True)
    lines[10] = "        0.4x 0.5 12\n"
    path = _write(tmp_path, "".join(lines))
    got = hgrm.read(path, "hgrm", {})
    assert got.skipped == 1
    assert got.warnings == [f"{path}:11: not a distribution row (skipped)"] or \
        got.warnings[0].startswith(f"{path}:11: ")
    assert len(got.spectrum) == 67


@pytest.mark.parametrize("cut,message", [
    (lambda t: t[:t.index("#[Max")], "#[Max ...] footer line is missing"),
    (lambda t: t[:t.index("#[Buckets")], "#[Buckets ...] footer line is missing"),
    (lambda t: t[:t.index("#[Mean")] + "#[Max", "#[Mean ...] footer line is missing"),
    (lambda t: "".join(l for l in t[:t.index("#[Mean")].splitlines(keepends=True)
                       if " 1.000000000000 " not in l), "stops before its 100% row"),
    (lambda t: "".join(l for l in t.splitlines(keepends=True) if " 1.000000000000 " not in l),
     "stops before its 100% row"),
    (lambda t: t.replace("Total count    =        65964", "Total count    =        65965"),
     "the last row counts 65964 values, the footer 65965"),
    (lambda t: t.replace("Value", "Wert"), "no 'Value Percentile TotalCount"),
    (lambda t: t[:t.index("        0.02")] + "#[Mean", "has no rows"),
])
def test_damaged_distribution_is_one_clear_error(tmp_path, cut, message):
    text = (FIXTURES / "jhiccup-v1.hgrm").read_text()
    with pytest.raises(ResultsError, match=re.escape(message)):
        hgrm.read(_write(tmp_path, cut(text)), "hgrm", {})


def test_text_form_without_its_footer_reads_from_its_rows():
    # jhiccup-v1.hgrm with its three #[...] footer lines cut by hand (the fixtures' README)
    whole = hgrm.read(str(FIXTURES / "jhiccup-v1.hgrm"), "hgrm", {})
    cut = hgrm.read(str(FIXTURES / "jhiccup-v1-nofooter.hgrm"), "hgrm", {})
    footer = (FIXTURES / "jhiccup-v1.hgrm").read_text()
    total = int(re.search(r"Total count\s+=\s+(\d+)", footer)[1])
    peak = float(re.search(r"#\[Max\s+=\s+([\d.]+)", footer)[1])
    assert (cut.requests, cut.max_ms) == (total, peak) == (65964, 1895.83)
    assert (cut.mean_ms, cut.stddev_ms) == (None, None) and cut.warnings == []
    assert cut.spectrum == whole.spectrum and cut.percentiles_ms == whole.percentiles_ms


def test_truncated_csv_form_is_an_error(tmp_path):
    text = (FIXTURES / "jhiccup-v2-csv.hgrm").read_text()
    with pytest.raises(ResultsError, match="stops before its 100% row"):
        hgrm.read(_write(tmp_path, text[:len(text) // 2]), "hgrm", {})


@pytest.mark.parametrize("unit", [0, -1, "ms", float("nan"), True])
def test_value_unit_must_be_a_positive_number(unit):
    with pytest.raises(ResultsError, match="value_unit_ms must be a positive number"):
        hgrm.read(str(FIXTURES / "jhiccup-v1.hgrm"), "hgrm", {"value_unit_ms": unit})


def test_sniff_wants_the_header_first():
    assert hgrm.sniff((FIXTURES / "jhiccup-v2-csv.hgrm").read_bytes()) == "hgrm"
    assert hgrm.sniff(b"Value(ms)  Percentile  TotalCount  1/(1-Percentile)\n") is None
    assert hgrm.sniff(b"hello\n       Value   Percentile   TotalCount 1/(1-Percentile)\n") \
        is None
