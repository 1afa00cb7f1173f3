"""compare: the distributions against published tables, the verdicts on pairs with and without
a real difference (issue 12: no difference -> "no significant difference" in >= 95 of 100
seeds), too few repetitions, censored cells, environment differences, and the command."""
from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from analysis.corpus import cell_table, compare
from analysis.paths import run_cells_csv_path
from tests import series_gen
from tests.conftest import REPO

pytestmark = pytest.mark.slow     # (make check leaves it out; make test runs it)


# --- distributions -------------------------------------------------------------------------

@pytest.mark.parametrize("df, q, t", [(4, 0.975, 2.776), (10, 0.995, 3.169), (2, 0.975, 4.303),
                                      (30, 0.975, 2.042), (1, 0.975, 12.706)])
def test_t_quantile_matches_the_published_table(df, q, t):
    assert compare.t_quantile(q, df) == pytest.approx(t, abs=0.001)
    assert compare.t_two_sided_p(t, df) == pytest.approx(2 * (1 - q), abs=2e-4)


def test_incomplete_beta_symmetry_and_ends():
    assert compare.betainc(3.0, 3.0, 0.5) == pytest.approx(0.5, abs=1e-12)
    assert compare.betainc(2.0, 5.0, 0.0) == 0.0 and compare.betainc(2.0, 5.0, 1.0) == 1.0
    # I_x(1, 1) = x
    assert compare.betainc(1.0, 1.0, 0.3) == pytest.approx(0.3, abs=1e-12)


def test_mann_whitney_exact_p():
    assert compare.mann_whitney_p([1, 2, 3], [4, 5, 6]) == pytest.approx(0.1)       # 2/20
    assert compare.mann_whitney_p([1, 2, 3, 4], [5, 6, 7, 8]) == pytest.approx(2 / 70)
    # U = 3 of 9: P(U <= 3) = 7/20 under the null, two-sided 0.7
    assert compare.mann_whitney_p([1, 5, 3], [2, 4, 6]) == pytest.approx(0.7)


def test_holm():
    assert compare.holm([0.001, 0.03, 0.04, None], 0.05) == [True, False, False, False]
    assert compare.holm([0.001, 0.02, 0.04], 0.05) == [True, True, True]
    assert compare.holm([0.01, 0.02], 0.05) == [True, True]


# --- verdicts ------------------------------------------------------------------------------

def sides(seed: int, changes=(), versions=2):
    df = cell_table.frame(series_gen.cell_rows(seed, versions=versions, changes=changes))
    return df[df["run"] == "v001"], df[df["run"] == f"v{versions:03d}"]


def test_no_real_difference_is_no_significant_difference_in_95_of_100_seeds():
    clean = 0
    for seed in range(100):
        a, b = sides(seed)
        verdicts = {c.verdict for c in compare.compare_frames(a, b)}
        assert verdicts <= {compare.SAME, compare.FASTER, compare.SLOWER}
        clean += verdicts == {compare.SAME}
    assert clean >= 95, clean


def test_a_large_change_is_found_and_its_interval_holds_it():
    found = false_alarms = 0
    for seed in range(20):
        a, b = sides(seed, changes=(("pool", "r200", 2, 1.6),))
        result = {(c.system_a, c.load): c for c in compare.compare_frames(a, b)}
        hit = result[("pool", "r200")]
        if hit.verdict == compare.SLOWER:
            found += 1
            assert hit.ci_pct[0] < hit.change_pct < hit.ci_pct[1]
        false_alarms += any(c.verdict != compare.SAME for k, c in result.items()
                            if k != ("pool", "r200"))
    # 60 % at 3 repetitions and 5 % noise: found ~9 times in 10; the 7 untouched cells are
    # tested at family-wise 0.05 (Holm), so about 1 of 20 seeds has a false alarm among them
    assert found >= 15 and false_alarms <= 3, (found, false_alarms)


