"""Read `comparisons/<id>.yml`: a comparison page declared in a small file.

    title: "Virtual threads against the pool"        # optional
    description: "..."                               # optional
    baseline: pool-vs-virtual:pool20                 # a run id, or run:system
    candidate: pool-vs-virtual:virtual
    metric: p99                                      # optional, default p99

The id is the file name. Problems raise one ManifestError naming file and line.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from analysis.errors import ManifestError
from analysis.paths import COMPARISON_SPECS_DIR
from analysis.read.checks import (ID_RE, Problems, load_yaml, show, string_at,
                                  unknown_keys)
from analysis.vocabulary import COMPARED_METRICS

KEYS = {"title", "description", "baseline", "candidate", "metric"}
COMPARISONS_DIR = COMPARISON_SPECS_DIR


@dataclass(frozen=True)
class ComparisonSpec:
    id: str
    path: str
    baseline: str
    candidate: str
    metric: str = "p99"
    title: str | None = None
    description: str | None = None


def _side(data, key, problems) -> str | None:
    value = string_at(data, key, (), problems, required=True)
    if value is None:
        return None
    run, _, system = value.partition(":")
    if not ID_RE.match(run) or (system and not ID_RE.match(system)):
        problems.add((key,), f"{show(value)} must be a run id or run:system")
        return None
    return value


def load_comparison(path: Path, shown: str) -> ComparisonSpec:
    text = path.read_text(encoding="utf-8")
    try:
        data = load_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ManifestError([f"{'line %d: ' % (mark.line + 1) if mark else ''}not valid YAML"],
                            path=shown) from None
    if not isinstance(data, dict):
        raise ManifestError(["must be a mapping with baseline and candidate"], path=shown)
    problems = Problems(text)
    unknown_keys(data, KEYS, (), problems)
    baseline, candidate = _side(data, "baseline", problems), _side(data, "candidate", problems)
    metric = data.get("metric", "p99")
    if metric not in COMPARED_METRICS:
        problems.add(("metric",),
                     f"must be one of {', '.join(COMPARED_METRICS)}, not {show(metric)}")
    title = string_at(data, "title", (), problems)
    description = string_at(data, "description", (), problems)
    if baseline and candidate and (":" in baseline) != (":" in candidate):
        problems.add(("candidate",), "give a system on both sides (run:system) or on neither")
    if not ID_RE.match(path.stem):
        problems.add((), f"file name {show(path.stem)} must use only a-z, 0-9, '-' and '_'")
    if problems.items:
        raise ManifestError(problems.messages(), path=shown)
    return ComparisonSpec(path.stem, shown, baseline, candidate, metric, title, description)


def find_comparisons(site_root: Path) -> list[Path]:
    folder = Path(site_root) / COMPARISONS_DIR
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.yml") if p.is_file())
