"""Where every generated file goes: repo-relative, '/'-separated paths (they are also URLs).
A leaf module: the readers, writers and the build all ask it, it asks nobody."""
from __future__ import annotations

import os
from pathlib import Path

REPORTS_DIR = "_reports"
# The data documents of runs no post names (issue 15): Jekyll never reads this folder, so a
# build of 1,000 runs does not parse 1,000 documents; their pages are rendered by Python
# (write/liquid_pages.py). A run some post names has its document in _data/runs/ instead.
RUN_DATA_DIR = "_rundata"


def data_path(run_id: str, in_posts: bool = True) -> str:
    """The run's data document: under _data/runs/ (Jekyll's site.data.runs, which the includes
    posts use read) when some post names the run, else under RUN_DATA_DIR."""
    return f"_data/runs/{run_id}.yml" if in_posts else f"{RUN_DATA_DIR}/{run_id}.yml"


def find_data(site_root: str | os.PathLike, run_id: str) -> Path:
    """Where the run's data document is now (either place), for readers of a built site."""
    named = Path(site_root) / data_path(run_id)
    return named if named.is_file() else Path(site_root) / data_path(run_id, in_posts=False)


def _prefix(scenario: str | None) -> str:
    """A scenario's files start with its id (issue 11), as its charts do (chartset.py); a run
    without scenarios keeps the names it had."""
    return "" if scenario is None else f"{scenario}-"


def series_csv_path(run_id: str, system: str, load: str, scenario: str | None = None) -> str:
    return f"assets/data/{run_id}/{_prefix(scenario)}{system}-{load}.csv"


def flame_folded_path(run_id: str, system: str, load: str, scenario: str | None,
                      kind: str) -> str:
    """A cell's flame graph stacks of one event kind, beside the cell's CSV."""
    return series_csv_path(run_id, system, load, scenario)[:-len(".csv")] + f".{kind}.folded"


def table_csv_path(run_id: str, scenario: str | None = None) -> str:
    return f"assets/data/{run_id}/{_prefix(scenario)}load-curve.csv"


def summary_csv_path(run_id: str) -> str:
    """The scenario x target summary table of a run with scenarios (issue 11)."""
    return f"assets/data/{run_id}/summary.csv"


def jmh_csv_path(run_id: str) -> str:
    """A JMH run's results: one row per benchmark x params x mode (issue 13)."""
    return f"assets/data/{run_id}/jmh.csv"


def repo_relative(path: str | os.PathLike, site_root: str | os.PathLike) -> str:
    """A path as the site links it: relative to the site root, '/'-separated."""
    # relpath makes both absolute and normal itself (Path objects around it were most of the
    # cost: a run asks this ~200 times); "" is "." as Path("") is
    rel = os.path.relpath(os.fspath(path) or ".", os.fspath(site_root) or ".")
    return rel if os.sep == "/" else Path(rel).as_posix()


def chart_path(run_id: str, name: str, ext: str) -> str:
    return f"assets/charts/{run_id}/{name}.{ext}"


def report_url(run_id: str) -> str:
    return f"/reports/{run_id}/"


def report_path(run_id: str) -> str:
    return f"{REPORTS_DIR}/{run_id}.html"


def scenario_url(run_id: str, scenario: str) -> str:
    """A scenario's page of a run with scenarios (issue 11), below the run's report."""
    return f"/reports/{run_id}/{scenario}/"


def scenario_report_path(run_id: str, scenario: str) -> str:
    # in a folder named after the run, inside the reports collection: the page sets its
    # permalink (the collection's /reports/:name/ would give every run's `sleep` one URL)
    return f"{REPORTS_DIR}/{run_id}/{scenario}.html"


# The corpus-wide outputs (issue 12): written by the build's reduce step, not by one run.
CELLS_CSV = "assets/data/cells.csv"
HISTORY_DATA_DIR = "_data/history"
COMPARISON_DATA_DIR = "_data/comparisons"
SERIES_DIR = "_series"
COMPARISONS_DIR = "_comparisons"
# The comparison specs people write (comparisons/<id>.yml; read/comparison.py reads them)
COMPARISON_SPECS_DIR = "comparisons"
REGRESSIONS_DATA = "_data/regressions.yml"


def run_cells_csv_path(run_id: str) -> str:
    """One run's rows of the cell table (the reduce step concatenates them)."""
    return f"assets/data/{run_id}/cells.csv"


def history_url(series: str) -> str:
    return f"/history/{series}/"


def comparison_url(comparison_id: str) -> str:
    return f"/comparisons/{comparison_id}/"


def run_spectra_csv_path(run_id: str) -> str:
    """One run's percentile spectra, per cell (comparison pages overlay them)."""
    return f"assets/data/{run_id}/spectra.csv"


def converted_hlog_path(run_id: str, results_rel: str) -> str:
    """The .hlog recorded from a load tool's per-request file (issue 23), published beside
    the run's data: the file's path inside the run folder, with `.hlog` added."""
    return f"assets/data/{run_id}/imported/{results_rel}.hlog"


def merged_hlog_path(run_id: str, cell) -> str:
    """The .hlog of a cell repetition's generators' logs added (issue 33), published beside the
    run's data: where the cell's own log would be in the run folder."""
    folder = "/".join(x for x in (cell.scenario, cell.system) if x)
    return f"assets/data/{run_id}/merged/{folder}/{cell.load}.{cell.repetition}.hlog"