def test_fewer_than_three_repetitions_give_no_verdict():
    a, b = sides(1)
    a = a[a["repetition"] <= 2]
    result = compare.compare_frames(a, b)
    assert {c.verdict for c in result} == {compare.TOO_FEW}
    assert all(c.change_pct is None for c in result)


def test_a_censored_repetition_is_not_tested():
    a, b = sides(2)
    b = b.copy()
    first = b.index[0]
    b.loc[first, "p99_ms"] = float("nan")
    b.loc[first, "p99_at_least_ms"] = 15000.0
    result = compare.compare_frames(a, b)
    hit = [c for c in result if c.b_censored]
    assert len(hit) == 1 and hit[0].verdict == compare.CENSORED
    assert compare.row_texts(hit[0])["b"].startswith("> ")


def test_a_side_censored_beyond_every_value_of_the_other_gets_a_bound_verdict():
    a, b = sides(3)
    cell = b["load"] == b["load"].iloc[0]
    b = b.copy()
    b.loc[cell & (b["system"] == b["system"].iloc[0]), "p99_ms"] = float("nan")
    b.loc[cell & (b["system"] == b["system"].iloc[0]), "p99_at_least_ms"] = 15000.0
    result = compare.compare_frames(a, b)
    hit = [c for c in result if c.b_censored]
    assert len(hit) == 1 and hit[0].bound and hit[0].ci_pct is None
    assert hit[0].verdict == compare.SLOWER_BY_BOUNDS and hit[0].change_pct > 1000
    assert compare.row_texts(hit[0])["change"].startswith("at least +")
    # the ratio of the geometric means, 15 s standing in for every censored repetition
    a_cell = hit[0].a
    want = 100.0 * (15000.0 / math.exp(sum(map(math.log, a_cell)) / len(a_cell)) - 1.0)
    assert hit[0].change_pct == pytest.approx(want)
    # one bound below a value of the other side: the direction is not certain, no test
    b.loc[b.index[cell & (b["system"] == b["system"].iloc[0])][0], "p99_at_least_ms"] = 1.0
    again = [c for c in compare.compare_frames(a, b) if c.b_censored]
    assert again[0].verdict == compare.CENSORED and not again[0].bound


def test_system_against_system_and_environment_differences():
    a, b = sides(3)
    b = b.copy()
    b["env_jdk"] = "Temurin-21"
    pool, virtual = compare.select(a, "v001:pool")[0], compare.select(b, "v002:virtual")[0]
    result = compare.compare_frames(pool, virtual, by_system=False)
    assert [c.load for c in result] == list(series_gen.LOADS)
    assert {(c.system_a, c.system_b) for c in result} == {("pool", "virtual")}
    diffs = compare.environment_differences(a, b)
    assert diffs == [{"key": "jdk", "a": "(not given)", "b": "Temurin-21"}]


# --- the command ---------------------------------------------------------------------------

def write_tables(site, seed=5, changes=()):
    df = cell_table.frame(series_gen.cell_rows(seed, versions=2, changes=changes))
    for run in ("v001", "v002"):
        path = site / run_cells_csv_path(run)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(cell_table.to_csv(df[df["run"] == run]))


def run_compare(site, *args):
    return subprocess.run([sys.executable, "-m", "analysis", "compare", *args, "--site",
                           str(site)], cwd=REPO, capture_output=True, text=True, timeout=120)


