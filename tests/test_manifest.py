"""run.yml loading: the contract's fields, every problem at once with its line, paths kept
inside the run folder, and no input that raises anything but ManifestError."""
from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis.errors import ManifestError
from analysis.read.manifest import check_relpath, default_jfr, load_manifest
from tests.conftest import REPO

FIXTURE = REPO / "tests" / "fixtures" / "runs" / "oracle-demo"

MINIMAL = """\
title: "A run"
date: 2026-11-22
description: "Two sentences."
value_unit: us
systems:
  - {id: pool, label: "Pool"}
load_points:
  - {id: r25, offered_rate: 25, duration_s: 30}
"""


def write_run(tmp_path: Path, text: str, run_id: str = "demo") -> Path:
    run_dir = tmp_path / "runs" / run_id
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "run.yml").write_text(textwrap.dedent(text), encoding="utf-8")
    return run_dir


def problems_of(run_dir: Path) -> list[str]:
    with pytest.raises(ManifestError) as info:
        load_manifest(run_dir, run_dir.parent)
    return info.value.problems


def test_fixture_manifest_loads_with_defaults_and_repetitions():
    m = load_manifest(FIXTURE, FIXTURE.parent)
    assert m.run_id == "oracle-demo"
    assert m.date == "2026-11-21"          # a string, never a datetime
    assert m.value_unit == "us"
    assert [s.id for s in m.systems] == ["pool", "virtual"]
    assert [(c.load, c.system, c.repetition) for c in m.cells] == [
        ("r100", "pool", 1), ("r100", "virtual", 1), ("r100", "virtual", 2),
        ("r500", "pool", 1), ("r500", "virtual", 1)]
    by = {(c.load, c.system, c.repetition): c for c in m.cells}
    assert by[("r100", "pool", 1)].tag == "read"
    assert by[("r500", "virtual", 1)].hlog == "virtual/r500.hlog"   # default path
    assert by[("r100", "virtual", 2)].hlog == "virtual/r100-rep2.hlog"
    assert by[("r500", "pool", 1)].sent == 22500 and by[("r500", "pool", 1)].timeouts == 12
    assert m.load_generator["connections"] == 50
    assert m.environment["smt"] is False


def test_minimal_manifest(tmp_path):
    m = load_manifest(write_run(tmp_path, MINIMAL))
    assert m.tags == [] and m.service_time_ms is None and m.environment == {}
    assert [(c.system, c.load, c.hlog) for c in m.cells] == [("pool", "r25", "pool/r25.hlog")]


def test_every_problem_is_listed_at_once_with_its_line(tmp_path):
    run_dir = write_run(tmp_path, """\
        title: 5
        date: 2026-13-01
        value_unit: sec
        colour: red
        systems:
          - id: Pool
            label: x
            concurrency_limit: 2.5
        load_points:
          - {id: r1, offered_rate: -1}
        """)
    problems = problems_of(run_dir)
    expected = [
        "description: required",
        "line 1: title: must be a non-empty string",
        "line 2: date: must be a date YYYY-MM-DD, not '2026-13-01'",
        "line 3: value_unit: must be ns, us or ms, not 'sec'",
        "line 4: colour: unknown key",
        "line 6: systems[0].id: 'Pool' must use only",
        "line 8: systems[0].concurrency_limit: must be an integer, not 2.5",
        "line 10: load_points[0].offered_rate: must be a number > 0, not -1",
        "line 10: load_points[0].duration_s: required",
    ]
    assert len(problems) == len(expected), problems
    for got, want in zip(problems, expected):
        assert got.startswith(want), (got, want)


def test_error_message_names_the_file(tmp_path):
    run_dir = write_run(tmp_path, MINIMAL.replace('title: "A run"\n', ""))
    with pytest.raises(ManifestError) as info:
        load_manifest(run_dir)
    assert str(info.value) == f"{run_dir / 'run.yml'}: title: required"


