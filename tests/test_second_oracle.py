"""A second, independent oracle: the `hdrhistogram` PyPI package (HdrHistogram_py, module
`hdrh`), for what it gets right - decoding V2 payloads: every bucket's count, the total, min and
max of each interval, against our reader on every fixture log.

It is not the reader (docs/reliability.md, "The oracles"): it decodes only V2 payloads (not
V0/V1 or DoubleHistogram ones), its percentiles round differently from Java's, and its log
reader mixes tagged and untagged lines. So percentiles and logs are not compared here; the
Java oracle (tests/test_hgrm.py, tests/test_histogram.py) checks those.
"""
from __future__ import annotations

import base64
import struct

import numpy as np
import pytest

from analysis.read.hdr.log import read_hlog
from analysis.read.hdr.payload import V2_COMPRESSED
from tests.conftest import REPO

hdrh_histogram = pytest.importorskip("hdrh.histogram", reason="pip install -r requirements-dev.txt")
HdrHistogram = hdrh_histogram.HdrHistogram

FIXTURES = REPO / "tests" / "fixtures" / "hlog"


def _payloads(path):
    """{line number: payload text} of the file's histogram lines."""
    out = {}
    with open(path, encoding="latin-1") as f:
        for line_no, line in enumerate(f, start=1):
            fields = line.strip().split(",")
            if fields and fields[0].startswith("Tag="):
                fields = fields[1:]
            if len(fields) >= 4 and not line.startswith("#"):
                out[line_no] = fields[3].strip()
    return out


def _is_v2(text: str) -> bool:
    try:
        head = base64.b64decode(text[:8] + "=" * (-len(text[:8]) % 4))
    except ValueError:
        return False
    return len(head) >= 4 and struct.unpack(">i", head[:4])[0] & ~0xf0 == V2_COMPRESSED


def _their_entries(h) -> tuple[np.ndarray, np.ndarray]:
    counts = np.array([h.get_count_at_index(i) for i in range(h.counts_len)], dtype=np.int64)
    nz = np.flatnonzero(counts)
    return nz, counts[nz]


def _v2_logs():
    logs = []
    for path in sorted(FIXTURES.glob("*.hlog")):
        try:
            log = read_hlog(path)
        except Exception:  # noqa: BLE001 - the unreadable regression files hold nothing to compare
            continue
        payloads = _payloads(path)
        if any(_is_v2(payloads.get(iv.line, "")) for iv in log.intervals):
            logs.append(path.name)
    return logs


@pytest.mark.parametrize("name", _v2_logs())
def test_v2_payloads_decode_as_hdrhistogram_py_decodes_them(name):
    path = FIXTURES / name
    log = read_hlog(path)
    payloads = _payloads(path)
    compared = 0
    for iv in log.intervals:
        text = payloads.get(iv.line)
        if text is None or not _is_v2(text) or iv.is_double:
            continue
        theirs = HdrHistogram.decode(text)
        ours = iv.histogram
        where = f"{name}:{iv.line}"
        assert theirs.get_total_count() == ours.total_count, where
        if ours.total_count:
            assert theirs.get_max_value() == ours.max, where
            assert theirs.get_min_value() == ours.min, where
        indices, counts = _their_entries(theirs)
        assert indices.tolist() == ours.indices.tolist(), where
        assert counts.tolist() == ours.counts.tolist(), where
        compared += 1
    assert compared > 0
