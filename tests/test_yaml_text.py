"""yaml_text.py: libyaml's emitter is used only where it writes the Python emitter's bytes, and
the block writer (which writes most documents without either) writes the Python emitter's."""
from __future__ import annotations

import functools
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis.read.checks import load_yaml
from analysis.write import yaml_text
from analysis.write.yaml_text import (_BlockWriter, _dump, _Dumper, _FastDumper, _fast_safe,
                                      _Unwritten, dump_yaml)

pytestmark = pytest.mark.slow     # (make check leaves it out; make test runs it)

REPO = Path(__file__).resolve().parents[1]
needs_libyaml = pytest.mark.skipif(yaml_text._FAST_BASE is None, reason="no libyaml")

_text = st.one_of(
    st.text(),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=200),
    # what decides quoting, folding and escapes: indicators, spaces, breaks, non-ASCII
    st.text(alphabet=st.sampled_from(list(" ab:#-'\",.{}[]&*!|>%@`?\\\n\t\r\x85\u2028\ufeff×–")),
            max_size=150),
    st.text(alphabet=st.sampled_from(list("ab  \n-:é×")), min_size=80, max_size=400))
_keys = st.one_of(st.text(max_size=20), st.sampled_from(["p99_ms", "1", "y", "on", "null"]))
_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), _text)
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.dictionaries(_keys, inner, max_size=5)), max_leaves=30)


@needs_libyaml
@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.dictionaries(_keys, _values, min_size=1, max_size=6))
def test_libyaml_is_used_only_where_it_writes_the_same_bytes(doc):
    python = _dump(doc, _Dumper)
    if type(doc) is dict and _fast_safe(doc):
        assert _dump(doc, _FastDumper) == python
    assert dump_yaml(doc) == python


@functools.lru_cache(maxsize=1)
def _committed_documents() -> tuple[tuple[Path, object], ...]:
    """Read once for the module's tests, which only dump them, through load_yaml: the data
    documents (2 MB) took PyYAML's Python parser most of these tests' time."""
    found = []
    for path in sorted(REPO.glob("_data/**/*.yml")) + sorted(REPO.glob("_rundata/**/*.yml")) \
            + sorted(REPO.glob("tests/golden/**/*.yml")):
        found.append((path, load_yaml(path.read_text(encoding="utf-8"), yaml.SafeLoader)))
    for path in sorted(REPO.glob("**/*.md")):
        if ".venv" in path.parts or "node_modules" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        if text.startswith("---\n") and text.count("---\n") >= 2:
            try:
                found.append((path, load_yaml(text.split("---\n")[1], yaml.SafeLoader)))
            except yaml.YAMLError:
                continue
    return tuple(found)


@functools.lru_cache(maxsize=None)
def _python_emitters_text(path: Path) -> str:
    """A committed document as PyYAML's Python emitter writes it: the expected bytes of both
    tests below, made once (~4 CPU s for the 2 MB of documents)."""
    return _dump(dict(_committed_documents())[path], _Dumper)


@needs_libyaml
def test_committed_data_and_front_matter_dump_the_same_with_either_emitter():
    fast = 0
    for path, doc in _committed_documents():
        if type(doc) is dict and _fast_safe(doc):
            fast += 1
            assert _dump(doc, _FastDumper) == _python_emitters_text(path), path
    assert fast >= 5


@pytest.mark.parametrize("doc", [{"label": "a \U0001F600 b"}, {"": 1}, {"a\rb": 1},
                                 {1: "int key"}, {"t": (1, 2)}])
def test_documents_libyaml_would_write_differently_take_the_python_emitter(doc):
    assert not _fast_safe(doc)
    if not isinstance(doc.get("t"), tuple):
        assert dump_yaml(doc) == _dump(doc, _Dumper)


def test_shared_containers_get_the_representers_anchors():
    shared = {"a": [1, 2]}
    doc = {"one": shared, "two": shared, "list": shared["a"]}
    assert "&id002" in dump_yaml(doc)
    assert dump_yaml(doc) == _dump(doc, _Dumper)


class _Label(str):
    pass


@pytest.mark.parametrize("doc", [{"t": (1, 2)}, {"s": _Label("x")}, {"b": b"\x00"}])
def test_values_the_node_builder_does_not_know_go_through_the_representer(doc):
    with pytest.raises(yaml_text._Unlisted):
        yaml_text._node_tree(doc)
    try:
        expected = _dump(doc, _Dumper)
    except yaml.YAMLError as exc:
        with pytest.raises(type(exc)):
            dump_yaml(doc)
    else:
        assert dump_yaml(doc) == expected


