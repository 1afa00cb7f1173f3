"""The corpus-wide cell table: one row per repetition of every measured cell of every run, a
pandas DataFrame. Comparisons (compare.py) and history (history.py) are queries on it.

Each run's rows are written by its build stage to `assets/data/<run>/cells.csv`; the build's
reduce step concatenates them into `assets/data/cells.csv` (sorted, so the bytes do not depend
on the order runs were built in). A censored percentile (issue 10) has value NaN and its lower
bound in `<pNN>_at_least_ms`; a slot the model does not fill yet (host health, accounting)
is empty. Columns are listed in COLUMNS and documented in docs/data-format.md.
"""
from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from analysis.model import Run
from analysis.vocabulary import ENVIRONMENT_LABELS, LATENCY_KEYS, PERCENTILE_NAMES

# Identify a row; all text (a version "1.10" must not become the number 1.1).
KEY_COLUMNS = ("run", "series", "version", "date", "scenario", "system", "load", "repetition")
ACCOUNTING = ("sent", "completed", "timed_out", "errors", "not_sent")
AT_LEAST_COLUMNS = tuple(f"{name}_at_least_ms" for name in PERCENTILE_NAMES)
FLAG_COLUMNS = ("saturated", "saturation", "host_busy", "censored", "steady_class", "not_steady")
# The run's environment, one column per run.yml key: compare lists the differences.
ENV_COLUMNS = tuple(f"env_{key}" for key in ENVIRONMENT_LABELS)
COLUMNS = (KEY_COLUMNS + ("offered_rate", "count", "throughput_rps", "goodput_rps") + LATENCY_KEYS
           + AT_LEAST_COLUMNS + ACCOUNTING + FLAG_COLUMNS + ENV_COLUMNS)
# Columns added since the table was first written (issue 32): an older table reads without them.
OPTIONAL_COLUMNS = ("steady_class", "not_steady")
TEXT_COLUMNS = ("run", "series", "version", "date", "scenario", "system", "load", "saturation",
                "steady_class",
                *ENV_COLUMNS)
# Sort order of the corpus table.
ORDER = ("run", "scenario", "offered_rate", "load", "system", "repetition")


def run_rows(run: Run) -> list[dict]:
    """The cell table's rows for one analysed run, in the run's own order."""
    rows = []
    env = {f"env_{k}": (None if run.environment.get(k) is None else str(run.environment[k]))
           for k in ENVIRONMENT_LABELS}
    for scenario in run.scenarios:
        offered = {lp.id: lp.offered_rate for lp in scenario.load_points}
        for cell in scenario.measured():
            for rep in cell.repetitions:
                host = rep.host or cell.host
                row = {"run": run.id, "series": run.series, "version": run.version,
                       "date": run.date, "scenario": scenario.id, "system": cell.system,
                       "load": cell.load, "repetition": rep.index,
                       "offered_rate": offered.get(cell.load), "count": rep.stats.count,
                       "throughput_rps": rep.throughput_rps, "goodput_rps": rep.goodput_rps}
                for key in LATENCY_KEYS:
                    row[key] = rep.stats.value(key)
                censored = False
                for name in PERCENTILE_NAMES:
                    p = rep.stats.percentiles.get(name)
                    row[f"{name}_at_least_ms"] = p.at_least_ms if p is not None else None
                    censored |= bool(p is not None and p.censored)
                for key in ACCOUNTING:
                    row[key] = getattr(rep.accounting, key)
                row.update(saturated=cell.saturation.saturated,
                           saturation=" ".join(cell.saturation.reasons) or None,
                           host_busy=None if host is None else host.host_busy, censored=censored,
                           # issue 32: a repetition that measured a transient is no evidence
                           # for a comparison or a regression
                           steady_class=rep.steady.cls if rep.steady else None,
                           not_steady=bool(rep.steady and rep.steady.not_steady))
                row.update(env)
                rows.append(row)
    return rows


def frame(rows: Iterable[dict]) -> pd.DataFrame:
    """Rows -> the table with its columns in order and fixed types (nullable where a slot can
    be empty), so that a table read back from CSV equals the one written."""
    df = pd.DataFrame(list(rows), columns=list(COLUMNS))
    return _typed(df)


def _typed(df: pd.DataFrame) -> pd.DataFrame:
    for col in COLUMNS:
        if col in TEXT_COLUMNS:
            df[col] = df[col].astype("string")
        elif col in ("repetition", "count") + ACCOUNTING:
            df[col] = pd.to_numeric(df[col]).astype("Int64")
        elif col in ("saturated", "host_busy", "censored", "not_steady"):
            df[col] = df[col].astype("boolean")
        else:
            df[col] = pd.to_numeric(df[col]).astype("float64")
    return df


