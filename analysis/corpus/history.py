"""A series' history: per (scenario, system, load), one statistic over the versions of the
series (`series:` and `version:` in run.yml), with the change points in it. Pure functions over
the cell table (corpus.py).

Change points: the optimal partitioning of the versions' values into segments of constant
level, found with PELT (Killick, Fearnhead & Eckley 2012, "Optimal detection of changepoints
with a linear computational cost", JASA 107:1590) - the exact minimiser of

    sum over segments of  sum_i (y_i - segment mean)^2 / s^2   +   PENALTY x (segments - 1)

where y_i is the mean of log(statistic) over version i's repetitions (so a change is a ratio,
whatever the scale), s the noise of one such mean, and PENALTY = PENALTY_PER_LOG_N x log(n)
(a BIC-like penalty, stricter than BIC's log n so that a flat 30-version series of 8 cells shows
no change: the chance of a false split at one of 29 places is at most 29 x P(chi2_1 > 20.4),
about 2e-4 a cell, while a 15 % step in the middle of 30 versions of 3 repetitions at 5 % noise
scores about 160).
s is the larger of (a) the pooled spread of repetitions within a version / sqrt(repetitions)
and (b) the median absolute difference of successive versions x 1.4826 / sqrt 2 (a robust
estimate that a few steps do not move), so that version-to-version noise larger than the
repetitions show is not taken for changes. Segments are at least MIN_SEGMENT versions long
(one odd version is an outlier, not a change), and a change smaller than MIN_CHANGE_PCT is not
reported. A censored repetition counts at its lower bound (the timeout), so a cell that starts
timing out shows as a regression; it is marked.
"""
from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analysis.derive.changepoints import pelt

PENALTY_PER_LOG_N = 6.0
MIN_SEGMENT = 2
MIN_CHANGE_PCT = 5.0
METHOD_TEXT = ("change points: PELT (Killick et al. 2012) on the mean log {metric} of each "
               "version, penalty {per_log_n:g} x ln(versions), segments of at least "
               "{min_segment} versions, changes under {min_pct:g} % not reported; repetitions "
               "that were not steady (a transient, issue 32) left out")


@dataclass
class Point:
    version: str
    run: str
    date: str
    values: list[float]                 # the repetitions (at-least values where censored)
    censored: bool
    host_busy: bool

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    @property
    def low(self) -> float:
        return min(self.values)

    @property
    def high(self) -> float:
        return max(self.values)


@dataclass
class Change:
    index: int                          # the first version of the new level
    version: str
    run: str
    date: str
    before: float                       # the levels (geometric means) on either side
    after: float
    size_pct: float
    kind: str                           # "regression" | "improvement"


@dataclass
class CellHistory:
    scenario: str | None
    system: str
    load: str
    points: list[Point]
    changes: list[Change] = field(default_factory=list)
    noise: float | None = None          # s, on the log scale


def version_key(version: str) -> tuple:
    """Natural order: "1.9" < "1.10"; text parts compare as text."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part)
                 for part in re.findall(r"\d+|[^\d.\-_+]+", version or ""))


def ordered_runs(rows: pd.DataFrame) -> list[str]:
    """The runs of a series by date, then version (natural order), then id."""
    runs = rows[["run", "date", "version"]].drop_duplicates("run")
    keyed = sorted(runs.itertuples(index=False),
                   key=lambda r: (str(r.date), version_key(str(r.version)), str(r.run)))
    return [r.run for r in keyed]


def noise_of(points: list[Point]) -> float:
    """s: the noise of one version's mean log value (see the module docstring)."""
    within, dof, reps = 0.0, 0, []
    for p in points:
        logs = [math.log(v) for v in p.values]
        if len(logs) > 1:
            mean = statistics.fmean(logs)
            within += sum((v - mean) ** 2 for v in logs)
            dof += len(logs) - 1
        reps.append(len(logs))
    s_within = math.sqrt(within / dof) / math.sqrt(statistics.median(reps)) if dof else 0.0
    means = [statistics.fmean(math.log(v) for v in p.values) for p in points]
    diffs = [abs(b - a) for a, b in zip(means, means[1:])]
    s_between = statistics.median(diffs) * 1.4826 / math.sqrt(2) if diffs else 0.0
    return max(s_within, s_between)


