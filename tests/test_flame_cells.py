"""Flame graphs in the build (issue 25, phase B): the stacks folded in the summary's own pass
(read/jfr/stacks.summarize_and_fold), per cell inside each repetition's measured window and summed
over repetitions (derive/flame_profiles.py; write/charts/flame_cells.py draws them), their
files and view blocks, and the pairs the differential graphs compare.

fold_jfr itself is checked against `jfr print --json` in test_folded.py; here the one-pass
reader is checked against it and against summarize_jfr, and a built cell's .folded file against
fold_jfr of each repetition with the window its counts.json gives (read here, not by the build).
"""
from __future__ import annotations

import shutil
import sys
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from analysis.read.counts import read_counts
from analysis.derive.jvm_summary import summarize_and_fold, summarize_jfr
from analysis.derive import flame_profiles
from analysis.read.jfr.stacks import STACK_EVENTS, fold_jfr
from analysis.write.charts import flame_cells
from analysis.write.folded import folded_text

REPO = Path(__file__).resolve().parent.parent
SPLIT = REPO / "tests" / "fixtures" / "jfr" / "split"
ATTRIBUTION = [(r"CpuSplit\.three.*", "three"), (r"java\.util\.concurrent\..*", "juc")]


@pytest.mark.parametrize("recording", ["jdk17-split.jfr", "jdk25-split.jfr",
                                       "async-profiler-4.1-jdk17-split.jfr"])
def test_one_pass_gives_the_summary_and_every_events_stacks(recording):
    path = SPLIT / recording
    start = fold_jfr(path, window_s=(0.5, 1e9))["window"]["start_epoch_s"]
    window = (round(start * 1e9), round(start * 1e9) + 2_000_000_000)
    summary, folds = summarize_and_fold(path, ATTRIBUTION, window=window)
    assert summary == summarize_jfr(path, ATTRIBUTION, window=window)
    assert set(folds) == set(STACK_EVENTS)
    for event in STACK_EVENTS:
        assert folds[event] == fold_jfr(path, event, window=window), event
    assert folds["jdk.ExecutionSample"]["total"] > 0


# Recordings with parks (966; 99) and, in the second, sleeps (99), which the summary does not read.
WITH_PARKS = [REPO / "runs" / "pool-vs-virtual" / "virtual" / "r25.2.jfr", SPLIT / "jdk25-split.jfr"]


def _calls(monkeypatch, owner, name):
    """A counter of the calls of owner.name (the method still runs)."""
    inner, calls = getattr(owner, name), []

    def counted(*a, **k):
        calls.append(1)
        return inner(*a, **k)
    monkeypatch.setattr(owner, name, counted)
    return calls


@pytest.mark.parametrize("recording", WITH_PARKS, ids=lambda p: p.name)
def test_folding_resolves_each_chunks_names_once(monkeypatch, recording):
    """The off-CPU stacks are named with the lookups the execution samples' were: one set a
    chunk, as the summary alone makes (issue 25: folding's cost in the build)."""
    from analysis.read.jfr.reader import ChunkReader
    calls = _calls(monkeypatch, ChunkReader, "_stack_names")
    summarize_jfr(recording)
    alone = len(calls)
    calls.clear()
    _summary, folds = summarize_and_fold(recording)
    assert folds["jdk.ThreadPark"]["events"] > 90    # off-CPU stacks were folded
    assert alone > 0 and len(calls) == alone


@pytest.mark.parametrize("recording", WITH_PARKS, ids=lambda p: p.name)
def test_folding_routes_each_summary_event_once(monkeypatch, recording):
    """An off-CPU event the summary reads too (monitor waits) is placed in the window once for
    both; parks, the most frequent, take no routing call at all when folding (the handler
    routes them on their ticks); only the events the summary does not read (sleeps, socket
    reads) add a routing each."""
    from analysis.read.jfr.handlers import EventHandlers
    from analysis.read.jfr.summary import Summary
    start = fold_jfr(recording, window_s=(0.0, 1e9))["window"]["start_epoch_s"]
    window = (round(start * 1e9) + 2_000_000_000, round(start * 1e9) + 8_000_000_000)
    only_folded = sum(f["events"] + f["unresolved"] for f in (
        fold_jfr(recording, e) for e in ("jdk.ThreadSleep", "jdk.SocketRead")))
    assert fold_jfr(recording, "jdk.ThreadPark")["events"] > 90
    # (patched where they are written: a batch handler applies beside its `_on_` handler)
    parks = _calls(monkeypatch, EventHandlers, "_on_ThreadPark")
    calls = _calls(monkeypatch, Summary, "route")
    routed = _calls(monkeypatch, EventHandlers, "_route")
    summarize_jfr(recording, window=window)
    alone, n_parks = len(calls) + len(routed), len(parks)
    # a routing a park read one at a time; none where the walk lists a chunk's (_batch_*)
    from analysis.read.jfr import native
    assert n_parks > 90 if native.get() is None else n_parks == 0
    calls.clear()
    routed.clear()
    summarize_and_fold(recording, window=window)
    assert len(calls) + len(routed) == alone - n_parks + only_folded