def runs_frame(runs: Iterable[Run]) -> pd.DataFrame:
    return frame(row for run in runs for row in run_rows(run))


def to_csv(df: pd.DataFrame) -> str:
    buf = io.StringIO()
    # repr-exact floats; NaN and missing values as empty fields
    df.to_csv(buf, index=False, lineterminator="\n")
    return buf.getvalue()


def run_cells_csv(run: Run) -> str:
    """to_csv(runs_frame([run])), the run's assets/data/<run>/cells.csv."""
    rows = run_rows(run)
    return _direct_csv(rows, CELL_KINDS) or to_csv(frame(rows))


def run_spectra_csv(run: Run) -> str:
    """to_csv(run_spectra(run)), the run's spectra.csv."""
    rows = spectra_rows(run)
    return _direct_csv(rows, SPECTRA_KINDS) or to_csv(spectra_frame(rows))


# A run's two CSVs hold a few dozen rows; through a DataFrame (typed columns, then to_csv) they
# took ~12 ms of every run's build, the csv module well under one. _direct_csv writes what
# to_csv writes for the values its column types are built from - None, and str, int, bool or
# float as the column's type takes them - and gives up (None: pandas writes it) on anything
# else. Each column's text, as pandas writes it: string and Int64 as str(), missing as "";
# boolean as True/False; float64 as numpy's shortest repr, which is Python's repr, NaN as "".
# tests/test_corpus_csv.py compares the two on the bundled runs and on generated rows.
CELL_KINDS = {col: "string" if col in TEXT_COLUMNS else
              "int" if col in ("repetition", "count") + ACCOUNTING else
              "boolean" if col in ("saturated", "host_busy", "censored", "not_steady") else "float"
              for col in COLUMNS}
SPECTRA_KINDS = {"run": "string", "scenario": "string", "system": "string", "load": "string",
                 "count": "int", "percentile": "float", "value_ms": "float", "censored": "bool"}
# Larger ints are rounded on the way through float64 (pandas' to_numeric takes a column of ints
# and None as floats, Int64 columns too): left to pandas.
_EXACT_INT = 2 ** 53


class _Other(Exception):
    """A value _direct_csv does not write (pandas does)."""


def _field(kind: str, v) -> str:
    t = type(v)
    if v is None and kind != "bool":
        return ""
    if kind == "float":
        if t is float:
            return "" if v != v else repr(v)
        if t is int and -_EXACT_INT <= v <= _EXACT_INT:
            return repr(float(v))
    elif kind == "string":
        if t is str:
            return v
    elif kind == "int":
        if t is int and -_EXACT_INT <= v <= _EXACT_INT:
            return str(v)
    elif t is bool:     # boolean (nullable), bool
        return "True" if v else "False"
    raise _Other


def _direct_csv(rows: list[dict], kinds: dict[str, str]) -> str | None:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(kinds)
    fields = list(kinds.items())
    try:
        for row in rows:
            if len(row) != len(fields) or not all(col in row for col, _ in fields):
                return None     # a missing column (NaN) or an extra one: pandas decides
            w.writerow([_field(kind, row[col]) for col, kind in fields])
    except _Other:
        return None
    return buf.getvalue()


def read_csv(path_or_text) -> pd.DataFrame:
    source = io.StringIO(path_or_text) if isinstance(path_or_text, str) else path_or_text
    return _typed(_read_raw(source))


def _read_raw(source) -> pd.DataFrame:
    df = pd.read_csv(source, dtype={c: "string" for c in TEXT_COLUMNS}, keep_default_na=False,
                     na_values={c: [""] for c in COLUMNS})
    for col in OPTIONAL_COLUMNS:
        if col not in df.columns:   # a table written before the column existed
            df[col] = pd.NA
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"cell table lacks columns {', '.join(missing)}")
    return df[list(COLUMNS)]


def concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """The corpus table from the runs' tables, in a fixed order."""
    if not frames:
        return frame([])
    df = _typed(pd.concat(frames, ignore_index=True))
    df = df.sort_values(list(ORDER), kind="mergesort", na_position="first")
    return df.reset_index(drop=True)


