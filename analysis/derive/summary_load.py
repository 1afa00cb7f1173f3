"""Which load point stands for each scenario of a run with scenarios, in its summary table
and its summary charts (issue 11; issue 34: one load for every scenario where they share
loads). A choice from the run model only, made once by aggregate.build_run (Run.summary_load),
so the table (write/summary.py) and the charts (write/charts/chartset.py) read the same one and
cannot disagree."""
from __future__ import annotations

from analysis.model import LoadPoint, Run, Scenario
from analysis.vocabulary import load_order


def summary_point(scenario: Scenario) -> tuple[LoadPoint | None, str]:
    """The load point that stands for a scenario in the summary table, and why: run.yml's
    `headline`; else its only load point; else the highest offered rate at which every target
    was measured and none saturated; else (every rate saturated some target) the lowest."""
    by_rate = sorted(scenario.load_points, key=load_order)
    if not by_rate:
        return None, "no load point"
    if scenario.headline is not None:
        return next(lp for lp in by_rate if lp.id == scenario.headline), "the run's headline rate"
    if len(by_rate) == 1:
        return by_rate[0], "its only rate"
    calm = [lp for lp, row in scenario.grid()
            if all(c is not None and not c.saturation.saturated and not c.not_steady
                   for _, c in row)]
    if calm:
        top = max(calm, key=load_order)
        if any(c is not None and c.not_steady for _, row in scenario.grid() for _, c in row):
            return top, ("the highest rate at which no target saturated (cells that were not "
                         "steady left out)")
        return top, "the highest rate at which no target saturated"
    return by_rate[0], "every rate saturated some target: the lowest"


def _same_load(lp: LoadPoint) -> tuple:
    """What makes two scenarios' load points the same load: the offered rate, or a closed
    loop's connections."""
    return (lp.offered_rate, lp.connections)


def summary_points(run: Run) -> tuple[dict[str, tuple[LoadPoint | None, str]], bool]:
    """Per scenario the load point of its summary columns (and why), and whether every
    scenario's is the same load. Issue 34: where no run.yml `headline` says otherwise and
    the scenarios share loads, every column is at one load - the highest shared load at which
    no target of any scenario saturated or was not steady, else the lowest shared one - so that
    two columns never compare two loads (futures at 6,000 req/s beside Pekko at 3,000). Where
    the scenarios share no load, each has its own (summary_point) and the caption says so."""
    scenarios = run.scenarios
    if len(scenarios) > 1 and all(sc.headline is None for sc in scenarios):
        keys = [{_same_load(lp): lp for lp in sc.load_points} for sc in scenarios]
        shared = sorted(set.intersection(*(set(k) for k in keys)),
                        key=lambda key: load_order(keys[0][key]))
        if shared:
            def calm(key: tuple) -> bool:
                return all(c is not None and not c.saturation.saturated and not c.not_steady
                           for sc, k in zip(scenarios, keys)
                           for c in (sc.cell(k[key].id, s.id) for s in sc.systems))
            fine = [key for key in shared if calm(key)]
            key, why = ((fine[-1], "the highest load all scenarios share at which no target "
                                   "saturated or was unsteady") if fine else
                        (shared[0], "every load the scenarios share saturated some target: "
                                    "the lowest"))
            return {sc.id: (k[key], why) for sc, k in zip(scenarios, keys)}, True
    points = {sc.id: summary_point(sc) for sc in scenarios}
    loads = {_same_load(lp) for lp, _ in points.values() if lp is not None}
    return points, len(loads) <= 1