@pytest.mark.parametrize("recording", WITH_PARKS, ids=lambda p: p.name)
def test_folding_counts_parks_by_stack_not_one_call_each(monkeypatch, recording):
    """The folding pass tallies parks by stack trace key and gives the summary each chunk's
    sums (issue 25: ~10k parks a run, each of which took six Python calls); the figures are
    the summary's own (test_one_pass_gives_the_summary_and_every_events_stacks)."""
    from analysis.read.jfr.handlers import EventHandlers
    from analysis.read.jfr.summary import Summary
    start = fold_jfr(recording, window_s=(0.0, 1e9))["window"]["start_epoch_s"]
    window = (round(start * 1e9) + 2_000_000_000, round(start * 1e9) + 8_000_000_000)
    alone = summarize_jfr(recording, window=window)
    parks = fold_jfr(recording, "jdk.ThreadPark", window=window)["events"]
    # (the sleeps of the second recording take _route and _span_ns: not counted)
    per_park = [_calls(monkeypatch, owner, name) for owner, name in (
        (Summary, "park"), (Summary, "route"), (EventHandlers, "_epoch_ns"))]
    summary, folds = summarize_and_fold(recording, window=window)
    assert summary["threads"] == alone["threads"] and summary["threads"]["park_events"] > 0
    assert parks > 50 and folds["jdk.ThreadPark"]["events"] == parks
    assert sum(map(len, per_park)) < parks // 10


@pytest.mark.parametrize("recording", WITH_PARKS, ids=lambda p: p.name)
def test_a_chunks_methods_are_named_once_and_frames_without_a_call(monkeypatch, recording):
    """Stacks share most of their frames: each method of a chunk is named once (method_label)
    and a frame already named costs no Python call (issue 25: ~14k frames a run were one
    call each), nor a method's name symbol one for text(). (Python's naming: with the compiled
    walk the names are made in C, tests/test_jfr_names.py.)"""
    from analysis.read.jfr import names as reader_module
    monkeypatch.setattr(reader_module, "native_names", lambda *a: None)
    labels = _calls(monkeypatch, reader_module, "method_label")
    calls = Counter()

    def count(frame, event, _arg):
        if event == "call" and frame.f_code.co_filename == reader_module.__file__:
            calls[frame.f_code.co_name] += 1
    sys.setprofile(count)
    try:
        _summary, folds = summarize_and_fold(recording)
    finally:
        sys.setprofile(None)
    frames = sum(len(stack) for f in folds.values() for stack in f["stacks"])
    assert frames > len(labels) > 0
    assert calls["method_name"] == len(labels)
    # a method's name symbol is a str as the pool gives it: text() only for its class's
    assert calls["text"] < len(labels)


def test_a_frame_key_equal_to_an_int_but_not_one_is_not_given_its_name():
    """A damaged metadata can make a frame's method key a bool or a float: such a key names
    no method, even beside the int it equals in a dict (the names' cache is keyed by ints)."""
    from analysis.read.jfr.reader import ChunkReader
    reader = ChunkReader(None)
    names = ("jdk.types.StackTrace", "jdk.types.Method", "java.lang.Class", "jdk.types.Symbol")
    reader.pool_plans = {tid: (name,) for tid, name in enumerate(names)}
    reader.lazy_plans = {}
    pools = {0: {7: (0, (1, True, 1.0, 2)), 8: (1, (2, 1))},
             1: {1: (5, 6), 2: (5, 9)}, 2: {5: 4}, 3: {4: "a/B", 6: "m", 9: "n"}}
    stack = reader._stack_names(pools, {tid: {} for tid in pools}, b"", None)[0]
    assert stack(7) == (("a.B.m", "<unknown method>", "<unknown method>", "a.B.n"), False)
    assert stack(8) == (("a.B.n", "a.B.m"), True)
    assert stack(True) is None and stack(9) is None