def test_command_text_json_markdown_and_fail_on_regression(tmp_path):
    write_tables(tmp_path, changes=(("pool", "r200", 2, 2.0),))
    text = run_compare(tmp_path, "v001", "v002")
    assert text.returncode == 0, text.stderr
    assert "Welch's t-test" in text.stdout and "alpha 0.05" in text.stdout
    assert "slower" in text.stdout and "no significant difference" in text.stdout
    md = run_compare(tmp_path, "v001", "v002", "--markdown")
    assert "| load | system | A | B |" in md.stdout
    out = run_compare(tmp_path, "v001", "v002", "--json", "--fail-on-regression", "50")
    assert out.returncode == 3, out.stderr
    data = json.loads(out.stdout)
    slow = [c for c in data["cells"] if c["verdict"] == "slower"]
    assert [(c["system_a"], c["load"]) for c in slow] == [("pool", "r200")]
    assert math.isclose(slow[0]["change_pct"], 100, rel_tol=0.2)
    assert "regression: r200 pool" in out.stderr
    assert run_compare(tmp_path, "v001", "v002", "--fail-on-regression", "150").returncode == 0


def test_command_errors_are_one_line(tmp_path):
    out = run_compare(tmp_path, "nope", "v002")
    assert out.returncode == 1
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("error: ")
    write_tables(tmp_path)
    out = run_compare(tmp_path, "v001:pool", "v002")
    assert out.returncode == 1 and "both sides" in out.stderr


def test_demo_pool_against_virtual(repo):
    """Issue 12: pool vs virtual at 800 req/s differs significantly, at 25 req/s it does not.
    The demo recorded before repetitions (issue 10) has one per cell: no verdict then."""
    table = repo / run_cells_csv_path("pool-vs-virtual")
    if not table.is_file():
        pytest.skip("the demo is not built (make analyse)")
    df = cell_table.read_csv(table)
    pool = compare.select(df, "pool-vs-virtual:pool20")[0]
    virtual = compare.select(df, "pool-vs-virtual:virtual")[0]
    result = {c.load: c for c in compare.compare_frames(pool, virtual, by_system=False)}
    if df["repetition"].max() < compare.MIN_REPETITIONS:
        assert {c.verdict for c in result.values()} == {compare.TOO_FEW}
        return
    # the pool's p99 at 800 req/s is censored (> 15 s) in every repetition, above every
    # repetition of virtual threads: a bound verdict
    assert result["r800"].verdict == compare.FASTER_BY_BOUNDS and result["r800"].bound
    assert result["r800"].p_value is None and result["r800"].mann_whitney_p is None
    assert result["r25"].verdict == compare.SAME


def test_a_side_censored_in_every_repetition_gets_no_p(tmp_path):
    """A t-test on lower bounds means nothing (issue 22): no Welch or Mann-Whitney p for such a
    cell in the model, the JSON, the text table or a comparison page's rows; its verdict says
    the direction comes from the bounds, and it is outside the Holm family."""
    df = cell_table.frame(series_gen.cell_rows(5, versions=2))
    censored = (df["run"] == "v002") & (df["system"] == "pool") & (df["load"] == "r200")
    df.loc[censored, "p99_ms"] = float("nan")
    df.loc[censored, "p99_at_least_ms"] = 15000.0
    a, b = df[df["run"] == "v001"], df[df["run"] == "v002"]
    hit = next(c for c in compare.compare_frames(a, b) if c.b_censored)
    assert (hit.p_value, hit.mann_whitney_p, hit.significant) == (None, None, False)
    assert hit.verdict == "slower (direction from the bounds)"
    row = compare.row_texts(hit)
    assert row["p"] == row["mann_whitney_p"] == "–"
    assert compare.regressions([hit], 1000.0) == [hit]
    for run in ("v001", "v002"):
        path = tmp_path / run_cells_csv_path(run)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(cell_table.to_csv(df[df["run"] == run]))
    data = json.loads(run_compare(tmp_path, "v001", "v002", "--json").stdout)
    cell = next(c for c in data["cells"] if c["b_censored"])
    assert cell["p_value"] is None and cell["mann_whitney_p"] is None and cell["bound"]
    text = run_compare(tmp_path, "v001", "v002").stdout
    line = next(x for x in text.splitlines() if x.startswith("r200") and "pool" in x
                and "> " in x)
    assert "direction from the bounds" in line and "e-" not in line
    assert "the direction comes from the bounds (no p)" in text
