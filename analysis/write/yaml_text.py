"""Deterministic YAML for the data files and front matter: PyYAML's safe dumper from plain data,
never pasted strings, so a title like `"><script>` or `{{ site }}` stays a string value, and
strings Jekyll's YAML reader (Ruby's Psych) would take for numbers are quoted."""
from __future__ import annotations

import math
import re
from typing import Any

import yaml


class _Dumper(yaml.SafeDumper):
    """Safe dumper that keeps our key order and writes None as `null`."""


# libyaml's emitter (PyYAML's CSafeDumper: the same representers below, the serializing and
# emitting in C) takes about a third of the Python emitter's time. It writes the same bytes for
# the documents we write, but not for every document: it escapes characters beyond U+FFFF
# ("\U0001F600") where the Python emitter writes them as they are, folds long double-quoted
# strings at other places, and writes keys that are empty or hold control characters in the
# explicit `? key` form. So it is used only for a mapping of plain data whose strings are
# printable (no line break, tab or control character: never double-quoted) within U+FFFF and
# whose keys are non-empty printable ASCII (_fast_safe); any other document goes through the
# Python emitter (tests/test_yaml_text.py: the two agree on generated documents, the committed
# data files and front matter). Without libyaml, always the Python emitter.
_FAST_BASE = getattr(yaml, "CSafeDumper", None) if yaml.__with_libyaml__ else None


class _FastDumper(_FAST_BASE or yaml.SafeDumper):
    """_Dumper's representers on libyaml's emitter."""


_SCALARS = (int, float, bool, type(None))


def _fast_safe(node: Any) -> bool:
    """Whether libyaml's emitter writes `node` byte for byte as the Python emitter does."""
    t = type(node)
    if t is str:
        # no line break, tab or control character: never double-quoted
        return node.isprintable() and (node.isascii() or max(node) <= "\uffff")
    if t is dict:
        return all(type(k) is str and k.isascii() and k.isprintable() and k != ""
                   and _fast_safe(v) for k, v in node.items())
    if t is list:
        return all(map(_fast_safe, node))
    return t in _SCALARS


def _represent_none(dumper, _):
    return dumper.represent_scalar("tag:yaml.org,2002:null", "null")


def _represent_float(dumper, value):
    if math.isnan(value) or math.isinf(value):
        # Liquid has no NaN; a value we could not compute is null.
        return _represent_none(dumper, None)
    return yaml.SafeDumper.represent_float(dumper, value)


# Characters a YAML reader takes as line breaks (or strips) when they appear unquoted: PyYAML
# writes them raw with allow_unicode, and reads them back as a space. Double quotes escape them.
_UNSAFE_PLAIN = set("\x85\u2028\u2029\ufeff")


# Jekyll reads the data with Ruby's Psych, which takes commas and underscores inside a number as
# separators ("1,180" -> the integer 1180, "1,234.5" -> a float), where PyYAML sees a string and
# writes it plain. Such strings are quoted, so that the page prints "1,180". (Psych's patterns.)
_PSYCH_NUMBER = re.compile(r"""[-+]?(?:0b[0-1_,]+|0[0-7_,]+|(?:0|[1-9](?:[0-9]|,[0-9]|_[0-9])*)
                                   |0x[0-9a-fA-F_,]+)
                              |[-+]?(?:[0-9][0-9_,]*)?\.[0-9]*(?:[eE][-+][0-9]+)?""", re.X)


def _represent_str(dumper, value):
    if any(ch in _UNSAFE_PLAIN or (ch < " " and ch not in "\n") for ch in value):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    if _PSYCH_NUMBER.fullmatch(value):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="'")
    return yaml.SafeDumper.represent_str(dumper, value)


for _cls in (_Dumper, _FastDumper):
    _cls.add_representer(str, _represent_str)
    _cls.add_representer(type(None), _represent_none)
    _cls.add_representer(float, _represent_float)


def dump_yaml(doc: Any) -> str:
    fast = _FAST_BASE is not None and type(doc) is dict and _fast_safe(doc)
    return _dump(doc, _FastDumper if fast else _Dumper)


def _dump(doc: Any, dumper: type) -> str:
    return yaml.dump(doc, Dumper=dumper, sort_keys=False, allow_unicode=True,
                     default_flow_style=False, width=100, indent=2)