@pytest.mark.parametrize("where,snippet", [
    ("top", "extra: 1\n"),
    ("system", "systems:\n  - {id: pool, label: P, concurency_limit: 2}\n"),
    ("load point", "load_points:\n  - {id: r25, offered_rate: 25, duration_s: 30, rate: 3}\n"),
    ("environment", "environment: {cpus: 2}\n"),
    ("load generator", "load_generator: {modle: open}\n"),
    ("cell", "cells:\n  - {system: pool, load: r25, sents: 3}\n"),
])
def test_unknown_keys_are_errors(tmp_path, where, snippet):
    text = MINIMAL
    if snippet.startswith("systems:"):
        text = text.replace('systems:\n  - {id: pool, label: "Pool"}\n', snippet)
    elif snippet.startswith("load_points:"):
        text = text.replace("load_points:\n  - {id: r25, offered_rate: 25, duration_s: 30}\n", snippet)
    else:
        text = text + snippet
    problems = problems_of(write_run(tmp_path, text))
    assert len(problems) == 1 and "unknown key" in problems[0], (where, problems)


@pytest.mark.parametrize("path,why", [
    ("../other/x.hlog", "leaves the run folder"),
    ("pool/../../x.hlog", "leaves the run folder"),
    ("/etc/passwd", "is absolute"),
    ("..\\..\\x.hlog", "leaves the run folder"),
])
def test_paths_must_stay_inside_the_run(tmp_path, path, why):
    text = MINIMAL + f"cells:\n  - system: pool\n    load: r25\n    hlog: {yaml.safe_dump(path).splitlines()[0]}\n"
    problems = problems_of(write_run(tmp_path, text))
    assert any(why in p and "line 12" in p for p in problems), problems


def test_symlink_escaping_the_run_is_refused(tmp_path):
    run_dir = write_run(tmp_path, MINIMAL + "cells:\n  - {system: pool, load: r25, hlog: pool/r25.hlog}\n")
    outside = tmp_path / "secret"
    outside.mkdir()
    os.symlink(outside, run_dir / "pool")
    problems = problems_of(run_dir)
    assert any("resolves outside the run folder" in p for p in problems), problems
    # and a default cell path through the same link
    (run_dir / "run.yml").write_text(MINIMAL)
    assert any("resolves outside" in p for p in problems_of(run_dir))


def test_symlinked_run_folder_outside_runs_is_refused(tmp_path):
    real = write_run(tmp_path / "elsewhere", MINIMAL, "real")
    runs = tmp_path / "runs"
    runs.mkdir()
    os.symlink(real, runs / "linked")
    with pytest.raises(ManifestError, match="resolves outside"):
        load_manifest(runs / "linked", runs)


def test_run_id_must_be_a_safe_folder_name(tmp_path):
    run_dir = write_run(tmp_path, MINIMAL, "Bad Name")
    with pytest.raises(ManifestError, match="run id 'Bad Name'"):
        load_manifest(run_dir)


def test_cells_must_name_known_ids_and_distinct_repetitions(tmp_path):
    text = MINIMAL + textwrap.dedent("""\
        cells:
          - {system: pool, load: r25, repetition: 1}
          - {system: pool, load: r25, repetition: 1}
          - {system: nope, load: r25}
          - {system: pool, load: r99}
        """)
    problems = problems_of(write_run(tmp_path, text))
    assert any("repetition 1 of pool/r25 given twice" in p for p in problems)
    assert any("'nope' is not a system id" in p for p in problems)
    assert any("'r99' is not a load point id" in p for p in problems)


def test_invalid_yaml_names_the_line(tmp_path):
    problems = problems_of(write_run(tmp_path, "title: x\nsystems: [a, b\n"))
    assert problems[0].startswith("line 3: not valid YAML") or "not valid YAML" in problems[0]


@pytest.mark.parametrize("text", ["", "- a list\n", "just text\n", "42\n"])
def test_not_a_mapping(tmp_path, text):
    assert "must be a YAML mapping" in problems_of(write_run(tmp_path, text))[0]


def test_missing_manifest(tmp_path):
    run_dir = tmp_path / "runs" / "empty"
    run_dir.mkdir(parents=True)
    with pytest.raises(ManifestError, match="run.yml is missing"):
        load_manifest(run_dir)


