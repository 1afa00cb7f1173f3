"""The numbers of a comparison page's overlaid load curves: for each side's (run, system), the
median over the repetitions of p50 and p99 at each load, in order of load. The writer
(write/charts/comparison_charts.py) only labels, colours and draws them."""
from __future__ import annotations

from typing import Any

import pandas as pd


def is_closed(a: pd.DataFrame) -> bool:
    """Whether the comparison is of closed loops (issue 23: no offered rate), drawn against the
    throughput they achieved."""
    return bool(len(a)) and bool(a["offered_rate"].isna().all())


def side_groups(a: pd.DataFrame, b: pd.DataFrame) -> list[tuple[str, str, str, pd.DataFrame]]:
    """(side, run, system, rows) for each side's (run, system), A's first, in table order."""
    return [(side, run, system, g) for side, rows in (("A", a), ("B", b))
            for (run, system), g in rows.groupby(["run", "system"], sort=False)]


def load_curve_points(a: pd.DataFrame, b: pd.DataFrame) -> list[dict[str, Any]]:
    """Per (side, run, system): x (the offered rate, or the median throughput of a closed
    loop), the medians of p50 and p99 (None where no repetition has one) and whether any
    repetition saturated, at each load in order of x."""
    closed = is_closed(a)
    out = []
    for side, run, system, g in side_groups(a, b):
        per_load = g.groupby("load", sort=False).agg(
            offered=("throughput_rps" if closed else "offered_rate",
                     "median" if closed else "first"), p50=("p50_ms", "median"),
            p99=("p99_ms", "median"), saturated=("saturated", "any")).sort_values("offered")
        out.append({"side": side, "run": run, "system": system,
                    "offered": per_load["offered"].tolist(),
                    "p50_ms": [None if pd.isna(v) else v for v in per_load["p50"]],
                    "p99_ms": [None if pd.isna(v) else v for v in per_load["p99"]],
                    "saturated": [bool(v) for v in per_load["saturated"]]})
    return out
