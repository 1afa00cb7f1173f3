"""What the load-tool reader tests share (issue 23): the fixtures, a nearest-rank percentile
computed apart from the readers, and damaged copies of a fixture for the bad-input tests."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import strategies as st

from analysis.errors import ResultsError
from analysis.read.loadtools import read_results

FIXTURES = Path(__file__).parent / "fixtures" / "loadtools"


def nearest_rank(sorted_values, p: float):
    """The p-th percentile by nearest rank: the smallest value with at least p% at or below."""
    return sorted_values[max(1, math.ceil(p / 100 * len(sorted_values))) - 1]


def read_fixture(reader, path: Path):
    """A fixture read by `reader` in the format its own sniff names."""
    return reader.read(str(path), reader.sniff(path.read_bytes()[:65536]), {})


def truncated_mid_line(src: Path, dst: Path) -> int:
    """The file cut in the middle of its last line; returns that line's number."""
    data = src.read_bytes().rstrip(b"\n")
    last = data.rfind(b"\n")
    dst.write_bytes(data[: last + 1 + (len(data) - last) // 2])
    return data.count(b"\n") + 1


def garbage_line(src: Path, dst: Path, after: int = 3) -> int:
    """The file with a line of junk inserted after line `after`; returns its line number."""
    lines = src.read_bytes().split(b"\n")
    lines.insert(after, b"\xff\xfe junk ; not a result")
    dst.write_bytes(b"\n".join(lines).replace(b"\xff\xfe", b"??"))
    return after + 1


def unusable_variants(src: Path, tmp: Path) -> dict[str, Path]:
    """Files no reader can take anything from: each must give one ResultsError."""
    data = src.read_bytes()
    variants = {
        "empty": b"",
        "blank": b"\n\n  \n",
        "nul_bytes": data[:200] + b"\0" * 64 + data[200:400],
        "binary": bytes(range(256)) * 8,
        "not_utf8": data[:100].replace(b"\n", b"\xff\xfe\n") + b"\xc3\x28",
        "wrong_delimiter": data.replace(b",", b";"),
    }
    paths = {}
    for name, content in variants.items():
        paths[name] = tmp / f"{name}{src.suffix}"
        paths[name].write_bytes(content)
    return paths


def assert_each_unusable_variant_fails(reader, src: Path, fmt: str, tmp: Path,
                                       skip: tuple[str, ...] = ()) -> None:
    """Every damaged copy of `src` read as `fmt`: one ResultsError naming the file."""
    for variant, path in unusable_variants(src, tmp).items():
        if variant in skip:
            continue
        with pytest.raises(ResultsError) as e:
            reader.read(str(path), fmt, {})
        assert str(path) in str(e.value), variant


def assert_one_clear_error(path: Path, content: bytes, fmt: str, what: str) -> None:
    """`content` written to `path` and read as `fmt`: one ResultsError naming the file and
    saying `what`."""
    path.write_bytes(content)
    with pytest.raises(ResultsError) as err:
        read_results(path, format=fmt)
    assert str(path) in str(err.value) and what in str(err.value)


def damaged(data, original: bytes) -> bytes:
    """For hypothesis: `original` cut at a drawn length, with drawn bytes put in before it."""
    cut = data.draw(st.integers(0, len(original)))
    at = data.draw(st.integers(0, cut))
    return original[:at] + data.draw(st.binary(max_size=40)) + original[at:cut]


def assert_reads_or_raises(path: Path, fmt: str) -> None:
    """A damaged file gives one ResultsError naming it, or samples that are still sane, with
    every skipped line counted."""
    try:
        result = read_results(path, format=fmt)
    except ResultsError as err:
        assert str(path) in str(err)
    else:
        assert len(result) >= 1 and (result.latency_ns >= 0).all()
        assert np.isfinite(result.start_ms).all()
        listed = [w for w in result.warnings if w.endswith("(skipped)")]
        assert result.skipped == len(listed) or result.skipped > len(listed) == 20