def read_runs(site_root: Path, run_ids: Iterable[str]) -> pd.DataFrame:
    """The corpus table from each run's assets/data/<run>/cells.csv (runs without one, e.g.
    failed runs, are left out). The files share one header, so their rows are joined as text
    and parsed once: a read_csv per run costs ~15 ms, 3 s for 200 runs. The rows the last call
    read are kept (cell_frames.py): only the runs whose file changed are parsed again."""
    from analysis.corpus import cell_frames
    site = Path(site_root)
    kept = cell_frames.Kept.load(site, _format_key())
    header = ",".join(COLUMNS) + "\n"
    chunks = []
    for run_id in sorted(run_ids):
        stamp = cell_frames.stamp(site, run_id)
        if stamp is None:
            continue
        rows = kept.rows(run_id, stamp)
        chunks.append(cell_frames.Chunk(run_id, stamp, rows,
                                        None if rows else _run_text(site, run_id, header)))
    if not chunks:
        return frame([])
    texts = [c.text for c in chunks if c.text is not None]
    parsed = _parse_exactly(texts, header) if texts else None
    if texts and parsed is None:
        # a value a parse of some runs alone may read otherwise: all of them at once
        kept.forget()
        return concat([_read_raw(io.StringIO(header + "".join(
            (c.text or _run_text(site, c.run, header))[0] for c in chunks)))])
    typed, runs = kept.assemble(chunks, parsed)
    if runs != kept.runs:
        cell_frames.Kept.save(site, _format_key(), typed, runs)
    return _sorted(typed)


def _run_text(site: Path, run_id: str, header: str) -> tuple[str, int]:
    """A run's rows as text, without the header, and their number of lines."""
    from analysis.paths import run_cells_csv_path
    path = site / run_cells_csv_path(run_id)
    text = path.read_text(encoding="utf-8")
    if not text.startswith(header):
        raise ValueError(f"{path}: not a cell table of this version (rebuild the run)")
    return text[len(header):], text.count("\n", len(header))


BOOLEAN_COLUMNS = ("saturated", "host_busy", "censored", "not_steady")


def _parse_exactly(texts: list[tuple[str, int]], header: str) -> pd.DataFrame | None:
    """The typed rows of some runs' texts ((rows, lines) each), parsed at once, when they are
    what one parse of every run's text gives them; else None. pandas infers a column's type
    from all of its values, so a column may be read otherwise beside other runs' values: here
    each column must be read as what every run's would be - numbers (ints and floats read
    alike up to 2**53), True/False in a boolean column, or empty - and each line one row."""
    raw = _read_raw(io.StringIO(header + "".join(text for text, _ in texts)))
    if len(raw) != sum(lines for _, lines in texts):
        return None     # a blank line, a quoted field over several lines, no last newline
    for col in COLUMNS:
        values = raw[col].dropna()
        if col in TEXT_COLUMNS or len(values) == 0:
            continue
        kind = raw[col].dtype.kind
        if col in BOOLEAN_COLUMNS:
            exact = kind == "b" or (kind == "O" and all(isinstance(v, (bool, np.bool_))
                                                        for v in values))
        else:
            exact = kind in "fi" and bool(values.abs().max() <= _EXACT_INT)
        if not exact:
            return None
    return _typed(raw)


def _sorted(df: pd.DataFrame) -> pd.DataFrame:
    df = df.sort_values(list(ORDER), kind="mergesort", na_position="first")
    return df.reset_index(drop=True)


# The corpus table's CSV, 14 MB at 1,000 runs: pandas' to_csv of it took ~0.9 s of CPU in every
# build that added a run. Its rows are sorted by run first and each value is written alone (no
# column's text depends on another row), so the text is the runs' blocks in run order, and a
# run's block is to_csv of its own rows. A build keeps where each run's block lies in the text it
# wrote, with the stat of the run's cells.csv it came from (CELL_BLOCKS); the next build reuses
# the blocks of the runs whose file is unchanged and writes the others' alone.
CELL_BLOCKS = ".cache/loadcurve/cell-blocks.json"


def _format_key() -> str:
    """What a block's text depends on beside the rows: pandas, and this module's code."""
    import hashlib
    return f"pandas {pd.__version__} " + hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


