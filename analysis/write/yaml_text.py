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
    if type(doc) is dict and doc:
        try:
            return _BlockWriter().document(doc)
        except (_Unlisted, _Unwritten):
            pass
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
        tag, text = _scalar(data)
        return ScalarNode(tag, text)

    return node(doc)


def _scalar(data: Any) -> tuple[str, str]:
    """(tag, text) of a value of a built-in scalar type other than str, as _Dumper's
    representers write it; _Unlisted for any other value."""
    t = type(data)
    if t is int:
        return _INT, str(data)
    if t is float:
        if math.isnan(data) or math.isinf(data):
            return _NULL, "null"
        text = repr(data).lower()
        if "." not in text and "e" in text:   # (SafeRepresenter.represent_float: 1e17)
            text = text.replace("e", ".0e", 1)
        return _FLOAT, text
    if t is bool:
        return _BOOL, "true" if data else "false"
    if data is None:
        return _NULL, "null"
    raise _Unlisted


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




# --- the block writer ------------------------------------------------------------------------
#
# Even with libyaml emitting, a run's data document (~13,000 values) spent half its dump in
# Python building the node tree, and the emitter then walked it again as events. _BlockWriter
# writes the text in one walk of the data: the Python emitter's block layout (its write_indent,
# write_indicator and the states of block mappings and sequences, for the values dump_yaml
# writes), its own choice of each scalar's style (analyze_scalar and choose_scalar_style, asked
# once per distinct scalar), and its own write_plain / write_single_quoted wherever a scalar
# could be folded at the line width or holds a line break. Documents it does not cover - a
# shared container (an anchor), a double-quoted scalar, a key that is not a simple key, a
# value of another type - go through the dumper as before (_Unwritten, _Unlisted).
# tests/test_yaml_text.py compares it with the Python emitter on generated documents.

_WIDTH = _OPTIONS["width"]
_STEP = _OPTIONS["indent"]
_BREAKS = frozenset("\n\x85\u2028\u2029")


class _Unwritten(Exception):
    """A document _BlockWriter leaves to the dumper."""


# The style the emitter chooses for a scalar ("" plain, "'" single-quoted), by (text, simple
# key) for strings and (tag, text, simple key) for other scalars; bounded, as _RESOLVED.
_STR_STYLES: dict[tuple, str] = {}
_STYLES: dict[tuple, str] = {}
# a plain key's text and its ":", as block mappings write them (most keys are plain)
_PLAIN_KEYS: dict[str, str] = {}
# a mapping's value or a sequence's item whose style is plain, by type (1, 1.0 and True are
# equal keys; 0.0 and -0.0 too, so zeros are not kept): its text, written after its key or its
# "-" with no call to scalar() (booleans and nulls too: ~600 of a run's document's values)
_PLAIN_STRS: dict[str, str] = {}
_PLAIN_FLOATS: dict[float, str] = {}
_PLAIN_INTS: dict[int, str] = {}
_PLAIN_BOOLS: dict[bool, str] = {}
_PLAIN_NULLS: dict[None, str] = {}
_PLAIN_BY_TYPE = {str: _PLAIN_STRS, float: _PLAIN_FLOATS, int: _PLAIN_INTS, bool: _PLAIN_BOOLS,
                  type(None): _PLAIN_NULLS}
# a string value or item the emitter single-quotes (~1,000 of a run's document's: "1,180",
# names with ": "): its text written whole, quotes and all ("'" doubled inside); the width is
# checked without the closing quote, as scalar() does
_QUOTED_STRS: dict[str, str] = {}
_SPACE_RUNS = re.compile("( +)")
# fold's text and end column, by (text, style, start column, indent); bounded, as _RESOLVED
_FOLDED: dict[tuple, tuple[str, int]] = {}


def _remember(cache: dict, key: Any, value: str) -> None:
    if len(cache) >= _RESOLVED_MAX:
        cache.clear()
    cache[key] = value


class _Sink:
    """The stream a delegated write of the Python emitter writes into: the writer's parts."""
    __slots__ = ("write",)


