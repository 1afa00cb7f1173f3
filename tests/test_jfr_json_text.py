"""The jfr command's --json: its text (analysis/commands/indented_json.py) is json.dumps(value,
sort_keys=True, indent=1) character for character, for any value json takes; its start-up
imports nothing only a compile or the text summary needs."""
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


def test_jfr_json_does_not_import_what_only_compiling_or_the_text_needs():
    import subprocess
    import sys

    from tests.conftest import REPO
    from tests.helpers import ENV, JFR_FIXTURES

    probe = ("import contextlib, io, runpy, sys\n"
             f"sys.argv = ['analysis', 'jfr', {str(JFR_FIXTURES / 'jdk17-profile.jfr')!r}, "
             "'--json']\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n"
             "    try:\n"
             "        runpy.run_module('analysis', run_name='__main__')\n"
             "    except SystemExit:\n"
             "        pass\n"
             "print(sorted(set(sys.modules) & {'dataclasses', 'inspect', 'typing', "
             "'subprocess', 'tempfile', 'platform'}))\n")
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, env=ENV, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "[]"
