"""The charts of a comparison page: the load curves of both sides overlaid, and the percentile
spectrum of both at each load. Drawn with the run charts' own machinery (render.render_job), from
the cell table (medians over the repetitions) and the runs' spectrum tables."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from analysis.corpus import cell_table, comparison_curves
from analysis.write.charts import render, run_jobs
from analysis.write.charts.plots import color
from analysis.paths import run_spectra_csv_path
from analysis.vocabulary import fmt_ms


def _sides(a: pd.DataFrame, b: pd.DataFrame):
    """(label, colour, rows) for each (side, run, system), A's first."""
    return [(f"{side}: {run}:{system}", color(i), g)
            for i, (side, run, system, g) in enumerate(comparison_curves.side_groups(a, b))]


def _load_curve(a, b) -> dict[str, Any]:
    closed = comparison_curves.is_closed(a)
    systems = []
    for i, points in enumerate(comparison_curves.load_curve_points(a, b)):
        label = f"{points['side']}: {points['run']}:{points['system']}"
        systems.append({"label": label, "color": color(i),
                        "offered": points["offered"], "p50_ms": points["p50_ms"],
                        "p99_ms": points["p99_ms"], "saturated": points["saturated"],
                        "ceiling_rps": None,
                        **{f"{name}_titles": _titles(label, points, name, closed)
                           for name in ("p50", "p99")}})
    if closed:
        return {"systems": systems, "x_label": "throughput (requests/s)",
                "title": "Latency vs throughput (median of repetitions)"}
    return {"systems": systems, "title": "Latency vs offered load (median of repetitions)"}


def _titles(label: str, points: dict[str, Any], name: str, closed: bool) -> list[str | None]:
    """Each point's <title> (issue 34): the side, the load, the statistic with its unit."""
    x_text = "requests/s achieved" if closed else "requests/s offered"
    return [None if v is None else
            f"{label} at {x:,g} {x_text}: {name} {fmt_ms(v)} ms (median of the repetitions)"
            + ("; saturated" if sat else "")
            for x, v, sat in zip(points["offered"], points[f"{name}_ms"], points["saturated"])]


def _spectra(site: Path, runs: list[str]) -> pd.DataFrame:
    frames = [cell_table.read_spectra(site / run_spectra_csv_path(r)) for r in dict.fromkeys(runs)
              if (site / run_spectra_csv_path(r)).is_file()]
    return pd.concat(frames, ignore_index=True) if frames else cell_table.spectra_frame([])


def chart_jobs(spec, a, b, by_system: bool, charts_doc: dict[str, Any],
               site: Path) -> list[dict[str, Any]]:
    """The jobs (render.render_job) for a comparison; fills the load curve's pixel size."""
    curve = charts_doc["load_curve"]
    jobs = [{"kind": "load_curve", "data": _load_curve(a, b), "svg": curve["svg"],
             "png": curve["png"]}]
    curve["width"], curve["height"] = run_jobs.pixel_sizes(jobs)[curve["png"]]
    spectra = _spectra(site, list(a["run"]) + list(b["run"]))
    sides = _sides(a, b)
    for entry in charts_doc["spectrum"]:
        curves = []
        for label, colour, g in sides:
            run, system = g["run"].iloc[0], g["system"].iloc[0]
            pts = spectra[(spectra["run"] == run) & (spectra["system"] == system)
                          & (spectra["load"] == entry["load"])]
            if pts.empty:
                continue
            curves.append({"label": label, "color": colour, "count": int(pts["count"].iloc[0]),
                           "points": list(zip(pts["percentile"].tolist(),
                                              pts["value_ms"].tolist(),
                                              pts["censored"].tolist()))})
        jobs.append({"kind": "spectrum", "svg": entry["svg"], "png": entry["png"],
                     "data": {"title": entry["title"],
                              "curves": curves}})
    return jobs


def draw(jobs: list[dict[str, Any]], site: Path) -> int:
    for job in jobs:
        (site / job["svg"]).parent.mkdir(parents=True, exist_ok=True)
        render.render_job(job, str(site))
    return len(jobs)