class _BlockWriter:
    __slots__ = ("out", "column", "whitespace", "indention", "indent", "_emitter", "_seen")

    def __init__(self):
        self.out: list[str] = []
        self.column = 0
        self.whitespace = True
        self.indention = True
        self.indent: int | None = None
        self._emitter = None
        self._seen: set[int] = set()      # containers written: a second sight is an alias

    def document(self, doc: dict) -> str:
        self.mapping(doc)
        self.write_indent()     # (expect_document_end: the last line's break)
        return "".join(self.out)

    # the emitter's own writes

    def write_indent(self) -> None:
        indent = self.indent or 0
        if not self.indention or self.column > indent or \
                (self.column == indent and not self.whitespace):
            self.out.append("\n")
            self.whitespace = self.indention = True
            self.column = 0
        if self.column < indent:
            self.whitespace = True
            self.out.append(" " * (indent - self.column))
            self.column = indent

    def indicator(self, text: str, need_whitespace: bool, whitespace: bool = False,
                  indention: bool = False) -> None:
        if not self.whitespace and need_whitespace:
            text = " " + text
        self.whitespace = whitespace
        self.indention = self.indention and indention
        self.column += len(text)
        self.out.append(text)

    # nodes

    def node(self, data: Any, mapping: bool = False) -> None:
        t = type(data)
        if t is dict or t is list:
            if id(data) in self._seen:
                raise _Unwritten        # the dumper writes it as an alias
            self._seen.add(id(data))
            if not data:                # (expect_flow_mapping / _sequence, nothing inside)
                self.indicator("{" if t is dict else "[", True, whitespace=True)
                self.indicator("}" if t is dict else "]", False)
            elif t is dict:
                self.mapping(data)
            else:
                self.sequence(data, mapping)
            return
        saved = self.indent             # (expect_scalar: increase_indent(flow=True))
        self.indent = _STEP if saved is None else saved + _STEP
        self.scalar(data, False)
        self.indent = saved

    def mapping(self, data: dict) -> None:
        saved = self.indent
        indent = self.indent = 0 if saved is None else saved + _STEP
        out = self.out
        line = "\n" + " " * indent
        for key, value in data.items():
            head = _PLAIN_KEYS.get(key) if type(key) is str else None
            if head is not None and (not self.indention or self.column > indent or
                                     (self.column == indent and not self.whitespace)):
                # A plain key on a line of its own (write_indent's break), and most often a
                # value known to be plain that fits the line: one append for the three.
                # (a quoted text's width is checked without its closing quote: `over`)
                plain = _PLAIN_BY_TYPE.get(type(value))
                text = None if plain is None else plain.get(value)
                over = 0
                if text is None and type(value) is str:
                    text, over = _QUOTED_STRS.get(value), 1
                self.whitespace = self.indention = False
                if text is not None:
                    column = indent + len(head) + 1 + len(text)
                    if column - over <= _WIDTH or " " not in text:
                        out.append(line + head + " " + text)
                        self.column = column
                        continue
                out.append(line + head)
                self.column = indent + len(head)
            elif head is None:
                self.write_indent()
                self.scalar(key, True)
                self.indicator(":", False)
            else:       # (write_indent leaves `whitespace` set: no space before the key)
                self.write_indent()
                out.append(head)
                self.column += len(head)
                self.whitespace = self.indention = False
            t = type(value)
            if t is dict or t is list:
                self.node(value, mapping=True)
                continue
            if self.remembered(value):
                continue
            self.indent = indent + _STEP     # (node's scalar branch, inline)
            self.scalar(value, False)
            self.indent = indent
        self.indent = saved

    def sequence(self, data: list, mapping: bool) -> None:
        saved = self.indent
        if saved is None:
            self.indent = 0
        elif not (mapping and not self.indention):     # (not "indentless")
            self.indent = saved + _STEP
        for item in data:
            self.write_indent()
            self.indicator("-", True, indention=True)
            if not self.remembered(item):
                self.node(item)
        self.indent = saved

    def remembered(self, value: Any) -> bool:
        """After a key's ":" or an item's "-", a value known to be plain or single-quoted: one
        space and its text in one append (what scalar() would write), unless the width would
        fold it; False where scalar() has to write it."""
        t = type(value)
        plain = _PLAIN_BY_TYPE.get(t)
        text = None if plain is None else plain.get(value)
        over = 0
        if text is None:
            if t is not str:
                return False
            text, over = _QUOTED_STRS.get(value), 1
            if text is None:
                return False
        column = self.column + 1 + len(text)
        if column - over > _WIDTH and " " in text:
            return False
        self.out.append(" " + text)
        self.column = column
        self.whitespace = self.indention = False
        return True

    def scalar(self, data: Any, simple_key: bool) -> None:
        if type(data) is str:
            text = data
            style = _STR_STYLES.get((text, simple_key))
            if style is None:
                style = self._style(_STR, text, _str_style(text), simple_key)
                _remember(_STR_STYLES, (text, simple_key), style)
                if simple_key and style == "":
                    _remember(_PLAIN_KEYS, text, text + ":")
        else:
            tag, text = _scalar(data)
            style = _STYLES.get((tag, text, simple_key))
            if style is None:
                style = self._style(tag, text, None, simple_key)
                _remember(_STYLES, (tag, text, simple_key), style)
        if style == "":
            if not text:
                return
            if not simple_key:
                plain = _PLAIN_BY_TYPE.get(type(data))
                if plain is not None and data == data and (type(data) is not float or data):
                    _remember(plain, data, text)
            lead = "" if self.whitespace else " "
        else:
            if not simple_key and not _BREAKS.isdisjoint(text):
                return self._delegate("write_single_quoted", text)
            lead = "'" if self.whitespace else " '"
            text = text.replace("'", "''")
            if not simple_key and type(data) is str:
                _remember(_QUOTED_STRS, data, "'" + text + "'")
        self.whitespace = self.indention = False
        column = self.column + len(lead) + len(text)
        if column > _WIDTH and not simple_key and " " in text:
            # (a key is never folded)
            self.out.append(lead)
            self.column += len(lead)
            self.fold(text, style)
            if style:
                self.out.append("'")
                self.column += 1
            return
        if style:
            text += "'"
            column += 1
        self.out.append(lead + text)
        self.column = column

    def fold(self, text: str, style: str) -> None:
        """write_plain's and write_single_quoted's loops for text with no line break (quotes
        already doubled): a lone space met past the line width becomes a line break and the
        scalar's indent; a quoted scalar's first and last spaces never do. The folded text
        depends only on the text, the style, the column and the indent: a run's document folds
        the same ~140 long texts (descriptions, notes) as the run before it."""
        key = (text, style, self.column, self.indent)
        folded = _FOLDED.get(key)
        if folded is None:
            parts = _SPACE_RUNS.split(text)
            last = len(parts) - 2
            out, column = [], self.column
            for i, part in enumerate(parts):
                if not i % 2:
                    out.append(part)
                    column += len(part)
                elif len(part) == 1 and column > _WIDTH and not (
                        style and ((i == 1 and not parts[0]) or (i == last and not parts[-1]))):
                    out.append("\n" + " " * self.indent)
                    column = self.indent
                else:
                    out.append(part)
                    column += len(part)
            folded = ("".join(out), column)
            _remember(_FOLDED, key, folded)
        self.out.append(folded[0])
        self.column = folded[1]

    # the emitter's decisions

    def emitter(self):
        if self._emitter is None:
            sink = _Sink()
            sink.write = self.out.append
            self._emitter = _Dumper(sink, **{k: v for k, v in _OPTIONS.items()
                                             if k in ("allow_unicode", "width", "indent")})
            # (as expect_document_start leaves them: prepare_tag reads them)
            self._emitter.tag_prefixes = dict(self._emitter.DEFAULT_TAG_PREFIXES)
        return self._emitter

    def _style(self, tag: str, text: str, requested: str | None, simple_key: bool) -> str:
        """choose_scalar_style, process_tag and (for a key) check_simple_key of the Python
        emitter for this scalar; _Unwritten where they would write what this writer does not
        (a double-quoted scalar, a tag, a key of the `? key` form)."""
        e = self.emitter()
        implicit = (e.resolve(ScalarNode, text, (True, False)) == tag,
                    e.resolve(ScalarNode, text, (False, True)) == tag)
        e.event = yaml.ScalarEvent(None, tag, implicit, text, style=requested)
        e.analysis, e.flow_level, e.simple_key_context = None, 0, simple_key
        style = e.choose_scalar_style()
        analysis = e.analysis
        e.event = e.analysis = None
        if style not in ("", "'") or not (implicit[0] if style == "" else implicit[1]):
            raise _Unwritten
        if simple_key and (len(e.prepare_tag(tag)) + len(analysis.scalar) >= 128
                           or analysis.empty or analysis.multiline):
            raise _Unwritten
        return style

    def _delegate(self, method: str, text: str) -> None:
        """A scalar the width may fold, or with a line break: the emitter's own write."""
        e = self.emitter()
        e.column, e.whitespace, e.indention, e.indent = (self.column, self.whitespace,
                                                          self.indention, self.indent)
        e.root_context = False
        getattr(e, method)(text, True)
        self.column, self.whitespace, self.indention = e.column, e.whitespace, e.indention
