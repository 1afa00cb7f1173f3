"""cell_table.read_runs keeps the rows it read (corpus/cell_frames.py): the next read parses
only the runs whose cells.csv changed, and the table equals one parse of every run's file,
value for value and type for type - after a run changed, one was added and one removed, and
when a run's values would be read otherwise on their own (then every file is parsed)."""
from __future__ import annotations

import io
from pathlib import Path

import pytest
from pandas.testing import assert_frame_equal

from analysis.corpus import cell_frames, cell_table
from analysis.paths import run_cells_csv_path
from tests.test_corpus_csv import bundled_cells_site


def _from_nothing(site: Path, ids: list[str]):
    """What read_runs read before it kept anything: every file joined, parsed once."""
    header = ",".join(cell_table.COLUMNS) + "\n"
    text = header + "".join((site / run_cells_csv_path(r)).read_text()[len(header):]
                            for r in sorted(ids) if (site / run_cells_csv_path(r)).is_file())
    return cell_table.concat([cell_table._read_raw(io.StringIO(text))])


@pytest.fixture
def site(tmp_path) -> tuple[Path, list[str]]:
    site = tmp_path / "site"
    return site, bundled_cells_site(site)


@pytest.fixture
def parsed(monkeypatch) -> list[int]:
    """The rows of each parse of cells.csv text."""
    rows: list[int] = []
    real = cell_table._read_raw

    def counted(source):
        df = real(source)
        rows.append(len(df))
        return df
    monkeypatch.setattr(cell_table, "_read_raw", counted)
    return rows


def _read(site: Path, ids: list[str]):
    df = cell_table.read_runs(site, ids)
    assert_frame_equal(df, _from_nothing(site, ids), check_exact=True)
    return df


def _lines(site: Path, run_id: str) -> list[str]:
    return (site / run_cells_csv_path(run_id)).read_text().splitlines(keepends=True)


def test_only_the_changed_runs_are_parsed_and_the_table_is_the_same(site, parsed):
    site, runs = site
    _read(site, runs)
    assert parsed[0] == sum(len(_lines(site, r)) - 1 for r in runs)
    parsed.clear()
    _read(site, runs)
    assert parsed == [sum(len(_lines(site, r)) - 1 for r in runs)]   # (the check's own parse)

    changed, gone = runs[0], runs[1]
    lines = _lines(site, changed)
    (site / run_cells_csv_path(changed)).write_text("".join(lines[:-1]))   # one row fewer
    new = "zz-added-run"
    (site / run_cells_csv_path(new)).parent.mkdir(parents=True)
    (site / run_cells_csv_path(new)).write_text("".join(
        [lines[0]] + [line.replace(f"{changed},", f"{new},", 1) for line in lines[1:]]))
    ids = [r for r in runs if r != gone] + [new]
    parsed.clear()
    df = _read(site, ids)
    assert parsed[0] == 2 * (len(lines) - 1) - 1          # the changed and the added run
    assert gone not in set(df["run"]) and new in set(df["run"])


@pytest.mark.parametrize("edit", [
    ("count", "9007199254740993"),        # an int float64 cannot hold: read otherwise
    ("host_busy", "1"),                   # a number in a boolean column
    ("p99_ms", "fast"),                   # text in a number column: pandas' error, as before
])
def test_a_run_read_otherwise_on_its_own_makes_every_file_parsed(site, parsed, edit):
    site, runs = site
    _read(site, runs)
    column, value = edit
    run_id = runs[2]
    lines = _lines(site, run_id)
    at = cell_table.COLUMNS.index(column)
    fields = lines[1].rstrip("\n").split(",")
    assert len(fields) == len(cell_table.COLUMNS)      # (no quoted field in this row)
    fields[at] = value
    lines[1] = ",".join(fields) + "\n"
    (site / run_cells_csv_path(run_id)).write_text("".join(lines))
    parsed.clear()
    try:
        expected = _from_nothing(site, runs)
    except (ValueError, TypeError) as exc:
        with pytest.raises(type(exc)):
            cell_table.read_runs(site, runs)
        return
    df = cell_table.read_runs(site, runs)
    assert_frame_equal(df, expected, check_exact=True)
    assert not (site / cell_frames.CELL_FRAMES).exists()


def test_each_run_is_kept_by_its_own_path(site, parsed):
    """Two runs with the same file (hard links, as the scale corpus's): each keeps its rows."""
    site, runs = site
    twin = "zz-twin"
    (site / run_cells_csv_path(twin)).parent.mkdir(parents=True)
    (site / run_cells_csv_path(twin)).hardlink_to(site / run_cells_csv_path(runs[0]))
    _read(site, runs + [twin])
    kept = cell_frames.Kept.load(site, cell_table._format_key())
    assert kept.runs[twin][:3] == kept.runs[runs[0]][:3]
    assert kept.runs[twin][3:] != kept.runs[runs[0]][3:]
    parsed.clear()
    _read(site, runs)                      # the twin gone: its rows go, the others are kept
    assert parsed == [sum(len(_lines(site, r)) - 1 for r in runs)]
