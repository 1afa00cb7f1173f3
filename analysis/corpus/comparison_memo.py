"""Whether a comparison page (write/corpus_pages.Reduce.comparison) can be left as the last
build wrote it without computing it again. Its document, charts and page are a function of the
declaration, the code, and files of its two runs only: the runs' cell tables (the rows it
compares and the page's date), their spectra (the charts) and the flame stacks of the compared
cells. A run added to another cell of the corpus changes none of them, yet computing the
comparison again (the tests, the environment differences, the differential flame graphs) cost
~0.3 s of every such build at 1,000 runs.

The key holds the size, modification time and inode of each of those files, as the reduce
step's own skip (pipeline/corpus_cache.py) and the runs' keys do. Which flame files a
comparison reads depends on its compared cells, so the key holds the ones the last computation
looked for ("probes", found or not): while the cell tables are unchanged the cells are the
same, and so are the files looked for; when a cell table changes the key changes with it."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from analysis.paths import run_cells_csv_path, run_spectra_csv_path


def _stamp(site: Path, rel: str) -> list[int] | None:
    try:
        st = os.stat(site / rel)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ino]


class Inputs:
    """A comparison's inputs; the runs' files are stamped when made (before they are read)."""

    def __init__(self, site: Path, spec, code: str):
        self.site, self.spec, self.code = site, spec, code
        runs = [spec.baseline.partition(":")[0], spec.candidate.partition(":")[0]]
        self.stamps = [[rel, _stamp(site, rel)] for run in runs
                       for rel in (run_cells_csv_path(run), run_spectra_csv_path(run))]

    def key(self, probes: list[str]) -> str:
        """`probes`: the flame stack files the comparison looks for."""
        text = json.dumps([self.code, dataclasses.asdict(self.spec), self.stamps,
                           [[rel, _stamp(self.site, rel)] for rel in probes]])
        return hashlib.sha256(text.encode()).hexdigest()

    def entry(self, probes: list[str], written: list[str], page: str) -> dict[str, Any]:
        """What the next build needs to leave the comparison alone: its key, the files it
        looked for, the files it owns (kept from the clean-up) and its page's text."""
        return {"key": self.key(probes), "probes": list(probes), "written": list(written),
                "page": page}

    def still(self, kept: Any) -> bool:
        """Whether `kept` (an entry() of the last build) is still the comparison's: same
        inputs, and every file it wrote still there."""
        if not self.code or not isinstance(kept, dict):
            return False
        probes, written = kept.get("probes"), kept.get("written")
        if not isinstance(probes, list) or not isinstance(written, list) \
                or not isinstance(kept.get("page"), str):
            return False
        if kept.get("key") != self.key(probes):
            return False
        return all((self.site / rel).is_file() for rel in written)
