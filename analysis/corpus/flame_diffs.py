"""The differential CPU flame graphs of a comparison page (issue 25): for each compared cell
whose two sides both have a CPU flame graph (the `.folded` files their runs' builds wrote),
both sides' stacks, their sample totals and the frames whose self share changed most, B
against A (issue 34's table; issue 35: counted here, not in the writer, which only draws and
prints them).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from analysis.corpus.compare import CellComparison
from analysis.derive.flame_top import FrameChange, top_changes
from analysis.paths import flame_folded_path
from analysis.read.folded import parse_folded


@dataclass
class StackPair:
    cell: CellComparison
    stacks_a: dict                      # {(frame, ...) root first: samples}, the baseline's
    stacks_b: dict                      # the candidate's
    samples_a: int
    samples_b: int
    top: list[FrameChange]              # flame_top.top_changes, B against A
    digest: str                         # of both files: the page is redrawn when they change


def _read(site: Path, rel: str) -> tuple[str, dict] | None:
    path = site / rel
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    return text, parse_folded(text, source=rel)


def stack_pairs(site: Path, baseline: str, candidate: str,
                result: list[CellComparison]) -> list[StackPair]:
    """Each compared cell (compare.compare_frames' result, in its order) whose two sides
    have CPU stacks; `baseline` and `candidate` are the page's `run[:system]` sides."""
    out = []
    for c, paths in zip(result, _side_paths(baseline, candidate, result)):
        sides = [_read(site, rel) for rel in paths]
        if None in sides:
            continue
        (text_a, a), (text_b, b) = sides
        digest = hashlib.sha256(text_a.encode() + b"\0" + text_b.encode()).hexdigest()[:16]
        out.append(StackPair(c, a, b, sum(a.values()), sum(b.values()), top_changes(a, b),
                             digest))
    return out


def _side_paths(baseline: str, candidate: str, result: list[CellComparison]
                ) -> list[tuple[str, str]]:
    run_a, run_b = baseline.partition(":")[0], candidate.partition(":")[0]
    return [tuple(flame_folded_path(run, system, c.load, c.scenario, "cpu")
                  for run, system in ((run_a, c.system_a), (run_b, c.system_b)))
            for c in result]


def stack_files(baseline: str, candidate: str, result: list[CellComparison]) -> list[str]:
    """The files stack_pairs looks for, there or not (corpus/comparison_memo.py keys on them)."""
    return [rel for paths in _side_paths(baseline, candidate, result) for rel in paths]