def test_unsafe_yaml_tags_are_refused(tmp_path):
    run_dir = write_run(tmp_path, MINIMAL.replace('"A run"', "!!python/object/apply:os.system ['true']"))
    assert "not valid YAML" in problems_of(run_dir)[0]


def test_injection_strings_stay_data(tmp_path):
    title = "<script>alert(1)</script> {{ site }} {% include x %}"
    m = load_manifest(write_run(tmp_path, MINIMAL.replace("\"A run\"", json.dumps(title))))
    assert m.title == title


def test_unknown_schema_version(tmp_path):
    problems = problems_of(write_run(tmp_path, "schema_version: 3\n" + MINIMAL))
    assert "unknown version 3" in problems[0]


SCHEMA_2 = """\
load_generator: {model: open, timeout_s: 15, warmup_s: 5, drain: true}
method:
  repetitions: 2
  order: repetition-major, shuffled by seed
  order_seed: 7
  drain: after the window, the same rate until every window request has an outcome
  host_check: {threshold: 0.2, action: warn, busy_wait_s: 120}
"""


def test_schema_2_method_counts_and_drain(tmp_path):
    text = "schema_version: 2\n" + MINIMAL + SCHEMA_2
    run_dir = write_run(tmp_path, text)
    m = load_manifest(run_dir)
    assert m.schema_version == 2 and m.load_generator["drain"] is True
    assert m.method.repetitions == 2 and m.method.order_seed == 7
    assert m.method.host_check == {"threshold": 0.2, "action": "warn", "busy_wait_s": 120}


def test_schema_2_unknown_method_key_is_an_error(tmp_path):
    text = "schema_version: 2\n" + MINIMAL + SCHEMA_2.replace("order_seed: 7", "order_sed: 7")
    problems = problems_of(write_run(tmp_path, text))
    assert any("method.order_sed" in p and "unknown key" in p for p in problems), problems


def test_check_relpath(tmp_path):
    assert check_relpath(tmp_path, "a/b.hlog") is None
    assert check_relpath(tmp_path, "") is not None
    assert check_relpath(tmp_path, "C:/x") is not None


def test_default_jfr_only_when_present(tmp_path):
    run_dir = write_run(tmp_path, MINIMAL)
    m = load_manifest(run_dir)
    assert default_jfr(m, m.cells[0]) is None
    (run_dir / "pool").mkdir()
    (run_dir / "pool" / "r25.jfr").write_bytes(b"FLR\0")
    assert default_jfr(m, m.cells[0]) == "pool/r25.jfr"


# Any YAML document: the loader returns a Manifest or raises ManifestError, nothing else.
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True),
                    st.text(max_size=12))
documents = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.dictionaries(st.sampled_from(["title", "date", "description", "value_unit", "systems",
                                     "load_points", "cells", "id", "label", "offered_rate",
                                     "duration_s", "hlog", "system", "load", "environment",
                                     "tags", "x"]), inner, max_size=6)), max_leaves=25)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=documents)
def test_fuzzed_documents_only_raise_manifest_error(tmp_path, doc):
    run_dir = write_run(tmp_path, yaml.safe_dump(doc))
    try:
        load_manifest(run_dir)
    except ManifestError as exc:
        assert exc.problems and all(isinstance(p, str) for p in exc.problems)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=200))
def test_fuzzed_text_only_raises_manifest_error(tmp_path, text):
    run_dir = write_run(tmp_path, "")
    (run_dir / "run.yml").write_text(text, encoding="utf-8")
    try:
        load_manifest(run_dir)
    except ManifestError:
        pass


