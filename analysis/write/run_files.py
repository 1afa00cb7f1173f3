"""What one run's build writes, as data (issue 35): each kind's `outputs` step
(analysis/kinds.py: write/load_files.py, write/jmh_views.py) returns them, and the pipeline
orders, spreads and commits the files (pipeline/stages.py, atomically: analysis/atomic.py)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Union

# text (written as UTF-8), bytes, or a function that makes either when the file is committed
Content = Union[str, bytes, Callable[[], Union[str, bytes]]]


@dataclass
class OutputFile:
    path: str               # relative to the site root (analysis/paths.py)
    content: Content


@dataclass
class RunFiles:
    """A run's files in the order they are committed, and its chart jobs: each job's files
    (svg, png, narrow_svg) are drawn later by write/charts/render.py, beside the others'."""
    files: list[OutputFile]
    chart_jobs: list[dict[str, Any]]
    warnings: list[str] = field(default_factory=list)
    cells: int = 0          # how many cells (results, for a JMH run) the progress line says
