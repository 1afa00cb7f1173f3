"""Every module of analysis/ stays under MAX_LINES (issue 35: modules by family): a module that
grows past it is split by what it does before it takes in a second family of code."""
from __future__ import annotations

from pathlib import Path

from tests.conftest import REPO

PACKAGE = REPO / "analysis"
MAX_LINES = 600
# Modules over the limit that another branch of issue 35 is splitting, each with that branch:
# drop an entry when its branch is merged (the test fails once the module is under the limit,
# so a stale entry does not stay).
BEING_SPLIT: dict[str, str] = {}


def line_counts(package: Path) -> dict[str, int]:
    """Module path (relative to `package`) -> its lines, for every .py file below it."""
    return {path.relative_to(package).as_posix():
            len(path.read_text(encoding="utf-8").splitlines())
            for path in sorted(package.rglob("*.py"))}


def oversized(package: Path) -> dict[str, int]:
    return {name: n for name, n in line_counts(package).items() if n > MAX_LINES}


def test_no_module_over_the_limit():
    over = {name: n for name, n in oversized(PACKAGE).items() if name not in BEING_SPLIT}
    assert not over, (f"over {MAX_LINES} lines (split them by family, as write/*_views.py): "
                      + ", ".join(f"analysis/{name} ({n})" for name, n in sorted(over.items())))


def test_every_exception_is_still_over_the_limit():
    counts = line_counts(PACKAGE)
    stale = {name: branch for name, branch in BEING_SPLIT.items()
             if counts.get(name, 0) <= MAX_LINES}
    assert not stale, f"split or gone, drop them from BEING_SPLIT: {stale}"