def corpus_csv(site_root: Path, df: pd.DataFrame) -> str:
    """to_csv(df) of the corpus table read_runs(site_root, ...) made, from the last build's
    blocks where their runs' files are unchanged. tests/test_corpus_csv.py."""
    import hashlib
    import json
    import os
    from analysis import atomic
    from analysis.paths import CELLS_CSV, run_cells_csv_path
    site = Path(site_root)
    header = to_csv(df.iloc[:0])
    runs = df["run"]
    if len(df) == 0 or runs.isna().any():
        return to_csv(df)
    values = runs.to_numpy(dtype=object)
    starts = [0] + [i for i in range(1, len(values)) if values[i] != values[i - 1]]
    bounds = list(zip(starts, starts[1:] + [len(values)]))
    format_key = _format_key()
    try:
        index = json.loads((site / CELL_BLOCKS).read_text())
        old = (site / CELLS_CSV).read_text(encoding="utf-8")
        if index["format"] != format_key or \
                index["sha256"] != hashlib.sha256(old.encode()).hexdigest():
            old, index = "", {"runs": {}}
    except (OSError, ValueError, KeyError, TypeError):
        old, index = "", {"runs": {}}
    parts, entries, at = [header], {}, len(header)
    runs_blocks = []
    for a, b in bounds:
        run_id = values[a]
        try:
            st = os.stat(site / run_cells_csv_path(run_id))
            stamp = [st.st_size, st.st_mtime_ns, st.st_ino, b - a]
        except OSError:
            stamp = None
        entry = index["runs"].get(run_id)
        kept = stamp is not None and isinstance(entry, list) and entry[:4] == stamp and old
        runs_blocks.append((run_id, a, b, stamp, old[entry[4]:entry[5]] if kept else None))
    fields = _csv_fields(df, [(a, b) for _, a, b, _, block in runs_blocks if block is None])
    done = 0   # (fields' rows written so far)
    for run_id, a, b, stamp, block in runs_blocks:
        if block is None and fields is None:
            block = to_csv(df.iloc[a:b])[len(header):]
        elif block is None:
            block = _rows_csv(fields, done, done + b - a)
            done += b - a
        if stamp is not None:
            entries[run_id] = stamp + [at, at + len(block)]
        parts.append(block)
        at += len(block)
    text = "".join(parts)
    atomic.write_text(site / CELL_BLOCKS, json.dumps(
        {"format": format_key, "sha256": hashlib.sha256(text.encode()).hexdigest(),
         "runs": entries}))
    return text


# A new block through pandas (a DataFrame slice and its to_csv) cost 6-9 ms a run: ~7 s of the
# main process in a build of 1,000 runs from nothing. _csv_fields makes each column's fields as
# to_csv makes them (pandas.core.indexes.base.get_values_for_csv, quoting minimal): a float64
# column as numpy's astype(str), an extension column (string, Int64, boolean) as its objects,
# a missing value as "". _rows_csv writes a run's rows of them with the csv module,
# set as pandas sets it. Any other column type: None, pandas writes the blocks.
def _csv_fields(df: pd.DataFrame, spans: list[tuple[int, int]]) -> list[list] | None:
    """Each column's fields for the rows of `spans` (row ranges, in order), one list a column."""
    rows = np.concatenate([np.arange(a, b) for a, b in spans]) if spans \
        else np.zeros(0, dtype=np.intp)
    columns = []
    for col in df.columns:
        series = df[col]
        if series.dtype == np.float64:
            # (numpy's shortest repr is Python's, as in _field: repr takes half the time)
            columns.append(["" if v != v else repr(v) for v in series.to_numpy()[rows].tolist()])
            continue
        if not isinstance(series.dtype, (pd.StringDtype, pd.Int64Dtype, pd.BooleanDtype)):
            return None
        fields = np.asarray(series.array[rows].astype(object))
        fields[series.isna().to_numpy()[rows]] = ""
        columns.append(fields.tolist())
    return columns


def _rows_csv(columns: list[list], a: int, b: int) -> str:
    """Rows a..b of _csv_fields' columns as to_csv writes them (without the header)."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_MINIMAL).writerows(
        zip(*(col[a:b] for col in columns)))
    return buf.getvalue()


# --- spectra: (run, scenario, system, load) -> the merged histogram's percentile spectrum ---

SPECTRA_COLUMNS = ("run", "scenario", "system", "load", "count", "percentile", "value_ms",
                   "censored")   # censored: the rank fell among unanswered requests


def spectra_frame(rows: Iterable[dict]) -> pd.DataFrame:
    df = pd.DataFrame(list(rows), columns=list(SPECTRA_COLUMNS))
    for col in ("run", "scenario", "system", "load"):
        df[col] = df[col].astype("string")
    df["count"] = pd.to_numeric(df["count"]).astype("Int64")
    for col in ("percentile", "value_ms"):
        df[col] = pd.to_numeric(df[col]).astype("float64")
    df["censored"] = df["censored"].astype(bool)
    return df


def spectra_rows(run: Run) -> list[dict]:
    return [{"run": run.id, "scenario": s.id, "system": c.system, "load": c.load,
             "count": c.stats.count, "percentile": p, "value_ms": v, "censored": censored}
            for s in run.scenarios for c in s.measured() for p, v, censored in c.spectrum]


def run_spectra(run: Run) -> pd.DataFrame:
    return spectra_frame(spectra_rows(run))


def read_spectra(path) -> pd.DataFrame:
    df = pd.read_csv(path, dtype={c: "string" for c in ("run", "scenario", "system", "load")},
                     keep_default_na=False, na_values={c: [""] for c in SPECTRA_COLUMNS})
    return spectra_frame(df.to_dict("records"))
