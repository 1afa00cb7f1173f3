"""Checks every load-tool reader's tests make of damaged input (issue 23's contract): one
clear ResultsError naming the file, or samples that are still sane."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import strategies as st

from analysis.errors import ResultsError
from analysis.read.loadtools import read_results


def assert_one_clear_error(path, content: bytes, fmt: str, what: str) -> None:
    path.write_bytes(content)
    with pytest.raises(ResultsError) as err:
        read_results(path, format=fmt)
    assert str(path) in str(err.value) and what in str(err.value)


def damaged(data, original: bytes) -> bytes:
    """`original` cut at a drawn length, with drawn bytes put in at a drawn place before it."""
    cut = data.draw(st.integers(0, len(original)))
    at = data.draw(st.integers(0, cut))
    return original[:at] + data.draw(st.binary(max_size=40)) + original[at:cut]


def assert_reads_or_raises(path, fmt: str) -> None:
    try:
        result = read_results(path, format=fmt)
    except ResultsError as err:
        assert str(path) in str(err)
    else:
        assert len(result) >= 1 and (result.latency_ns >= 0).all()
        assert np.isfinite(result.start_ms).all()
        listed = [w for w in result.warnings if w.endswith("(skipped)")]
        assert result.skipped == len(listed) or result.skipped > 20

