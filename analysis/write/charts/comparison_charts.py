"""The charts of a comparison page: the load curves of both sides overlaid, and the percentile
spectrum of both at each load. Drawn with the run charts' own machinery (render.render_job), from
the cell table (medians over the repetitions) and the runs' spectrum tables."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from analysis.corpus import cell_table
from analysis.write.charts import render, run_jobs
from analysis.write.charts.plots import color
from analysis.paths import run_spectra_csv_path
from analysis.vocabulary import fmt_ms


def _sides(a: pd.DataFrame, b: pd.DataFrame):
    """(label, colour, rows) for each (side, run, system), A's first."""
    out = []
    for side, rows in (("A", a), ("B", b)):
        for (run, system), g in rows.groupby(["run", "system"], sort=False):
            out.append((f"{side}: {run}:{system}", color(len(out)), g))
    return out


def _load_curve(a, b) -> dict[str, Any]:
    # a closed loop (issue 23: no offered rate) is drawn against the throughput it achieved,
    # in order of it (the cell table carries no connections)
    closed = bool(len(a)) and a["offered_rate"].isna().all()
    systems = []
    for label, colour, g in _sides(a, b):
        per_load = g.groupby("load", sort=False).agg(
            offered=("throughput_rps" if closed else "offered_rate",
                     "median" if closed else "first"), p50=("p50_ms", "median"),
            p99=("p99_ms", "median"), saturated=("saturated", "any")).sort_values("offered")
        systems.append({"label": label, "color": colour,
                        "offered": per_load["offered"].tolist(),
                        "p50_ms": [None if pd.isna(v) else v for v in per_load["p50"]],
                        "p99_ms": [None if pd.isna(v) else v for v in per_load["p99"]],
                        "saturated": [bool(v) for v in per_load["saturated"]],
                        "ceiling_rps": None,
                        **{f"{name}_titles": _titles(label, per_load, name, closed)
                           for name in ("p50", "p99")}})
    if closed:
        return {"systems": systems, "x_label": "throughput (requests/s)",
                "title": "Latency vs throughput (median of repetitions)"}
    return {"systems": systems, "title": "Latency vs offered load (median of repetitions)"}


def _titles(label: str, per_load: pd.DataFrame, name: str, closed: bool) -> list[str | None]:
    """Each point's <title> (issue 34): the side, the load, the statistic with its unit."""
    x_text = "requests/s achieved" if closed else "requests/s offered"
    return [None if pd.isna(v) else
            f"{label} at {x:,g} {x_text}: {name} {fmt_ms(v)} ms (median of the repetitions)"
            + ("; saturated" if sat else "")
            for x, v, sat in zip(per_load["offered"], per_load[name], per_load["saturated"])]


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
