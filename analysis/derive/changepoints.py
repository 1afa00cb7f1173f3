"""PELT: the optimal partition of a series into segments of constant mean (Killick, Fearnhead &
Eckley 2012, "Optimal detection of changepoints with a linear computational cost", JASA
107:1590). Used over versions of a series (corpus/history.py) and over the seconds of one
window (derive/steady.py). Pure, no I/O.

The cost minimised is

    sum over segments of  sum_i sum_k (y_ik - segment mean_k)^2 / s_k^2   +   penalty x (segments - 1)

for one signal (k = 1) or several measured on the same points (each in units of its noise s_k).
"""
from __future__ import annotations

import math

import numpy as np


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

    def cost(a: int, b: int) -> float:          # y[a:b] around its means, in units of noise^2
        m = b - a
        return float(s2[b] - s2[a] - ((s1[:, b] - s1[:, a]) ** 2).sum() / m)

    best = [-penalty] + [math.inf] * n
    last = [0] * (n + 1)
    candidates = [0]
    for t in range(min_size, n + 1):
        options = [(best[s] + cost(s, t) + penalty, s) for s in candidates if t - s >= min_size]
        if options:
            best[t], last[t] = min(options)
        # PELT's pruning: a start that is already worse than the best cannot become optimal
        candidates = [s for s in candidates
                      if t - s < min_size or best[s] + cost(s, t) <= best[t]]
        if best[t] < math.inf:
            candidates.append(t)
    points, t = [], n
    while t > 0:
        t = last[t]
        if t > 0:
            points.append(t)
    return sorted(points)
