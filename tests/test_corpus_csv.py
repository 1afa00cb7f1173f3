"""cell_table.run_cells_csv / run_spectra_csv: the bytes pandas' to_csv writes for the same rows,
without building a DataFrame (or through one, for values the direct writer leaves to it)."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis.corpus import cell_table
from analysis.derive.analyse import analyse_run
from analysis.read.manifest import load_manifest

pytestmark = pytest.mark.slow     # (make check leaves it out; make test runs it)

REPO = Path(__file__).resolve().parents[1]


def bundled_cells_site(site: Path) -> list[str]:
    """The bundled runs' cells.csv files copied into `site`; their run ids, sorted."""
    from analysis.paths import run_cells_csv_path
    runs = sorted(p.parent.name for p in (REPO / "assets" / "data").glob("*/cells.csv"))
    assert len(runs) >= 4
    for run_id in runs:
        (site / run_cells_csv_path(run_id)).parent.mkdir(parents=True)
        (site / run_cells_csv_path(run_id)).write_text(
            (REPO / run_cells_csv_path(run_id)).read_text())
    return runs

_text = st.one_of(st.text(max_size=12),
                  st.text(alphabet=st.sampled_from(list('a,"\n\r ;\'x1.-')), max_size=8))
_float = st.one_of(st.floats(), st.integers(-2 ** 60, 2 ** 60),
                   st.sampled_from([0.0, -0.0, 1e16, 1e-5, 25, 2 ** 53, 2 ** 53 + 1]))
# what each column type may hold; None is a missing value in every nullable one
_BY_KIND = {"string": _text, "int": st.integers(-2 ** 62, 2 ** 62), "boolean": st.booleans(),
            "float": _float, "bool": st.booleans()}
# values the direct writer leaves to pandas (it must then give up, not write something else)
_ODD = st.sampled_from([1.5, 3.0, True, 7, "text", float("nan"), 2 ** 70])


def _rows(kinds: dict[str, str]):
    def value(kind):
        plain = _BY_KIND[kind] if kind == "bool" else st.one_of(st.none(), _BY_KIND[kind])
        return st.one_of(plain, plain, plain, _ODD)
    return st.lists(st.fixed_dictionaries({col: value(kind) for col, kind in kinds.items()}),
                    max_size=4)


def _same_as_pandas(rows, kinds, frame):
    direct = cell_table._direct_csv(rows, kinds)
    try:
        expected = cell_table.to_csv(frame(rows))
    except (ValueError, TypeError, OverflowError):
        assert direct is None   # pandas refuses the rows: so must the direct writer
        return
    if direct is not None:
        assert direct == expected


# (pandas warns as it casts the odd values it then refuses)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(_rows(cell_table.CELL_KINDS))
def test_cell_rows_are_written_as_pandas_writes_them(rows):
    _same_as_pandas(rows, cell_table.CELL_KINDS, cell_table.frame)


# (pandas warns as it casts the odd values it then refuses)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(_rows(cell_table.SPECTRA_KINDS))
def test_spectra_rows_are_written_as_pandas_writes_them(rows):
    _same_as_pandas(rows, cell_table.SPECTRA_KINDS, cell_table.spectra_frame)


@pytest.mark.parametrize("row, written", [
    ({"percentile": 25, "value_ms": float("nan")}, "25.0,"),
    ({"percentile": 1e16, "value_ms": 1e-5}, "1e+16,1e-05"),
])
def test_floats_as_pandas_writes_them(row, written):
    kinds = {"percentile": "float", "value_ms": "float"}
    assert cell_table._direct_csv([row], kinds) == "percentile,value_ms\n" + written + "\n"


def test_values_it_does_not_know_are_left_to_pandas():
    row = {col: None for col in cell_table.CELL_KINDS}
    assert cell_table._direct_csv([row], cell_table.CELL_KINDS) is not None
    for col, odd in (("count", 3.0), ("offered_rate", True), ("run", 5), ("saturated", 1)):
        assert cell_table._direct_csv([{**row, col: odd}], cell_table.CELL_KINDS) is None
    del row["run"]   # a missing key is NaN to pandas
    assert cell_table._direct_csv([row], cell_table.CELL_KINDS) is None
    spectra = {"run": "r", "scenario": "s", "system": "a", "load": "l", "count": 1,
               "percentile": 50.0, "value_ms": 1.0, "censored": None}   # bool(None): pandas'
    assert cell_table._direct_csv([spectra], cell_table.SPECTRA_KINDS) is None


