"""The rows cell_table.read_runs read from each run's cells.csv, kept for the next build
(CELL_FRAMES): parsing all of them took ~0.35 CPU s of every build that added a run at 1,000
runs, though only the added run's file was new. Each run's rows are kept with the size,
modification time and inode of the file they were read from, by run id (each run's own path:
the scale corpus's hard-linked copies are read each on its own), and are used again only
while those are the file's, with the same pandas and cell_table.py (the format key).

The rows are kept typed and in the order of the runs (sorted by id), each run's rows in the
order of its file: what one parse of all the files joined gives before the table is sorted,
so the sort that follows makes the same table (the sort is stable)."""
from __future__ import annotations

import os
import pickle
import stat as stat_mode
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import atomic
from analysis.paths import run_cells_csv_path

CELL_FRAMES = ".cache/loadcurve/cell-frames.pickle"


def stamp(site: Path, run_id: str) -> list[int] | None:
    """The run's cells.csv's size, mtime and inode; None when it is not a file."""
    try:
        st = os.stat(site / run_cells_csv_path(run_id))
    except OSError:
        return None
    if not stat_mode.S_ISREG(st.st_mode):
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ino]


@dataclass
class Chunk:
    run: str
    stamp: list[int]
    kept: tuple[int, int] | None       # where its rows lie in the kept frame
    text: tuple[str, int] | None       # else: its rows' text and number of lines


class Kept:
    def __init__(self, site: Path, frame: pd.DataFrame | None = None,
                 runs: dict[str, list] | None = None):
        self.site = site
        self.frame = frame
        # run -> [size, mtime_ns, inode, first row, end row] in `frame`
        self.runs = runs or {}

    @classmethod
    def load(cls, site: Path, format_key: str) -> "Kept":
        try:
            with open(site / CELL_FRAMES, "rb") as f:
                state = pickle.load(f)
            if state["format"] == format_key and isinstance(state["frame"], pd.DataFrame) \
                    and isinstance(state["runs"], dict):
                return cls(site, state["frame"], state["runs"])
        except Exception:  # noqa: BLE001 - a kept frame that cannot be read: the files are
            pass
        return cls(site)

    def rows(self, run_id: str, now: list[int]) -> tuple[int, int] | None:
        entry = self.runs.get(run_id)
        if self.frame is None or not isinstance(entry, list) or entry[:3] != now:
            return None
        return entry[3], entry[4]

    def assemble(self, chunks: list[Chunk], parsed: pd.DataFrame | None
                 ) -> tuple[pd.DataFrame, dict[str, list]]:
        """The rows of `chunks` in their order, from the kept frame or `parsed` (the rows of
        the chunks with a text, parsed in their order), and where each run's lie."""
        parts = [p for p in (self.frame, parsed) if p is not None]
        base = parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)
        at = 0 if self.frame is None else len(self.frame)
        order, runs, start = [], {}, 0
        for chunk in chunks:
            if chunk.kept is not None:
                first, end = chunk.kept
            else:
                first, end = at, at + chunk.text[1]
                at = end
            order.append(np.arange(first, end))
            runs[chunk.run] = [*chunk.stamp, start, start + end - first]
            start += end - first
        return base.take(np.concatenate(order)).reset_index(drop=True), runs

    def forget(self) -> None:
        (self.site / CELL_FRAMES).unlink(missing_ok=True)

    @staticmethod
    def save(site: Path, format_key: str, frame: pd.DataFrame, runs: dict[str, list]) -> None:
        (site / CELL_FRAMES).parent.mkdir(parents=True, exist_ok=True)
        atomic.write_bytes(site / CELL_FRAMES, pickle.dumps(
            {"format": format_key, "frame": frame, "runs": runs},
            protocol=pickle.HIGHEST_PROTOCOL))
