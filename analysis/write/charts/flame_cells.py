"""The flame graphs of a run (issue 25): per cell with JFR, the stacks of its repetitions'
measured windows summed per event (read.jfr.stacks, folded in the summary's own pass), written
as a `.folded` file beside the cell's CSV and drawn as flame graph SVGs, wide and narrow; and
differential graphs of pairs of cells at the same load (one load a pair: diff_load).

    graphs = flame_graphs(run)          # -> [FlameGraph], each with its SVGs' bytes
    diffs = flame_diffs(run, pairs)     # -> [FlameGraph] of the pairs (default_pairs)

A graph is drawn for the CPU (jdk.ExecutionSample) of every cell with samples, and for each
off-CPU event (jdk.ThreadPark ...) that has at least MIN_OFF_CPU_EVENTS events in the windows. Repetitions combine by
summing: samples add up, off-CPU durations add up (the graph shows where the cell's time went
over all its recorded windows, each repetition weighing by what it recorded).
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from analysis.model import Cell, Run
from analysis.paths import chart_path, series_csv_path
from analysis.read.jfr.stacks import CPU_EVENT, STACK_EVENTS
from analysis.vocabulary import load_order
from analysis.write.charts.flamegraph import (DEFAULT_APPLICATION, JDK_PACKAGES,
                                              SERVER_PACKAGES, diff_flamegraph_svgs,
                                              flamegraph_svgs)
from analysis.write.folded import folded_text

# The short name of each event's graph (the include's `kind=`), in the order pages show them.
KINDS = {CPU_EVENT: "cpu", "jdk.ThreadPark": "thread-park",
         "jdk.JavaMonitorEnter": "monitor-enter", "jdk.ThreadSleep": "thread-sleep",
         "jdk.SocketRead": "socket-read"}
# What each graph's width is a share of, in words.
KIND_TEXT = {"cpu": "CPU (execution samples)", "thread-park": "time parked (jdk.ThreadPark)",
             "monitor-enter": "time blocked on monitors (jdk.JavaMonitorEnter)",
             "thread-sleep": "time asleep (jdk.ThreadSleep)",
             "socket-read": "time in socket reads (jdk.SocketRead)"}
# An off-CPU event with fewer events than this in a cell's windows gets no graph nor folded
# file: a handful of parks or monitor waits draw one or two stacks at full width, which say
# nothing the CPU graph and the JVM table do not (many-servers had graphs of 1 to 3 events).
MIN_OFF_CPU_EVENTS = 20
# Packages a jfr_attribution pattern may name that are not the application's code.
NOT_APPLICATION = JDK_PACKAGES + SERVER_PACKAGES + ("scala.", "kotlin.", "com.fasterxml.")
# A pattern's literal start: names and escaped dots ("loadcurve\.server\." of
# "loadcurve\.server\..*").
_LITERAL = re.compile(r"(?:\\\.|[\w$])+")
_SIZE = re.compile(rb'<svg [^>]*width="(\d+)" height="(\d+)"')


@dataclass
class Profile:
    """One event's stacks of one cell, its repetitions summed."""
    stacks: Counter = field(default_factory=Counter)
    unit: str = "samples"
    events: int = 0
    repetitions: int = 0
    period_ms: float | None = None        # the sampling period (the lowest, if they differ)
    threshold_ms: float | None = None     # the off-CPU threshold (the lowest, if they differ)
    jdks: tuple = ()


@dataclass
class FlameGraph:
    """One graph to write: its files (site-relative) and bytes, and what the page says of it."""
    scenario: str | None
    system: str
    load: str
    kind: str
    profile: Profile
    svg: str
    narrow_svg: str
    folded: str | None
    svg_bytes: bytes
    narrow_bytes: bytes
    folded_text: str | None = None
    base: tuple | None = None             # a differential graph: A's (scenario, system),
    other: tuple | None = None            # B's, and A's profile
    base_profile: Profile | None = None

    def size(self, narrow: bool = False) -> tuple[int, int]:
        return svg_size(self.narrow_bytes if narrow else self.svg_bytes)


