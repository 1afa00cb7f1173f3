"""Run vs run (or system vs system): per cell present in both, the change of one statistic with
its confidence interval and a verdict, computed on the repetitions. Pure functions over the
cell table (corpus.py); `commands/compare.py` prints them, the build writes comparison pages.

Method (stated in every output, METHOD_TEXT):
- per cell, the statistic of each repetition (e.g. its p99) on a log scale, so a change is a
  ratio: change % = exp(mean log B - mean log A) - 1;
- Welch's two-sample t-test on those logs (unequal variances, Welch-Satterthwaite degrees of
  freedom), two-sided; the change's confidence interval is the t interval at 1 - alpha;
- alpha is family-wise over the cells of one comparison (Holm-Bonferroni), so a comparison of
  8 cells with no real difference reports none in >= 1 - alpha of cases, not 1 - (1-alpha)^8;
- the exact Mann-Whitney U p-value over the same repetitions is given beside it, for reference
  only: with 3 repetitions a side its smallest two-sided p is 0.1, so it can never decide at
  alpha 0.05 (Welch's test can, at the cost of assuming log-normal repetitions);
- fewer than MIN_REPETITIONS a side: "not enough repetitions", never a verdict;
- a censored repetition (a percentile only known as "> timeout"): no test, the verdict says
  so - except when one side is censored in every repetition and each of its bounds lies above
  every repetition of the other side (none censored). Then the direction comes from the
  bounds, not from a test (a t-test on lower bounds means nothing: no p, outside the Holm
  family): the true values are only further away, so the change printed, the ratio of the
  geometric means with the bounds standing in, is a bound ("at least +7,290 %", "at most
  -98.6 %") and carries no interval; the verdict reads "slower (direction from the bounds)".
"""
from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass, field
from typing import Any, Sequence

import pandas as pd

from analysis.corpus.cell_table import ENV_COLUMNS
from analysis.vocabulary import fmt_ms

MIN_REPETITIONS = 3
DEFAULT_ALPHA = 0.05
METHOD_TEXT = ("Welch's t-test on the log of each repetition's {metric}, two-sided, alpha {alpha} "
               "family-wise over the {cells} compared cells (Holm); change with its "
               "{confidence} % confidence interval; exact Mann-Whitney U p for reference; a "
               "censored cell is not tested: when one side is censored in every repetition, "
               "beyond every repetition of the other, the direction comes from the bounds (no "
               "p) and its change is a bound")

FASTER, SLOWER, SAME = "faster", "slower", "no significant difference"
FASTER_BY_BOUNDS, SLOWER_BY_BOUNDS = (f"{v} (direction from the bounds)" for v in (FASTER, SLOWER))
TOO_FEW, CENSORED = "not enough repetitions", "censored: no test"


# --- distributions (no scipy: these are the textbook series, checked in tests) -------------

