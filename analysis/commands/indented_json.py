"""`json.dumps(obj, sort_keys=True, indent=1)`, the same text, made faster for plain data.

With an indent Python 3.11's json module uses its pure-Python encoder, one generator step per
value: the JFR summary of a GC-heavy recording (a pause timeline of ~14,000 pairs) took 0.08 s
to print, a quarter of `analysis jfr FILE --json`. Here each container is one join over its
items. Anything but dicts with str keys, lists, tuples, str, int, float, bool and None (a
subclass, a non-str key) goes to json.dumps itself, so the text is json's in every case.
"""
from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii

_INFINITY = float("inf")


class _NotPlain(Exception):
    """A value this encoder leaves to json.dumps."""


def dumps_sorted_indented(obj) -> str:
    """json.dumps(obj, sort_keys=True, indent=1)."""
    try:
        return _encode(obj, 0)
    except (_NotPlain, RecursionError):
        return json.dumps(obj, sort_keys=True, indent=1)


def _float(x: float) -> str:
    # json's own spellings of the values JSON has no number for (allow_nan=True)
    if x != x:
        return "NaN"
    if x == _INFINITY:
        return "Infinity"
    if x == -_INFINITY:
        return "-Infinity"
    return float.__repr__(x)


def _encode(o, depth: int) -> str:
    t = type(o)
    if t is str:
        return encode_basestring_ascii(o)
    if t is float:
        return _float(o)
    if t is int:
        return int.__repr__(o)
    if o is None:
        return "null"
    if o is True:
        return "true"
    if o is False:
        return "false"
    if t is list or t is tuple:
        if not o:
            return "[]"
        inner = "\n" + " " * (depth + 1)
        # Numbers inline, not a call each (x - x is 0.0 for a finite float only; a bool's
        # type is not int), and so are pairs of floats (the pause timeline's rows), by a
        # template (%r of a float is its repr).
        pair = "[" + inner + " %r," + inner + " %r" + inner + "]"
        return "[" + inner + ("," + inner).join(
            [float.__repr__(v) if type(v) is float and v - v == 0.0 else
             int.__repr__(v) if type(v) is int else
             pair % (v[0], v[1]) if type(v) is list and len(v) == 2 and type(v[0]) is float
             and type(v[1]) is float and v[0] - v[0] == 0.0 and v[1] - v[1] == 0.0 else
             _encode(v, depth + 1) for v in o]) + "\n" + " " * depth + "]"
    if t is dict:
        if not o:
            return "{}"
        for key in o:
            if type(key) is not str:
                raise _NotPlain
        inner = "\n" + " " * (depth + 1)
        return "{" + inner + ("," + inner).join(
            [encode_basestring_ascii(k) + ": " + _encode(v, depth + 1)
             for k, v in sorted(o.items())]) + "\n" + " " * depth + "}"
    raise _NotPlain
