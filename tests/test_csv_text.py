"""datafiles._csv_text: plain rows written by the csv writer in one call give the text of the
per-value loop (None as "", floats by repr), and other values still take the loop."""
from __future__ import annotations

import csv
import io

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.write import datafiles

VALUES = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(),
                   st.text(alphabet=st.sampled_from('ab,"\n\r é'), max_size=6),
                   st.sampled_from([np.float64(2.5), np.int64(3), np.float32(0.1)]))


def per_value(header, rows) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for row in rows:
        w.writerow(["" if v is None else (repr(v) if isinstance(v, float) else v) for v in row])
    return buf.getvalue()


@settings(max_examples=500, deadline=None)
@given(st.lists(st.lists(VALUES, max_size=6), max_size=5))
def test_csv_text_is_the_per_value_loops(rows):
    assert datafiles._csv_text(("a", "b,c"), rows) == per_value(("a", "b,c"), rows)


def test_a_numpy_float_keeps_its_repr():
    assert datafiles._csv_text(["x"], [[np.float64(1.5)], [None]]) == \
        per_value(["x"], [[np.float64(1.5)], [None]])


def test_plain_rows_are_written_in_one_call(monkeypatch):
    calls = []
    real = csv.writer

    class Counting:
        def __init__(self, *a, **k):
            self.w = real(*a, **k)

        def writerow(self, row):
            calls.append("row")
            return self.w.writerow(row)

        def writerows(self, rows):
            calls.append("rows")
            return self.w.writerows(rows)
    rows = [[1, 0.5, None, "s", True]] * 50
    expected = per_value(["a"] * 5, rows)
    monkeypatch.setattr(datafiles.csv, "writer", Counting)
    assert datafiles._csv_text(["a"] * 5, rows) == expected
    assert calls == ["row", "rows"]
