"""PELT: the optimal partition of a series into segments of constant mean (Killick, Fearnhead &
Eckley 2012, "Optimal detection of changepoints with a linear computational cost", JASA
107:1590). Used over versions of a series (corpus/history.py) and over the seconds of one
window (derive/steady.py). Pure, no I/O.

The cost minimised is

    sum over segments of  sum_i sum_k (y_ik - segment mean_k)^2 / s_k^2  +  penalty x (segments - 1)

for one signal (k = 1) or several measured on the same points (each in units of its noise s_k).
"""
from __future__ import annotations

import numpy as np


# Below this many points the loop over plain floats beats numpy's per-call cost (measured: 12
# points 2x faster; at 60, numpy 5x: PELT keeps most candidates of a flat series).
SMALL = 24


def _pelt_small(s1: list[list[float]], s2: list[float], n: int, penalty: float,
                min_size: int) -> list[int]:
    """pelt() for a short series, the same arithmetic on Python floats."""
    inf = float("inf")
    best = [-penalty] + [inf] * n
    last = [0] * (n + 1)
    candidates = [0]
    for t in range(min_size, n + 1):
        s2t, heads = s2[t], [row[t] for row in s1]
        totals = []
        chosen, choice = inf, 0
        for s in candidates:
            m = t - s
            spread = sum((h - row[s]) ** 2 for h, row in zip(heads, s1))
            total = best[s] + s2t - s2[s] - (spread / m if m else 0.0)
            totals.append(total)
            if m >= min_size and total + penalty < chosen:
                chosen, choice = total + penalty, s
        if chosen < inf:
            best[t], last[t] = chosen, choice
        # PELT's pruning: a start that is already worse than the best cannot become optimal
        candidates = [s for s, total in zip(candidates, totals)
                      if t - s < min_size or total <= best[t]]
        if best[t] < inf:
            candidates.append(t)
    points, t = [], n
    while t > 0:
        t = last[t]
        if t > 0:
            points.append(t)
    return sorted(points)


def pelt(y, noise, penalty: float, min_size: int = 2) -> list[int]:
    """The change points (indices where a new segment starts) minimising the cost above. `y` is
    one series (1-D) with its noise a number, or several (2-D, one row a signal) with one noise
    each."""
    ys = np.atleast_2d(np.asarray(y, dtype=np.float64))
    noises = np.atleast_1d(np.asarray(noise, dtype=np.float64))
    n = ys.shape[1]
    if n < 2 * min_size or len(noises) != ys.shape[0] or not np.all(noises > 0):
        return []
    scaled = ys / noises[:, None]
    s1 = np.concatenate([np.zeros((ys.shape[0], 1)), np.cumsum(scaled, axis=1)], axis=1)
    s2 = np.concatenate([[0.0], np.cumsum((scaled * scaled).sum(axis=0))])
    if n <= SMALL:
        return _pelt_small(s1.tolist(), s2.tolist(), n, penalty, min_size)
    best = np.full(n + 1, np.inf)
    best[0] = -penalty
    last = np.zeros(n + 1, dtype=np.int64)
    candidates = np.array([0], dtype=np.int64)
    for t in range(min_size, n + 1):
        # the cost of y[s:t] around its means, in units of noise^2, for every candidate s
        m = t - candidates
        cost = s2[t] - s2[candidates] - (((s1[:, [t]] - s1[:, candidates]) ** 2).sum(axis=0)
                                         / np.maximum(m, 1))
        total = best[candidates] + cost
        ok = m >= min_size
        if ok.any():
            options = np.where(ok, total + penalty, np.inf)
            i = int(np.argmin(options))        # the first of equal costs: the earliest start
            best[t], last[t] = options[i], candidates[i]
        # PELT's pruning: a start that is already worse than the best cannot become optimal
        keep = (m < min_size) | (total <= best[t])
        candidates = candidates[keep]
        if best[t] < np.inf:
            candidates = np.append(candidates, t)
    points, t = [], n
    while t > 0:
        t = int(last[t])
        if t > 0:
            points.append(t)
    return sorted(points)