def test_relative_paths_through_links_are_judged_where_they_lead(tmp_path):
    """check_relpath looks for links only along the relative path (issue 25's build cost): a
    link that stays inside the run is fine, one on the way out is refused, at any depth."""
    from analysis.read.checks import check_relpath
    run_dir, outside = tmp_path / "runs" / "r", tmp_path / "outside"
    (run_dir / "a" / "b").mkdir(parents=True)
    outside.mkdir()
    os.symlink(run_dir / "a", run_dir / "inside")        # a link that stays in the run
    os.symlink(outside, run_dir / "a" / "out")            # a link two levels down, leading out
    os.symlink("../../..", run_dir / "a" / "b" / "up")    # relative, leading out
    assert check_relpath(run_dir, "a/b/x.hlog") is None
    assert check_relpath(run_dir, "not/there/yet.hlog") is None
    assert check_relpath(run_dir, "inside/b/x.hlog") is None
    assert "resolves outside" in check_relpath(run_dir, "a/out/x.hlog")
    assert "resolves outside" in check_relpath(run_dir, "a/b/up/x.hlog")
    if os.sep == "/":   # a backslash is part of a name here: a link named `c\\d`
        os.symlink(outside, run_dir / "c\\d")
        assert "resolves outside" in check_relpath(run_dir, "c\\d/x.hlog")
    linked_run = tmp_path / "runs" / "linked"             # the run folder itself a link: its
    os.symlink(run_dir, linked_run)                       # files are inside it
    assert check_relpath(linked_run, "a/b/x.hlog") is None
    assert "resolves outside" in check_relpath(linked_run, "a/out/x.hlog")


@pytest.mark.parametrize("warmup,message", [
    ({"mode": "auto", "min_s": 1, "max_s": 9, "cells": [{"cell": "nofolder", "used_s": 2,
                                                        "reached": True}]},
     "method.warmup.cells[0].cell: 'nofolder' must be [scenario/]system/load.repetition"),
    ({"mode": "auto", "min_s": 1, "max_s": 9, "cells": [{"cell": "a/r1.1", "used_s": 2,
                                                        "reached": "yes"}]},
     "method.warmup.cells[0].reached: must be true or false, not 'yes'"),
    ({"mode": "steady", "min_s": 1, "max_s": 9, "cells": [{"cell": "a/r1.1", "used_s": 2,
                                                          "reached": True}]},
     "method.warmup.mode: must be auto or fixed, not 'steady'"),
    ({"mode": "fixed", "min_s": 1, "max_s": 1, "cells": [{"cell": "a/r1.1", "reached": True}]},
     "method.warmup.cells[0].used_s: required"),
])
def test_method_warmup_is_checked_with_its_line(tmp_path, warmup, message):
    """issue 32: run.yml's method.warmup (bench/manifest.py) is read only when well formed; a
    bad entry is a ManifestError naming the file, the line and the key."""
    from tests.helpers import URL_RUN
    import shutil
    run_dir = tmp_path / "url-knee"
    shutil.copytree(URL_RUN, run_dir)
    run = yaml.safe_load((run_dir / "run.yml").read_text())
    run["method"]["warmup"] = warmup
    (run_dir / "run.yml").write_text(yaml.safe_dump(run, sort_keys=False))
    with pytest.raises(ManifestError) as info:
        load_manifest(run_dir, tmp_path)
    assert str(info.value).startswith(str(run_dir / "run.yml") + ": line ") and message in str(info.value)


def test_method_warmup_reads(tmp_path):
    from tests.helpers import URL_RUN
    import shutil
    assert load_manifest(URL_RUN, URL_RUN.parent).method.warmup is None   # before issue 32
    run_dir = tmp_path / "url-knee"
    shutil.copytree(URL_RUN, run_dir)
    run = yaml.safe_load((run_dir / "run.yml").read_text())
    warmup = {"mode": "auto", "min_s": 5, "max_s": 60, "rule": "auto: ...",
              "cells": [{"cell": "sleep4/r20.1", "used_s": 7, "reached": True},
                        {"cell": "sleep4/r40.1", "mode": "fixed", "min_s": 5, "max_s": 5,
                         "used_s": 5, "reached": False}]}
    run["method"]["warmup"] = warmup
    (run_dir / "run.yml").write_text(yaml.safe_dump(run, sort_keys=False))
    assert load_manifest(run_dir, tmp_path).method.warmup == warmup
