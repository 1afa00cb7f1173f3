"""hgrm's interval summary lines from the compiled printer (read/hdr/_lines.c) against the
Python lines (processor._IntervalLog.rows), which the goldens hold to HistogramLogProcessor's
bytes: the same text for any numbers, and the printer taken wherever it applies."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.read.hdr import line_text
from analysis.read.hdr.processor import _IntervalLog
from analysis.read.hdr.running import Rows, TOTAL_PERCENTILES
from tests.helpers import HLOG_FIXTURES, hgrm_cases

pytestmark = pytest.mark.skipif(line_text.get() is None, reason=line_text.describe())

WHOLE_MILLIS = st.integers(-10**15, 10**15).map(lambda n: n / 1000.0)
TIMES = st.one_of(WHOLE_MILLIS, st.integers(0, 10**9).map(lambda n: n / 1000.0),
                  st.sampled_from([0.0, -0.0, 1e-4, -1e-4, 0.0015, 2.0 ** 43 - 0.125,
                                   70368744177664.38, math.nan]),
                  st.floats(-1e16, 1e16))
# bucket values as HdrHistogram gives them (2^k - 1 and neighbours), and any others
VALUES = st.one_of(st.integers(0, 62).map(lambda k: (1 << k) - 1), st.integers(0, 2**63 - 1),
                   st.integers(0, 5000))


def rows_of(draw, n):
    ints = st.integers(0, 2**63 - 1)
    columns = [draw(st.lists(ints, min_size=n, max_size=n)) for _ in range(2)]
    values = [draw(st.lists(VALUES, min_size=n, max_size=n))
              for _ in range(3 + len(TOTAL_PERCENTILES) + 1)]
    arrays = [np.array(c, np.int64) for c in columns + values]
    counts, totals, ip50, ip90, imax, *tps, tmax = arrays
    return Rows(counts, ip50, ip90, imax, totals, tps, tmax)


@st.composite
def groups(draw):
    """A few groups of rows printed one after the other by one interval log (its value
    texts carry over), each with its times and the row its lines start at."""
    out = []
    for _ in range(draw(st.integers(1, 3))):
        n = draw(st.integers(1, 12))
        times = draw(st.one_of(st.lists(WHOLE_MILLIS, min_size=n, max_size=n),
                               st.lists(TIMES, min_size=n, max_size=n)))
        out.append((times, rows_of(draw, n), draw(st.integers(0, n - 1))))
    return out


@settings(max_examples=300, deadline=None)
@given(groups(), st.booleans(), st.sampled_from([1e6, 1000.0, 1.0, 3.7, 1e-3]))
def test_compiled_lines_are_the_python_lines(batches, csv, ratio):
    compiled, python = _IntervalLog(csv, ratio), _IntervalLog(csv, ratio)
    for times, rows, start in batches:
        expected = "".join(python.rows(times[start:], *rows.columns(start)))
        assert compiled.text(times[start:], rows, start) == expected
        whole = line_text.exact_millis(np.array(times[start:], np.float64)).all()
        printed = line_text.interval_lines(times[start:], rows, start, csv, compiled.table)
        assert (printed is not None) == bool(whole)


def test_a_doublehistograms_values_take_the_python_lines():
    floats = [np.array([1.5]) for _ in range(3 + len(TOTAL_PERCENTILES) + 1)]
    ip50, ip90, imax, *tps, tmax = floats
    rows = Rows(np.array([1]), ip50, ip90, imax, np.array([1]), tps, tmax)
    ilog = _IntervalLog(False, 1e6)
    assert line_text.interval_lines([1.0], rows, 0, False, ilog.table) is None
    assert ilog.text([1.0], rows, 0) == "".join(ilog.rows([1.0], *rows.columns(0)))


def test_the_printer_takes_the_lines_of_a_normal_log(monkeypatch, tmp_path):
    """Every group of a generated log goes through the compiled printer (the old code
    printed each line in Python)."""
    from analysis.read.hdr import processor
    taken = []
    real = line_text.interval_lines

    def spy(*args):
        text = real(*args)
        taken.append(text is not None)
        return text
    monkeypatch.setattr(processor, "interval_lines", spy)
    warnings = []
    log, _ = processor.process(str(HLOG_FIXTURES / "gen-ns-plain.hlog"), None, warnings,
                               parallel=False)
    assert taken and all(taken)
    assert log.count("\n") > 10


@pytest.mark.parametrize("name,fixture,flags", list(hgrm_cases()))
def test_goldens_with_the_python_lines(monkeypatch, tmp_path, name, fixture, flags):
    """The goldens' outputs are the same with the printer switched off (the goldens test
    runs with it)."""
    from tests.test_hgrm import hgrm
    outputs = []
    for printer in (line_text.get, lambda: None):
        monkeypatch.setattr(line_text, "get", printer)
        target = tmp_path / f"out{len(outputs)}"
        code, out, err = hgrm("-i", str(HLOG_FIXTURES / fixture), *flags, "-o", str(target))
        outputs.append((code, out, err, target.read_text() if code == 0 else None))
    assert outputs[0] == outputs[1]
