"""The jfr command's JSON text (analysis/commands/indented_json.py): json.dumps(value,
sort_keys=True, indent=1) character for character, for any value json takes."""
from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.commands.indented_json import dumps_sorted_indented

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=30)


@given(JSON_VALUES)
@settings(max_examples=300, deadline=None)
def test_the_json_text_is_jsons(value):
    assert dumps_sorted_indented(value) == json.dumps(value, sort_keys=True, indent=1)


@pytest.mark.parametrize("value", [
    {"a": [1.5, -0.0, math.nan, math.inf, -math.inf, 1e16, 10**30, True, None, "é\n"]},
    {"x": {}, "y": [], "z": [[]], "w": [{"b": 1, "a": (2, 3)}]},
    {2: "int keys", 1: "json's own conversion"},
    [True, False, 1, 0],
    {"pauses": [[1.5, 2.5], [1, 2.0], (1.0, 2.0), [math.nan, 1.0], [True, 1.0], [[0.1, 0.2]]]},
])
def test_the_json_text_of_odd_values_is_jsons(value):
    assert dumps_sorted_indented(value) == json.dumps(value, sort_keys=True, indent=1)