def detect(points: list[Point], *, lower_is_better: bool = True) -> tuple[list[Change], float]:
    if len(points) < 2 * MIN_SEGMENT:
        return [], 0.0
    y = np.array([statistics.fmean(math.log(v) for v in p.values) for p in points])
    noise = noise_of(points)
    found = pelt(y, noise, PENALTY_PER_LOG_N * math.log(len(points)), MIN_SEGMENT)
    bounds = [0, *found, len(points)]
    changes = []
    for k, start in enumerate(found, start=1):
        before = math.exp(float(np.mean(y[bounds[k - 1]:start])))
        after = math.exp(float(np.mean(y[start:bounds[k + 1]])))
        size = 100.0 * (after / before - 1.0)
        if abs(size) < MIN_CHANGE_PCT:
            continue
        worse = size > 0 if lower_is_better else size < 0
        p = points[start]
        changes.append(Change(start, p.version, p.run, p.date, before, after, size,
                              "regression" if worse else "improvement"))
    return changes, noise


def series_history(rows: pd.DataFrame, metric: str = "p99") -> list[CellHistory]:
    """Every (scenario, system, load) of one series' rows, versions in order, with changes."""
    order = {run: i for i, run in enumerate(ordered_runs(rows))}
    value, low = rows[f"{metric}_ms"], rows.get(f"{metric}_at_least_ms")
    censored = low.notna() if low is not None else pd.Series(False, index=rows.index)
    rows = rows.assign(scenario=rows["scenario"].fillna(""), _censored=censored,
                       _value=low.where(censored, value) if low is not None else value,
                       _busy=rows["host_busy"].fillna(False).astype(bool),
                       _order=rows["run"].map(order))
    rows = rows[rows["_censored"] | (rows["_value"] > 0)]
    if "not_steady" in rows:
        # issue 32: a repetition that measured a transient is no point of the history
        rows = rows[~rows["not_steady"].fillna(False).astype(bool)]
    # one group-by: per cell and run, its repetitions' values and flags
    per_run = rows.groupby(["scenario", "system", "load", "_order"], sort=True).agg(
        values=("_value", list), censored=("_censored", "any"), busy=("_busy", "any"),
        run=("run", "first"), version=("version", "first"), date=("date", "first"),
        rate=("offered_rate", "first"))
    out = []
    for (scenario, system, load), cell in per_run.groupby(level=[0, 1, 2], sort=False):
        points = [Point(str(r.version) if pd.notna(r.version) else str(r.run), str(r.run),
                        str(r.date), [float(v) for v in r.values], bool(r.censored), bool(r.busy))
                  for r in cell.itertuples(index=False)]
        history = CellHistory(str(scenario) or None, str(system), str(load), points)
        history.changes, history.noise = detect(points)
        rate = cell["rate"].iloc[0]
        # a closed loop's point (issue 23) has no offered rate: after the rates, by load id
        out.append(((True, 0.0) if pd.isna(rate) else (False, float(rate)), history))
    out.sort(key=lambda x: (x[1].scenario or "", x[1].system, x[0], x[1].load))
    return [h for _, h in out]


def method_text(metric: str) -> str:
    return METHOD_TEXT.format(metric=metric, per_log_n=PENALTY_PER_LOG_N,
                              min_segment=MIN_SEGMENT, min_pct=MIN_CHANGE_PCT)


def corpus_histories(df: pd.DataFrame, metric: str = "p99") -> dict[str, list[CellHistory]]:
    """series name -> its histories, for every series in the cell table."""
    in_series = df[df["series"].notna()]
    return {str(name): series_history(rows, metric)
            for name, rows in sorted(in_series.groupby("series", sort=False),
                                     key=lambda g: str(g[0]))}

