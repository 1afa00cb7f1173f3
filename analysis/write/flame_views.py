"""The flame graphs' view blocks (issue 25): what the pages print of the graphs flame_cells.py
drew, all text computed here (flamegraph.html, flamegraph-diff.html, flame-graphs.html print).

    flame_graphs       per scenario block (a run without scenarios: the document itself)
      intro            the section's one paragraph: what a graph is, how repetitions combine
      loads            [{load, offered, open, cells: [{system, label, kinds: [kind]}]}]
      graphs           {system: {load: {kind: graph entry}}}
      diffs            [{base, other, load}]: the scenario's pair (its first two systems),
                       at the one load flame_cells.diff_load picks
      diff_entries     {base: {other: {load: graph entry}}}
      diff_loads       {base: {other: {load, offered}}}: the load each pair is drawn at
      diffs_rule       the sentence saying how that load is chosen
    flame_diffs        the document's pairs of scenarios on one system (runs/fanout-curve):
      order, entries, diff_loads, diffs_rule   as diffs, diff_entries, diff_loads, diffs_rule

Keys are nested, not joined, so that the includes look a graph up by their parameters
(flamegraph.html: system, load, kind; flamegraph-diff.html: base, other, load; diff_loads
tells it which load a pair has when a post asks for another).

A graph entry: svg, narrow_svg, width, height, narrow_width, narrow_height, alt, caption,
heading, and folded (the data it came from; none for a differential graph).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis.derive.flame_profiles import DIFF_LOAD_RULE, MIN_OFF_CPU_EVENTS
from analysis.corpus.flame_diffs import StackPair
from analysis.derive.flame_top import TOP_FRAMES, FrameChange, FrameShare
from analysis.model import Run, Scenario
from analysis.vocabulary import fmt_number, load_point_text
from analysis.write.charts.flame_cells import KIND_TEXT, FlameGraph, svg_size
from analysis.write.charts.flamegraph import diff_flamegraph_svgs

HEADINGS = {"cpu": "CPU", "thread-park": "Parked", "monitor-enter": "Blocked on monitors",
            "thread-sleep": "Asleep", "socket-read": "Socket reads"}
INTRO = ("Flame graphs from the server's JFR recording, inside each repetition's measured "
         "window only; a cell's repetitions are summed (samples and off-CPU durations add up). "
         "Each frame is as wide as its share of the total, callers below callees; the colour "
         "says whose code it is. Point at a frame for its name and share (open the graph on its "
         "own for that on a phone); each graph links the folded stacks it was drawn from. An "
         f"off-CPU event is drawn where a cell has at least {MIN_OFF_CPU_EVENTS} of them.")


def diff_key(g: FlameGraph) -> dict[str, str]:
    """{base, other, load}: base and other are the systems of a pair in one scenario, the
    scenarios of a pair on one system (flamegraph-diff.html's base= and other=)."""
    (sa, a), (sb, b) = g.base, g.other
    if sa == sb:
        return {"base": a, "other": b, "load": g.load}
    return {"base": sa, "other": sb, "load": g.load}


def _nested(pairs) -> dict:
    """[(keys, value)] -> {k1: {k2: ... value}}."""
    out: dict = {}
    for keys, value in pairs:
        node = out
        for k in keys[:-1]:
            node = node.setdefault(k, {})
        node[keys[-1]] = value
    return out


def _diff_block(run: Run, diffs: list[FlameGraph]) -> tuple[list, dict, dict]:
    """(keys, entries, the load of each pair) of differential graphs."""
    keys = [diff_key(g) for g in diffs]
    entries = [diff_entry(run, g) for g in diffs]
    return (keys, _nested(((k["base"], k["other"], k["load"]), e) for k, e in zip(keys, entries)),
            _nested(((k["base"], k["other"]), {"load": k["load"], "offered": e["offered"]})
                    for k, e in zip(keys, entries)))


DIFFS_RULE = (f"One differential graph a pair, at one load: {DIFF_LOAD_RULE}. Every load's "
              f"own graphs are above.")
# a run's report, whose pairs span scenarios: each load's own graphs are on the scenario pages
ACROSS_DIFFS_RULE = (f"One differential graph a pair, at one load: {DIFF_LOAD_RULE}. Every "
                     f"load's own graphs are on its scenario's page.")


def _weight_text(g: FlameGraph) -> str:
    p = g.profile
    reps = f"{p.repetitions} repetition" + ("" if p.repetitions == 1 else "s")
    if p.unit == "samples":
        period = "" if p.period_ms is None else f", one every {fmt_number(p.period_ms)} ms"
        return f"{p.total:,} execution samples in the measured windows of {reps}{period}"
    ms = p.total / 1e6
    threshold = "the recording's threshold is not stated" if p.threshold_ms is None else (
        f"the recording keeps only events of at least {fmt_number(p.threshold_ms)} ms")
    return (f"{ms:,.1f} ms in {p.events:,} events in the measured windows of {reps} "
            f"({threshold})")


def top_id(svg: str) -> str:
    """The top-frames table's caption id: its graph's file name, unique on a page."""
    return "top-" + Path(svg).stem


def _share(x: float) -> str:
    return f"{x * 100:.1f} %"


def top_table(frames: list[FrameShare], what: str) -> dict[str, Any]:
    """The graph's top frames (Profile.top) as a table a touch screen reads (issue 34): by
    self share."""
    return {"caption": f"The {TOP_FRAMES} frames with the largest self share of {what}: self, "
                       f"where the stack ends in the frame; total, where it passes through it.",
            "headers": ["self share", "total share"],
            "rows": [{"frame": f.name, "values": [_share(f.self_share), _share(f.total_share)]}
                     for f in frames]}


def change_table(changes: list[FrameChange], a: str, b: str) -> dict[str, Any]:
    """A differential graph's top frames (flame_top.top_changes): those whose self share
    changed most, B against A."""
    return {"caption": f"The {TOP_FRAMES} frames whose self share changed most, {b} (B) "
                       f"against {a} (A); the change in percentage points.",
            "headers": ["self share A", "self share B", "change"],
            "rows": [{"frame": c.name, "values": [_share(c.self_a), _share(c.self_b),
                                                   f"{c.change * 100:+.1f}"]}
                     for c in changes]}


def _entry(g: FlameGraph, alt: str, caption: str, heading: str) -> dict[str, Any]:
    out = figure_entry(g.svg, g.narrow_svg, g.svg_bytes, g.narrow_bytes, alt, caption, heading)
    if g.base_profile is not None:
        a, b = (_side(g.base), _side(g.other))
        out["top"] = change_table(g.changes, a, b)
    else:
        out["top"] = top_table(g.profile.top, KIND_TEXT[g.kind])
    out["top"]["caption_id"] = top_id(g.svg)
    if g.folded:
        out["folded"] = g.folded
    return out


def figure_entry(svg: str, narrow_svg: str, svg_bytes: bytes, narrow_bytes: bytes, alt: str,
                 caption: str, heading: str) -> dict[str, Any]:
    """What flame-figure.html prints of one graph."""
    w, h = svg_size(svg_bytes)
    nw, nh = svg_size(narrow_bytes)
    return {"heading": heading, "svg": svg, "narrow_svg": narrow_svg, "width": w, "height": h,
            "narrow_width": nw, "narrow_height": nh, "alt": alt, "caption": caption}


def _side(side: tuple) -> str:
    return "/".join(x for x in side if x)


def graph_entry(run: Run, scenario: Scenario, g: FlameGraph) -> dict[str, Any]:
    system = next((s.label for s in scenario.systems if s.id == g.system), g.system)
    lp = next(lp for lp in scenario.load_points if lp.id == g.load)
    where = f"{system} at {load_point_text(lp)}"
    what = KIND_TEXT[g.kind]
    caption = f"{where}: {what}, {_weight_text(g)}."
    alt = (f"Flame graph of {what} of {where}" +
           (f" ({scenario.label})" if scenario.label else "") +
           "; the frame names and shares are in the linked folded stacks.")
    return _entry(g, alt, caption, HEADINGS[g.kind])


def _side_label(run: Run, side: tuple, other: tuple) -> str:
    """A pair's side named by what differs: its system, or its scenario (one system)."""
    sc = next(s for s in run.scenarios if s.id == side[0])
    system = next((s.label for s in sc.systems if s.id == side[1]), side[1])
    if side[0] == other[0]:
        return system
    return sc.label if side[1] == other[1] else f"{sc.label} ({system})"


def diff_entry(run: Run, g: FlameGraph) -> dict[str, Any]:
    a, b = _side_label(run, g.base, g.other), _side_label(run, g.other, g.base)
    sc = next(s for s in run.scenarios if s.id == g.other[0])
    lp = next(lp for lp in sc.load_points if lp.id == g.load)
    total_a, total_b = g.base_profile.total, g.profile.total
    caption = (f"Differential flame graph of CPU at {load_point_text(lp)}: {b} (B, "
               f"{total_b:,} samples) against {a} (A, {total_a:,} samples). Each stack is as "
               f"wide as the mean of its shares of A and of B, so what only one side does is "
               f"drawn; red: a larger share of B's CPU than of A's, blue: smaller.")
    alt = (f"Differential flame graph of CPU, {b} against {a} at {load_point_text(lp)}; "
           f"each side's stacks are in its own flame graph's folded file.")
    return {**_entry(g, alt, caption, f"{b} against {a}"), "offered": load_point_text(lp)}


def flame_block(run: Run, scenario: Scenario, graphs: list[FlameGraph],
                diffs: list[FlameGraph]) -> dict[str, Any] | None:
    """The `flame_graphs` block of one scenario (None when no cell has a graph)."""
    mine = [g for g in graphs if g.scenario == scenario.id]
    if not mine:
        return None
    by_cell: dict[tuple, list[str]] = {}
    for g in mine:
        by_cell.setdefault((g.load, g.system), []).append(g.kind)
    entries = _nested(((g.system, g.load, g.kind), graph_entry(run, scenario, g)) for g in mine)
    loads = []
    for lp in scenario.load_points:
        cells = [{"system": s.id, "label": s.label, "kinds": by_cell[(lp.id, s.id)]}
                 for s in scenario.systems if (lp.id, s.id) in by_cell]
        if cells:
            loads.append({"load": lp.id, "offered": load_point_text(lp), "cells": cells})
    if loads:
        loads[0]["open"] = True         # the first load shown opened, the others folded
    keys, diff_entries, diff_loads = _diff_block(
        run, [g for g in diffs if g.base[0] == g.other[0] == scenario.id])
    return {"intro": INTRO, "loads": loads, "graphs": entries, "diffs": keys,
            "diff_entries": diff_entries, "diff_loads": diff_loads, "diffs_rule": DIFFS_RULE}


def run_diffs(run: Run, diffs: list[FlameGraph]) -> dict[str, Any] | None:
    """The document's pairs across scenarios (one system, several scenarios)."""
    across = [g for g in diffs if g.base[0] != g.other[0]]
    if not across:
        return None
    keys, entries, diff_loads = _diff_block(run, across)
    return {"order": keys, "entries": entries, "diff_loads": diff_loads,
            "diffs_rule": ACROSS_DIFFS_RULE}


# --- the comparison page's differential graphs ----------------------------------------------

@dataclass
class ComparisonFlame:
    entry: dict[str, Any]                 # flame-figure.html's entry
    files: list[tuple[str, bytes]]        # (site-relative path, SVG bytes)


def comparison_flames(spec, pairs: list[StackPair], folder: str,
                      loads: dict[str, str]) -> list[ComparisonFlame]:
    """The differential CPU graph of each compared cell whose two sides both have a flame
    graph (corpus/flame_diffs.stack_pairs), B against A as the page's table."""
    out = []
    for pair in pairs:
        c, a, b = pair.cell, pair.stacks_a, pair.stacks_b
        name = "-".join(x for x in (c.scenario, c.system_b if c.system_a == c.system_b
                                    else None, c.load) if x)
        svg, narrow = f"{folder}/flame-diff-{name}.svg", f"{folder}/flame-diff-{name}-narrow.svg"
        where = " / ".join(x for x in (c.scenario, c.system_a, c.load) if x)
        title = f"{spec.candidate} (B) against {spec.baseline} (A), {where}: CPU"
        wide, phone = diff_flamegraph_svgs(a, b, "samples", title, script=False)
        at = loads.get(c.load, c.load)
        caption = (f"Differential flame graph of CPU at {at}: B = {spec.candidate} "
                   f"({pair.samples_b:,} samples) against A = {spec.baseline} "
                   f"({pair.samples_a:,} samples). Each stack is as wide as the mean of its "
                   f"shares of A and of B; red: a larger share of B's CPU than of A's, blue: "
                   f"smaller.")
        alt = (f"Differential flame graph of CPU at {at}, {spec.candidate} against "
               f"{spec.baseline}; each side's stacks are in its run's folded files.")
        entry = figure_entry(svg, narrow, wide, phone, alt, caption,
                             " / ".join(x for x in (c.scenario, c.system_a if c.system_a ==
                                                    c.system_b else None) if x) or at)
        entry["top"] = {**change_table(pair.top, spec.baseline, spec.candidate),
                        "caption_id": top_id(svg)}
        # the page is redrawn when the stacks change, not only when this text does
        entry["stacks_sha256"] = pair.digest
        entry["offered"] = at
        out.append(ComparisonFlame(entry, [(svg, wide), (narrow, phone)]))
    return out
