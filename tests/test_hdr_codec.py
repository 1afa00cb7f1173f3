"""The payload codec's fast libraries (pybase64, isal) and its stdlib fallback: same bytes, same
refusals, and with the wheels hidden the hgrm goldens still come out byte-identical."""
from __future__ import annotations

import binascii
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.read.hdr import codec
from tests.helpers import assert_goldens_in_fresh_interpreter

needs_fast = pytest.mark.skipif(
    codec.fast_b64decode is None or codec.fast_decompress is None,
    reason="pybase64/isal not installed (pip install -r requirements.txt): only the stdlib "
           "path is there to test")


def _stdlib_b64(text: str):
    try:
        return binascii.a2b_base64(text, strict_mode=True)
    except ValueError:
        return "refused"


def _ours_b64(text: str):
    try:
        return codec.a2b_base64(text)
    except ValueError:
        return "refused"


@pytest.mark.slow
@needs_fast
@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="AB01+/=-_ \n\xe9", max_size=16))
def test_base64_agrees_with_binascii_strict_mode(text):
    assert _ours_b64(text) == _stdlib_b64(text)


@needs_fast
def test_base64_edge_cases():
    for text in ("C11+====", "QQ==", "QQ", "QQ=", "=QQ=", "Q===", "QQ==QQ==", "Q\nQ==", "é"):
        assert _ours_b64(text) == _stdlib_b64(text), text


def _zlib_header(cmf: int, flg: int) -> bytes:
    return bytes([cmf, flg + (31 - (cmf * 256 + flg) % 31) % 31])


@needs_fast
def test_inflate_agrees_with_zlib():
    stream = zlib.compress(b"counts " * 300)
    cases = [stream, stream + b"trailing", stream[:-3], stream[:10], b"", b"\x78",
             stream[:-1] + bytes([stream[-1] ^ 1]),             # checksum
             _zlib_header(0x88, 0x80) + stream[2:],             # 64 KB window: zlib refuses
             _zlib_header(0x78, 0xa0) + stream[2:],             # preset dictionary
             bytes([0x78, 0x9d]) + stream[2:],                  # header check
             _zlib_header(0x77, 0x80) + stream[2:],             # not deflate
             _zlib_header(0x08, 0x80) + stream[2:]]             # 256-byte window
    for data in cases:
        try:
            expected = zlib.decompress(data)
        except zlib.error:
            expected = None
        assert codec.inflate(memoryview(data)) == expected, data[:4]


# Runs every golden case in a fresh interpreter where importing pybase64 and isal fails.
WITHOUT_WHEELS = """
import sys
sys.modules["pybase64"] = None
sys.modules["isal"] = None
sys.modules["isal.isal_zlib"] = None
from analysis.read.hdr import codec
assert codec.NAMES == "binascii + zlib", codec.NAMES
"""


@pytest.mark.slow
def test_goldens_without_the_fast_wheels(tmp_path):
    assert_goldens_in_fresh_interpreter(tmp_path, WITHOUT_WHEELS)
