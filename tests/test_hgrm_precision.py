"""Totals so large that a double cannot tell the last counts apart from 100 %.

HistogramLogProcessor's percentile loop never ends on such a log (tests/fixtures/hlog/handmade/
README.md): `hgrm` must refuse it, naming the line, at once and on both decoding paths. The
logs just short of it end in Java, and their output is a golden case (handmade-total-2p50).
"""
from __future__ import annotations

import contextlib
import io

import pytest

from analysis.cli import main
from analysis.read.hdr import native
from analysis.read.hdr.histogram import Histogram, layout_for
from tests.helpers import HLOG_FIXTURES, encode, log_line, time_limit, write_log

ENDLESS = HLOG_FIXTURES / "handmade" / "total-2p62-endless.hlog"


@pytest.fixture(params=["compiled", "numpy"])
def decoding(request, monkeypatch):
    if request.param == "numpy":
        monkeypatch.setattr(native, "get", lambda: None)
    return request.param


def hgrm(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["hgrm", *args])
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("ticks", ["5", "1", "3"])
def test_a_distribution_that_never_reaches_100_percent_is_refused(tmp_path, decoding, ticks):
    # 5 and 3 ticks: Java repeats the last row forever; 1 tick: the level reaches 100.0 and
    # Java throws (the old code raised ZeroDivisionError there)
    with time_limit(5):
        code, out, err = hgrm("-i", str(ENDLESS), "-percentilesOutputTicksPerHalf", ticks,
                              "-o", str(tmp_path / "out"))
    assert code != 0 and out == ""
    assert f"{ENDLESS}:4: " in err and "4611686018427387905" in err
    assert "HistogramLogProcessor" in err and "Traceback" not in err
    assert not list(tmp_path.iterdir())


def test_the_refusal_names_the_interval_with_the_largest_count(tmp_path, decoding):
    layout = layout_for(1, 10**6, 3)
    path = tmp_path / "sum.hlog"
    write_log(path, [log_line(encode(Histogram.from_values(layout, [1000], [3])), 0.0),
                     log_line(encode(Histogram.from_values(layout, [10], [2**61])), 1.0),
                     log_line(encode(Histogram.from_values(layout, [10], [2**61])), 2.0),
                     log_line(encode(Histogram.from_values(layout, [999], [1])), 3.0)])
    with time_limit(5):
        code, out, err = hgrm("-i", str(path))
    assert code != 0 and out == ""
    assert f"{path}:5: " in err and f"holds {2**61} " in err


def test_the_same_log_without_its_big_interval_is_printed(tmp_path, decoding):
    # -start past the big interval: the refusal's own advice works
    layout = layout_for(1, 10**6, 3)
    path = tmp_path / "sum.hlog"
    write_log(path, [log_line(encode(Histogram.from_values(layout, [10], [2**62])), 0.0),
                     log_line(encode(Histogram.from_values(layout, [1000], [3])), 1.0)])
    with time_limit(5):
        code, out, err = hgrm("-i", str(path), "-start", "0.5")
    assert code == 0, err
    assert out.splitlines()[-2].split()[-1] == "3]"       # "Total count = 3"
