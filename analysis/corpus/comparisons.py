"""The comparison pages the site declares (`comparisons/<id>.yml`), read for the build's reduce
step (write/corpus_pages.py), which queries the cell table for each (compare.py) and writes it:
the reading is a reader's (read/comparison.py), so write/ gets the declarations as data."""
from __future__ import annotations

from pathlib import Path

from analysis.errors import LoadcurveError
from analysis.read.comparison import ComparisonSpec, find_comparisons, load_comparison


def declared_comparisons(site_root: Path) -> list[ComparisonSpec | LoadcurveError]:
    """Every declaration in file-name order; one that cannot be read stands as its error, so
    that it costs its own page only."""
    out: list[ComparisonSpec | LoadcurveError] = []
    for path in find_comparisons(site_root):
        try:
            out.append(load_comparison(path, f"comparisons/{path.name}"))
        except LoadcurveError as exc:
            out.append(exc)
    return out
