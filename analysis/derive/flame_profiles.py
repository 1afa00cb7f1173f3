"""The flame graphs' numbers (issue 25): per cell with JFR, the stacks of its repetitions'
measured windows summed per event (read.jfr.stacks folds them in the summary's own pass), and
the pairs of cells the differential graphs compare, each at one load (diff_load).

aggregate.build_run sets them on the model once (Cell.flame, Run.flame_pairs), so that
write/charts/flame_cells.py only draws them and write/flame_views.py only prints them.

A profile is made for the CPU (jdk.ExecutionSample) of every cell with samples, and for each
off-CPU event (jdk.ThreadPark ...) that has at least MIN_OFF_CPU_EVENTS events in the windows.
Repetitions combine by summing: samples add up, off-CPU durations add up (the graph shows
where the cell's time went over all its recorded windows, each repetition weighing by what it
recorded).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from analysis.derive.flame_top import FrameChange, FrameShare, top_changes, top_frames
from analysis.model import Cell, Run
from analysis.read.jfr.stacks import CPU_EVENT, STACK_EVENTS
from analysis.vocabulary import load_order

# The short name of each event's profile (the include's `kind=`), in the order pages show them.
KINDS = {CPU_EVENT: "cpu", "jdk.ThreadPark": "thread-park",
         "jdk.JavaMonitorEnter": "monitor-enter", "jdk.ThreadSleep": "thread-sleep",
         "jdk.SocketRead": "socket-read"}
# An off-CPU event with fewer events than this in a cell's windows gets no graph nor folded
# file: a handful of parks or monitor waits draw one or two stacks at full width, which say
# nothing the CPU graph and the JVM table do not (many-servers had graphs of 1 to 3 events).
MIN_OFF_CPU_EVENTS = 20


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
    total: int = 0                        # the stacks' sum: samples, or off-CPU ns
    top: list[FrameShare] = field(default_factory=list)   # flame_top.top_frames


@dataclass(frozen=True)
class FlamePair:
    """A differential graph to draw: B (`other`) against A (`base`, the baseline), each a
    (scenario, system), at one load; `changes`: the frames whose self share changed most."""
    base: tuple
    other: tuple
    load: str
    changes: list[FrameChange]


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
        p.total = sum(p.stacks.values())
        p.top = top_frames(p.stacks)
        out[kind] = p
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


def flame_pairs(run: Run, pairs: list[tuple] | None = None) -> list[FlamePair]:
    """The CPU differential graph of each pair (default_pairs when None), at the one load
    diff_load picks among those both cells have CPU samples at (Cell.flame); a pair with no
    such load has none."""
    cells = {(c.scenario, c.system, c.load): c for c in run.cells()}

    def cpu(side: tuple, load: str) -> Profile | None:
        c = cells.get((side[0], side[1], load))
        return c.flame.get("cpu") if c is not None else None
    out = []
    for a, b in default_pairs(run) if pairs is None else pairs:
        loads = [lp.id for sc in run.scenarios if sc.id == b[0] for lp in sc.load_points
                 if cpu(a, lp.id) is not None and cpu(b, lp.id) is not None]
        load = diff_load(run, a, b, loads)
        if load is not None:
            out.append(FlamePair(a, b, load, top_changes(cpu(a, load).stacks,
                                                         cpu(b, load).stacks)))
    return out