def test_application_patterns_are_the_ones_naming_application_code():
    run = SimpleNamespace(jfr_attribution=yaml.safe_load(
        (REPO / "runs" / "many-servers" / "run.yml").read_text())["jfr_attribution"])
    assert flame_cells.application_patterns(run) == [r"loadcurve\.server\..*"]
    run = SimpleNamespace(jfr_attribution=[{"pattern": r"java\.util\..*|com\.acme\.(a|b)\..*"}])
    assert flame_cells.application_patterns(run) == [r"com\.acme\.(a|b)\..*"]
    assert flame_cells.application_patterns(SimpleNamespace(jfr_attribution=[])) == \
        list(flame_cells.DEFAULT_APPLICATION)


def _run(scenarios):
    return SimpleNamespace(scenarios=[SimpleNamespace(
        id=sid, systems=[SimpleNamespace(id=s) for s in systems]) for sid, systems in scenarios])


def test_default_pairs_two_systems_else_two_scenarios_of_one_system():
    assert flame_profiles.default_pairs(_run([(None, ["a", "b", "c"])])) == \
        [((None, "a"), (None, "b"))]
    # runs/fanout-curve: one system, the scenarios are the two sides
    assert flame_profiles.default_pairs(_run([("futures", ["v"]), ("pekko", ["v"])])) == \
        [(("futures", "v"), ("pekko", "v"))]
    assert flame_profiles.default_pairs(_run([("only", ["v"])])) == []


def _curve(saturated: dict, order=None):
    """A run of one scenario with systems a and b; saturated: {load: (a's, b's)}; a load's
    offered rate is its number (rN), run.yml's order `order` (default: as given)."""
    cells = {(load, s): SimpleNamespace(saturation=SimpleNamespace(saturated=flag))
             for load, flags in saturated.items() for s, flag in zip("ab", flags)}
    points = [SimpleNamespace(id=load, offered_rate=float(load[1:]), connections=None)
              for load in (order or list(saturated))]
    return SimpleNamespace(scenarios=[SimpleNamespace(
        id=None, load_points=points, cell=lambda load, system: cells.get((load, system)))])


@pytest.mark.parametrize("saturated, loads, expected", [
    # the highest rate at which neither side is saturated, not the last in run.yml's order
    ({"r100": (False, False), "r400": (False, True), "r200": (False, False)}, None, "r200"),
    # both calm everywhere: the highest
    ({"r50": (False, False), "r25": (False, False)}, None, "r50"),
    # some side saturated at every load: the lowest
    ({"r300": (True, False), "r100": (False, True), "r200": (True, True)}, None, "r100"),
    # only the loads both sides have samples at count
    ({"r100": (False, False), "r200": (False, False)}, ["r100"], "r100"),
    ({"r100": (False, False)}, [], None),
])
def test_a_pairs_differential_graph_is_drawn_at_one_load_by_the_stated_rule(
        saturated, loads, expected):
    run = _curve(saturated)
    a, b = (None, "a"), (None, "b")
    assert flame_profiles.diff_load(run, a, b, list(saturated) if loads is None else loads) == \
        expected


