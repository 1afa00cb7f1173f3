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


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(type(None), _represent_none)
_Dumper.add_representer(float, _represent_float)


def dump_yaml(doc: Any) -> str:
    return yaml.dump(doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                     default_flow_style=False, width=100, indent=2)


