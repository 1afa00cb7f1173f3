"""The flame graphs of a run (issue 25): each cell's profiles (Cell.flame: its repetitions'
windows summed per event, derive/flame_profiles.py) written as a `.folded` file beside the
cell's CSV and drawn as flame graph SVGs, wide and narrow; and the differential graphs of the
run's pairs (Run.flame_pairs: one load a pair).

    graphs = flame_graphs(run)          # -> [FlameGraph], each with its SVGs' bytes
    diffs = flame_diffs(run, graphs)    # -> [FlameGraph] of Run.flame_pairs
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from analysis.derive.flame_profiles import Profile
from analysis.model import Run
from analysis.paths import chart_path, flame_folded_path
from analysis.write.charts.flamegraph import (DEFAULT_APPLICATION, JDK_PACKAGES,
                                              SERVER_PACKAGES, diff_flamegraph_svgs,
                                              flamegraph_svgs)
from analysis.write.folded import folded_text

# What each graph's width is a share of, in words.
KIND_TEXT = {"cpu": "CPU (execution samples)", "thread-park": "time parked (jdk.ThreadPark)",
             "monitor-enter": "time blocked on monitors (jdk.JavaMonitorEnter)",
             "thread-sleep": "time asleep (jdk.ThreadSleep)",
             "socket-read": "time in socket reads (jdk.SocketRead)"}
# Packages a jfr_attribution pattern may name that are not the application's code.
NOT_APPLICATION = JDK_PACKAGES + SERVER_PACKAGES + ("scala.", "kotlin.", "com.fasterxml.")
# A pattern's literal start: names and escaped dots ("loadcurve\.server\." of
# "loadcurve\.server\..*").
_LITERAL = re.compile(r"(?:\\\.|[\w$])+")
_SIZE = re.compile(rb'<svg [^>]*width="(\d+)" height="(\d+)"')


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
    changes: list | None = None           # a differential graph's FlamePair.changes

    def size(self, narrow: bool = False) -> tuple[int, int]:
        return svg_size(self.narrow_bytes if narrow else self.svg_bytes)


def svg_size(data: bytes) -> tuple[int, int]:
    """(width, height) in px of a flame graph's SVG, as its <svg> element gives them."""
    m = _SIZE.search(data)
    return int(m.group(1)), int(m.group(2))


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
    name = f"{_prefix(scenario)}flame-{system}-{load}-{kind}"
    return (flame_folded_path(run_id, system, load, scenario, kind),
            chart_path(run_id, name, "svg"),
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
            for kind, p in c.flame.items():
                folded, svg, narrow = graph_paths(run.id, c.scenario, c.system, c.load, kind)
                title = _title(run, c.scenario, c.system, c.load, kind)
                # the SVG is shown with <img>: its script would not run, so it is left out
                # (the graph opened on its own has no zoom either: one file for both)
                out.append(FlameGraph(
                    c.scenario, c.system, c.load, kind, p, svg, narrow, folded,
                    *flamegraph_svgs(p.stacks, p.unit, title, application=apps, script=False),
                    folded_text({"unit": p.unit, "stacks": p.stacks})))
    return out


def diff_name(a: tuple, b: tuple) -> str:
    """The id of a pair's graphs: the systems when one scenario holds both, else the
    scenarios (with the system when they differ)."""
    if a[0] == b[0]:
        return f"{_prefix(a[0])}{a[1]}-vs-{b[1]}"
    if a[1] == b[1]:
        return f"{a[0]}-vs-{b[0]}-{a[1]}"
    return f"{_prefix(a[0])}{a[1]}-vs-{_prefix(b[0])}{b[1]}"


def flame_diffs(run: Run, graphs: list[FlameGraph]) -> list[FlameGraph]:
    """The CPU differential graph of each of Run.flame_pairs (A is the pair's first cell, the
    baseline), drawn from the two cells' CPU graphs at the pair's load."""
    cpu = {(g.scenario, g.system, g.load): g for g in graphs if g.kind == "cpu"}
    out = []
    for pair in run.flame_pairs:
        a, b, load = pair.base, pair.other, pair.load
        ga, gb = cpu[(a[0], a[1], load)], cpu[(b[0], b[1], load)]
        name = f"flame-diff-{diff_name(a, b)}-{load}-cpu"
        title = (f"{run.id} at {load}: {'/'.join(x for x in b if x)} (B) against "
                 f"{'/'.join(x for x in a if x)} (A), CPU")
        stacks_a, stacks_b = ga.profile.stacks, gb.profile.stacks
        out.append(FlameGraph(
            None, "", load, "cpu", gb.profile, chart_path(run.id, name, "svg"),
            chart_path(run.id, name + "-narrow", "svg"), None,
            *diff_flamegraph_svgs(stacks_a, stacks_b, "samples", title, script=False),
            base=a, other=b, base_profile=ga.profile, changes=pair.changes))
    return out
