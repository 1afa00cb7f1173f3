"""Read one run's inputs (.hlog, optional JFR) and aggregate them: the I/O side of aggregate.py.

`analyse_run(manifest, site_root)` returns the run model (analysis/model.py), which the writers
turn into `_data/runs/<id>.yml`, CSV, charts and the report page. A cell whose `.hlog` is
missing is listed under `missing` and left out; a `.hlog` that cannot be read fails the run with
an HlogError naming it.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from analysis import aggregate
from analysis.errors import HlogError
from analysis.model import Accounting, Jvm, Missing, Repetition, Run
from analysis.read.hdr.double import sum_double_histograms
from analysis.read.hdr.histogram import Histogram, sum_histograms
from analysis.read.hdr.log import read_hlog
from analysis.read.jfr import summarize_jfr
from analysis.read.manifest import Manifest, default_jfr
from analysis.write.paths import repo_relative


# What of a JFR summary goes into _data (kept small: no pause lists, no warnings).
JVM_KEYS = ("jdk", "duration_s", "truncated", "gc", "safepoint", "cpu", "allocation_rate_mb_s",
            "threads", "samples", "hot_methods", "attribution")
HOT_METHODS_IN_DATA = 5


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 3)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def jvm_for_data(summary: dict[str, Any]) -> dict[str, Any]:
    """The part of summarize_jfr's result that the pages print, rounded for display."""
    out = {}
    for key in JVM_KEYS:
        if key not in summary:
            continue
        value = summary[key]
        if key == "gc" and isinstance(value, dict):
            value = {k: v for k, v in value.items() if k != "pauses"}
        if key == "hot_methods" and isinstance(value, list):
            value = value[:HOT_METHODS_IN_DATA]
        out[key] = _rounded(value)
    return out


def pauses_on_series_axis(summary: dict[str, Any], t0_epoch_s: float,
                          span_s: float) -> list[dict[str, float]]:
    """GC pauses as [{t_s, duration_ms}] on the latency-over-time axis (s since the first
    interval of the log), keeping those inside the measured span."""
    gc = summary.get("gc") or {}
    out = []
    for start_epoch_s, duration_ms in gc.get("pauses") or []:
        t = start_epoch_s - t0_epoch_s
        if 0.0 <= t <= span_s:
            out.append({"t_s": t, "duration_ms": duration_ms})
    return out


def combine(histograms: list):
    """The sum of several histograms (repetitions of one cell), added the way Java adds them."""
    if len(histograms) == 1:
        return histograms[0]
    if all(isinstance(h, Histogram) for h in histograms):
        return sum_histograms(histograms)
    if any(isinstance(h, Histogram) for h in histograms):
        raise HlogError("repetitions mix Histogram and DoubleHistogram logs; they cannot be "
                        "combined into one cell")
    return sum_double_histograms(histograms)


def front_matter_like(path: Path) -> bool:
    """Whether Jekyll would take the file for a page: its first line is `---`. runs/ is
    published as raw files; `render_with_liquid: false` in _config.yml stops Liquid there on
    Jekyll 4, but 3.10 ignores that key."""
    with open(path, "rb") as f:
        return f.readline().rstrip() == b"---"


def analyse_run(manifest: Manifest, site_root: Path) -> Run:
    """Read every cell's inputs and build the run model (aggregate.build_run)."""
    unit = manifest.value_unit
    warnings: list[str] = []
    if front_matter_like(manifest.path):
        warnings.append(f"{repo_relative(manifest.path, site_root)}:1: starts with a '---' line: "
                        f"Jekyll 3.10 (GitHub Pages) would publish it as a page and run Liquid in "
                        f"it; delete that line (YAML does not need it)")
    missing: list[Missing] = []
    measured: dict[tuple[str, str], list[tuple[Repetition, Any]]] = {}
    durations = {lp.id: lp.duration_s for lp in manifest.load_points}
    for cell in manifest.cells:
        path = manifest.resolve(cell.hlog)
        rel = repo_relative(path, site_root)
        if not path.is_file():
            missing.append(Missing(cell.load, cell.system, rel))
            warnings.append(f"{rel}: missing; cell {cell.system}/{cell.load} left out")
            continue
        log = read_hlog(path)
        for w in log.warnings:
            warnings.append(f"{rel}: {w}")
        intervals = log.select(cell.tag)
        if not intervals:
            tags = ", ".join("untagged" if t is None else repr(t) for t in log.tags()) or "none"
            raise HlogError(f"no intervals with tag {cell.tag!r} (tags in the file: {tags})",
                            path=rel, hint=f"set `tag:` for cell {cell.system}/{cell.load} in run.yml")
        histogram = log.merged(tag=cell.tag)
        jvm = gc_pauses = None
        jfr_rel = default_jfr(manifest, cell)
        if jfr_rel is not None:
            summary = summarize_jfr(manifest.resolve(jfr_rel),
                                    [(a["pattern"], a["label"]) for a in manifest.jfr_attribution])
            jvm = Jvm(repo_relative(manifest.resolve(jfr_rel), site_root), jvm_for_data(summary))
            for w in summary.get("warnings") or []:
                warnings.append(f"{jvm.source}: {w}")
            gc_pauses = pauses_on_series_axis(summary, intervals[0].start_ms / 1000.0,
                                              sum(iv.length_s for iv in intervals))
        stats = aggregate.histogram_stats(histogram, unit)
        repetition = Repetition(
            index=cell.repetition, source=rel, stats=stats,
            achieved_rate=aggregate.achieved_rate(stats.count, durations[cell.load]),
            accounting=Accounting(sent=cell.sent, errors=cell.errors, timed_out=cell.timeouts),
            series=aggregate.interval_series(intervals, unit), jvm=jvm, gc_pauses=gc_pauses)
        measured.setdefault((cell.load, cell.system), []).append((repetition, histogram))
    return aggregate.build_run(manifest, measured, combine, missing=missing, warnings=warnings,
                               manifest_path=repo_relative(manifest.path, site_root))