def svg_size(data: bytes) -> tuple[int, int]:
    """(width, height) in px of a flame graph's SVG, as its <svg> element gives them."""
    m = _SIZE.search(data)
    return int(m.group(1)), int(m.group(2))


def _lowest(values) -> float | None:
    present = [v for v in values if v is not None]
    return min(present) if present else None


def cell_profiles(cell: Cell) -> dict[str, Profile]:
    """{kind: Profile} of one cell: the CPU when it has samples in some repetition's window,
    each off-CPU event when it has at least MIN_OFF_CPU_EVENTS there."""
    recorded = [r.jvm.stacks for r in cell.repetitions if r.jvm is not None and r.jvm.stacks]
    out = {}
    for event, kind in KINDS.items():
        folds = [s[event] for s in recorded if event in s]
        p = Profile(unit=STACK_EVENTS[event][0], repetitions=len(recorded))
        for f in folds:
            p.stacks.update(f["stacks"])
            p.events += f["events"]
        if not sum(p.stacks.values()) or (event != CPU_EVENT and p.events < MIN_OFF_CPU_EVENTS):
            continue
        p.stacks = Counter(dict(sorted(p.stacks.items())))
        p.period_ms = _lowest(f["period_ms"] for f in folds)
        p.threshold_ms = _lowest(f["threshold_ms"] for f in folds)
        p.jdks = tuple(sorted({f["jdk"] for f in folds if f.get("jdk")}))
        out[kind] = p
    return out


def application_patterns(run: Run) -> list[str]:
    """The run's jfr_attribution patterns that name application code: each `|` alternative
    whose literal package prefix is neither the JDK's nor a server framework's (those patterns
    say where time went, e.g. java.util.concurrent, but are not the application); the bundled
    servers' own code (loadcurve.*) when none does."""
    apps = []
    for entry in run.jfr_attribution:
        for alternative in _alternatives(entry["pattern"]):
            m = _LITERAL.match(alternative)
            prefix = m.group(0).replace("\\.", ".") if m else ""
            if prefix and not prefix.startswith(NOT_APPLICATION):
                apps.append(alternative)
    return apps or list(DEFAULT_APPLICATION)


def _alternatives(pattern: str) -> list[str]:
    """The top-level `|` alternatives of a regex (a `|` inside brackets or a group stays)."""
    out, depth, start, i = [], 0, 0, 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "|" and depth == 0:
            out.append(pattern[start:i])
            start = i + 1
        i += 1
    out.append(pattern[start:])
    return out


def _prefix(scenario: str | None) -> str:
    return "" if scenario is None else f"{scenario}-"


def graph_paths(run_id: str, scenario: str | None, system: str, load: str,
                kind: str) -> tuple[str, str, str]:
    """(folded, svg, narrow svg) of one cell's graph: the folded stacks beside the cell's CSV,
    the SVGs with the run's charts."""
    csv = series_csv_path(run_id, system, load, scenario)
    name = f"{_prefix(scenario)}flame-{system}-{load}-{kind}"
    return (csv[:-len(".csv")] + f".{kind}.folded", chart_path(run_id, name, "svg"),
            chart_path(run_id, name + "-narrow", "svg"))


def _title(run: Run, scenario, system, load, kind) -> str:
    where = " / ".join(x for x in (run.id, scenario, system, load) if x)
    return f"{where}: {KIND_TEXT[kind]}"


def flame_graphs(run: Run) -> list[FlameGraph]:
    """Every cell's graphs, scenario by scenario, load by load, systems in run.yml order."""
    apps = application_patterns(run)
    out = []
    for scenario in run.scenarios:
        for c in scenario.measured():
            for kind, p in cell_profiles(c).items():
                folded, svg, narrow = graph_paths(run.id, c.scenario, c.system, c.load, kind)
                title = _title(run, c.scenario, c.system, c.load, kind)
                # the SVG is shown with <img>: its script would not run, so it is left out
                # (the graph opened on its own has no zoom either: one file for both)
                out.append(FlameGraph(
                    c.scenario, c.system, c.load, kind, p, svg, narrow, folded,
                    *flamegraph_svgs(p.stacks, p.unit, title, application=apps, script=False),
                    folded_text({"unit": p.unit, "stacks": p.stacks})))
    return out


