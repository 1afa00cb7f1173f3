"""Whether the build's reduce step (analysis/write/corpus_pages.py) can be skipped: its inputs
are every run's cell and spectrum tables and the comparisons/*.yml files; when none changed
(same sizes and modification times, same code) and its outputs are all there, a no-change build
neither loads pandas nor reads a table. Light on purpose: it runs before pandas is imported.

It also keeps the digest of the code that drew the step's charts (`drawn_by`): the step draws
a chart only when its data changed, so a change of the drawing code alone must make it draw
them all, as a change of code rebuilds every run (cache.code_version)."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from analysis import atomic
# (not from read/comparison.py: it imports pandas)
from analysis.paths import COMPARISON_SPECS_DIR, run_cells_csv_path, run_spectra_csv_path

STATE = "corpus.json"


def inputs_digest(site: Path, run_ids: list[str], code: str) -> str:
    h = hashlib.sha256(code.encode())
    files = [run_cells_csv_path(r) for r in sorted(run_ids)] + \
        [run_spectra_csv_path(r) for r in sorted(run_ids)]
    folder = site / COMPARISON_SPECS_DIR
    if folder.is_dir():
        files += sorted(p.relative_to(site).as_posix() for p in folder.glob("*.yml"))
    for rel in files:
        try:
            st = (site / rel).stat()
            h.update(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
        except OSError:
            h.update(f"{rel}\0-\0".encode())
    return h.hexdigest()


def up_to_date(cache: Path, site: Path, digest: str) -> bool:
    try:
        state: dict[str, Any] = json.loads((cache / STATE).read_text())
        if state.get("inputs") != digest:
            return False
        return all((site / rel).stat().st_size == size for rel, size in state["outputs"].items())
    except (OSError, ValueError, KeyError, AttributeError, TypeError):
        return False


def last(cache: Path) -> tuple[str | None, dict[str, list], dict[str, dict]]:
    """The code digest the step's charts were last drawn by (None: unknown), its
    comparisons' document digests (corpus_pages.Reduce.known) and their inputs
    (Reduce.kept: corpus/comparison_memo.py)."""
    try:
        state = json.loads((cache / STATE).read_text())
        drawn_by, known = state.get("drawn_by"), state.get("comparisons")
        kept = state.get("comparison_inputs")
    except (OSError, ValueError, AttributeError):
        return None, {}, {}
    return (drawn_by if isinstance(drawn_by, str) else None,
            known if isinstance(known, dict) else {},
            kept if isinstance(kept, dict) else {})


def record(cache: Path, site: Path, digest: str, outputs: set[str], drawing_code: str,
           comparisons: dict[str, list], comparison_inputs: dict[str, dict] | None = None
           ) -> None:
    """`digest` "" when the step is to run again next build (it warned), though its charts are
    all drawn by `drawing_code`."""
    sizes = {rel: (site / rel).stat().st_size for rel in sorted(outputs) if (site / rel).is_file()}
    atomic.write_record(cache / STATE, json.dumps(
        {"inputs": digest, "outputs": sizes, "drawn_by": drawing_code,
         "comparisons": comparisons, "comparison_inputs": comparison_inputs or {}}, indent=1))