def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with df degrees of freedom."""
    return betainc(df / 2.0, 0.5, df / (df + t * t))


def t_quantile(q: float, df: float) -> float:
    """The t value with P(T <= t) = q, for q in (0.5, 1) (bisection on the p-value)."""
    target = 2.0 * (1.0 - q)
    lo, hi = 0.0, 1e7
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_two_sided_p(mid, df) > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def mann_whitney_p(a: Sequence[float], b: Sequence[float]) -> float:
    """Exact two-sided Mann-Whitney U p-value (no ties assumed; ties count half), by counting
    the arrangements of the pooled ranks: fine for the few repetitions of a cell."""
    n, m = len(a), len(b)
    u = sum((x > y) + 0.5 * (x == y) for x in a for y in b)
    # number of arrangements with each U: DP over (n, m) as in Mann & Whitney (1947)
    counts: dict[tuple[int, int], list[int]] = {}

    def dist(i: int, j: int) -> list[int]:
        if i == 0 or j == 0:
            return [1]
        if (i, j) not in counts:
            left, right = dist(i - 1, j), dist(i, j - 1)
            out = [0] * (i * j + 1)
            for k, c in enumerate(left):        # the largest value is from a: U += j
                out[k + j] += c
            for k, c in enumerate(right):
                out[k] += c
            counts[(i, j)] = out
        return counts[(i, j)]

    d = dist(n, m)
    total = sum(d)
    lower = min(u, n * m - u)
    tail = sum(c for k, c in enumerate(d) if k <= lower + 1e-9)
    return min(1.0, 2.0 * tail / total)


def holm(p_values: Sequence[float | None], alpha: float) -> list[bool]:
    """Holm-Bonferroni: which of the p-values are significant at family-wise alpha."""
    tested = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    significant = [False] * len(p_values)
    m = len(tested)
    for rank, (p, i) in enumerate(tested):
        if p > alpha / (m - rank):
            break
        significant[i] = True
    return significant


# --- one cell ------------------------------------------------------------------------------

@dataclass
class CellComparison:
    scenario: str | None
    load: str
    system_a: str
    system_b: str
    offered_rate: float | None
    a: list[float]                      # the repetitions' values (at-least values if censored)
    b: list[float]
    a_censored: bool
    b_censored: bool
    change_pct: float | None = None
    ci_pct: tuple[float, float] | None = None
    p_value: float | None = None
    mann_whitney_p: float | None = None
    bound: bool = False                 # change_pct is a bound (a censored side, separated):
                                        # the verdict is the bounds' direction, no test, no p
    verdict: str = SAME
    significant: bool = False
    flags: list[str] = field(default_factory=list)

    @property
    def a_median(self) -> float | None:
        return statistics.median(self.a) if self.a else None

    @property
    def b_median(self) -> float | None:
        return statistics.median(self.b) if self.b else None


def welch_log(a: Sequence[float], b: Sequence[float],
              alpha: float) -> tuple[float, tuple[float, float], float]:
    """(change %, its (1 - alpha) interval, two-sided p) of B against A on a log scale."""
    la, lb = [math.log(v) for v in a], [math.log(v) for v in b]
    va, vb = statistics.variance(la) / len(la), statistics.variance(lb) / len(lb)
    diff = _log_diff(a, b)
    se = math.sqrt(va + vb)
    if se == 0.0:
        p = 1.0 if diff == 0.0 else 0.0
        return 100.0 * math.expm1(diff), (100.0 * math.expm1(diff),) * 2, p
    df = (va + vb) ** 2 / (va ** 2 / (len(la) - 1) + vb ** 2 / (len(lb) - 1))
    p = t_two_sided_p(diff / se, df)
    half = t_quantile(1.0 - alpha / 2.0, df) * se
    return (100.0 * math.expm1(diff),
            (100.0 * math.expm1(diff - half), 100.0 * math.expm1(diff + half)), p)


def _log_diff(a: Sequence[float], b: Sequence[float]) -> float:
    return (statistics.fmean(math.log(v) for v in b)
            - statistics.fmean(math.log(v) for v in a))


def bound_change_pct(a: Sequence[float], b: Sequence[float]) -> float:
    """B against A as a ratio of geometric means, a censored side at its bounds: a bound on the
    change when that side's true values can only be further away."""
    return 100.0 * math.expm1(_log_diff(a, b))


def _values(rows: pd.DataFrame, metric: str) -> tuple[list[float], list[bool]]:
    """The repetitions' values of the metric, and per value whether it is censored (then its
    lower bound stands in for it)."""
    value = rows[f"{metric}_ms"]
    at_least_col = f"{metric}_at_least_ms"
    at_least = rows[at_least_col] if at_least_col in rows else pd.Series([float("nan")] * len(rows))
    out, censored = [], []
    for v, low in zip(value.tolist(), at_least.tolist()):
        if pd.notna(low):
            out.append(float(low))
            censored.append(True)
        elif pd.notna(v):
            out.append(float(v))
            censored.append(False)
    return out, censored


