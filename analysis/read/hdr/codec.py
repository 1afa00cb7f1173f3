"""base64 and zlib for payloads: `pybase64` and ISA-L (`isal`) when their wheels are installed,
else the standard library, with the same results and the same error messages either way.

On the 24-hour log the fast pair decodes the payloads in 0.67 s against the stdlib's 1.20 s
(bench/perf/hgrm_vs_hlp.py's floors). Measured on 15,745 of its payloads, one core: inflating
with zlib 0.19 s, isal 0.12 s, zlib-ng 0.14 s, libdeflate 0.26 s; base64 with binascii
0.050 s, pybase64 0.011 s. Only the fast path is swapped: anything the fast libraries refuse is decoded again by the stdlib, whose
verdict (and message) stands, so a missing wheel changes speed, never output.
`LOADCURVE_STDLIB_CODECS=1` in the environment forces the stdlib (the fallback's tests).
"""
from __future__ import annotations

import binascii
import functools
import os
import zlib

fast_b64decode = fast_decompress = None
if os.environ.get("LOADCURVE_STDLIB_CODECS") != "1":
    try:
        from pybase64 import b64decode as _pybase64_decode
    except ImportError:
        pass
    else:
        # validate=True accepts a subset of what binascii's strict mode accepts (tested),
        # with the same bytes
        fast_b64decode = functools.partial(_pybase64_decode, validate=True)
    try:
        from isal.isal_zlib import decompress as fast_decompress
    except ImportError:
        pass

NAMES = (("pybase64" if fast_b64decode else "binascii") + " + "
         + ("isal" if fast_decompress else "zlib"))


def a2b_base64(text: str) -> bytes:
    """binascii.a2b_base64(text, strict_mode=True), faster when pybase64 is installed."""
    if fast_b64decode is not None:
        try:
            return fast_b64decode(text)
        except (ValueError, TypeError):   # (binascii.Error is a ValueError)
            pass
    return binascii.a2b_base64(text, strict_mode=True)


def inflate(data) -> bytes | None:
    """The whole zlib stream in `data` inflated, or None when it is not one (the caller then
    inflates it step by step to report the problem)."""
    # (ISA-L takes a zlib header with a window over 32 KB, which zlib refuses)
    if fast_decompress is not None and len(data) > 1 and data[0] >> 4 <= 7:
        try:
            return fast_decompress(data)
        except Exception:      # (isal's IsalError is no zlib.error)
            pass
    try:
        return zlib.decompress(data)
    except zlib.error:
        return None