def test_a_pairs_graph_is_at_a_load_both_cells_have_cpu_at_with_its_changes_derived():
    """flame_pairs: what write/charts/flame_cells.flame_diffs draws, all chosen in derive/."""
    cpu = {"r100": ({("m", "a"): 3}, {("m", "a"): 1, ("m", "b"): 3}),
           "r200": ({("m", "a"): 1}, None)}            # b has no CPU samples at r200
    cells = {}
    for load, sides in cpu.items():
        for system, stacks in zip("ab", sides):
            flame = {} if stacks is None else {"cpu": flame_profiles.Profile(Counter(stacks))}
            cells[(load, system)] = SimpleNamespace(
                scenario=None, system=system, load=load, flame=flame,
                saturation=SimpleNamespace(saturated=False))
    scenario = SimpleNamespace(
        id=None, systems=[SimpleNamespace(id="a"), SimpleNamespace(id="b")],
        load_points=[SimpleNamespace(id=load, offered_rate=float(load[1:]), connections=None)
                     for load in cpu],
        cell=lambda load, system: cells.get((load, system)))
    run = SimpleNamespace(scenarios=[scenario], cells=lambda: list(cells.values()))
    (pair,) = flame_profiles.flame_pairs(run)
    assert (pair.base, pair.other, pair.load) == ((None, "a"), (None, "b"), "r100")
    # a.b's self share went from 0 to 3/4, a.a's from 1 to 1/4
    assert [(c.name, c.self_a, c.self_b) for c in pair.changes] == [("a", 1.0, 0.25),
                                                                     ("b", 0.0, 0.75)]


def _cell(stacks_per_rep):
    reps = [SimpleNamespace(jvm=None if s is None else SimpleNamespace(stacks=s))
            for s in stacks_per_rep]
    return SimpleNamespace(repetitions=reps)


def _fold(event, stacks, jdk="JDK 21", period=20.0, threshold=None, events=None):
    return {event: {"stacks": stacks, "events": events or sum(stacks.values()),
                    "period_ms": period, "threshold_ms": threshold, "jdk": jdk}}


def test_a_cells_repetitions_sum_and_the_lowest_setting_is_stated():
    cpu = "jdk.ExecutionSample"
    cell = _cell([_fold(cpu, {("m", "a"): 3}, period=20.0),
                  None,                                        # a repetition without JFR
                  {**_fold(cpu, {("m", "a"): 1, ("m", "b"): 2}, period=10.0),
                   **_fold("jdk.ThreadPark", {("p",): 5_000_000}, threshold=10.0, events=20)}])
    profiles = flame_profiles.cell_profiles(cell)
    assert list(profiles) == ["cpu", "thread-park"]
    assert profiles["cpu"].stacks == Counter({("m", "a"): 4, ("m", "b"): 2})
    assert profiles["cpu"].period_ms == 10.0 and profiles["cpu"].repetitions == 2
    assert profiles["thread-park"].threshold_ms == 10.0 and profiles["thread-park"].events == 20
    # the page's figures come with the profile: its total and top frames
    assert profiles["cpu"].total == 6 and profiles["thread-park"].total == 5_000_000
    assert [(f.name, f.self_share) for f in profiles["cpu"].top] == [("a", 4 / 6), ("b", 2 / 6)]


def test_an_off_cpu_event_with_few_events_gets_no_graph():
    cpu, park, monitor = "jdk.ExecutionSample", "jdk.ThreadPark", "jdk.JavaMonitorEnter"
    # 12 + 7 = 19 parks over two repetitions, 20 monitor waits; one CPU sample is drawn
    cell = _cell([{**_fold(cpu, {("m",): 1}), **_fold(park, {("p",): 9}, events=12)},
                  {**_fold(park, {("p",): 3}, events=7), **_fold(monitor, {("w",): 5}, events=20)}])
    assert list(flame_profiles.cell_profiles(cell)) == ["cpu", "monitor-enter"]
    assert flame_profiles.MIN_OFF_CPU_EVENTS == 20