def default_pairs(run: Run) -> list[tuple]:
    """The pairs a run's pages compare: per scenario its first two systems; a run with one
    system and several scenarios (runs/fanout-curve) its first two scenarios. A pair is
    ((scenario, system) of A, (scenario, system) of B)."""
    pairs = []
    for scenario in run.scenarios:
        if len(scenario.systems) >= 2:
            a, b = scenario.systems[0].id, scenario.systems[1].id
            pairs.append(((scenario.id, a), (scenario.id, b)))
    if not pairs and len(run.scenarios) >= 2 and run.scenarios[0].systems:
        system = run.scenarios[0].systems[0].id
        pairs.append(((run.scenarios[0].id, system), (run.scenarios[1].id, system)))
    return pairs


def diff_name(a: tuple, b: tuple) -> str:
    """The id of a pair's graphs: the systems when one scenario holds both, else the
    scenarios (with the system when they differ)."""
    if a[0] == b[0]:
        return f"{_prefix(a[0])}{a[1]}-vs-{b[1]}"
    if a[1] == b[1]:
        return f"{a[0]}-vs-{b[0]}-{a[1]}"
    return f"{_prefix(a[0])}{a[1]}-vs-{_prefix(b[0])}{b[1]}"


# How a run page's pair picks the one load its differential graph is drawn at (the section's
# caption and docs/data-format.md say it too): one graph a pair, not one a load, as a graph a
# load cost as much as all the cells' own graphs and repeated what those show.
DIFF_LOAD_RULE = ("the highest load at which neither side is saturated, else (some side "
                  "saturates at every load) the lowest")


def diff_load(run: Run, a: tuple, b: tuple, loads: list[str]) -> str | None:
    """The load of `loads` (ids at which both sides have CPU samples) a pair's differential
    graph is drawn at, by DIFF_LOAD_RULE; None when there is none."""
    points = {lp.id: lp for sc in run.scenarios if sc.id == b[0] for lp in sc.load_points}
    ordered = sorted((points[load] for load in loads), key=load_order)
    if not ordered:
        return None
    cells = {sc.id: sc for sc in run.scenarios}
    calm = [lp for lp in ordered
            if not any(c is None or c.saturation.saturated
                       for c in (cells[side[0]].cell(lp.id, side[1]) for side in (a, b)))]
    return (calm[-1] if calm else ordered[0]).id


def flame_diffs(run: Run, graphs: list[FlameGraph],
                pairs: list[tuple] | None = None) -> list[FlameGraph]:
    """The CPU differential graph of each pair (A is the pair's first cell, the baseline) at
    the one load diff_load picks among those both cells have samples at."""
    cpu = {(g.scenario, g.system, g.load): g for g in graphs if g.kind == "cpu"}
    out = []
    for a, b in default_pairs(run) if pairs is None else pairs:
        loads = [lp.id for sc in run.scenarios if sc.id == b[0] for lp in sc.load_points
                 if (a[0], a[1], lp.id) in cpu and (b[0], b[1], lp.id) in cpu]
        load = diff_load(run, a, b, loads)
        if load is None:
            continue
        ga, gb = cpu[(a[0], a[1], load)], cpu[(b[0], b[1], load)]
        name = f"flame-diff-{diff_name(a, b)}-{load}-cpu"
        title = (f"{run.id} at {load}: {'/'.join(x for x in b if x)} (B) against "
                 f"{'/'.join(x for x in a if x)} (A), CPU")
        stacks_a, stacks_b = ga.profile.stacks, gb.profile.stacks
        out.append(FlameGraph(
            None, "", load, "cpu", gb.profile, chart_path(run.id, name, "svg"),
            chart_path(run.id, name + "-narrow", "svg"), None,
            *diff_flamegraph_svgs(stacks_a, stacks_b, "samples", title, script=False),
            base=a, other=b, base_profile=ga.profile))
    return out
