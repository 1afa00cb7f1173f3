"""Deterministic YAML for the data files and front matter: PyYAML's safe dumper from plain data,
never pasted strings, so a title like `"><script>` or `{{ site }}` stays a string value, and
strings Jekyll's YAML reader (Ruby's Psych) would take for numbers are quoted."""
from __future__ import annotations

import io
import math
import re
from typing import Any

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode


# The serializer asks the resolver twice per scalar whether its text would read back as its
# tag; a run's document has ~20,000 scalars, mostly repeated keys and names, and the resolver
# tries its regular expressions each time. The answer depends only on the text and the
# `implicit` pair (no path resolvers are registered), so it is remembered; bounded, as the
# process writes document after document.
_RESOLVED: dict[tuple, str] = {}
_RESOLVED_MAX = 100_000


class _ResolveOnce:
    def resolve(self, kind, value, implicit):
        if kind is not ScalarNode:
            return super().resolve(kind, value, implicit)
        key = (value, implicit)
        tag = _RESOLVED.get(key)
        if tag is None:
            tag = super().resolve(kind, value, implicit)
            if len(_RESOLVED) >= _RESOLVED_MAX:
                _RESOLVED.clear()
            _RESOLVED[key] = tag
        return tag


class _Dumper(_ResolveOnce, yaml.SafeDumper):
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


class _FastDumper(_ResolveOnce, _FAST_BASE or yaml.SafeDumper):
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


# _UNSAFE_PLAIN or a control character other than a line feed: the string is double-quoted
_DOUBLE_QUOTED = re.compile("[\x00-\x09\x0b-\x1f" + "".join(sorted(_UNSAFE_PLAIN)) + "]")


def _str_style(value: str) -> str | None:
    if _DOUBLE_QUOTED.search(value):
        return '"'
    if _PSYCH_NUMBER.fullmatch(value):
        return "'"
    return None     # the emitter's choice, as SafeRepresenter.represent_str leaves it


def _represent_str(dumper, value):
    style = _str_style(value)
    if style is None:
        return yaml.SafeDumper.represent_str(dumper, value)
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


for _cls in (_Dumper, _FastDumper):
    _cls.add_representer(str, _represent_str)
    _cls.add_representer(type(None), _represent_none)
    _cls.add_representer(float, _represent_float)

_OPTIONS = {"sort_keys": False, "allow_unicode": True, "default_flow_style": False,
            "width": 100, "indent": 2}


def dump_yaml(doc: Any) -> str:
    fast = _FAST_BASE is not None and type(doc) is dict and _fast_safe(doc)
    dumper = _FastDumper if fast else _Dumper
    try:
        node = _node_tree(doc)
    except _Unlisted:
        return _dump(doc, dumper)
    return _serialize(node, dumper)


def _dump(doc: Any, dumper: type) -> str:
    """PyYAML's own path: its representer builds the nodes (the reference for _node_tree)."""
    return yaml.dump(doc, Dumper=dumper, **_OPTIONS)


# A run's data document is ~9,000 values. PyYAML's representer spent half of a dump's time on
# its per-value generality (alias bookkeeping, a walk of the type's MRO, several method calls
# per node). The document holds only dicts, lists and scalars of exact built-in types, for
# which _node_tree builds the same node tree directly; the dumper then only serializes and
# emits it (the emitter, libyaml's or Python's, is unchanged, and so are its bytes).
# tests/test_yaml_text.py compares it with _dump on generated documents and the committed ones.
_NULL, _BOOL, _INT = "tag:yaml.org,2002:null", "tag:yaml.org,2002:bool", "tag:yaml.org,2002:int"
_FLOAT, _STR = "tag:yaml.org,2002:float", "tag:yaml.org,2002:str"
_SEQ, _MAP = "tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"


class _Unlisted(Exception):
    """A value of a type _node_tree leaves to PyYAML's representer (a subclass, a tuple, a
    date, ...): it represents it, or refuses it, as before."""


def _node_tree(doc: Any):
    """The node tree _Dumper's representer would build for `doc`, or _Unlisted."""
    containers: dict[int, Any] = {}   # id -> node: the representer's aliases (&id001)

    def node(data):
        t = type(data)
        if t is str:
            return ScalarNode(_STR, data, style=_str_style(data))
        if t is dict or t is list:
            if id(data) in containers:
                return containers[id(data)]
            items: list = []
            out = containers[id(data)] = (MappingNode(_MAP, items, flow_style=False) if t is dict
                                          else SequenceNode(_SEQ, items, flow_style=False))
            if t is dict:
                items.extend([(node(k), node(v)) for k, v in data.items()])
            else:
                items.extend([node(v) for v in data])
            return out
        if t is int:
            return ScalarNode(_INT, str(data))
        if t is float:
            if math.isnan(data) or math.isinf(data):
                return ScalarNode(_NULL, "null")
            text = repr(data).lower()
            if "." not in text and "e" in text:   # (SafeRepresenter.represent_float: 1e17)
                text = text.replace("e", ".0e", 1)
            return ScalarNode(_FLOAT, text)
        if t is bool:
            return ScalarNode(_BOOL, "true" if data else "false")
        if data is None:
            return ScalarNode(_NULL, "null")
        raise _Unlisted

    return node(doc)


def _serialize(node, dumper: type) -> str:
    """yaml.dump's steps (open, serialize, close) for a node tree instead of the data."""
    stream = io.StringIO()
    d = dumper(stream, **_OPTIONS)
    try:
        d.open()
        d.serialize(node)
        d.close()
    finally:
        d.dispose()
    return stream.getvalue()