@pytest.mark.slow
def test_a_built_cells_folded_file_is_its_repetitions_windows_summed(tmp_path):
    from analysis.pipeline.stages import analyse_task
    runs = tmp_path / "runs"
    shutil.copytree(REPO / "runs" / "pool-vs-virtual", runs / "pool-vs-virtual")
    sites = []
    for name in ("a", "b"):
        site = tmp_path / name
        site.mkdir()
        result = analyse_task(str(runs / "pool-vs-virtual"), str(runs), str(site))
        assert result["ok"], result
        sites.append(site)
    site = sites[0]
    cell_dir = runs / "pool-vs-virtual" / "virtual"
    expected: Counter = Counter()
    for rep in (1, 2, 3):
        window = read_counts(cell_dir / f"r400.{rep}.counts.json").window_epoch_ns()
        expected.update(fold_jfr(cell_dir / f"r400.{rep}.jfr", window=window)["stacks"])
    folded = site / "assets/data/pool-vs-virtual/virtual-r400.cpu.folded"
    assert folded.read_text() == folded_text({"unit": "samples", "stacks": expected})
    doc = yaml.safe_load((site / "_data/runs/pool-vs-virtual.yml").read_text())
    entry = doc["flame_graphs"]["graphs"]["virtual"]["r400"]["cpu"]
    assert entry["folded"] == "assets/data/pool-vs-virtual/virtual-r400.cpu.folded"
    assert f"{sum(expected.values()):,} execution samples" in entry["caption"]
    # the run's first pair, pool20 (A) against virtual (B), at one load: the highest offered
    # rate at which the document's cells say neither is saturated
    rate = {lp["id"]: lp["offered_rate"] for lp in doc["load_points"]}
    calm = [load for load, row in doc["cells"].items()
            if not row["pool20"]["saturated"] and not row["virtual"]["saturated"]]
    assert len(calm) < len(rate)
    load = max(calm, key=rate.get)
    assert doc["flame_graphs"]["diffs"] == [{"base": "pool20", "other": "virtual", "load": load}]
    assert doc["flame_graphs"]["diff_loads"]["pool20"]["virtual"]["load"] == load
    # same inputs, same bytes: every flame output of the two builds
    outputs = [rel for rel in result["outputs"] if "flame" in rel or rel.endswith(".folded")]
    assert len(outputs) > 20
    for rel in outputs:
        assert (sites[0] / rel).read_bytes() == (sites[1] / rel).read_bytes(), rel


def _render(text: str, docs: dict) -> str:
    """`text` rendered with `fanout` and `pekko` (fanout-startup's document and its Pekko scenario's
    block) and `pv` (pool-vs-virtual's document) assigned, as a post assigns the blocks it passes."""
    from analysis.write.liquid_pages import baseurl, environment
    template = environment(str(REPO)).from_string(
        '{%- assign fanout = site.data.runs["fanout-startup"] -%}'
        '{%- assign pekko = fanout.scenarios["fanout-pekko"] -%}'
        '{%- assign pv = site.data.runs["pool-vs-virtual"] -%}' + text)
    return template.render(site={"data": {"runs": docs}}, baseurl_=baseurl(REPO))


@pytest.mark.slow
def test_the_post_includes_show_a_cells_graph_and_a_pairs_difference():
    from analysis.paths import find_data
    docs = {run: yaml.safe_load(find_data(REPO, run).read_text())
            for run in ("fanout-startup", "pool-vs-virtual")}
    one = _render('{% include flamegraph.html block=pekko '
                  'system="jdk-virtual" load="r1500" kind="cpu" %}', docs)
    assert 'src="/assets/charts/fanout-startup/fanout-pekko-flame-jdk-virtual-r1500-cpu.svg"' in one
    assert 'loading="lazy"' in one and "fanout-pekko-jdk-virtual-r1500.cpu.folded" in one
    diff = _render('{% include flamegraph-diff.html block=fanout base="fanout-futures" '
                   'other="fanout-pekko" load="r750" %}', docs)
    assert "flame-diff-fanout-futures-vs-fanout-pekko-jdk-virtual-r750-cpu.svg" in diff
    assert "Fan-out, Pekko Streams (B" in diff and "Fan-out, futures (A" in diff
    pair = _render('{% include flamegraph-diff.html block=pv base="pool20" '
                   'other="virtual" load="r50" %}', docs)
    assert "flame-diff-pool20-vs-virtual-r50-cpu.svg" in pair
    # a load the pair has no graph at (run pages draw one load a pair): a note naming the
    # load there is, not an image and not a gap
    for asked, where in (('block=fanout base="fanout-futures" other="fanout-pekko" '
                          'load="r1500"', "load=r750"),
                         ('block=pv base="pool20" other="virtual" load="r200"',
                          "load=r50")):
        note = _render("{% include flamegraph-diff.html " + asked + " %}", docs)
        assert 'class="flame-note"' in note and where in note, note
        assert "<img" not in note and "no data" not in note
    for missing in ('{% include flamegraph.html block=pekko '
                    'system="jdk-virtual" load="r1500" kind="socket-read" %}',
                    '{% include flamegraph-diff.html block=fanout base="fanout-pekko" '
                    'other="fanout-futures" load="r750" %}'):
        assert "[no data: flame graph]" in _render(missing, docs)