def test_a_bundled_run_gives_the_bytes_of_its_dataframes(tmp_path):
    manifest = load_manifest(REPO / "runs" / "pool-vs-virtual", REPO / "runs")
    run = analyse_run(manifest, tmp_path)
    assert cell_table.run_cells_csv(run) == cell_table.to_csv(cell_table.runs_frame([run]))
    assert cell_table.run_spectra_csv(run) == cell_table.to_csv(cell_table.run_spectra(run))
    assert cell_table._direct_csv(cell_table.run_rows(run), cell_table.CELL_KINDS) is not None
    assert cell_table._direct_csv(cell_table.spectra_rows(run), cell_table.SPECTRA_KINDS) is not None


def test_the_corpus_csv_reuses_unchanged_runs_blocks_and_equals_to_csv(tmp_path, monkeypatch):
    """cell_table.corpus_csv: the corpus table's CSV is pandas' to_csv of the whole table, byte
    for byte, while only the runs whose cells.csv changed (or are new) are written by pandas;
    a removed run's block goes."""
    from analysis.paths import CELLS_CSV, run_cells_csv_path
    site = tmp_path / "site"
    runs = bundled_cells_site(site)

    def corpus(ids):
        df = cell_table.read_runs(site, ids)
        text = cell_table.corpus_csv(site, df)
        assert text == cell_table.to_csv(df)
        (site / CELLS_CSV).write_text(text)
        return text

    written: list[int] = []
    real = cell_table.to_csv

    def counting(df):
        written.append(len(df))
        return real(df)
    monkeypatch.setattr(cell_table, "to_csv", counting)
    corpus(runs)
    # the header alone through pandas, every block without it (the last: the check's table)
    assert written[:-1] == [0]
    written.clear()
    corpus(runs)
    assert written[:-1] == [0]
    changed, gone = runs[0], runs[1]
    lines = (site / run_cells_csv_path(changed)).read_text().splitlines(keepends=True)
    (site / run_cells_csv_path(changed)).write_text("".join(lines[:-1]))  # one row fewer
    new = "zz-added-run"
    (site / run_cells_csv_path(new)).parent.mkdir(parents=True)
    (site / run_cells_csv_path(new)).write_text("".join(
        [lines[0]] + [line.replace(f"{changed},", f"{new},", 1) for line in lines[1:]]))
    written.clear()
    ids = [r for r in runs if r != gone] + [new]
    blocks: list[int] = []
    real_rows = cell_table._rows_csv

    def counting_rows(columns, a, b):
        blocks.append(b - a)
        return real_rows(columns, a, b)
    monkeypatch.setattr(cell_table, "_rows_csv", counting_rows)
    text = corpus(ids)
    assert written[:-1] == [0]
    assert sorted(blocks) == [len(lines) - 2, len(lines) - 1]   # the two runs alone
    assert f"\n{gone}," not in text and f"\n{new}," in text


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.fixed_dictionaries(
    {col: st.one_of(st.none(), _BY_KIND[kind]) for col, kind in cell_table.CELL_KINDS.items()}),
    min_size=1, max_size=6), st.lists(st.sampled_from(["a", "b,c", 'd"e', "f\ng"]),
                                      min_size=1, max_size=6))
def test_the_corpus_csv_of_any_table_equals_to_csv(rows, run_ids):
    """New blocks (no cells.csv behind them) are written without pandas, as to_csv writes them:
    quoted texts, missing values, floats, nullable ints and booleans."""
    import tempfile
    for row, run_id in zip(rows, run_ids * len(rows)):
        row["run"] = run_id
    try:
        df = cell_table.concat([cell_table.frame(rows)])
    except (ValueError, TypeError, OverflowError):
        return   # rows pandas refuses to type
    with tempfile.TemporaryDirectory() as site:
        assert cell_table.corpus_csv(Path(site), df) == cell_table.to_csv(df)