# Words, runs of spaces, quotes and the characters that make a scalar quoted, in lines long
# enough to be folded at the width (100) at any depth: where _BlockWriter.fold decides.
_long_text = st.lists(st.one_of(st.sampled_from(["a", "bb", "it's", "x:", "#c", "'", "-", "1,180"]),
                                st.text(alphabet="ab ", min_size=1, max_size=12)),
                      min_size=1, max_size=60).map(" ".join)
_deep = st.recursive(st.one_of(_scalars, _long_text), lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(_keys, inner, max_size=4)), max_leaves=40)


@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.dictionaries(_keys, _deep, min_size=1, max_size=5))
def test_block_writer_writes_the_python_emitters_bytes(doc):
    expected = _dump(doc, _Dumper)
    try:
        written = _BlockWriter().document(doc)
    except (_Unwritten, yaml_text._Unlisted):
        return      # (dump_yaml then takes the dumper: the test above)
    assert written == expected


def test_block_writer_writes_the_committed_documents_itself():
    written = 0
    for path, doc in _committed_documents():
        if type(doc) is not dict or not doc:
            continue
        try:
            text = _BlockWriter().document(doc)
        except (_Unwritten, yaml_text._Unlisted):   # (anchors: the JMH run's; dates: posts')
            continue
        written += 1
        assert text == _python_emitters_text(path), path
    assert written >= 20


def test_block_writer_leaves_anchors_and_double_quotes_to_the_dumper():
    shared = [1]
    for doc in ({"a": shared, "b": shared}, {"a": "tab\there"}, {"k" * 130: 1}, {"a\nb": 1}):
        with pytest.raises(_Unwritten):
            _BlockWriter().document(doc)
        assert dump_yaml(doc) == _dump(doc, _Dumper)


@given(st.dictionaries(_keys, _deep, min_size=1, max_size=5))
def test_block_writer_writes_a_document_again_alike(doc):
    # (the second time, its plain values come from the writer's memo of plain values)
    expected = _dump(doc, _Dumper)
    for _ in range(2):
        try:
            written = _BlockWriter().document(doc)
        except (_Unwritten, yaml_text._Unlisted):
            return
        assert written == expected


def test_equal_values_of_other_types_or_signs_keep_their_own_text():
    for doc in ({"a": 1, "b": 1.0, "c": True, "d": "1"}, {"a": 0.0, "b": -0.0, "c": 0, "d": False},
                {"a": float("nan"), "b": float("inf"), "c": -1e17}):
        for _ in range(2):
            assert dump_yaml(doc) == _dump(doc, _Dumper)


def test_a_plain_value_written_before_is_not_styled_again(monkeypatch):
    doc = {"memo_0": "first", "memo_a": 1.25, "memo_b": "plain words", "memo_c": 7,
           "memo_d": [1.25, "memo item", 8, True, None], "memo_e": False, "memo_f": None}
    dump_yaml(doc)
    calls = []
    scalar = _BlockWriter.scalar
    monkeypatch.setattr(_BlockWriter, "scalar",
                        lambda self, data, key: calls.append(data) or scalar(self, data, key))
    assert dump_yaml(doc) == _dump(doc, _Dumper)
    # none: the first value (its line needs no break), sequences' items, booleans and nulls
    # known to be plain are written without it
    assert calls == []


def test_a_quoted_value_written_before_is_not_styled_again(monkeypatch):
    doc = {"quoted_0": "first", "quoted_a": "1,180", "quoted_b": "it's: here",
           "quoted_c": ["1,234.5", {"quoted_d": "a: b", "quoted_e": "'q'"}],
           "quoted_f": "x: " + "y " * 60}
    expected = _dump(doc, _Dumper)
    assert dump_yaml(doc) == expected
    calls = []
    scalar = _BlockWriter.scalar
    monkeypatch.setattr(_BlockWriter, "scalar",
                        lambda self, data, key: calls.append(data) or scalar(self, data, key))
    assert dump_yaml(doc) == expected
    # only the long one the width folds
    assert calls == [doc["quoted_f"]]


def test_a_long_text_is_folded_once_for_its_column_and_indent(monkeypatch):
    words = " ".join(f"fold{i}" for i in range(60))
    doc = {"fold_a": words, "fold_b": {"c": words}, "fold_d": [words, "x " + words]}
    expected = _dump(doc, _Dumper)
    assert dump_yaml(doc) == expected
    splits = []
    runs = yaml_text._SPACE_RUNS

    class Counting:
        def split(self, text):
            splits.append(text)
            return runs.split(text)
    monkeypatch.setattr(yaml_text, "_SPACE_RUNS", Counting())
    assert dump_yaml(doc) == expected
    assert splits == []
    assert dump_yaml({"fold_z": {"deeper": {"e": words}}}) == \
        _dump({"fold_z": {"deeper": {"e": words}}}, _Dumper)
    assert splits == [words]      # (another indent: folded anew)