def separated_by_bound(a: Sequence[float], a_censored: Sequence[bool], b: Sequence[float],
                       b_censored: Sequence[bool]) -> bool:
    """One side censored in every repetition, the other in none, and every bound above every
    value of the other side: whatever the censored values are, the direction is certain."""
    if all(a_censored) and not any(b_censored):
        return min(a) > max(b)
    if all(b_censored) and not any(a_censored):
        return min(b) > max(a)
    return False


def compare_frames(a: pd.DataFrame, b: pd.DataFrame, *, metric: str = "p99",
                   alpha: float = DEFAULT_ALPHA, by_system: bool = True) -> list[CellComparison]:
    """Compare the cells of A and B (rows of the cell table). `by_system`: cells are matched on
    (scenario, system, load); otherwise each side holds one system and cells match on
    (scenario, load)."""
    keys = ["scenario", "system", "load"] if by_system else ["scenario", "load"]
    # no scenario is "" here: NA keys do not match across two groupbys
    a, b = (x.assign(scenario=x["scenario"].fillna("")) for x in (a, b))
    groups_b = {k: g for k, g in b.groupby(keys, dropna=False, sort=False)}
    out: list[CellComparison] = []
    for key, ga in a.groupby(keys, dropna=False, sort=False):
        gb = groups_b.get(key)
        if gb is None:
            continue
        # issue 32: repetitions that measured a transient are left out, and the flag says so
        left_out = {}
        for side in ("A", "B"):
            rows = ga if side == "A" else gb
            if "not_steady" in rows and rows["not_steady"].fillna(False).astype(bool).any():
                left_out[side] = int(rows["not_steady"].fillna(False).astype(bool).sum())
        ga_steady = ga[~ga["not_steady"].fillna(False).astype(bool)] if "A" in left_out else ga
        gb_steady = gb[~gb["not_steady"].fillna(False).astype(bool)] if "B" in left_out else gb
        va, fa = _values(ga_steady, metric)
        vb, fb = _values(gb_steady, metric)
        ca, cb = any(fa), any(fb)
        cmp = CellComparison(
            scenario=ga["scenario"].iloc[0] or None,
            load=ga["load"].iloc[0], system_a=ga["system"].iloc[0], system_b=gb["system"].iloc[0],
            offered_rate=_rate(ga["offered_rate"].iloc[0]), a=va, b=vb, a_censored=ca,
            b_censored=cb)
        for side, rows in (("A", ga), ("B", gb)):
            if rows["host_busy"].fillna(False).any():
                cmp.flags.append(f"host busy in {side}")
            if rows["saturated"].fillna(False).any():
                cmp.flags.append(f"saturated in {side}")
            if side in left_out:
                cmp.flags.append(f"{left_out[side]} repetition(s) not steady in {side}: "
                                 f"left out")
        if min(len(va), len(vb)) < MIN_REPETITIONS:
            cmp.verdict = TOO_FEW
        elif ca or cb:
            if separated_by_bound(va, fa, vb, fb):
                cmp.bound, cmp.change_pct = True, bound_change_pct(va, vb)
                cmp.verdict = SLOWER_BY_BOUNDS if cmp.change_pct > 0 else FASTER_BY_BOUNDS
            else:
                cmp.verdict = CENSORED
        else:
            cmp.change_pct, cmp.ci_pct, cmp.p_value = welch_log(va, vb, alpha)
            cmp.mann_whitney_p = mann_whitney_p(va, vb)
        out.append(cmp)
    for cmp, significant in zip(out, holm([c.p_value for c in out], alpha)):
        if cmp.p_value is None:
            continue
        cmp.significant = significant
        cmp.verdict = (SLOWER if cmp.change_pct > 0 else FASTER) if significant else SAME
    out.sort(key=lambda c: (c.scenario or "", c.offered_rate is None, c.offered_rate or 0.0,
                            c.load, c.system_a))
    return out


def _rate(value) -> float | None:
    """A cell table's offered rate; None for a closed loop's point (issue 23: it offers none,
    and the table carries no connections, so its cells follow the open ones, by load id)."""
    return None if pd.isna(value) else float(value)


def environment_differences(a: pd.DataFrame, b: pd.DataFrame) -> list[dict[str, str]]:
    """run.yml environment keys whose values differ between the sides (each side's first run
    value; several runs on one side list every value)."""
    out = []
    for col in ENV_COLUMNS:
        va = sorted({str(v) for v in a[col].dropna().tolist()})
        vb = sorted({str(v) for v in b[col].dropna().tolist()})
        if va != vb:
            out.append({"key": col[len("env_"):], "a": ", ".join(va) or "(not given)",
                        "b": ", ".join(vb) or "(not given)"})
    busy = [_busy_text(a), _busy_text(b)]
    if any(busy):
        out.append({"key": "host_busy", "a": busy[0] or "no", "b": busy[1] or "no"})
    return out


def _busy_text(rows: pd.DataFrame) -> str:
    busy = rows["host_busy"].fillna(False)
    return f"{int(busy.sum())} of {len(rows)} repetitions" if busy.any() else ""


def select(df: pd.DataFrame, spec: str, *, scenario: str | None = None,
           system: str | None = None) -> tuple[pd.DataFrame, str, str | None]:
    """`run` or `run:system` -> its rows of the cell table (and the run id and system)."""
    run, _, sys_id = spec.partition(":")
    rows = df[df["run"] == run]
    sys_id = sys_id or None
    if sys_id is not None:
        rows = rows[rows["system"] == sys_id]
    elif system is not None:
        rows = rows[rows["system"] == system]
    if scenario is not None:
        rows = rows[rows["scenario"].fillna("") == scenario]
    return rows, run, sys_id


def method_text(metric: str, alpha: float, cells: int) -> str:
    return METHOD_TEXT.format(metric=metric, alpha=f"{alpha:g}", cells=cells,
                              confidence=f"{100 * (1 - alpha):g}")


def regressions(result: list[CellComparison], threshold_pct: float) -> list[CellComparison]:
    """Cells slower by more than threshold_pct (for --fail-on-regression): significantly, or
    certainly by their bounds (the change then at least what it says)."""
    return [c for c in result if c.verdict in (SLOWER, SLOWER_BY_BOUNDS)
            and c.change_pct > threshold_pct]


def as_dict(c: CellComparison) -> dict[str, Any]:
    d = asdict(c)
    d["a_median"], d["b_median"] = c.a_median, c.b_median
    d["ci_pct"] = list(c.ci_pct) if c.ci_pct else None
    return d



# --- text (the command's table, the comparison page) -----------------------------------------

def values_text(values: Sequence[float], censored: bool) -> str:
    """Median (min–max) of the repetitions; '> x' when a repetition is only a lower bound."""
    if not values:
        return "–"
    med = fmt_ms(statistics.median(values))
    text = f"{med} ({fmt_ms(min(values))}–{fmt_ms(max(values))})" if len(values) > 1 else med
    return f"> {text}" if censored else text


def pct_text(x: float) -> str:
    return f"{x:+.1f} %"


def change_text(c: CellComparison) -> str:
    if c.change_pct is None:
        return "–"
    if c.bound:
        return f"{'at least' if c.change_pct > 0 else 'at most'} {pct_text(c.change_pct)}"
    return f"{pct_text(c.change_pct)} ({pct_text(c.ci_pct[0])} to {pct_text(c.ci_pct[1])})"


def row_texts(c: CellComparison) -> dict[str, str]:
    """The printed fields of one compared cell, shared by the command and the page."""
    return {"load": c.load, "system": c.system_a if c.system_a == c.system_b
            else f"{c.system_a} vs {c.system_b}",
            "a": values_text(c.a, c.a_censored), "b": values_text(c.b, c.b_censored),
            "change": change_text(c),
            "p": "–" if c.p_value is None else f"{c.p_value:.3g}",
            "mann_whitney_p": "–" if c.mann_whitney_p is None else f"{c.mann_whitney_p:.3g}",
            "verdict": c.verdict, "flags": ", ".join(c.flags)}
