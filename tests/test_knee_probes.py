"""A URL run's knee search probe by probe (issue 32): bench/run.sh --find-knee keeps knee.json
and the probes' files (knee/<system>/r<rate>.hlog, .counts.json) in the run folder; the build
reads knee.json (analysis/read/knee.py) and the methodology prints each probe's rate, warm-up,
window, outcomes, p99, verdict and host check.

tests/fixtures/runs/url-knee-probes was recorded by bench/run.sh --find-knee (a Python
http.server of 4 workers x 50 ms, ceiling 80 req/s; see tests/test_harness_url.py) on a busy
host. The golden figures are the generator's own counts files read here with json, and the p99
that HdrHistogram's Java library computes from each probe's .hlog (the oracle)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from analysis.paths import find_data
from analysis.vocabulary import fmt_ms
from tests.conftest import REPO
from tests.helpers import URL_RUN

RUN = REPO / "tests" / "fixtures" / "runs" / "url-knee-probes"


def _build(tmp_path: Path, sources: dict[str, tuple[Path, object]]) -> tuple[subprocess.CompletedProcess, Path]:
    """One build of these runs (run id -> its source folder, and an edit of the copy or
    None): several runs share one build's start and chart imports; each run's outputs and
    error lines are its own."""
    runs, site = tmp_path / "runs", tmp_path / "site"
    for run_id, (source, edit) in sources.items():
        shutil.copytree(source, runs / run_id)
        if edit:
            edit(runs / run_id)
    site.mkdir()
    proc = subprocess.run([sys.executable, "-m", "analysis", "build", "--runs", str(runs),
                           "--site", str(site), "-q"], cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    return proc, site


@pytest.fixture(scope="module")
def knee_site(tmp_path_factory) -> Path:
    """The probes' run and the run whose search was recorded before the figures, built once."""
    proc, site = _build(tmp_path_factory.mktemp("knee"),
                        {RUN.name: (RUN, None), URL_RUN.name: (URL_RUN, None)})
    assert proc.returncode == 0, proc.stderr
    return site


def _knee_block(site: Path, source: Path) -> dict:
    doc = yaml.safe_load(find_data(site, source.name).read_text(encoding="utf-8"))
    return doc["methodology"]["knee_search"]


def test_each_probe_is_a_row_with_the_figures_of_its_own_files(knee_site, oracle):
    site = knee_site
    block = _knee_block(site, RUN)
    search = json.loads((RUN / "knee.json").read_text(encoding="utf-8"))["systems"]["sleep4"]
    rows = block["systems"][0]["probes"]
    assert [r["rate_text"] for r in rows] == [f"{p['rate']} req/s" for p in search["probes"]]
    assert [r["rate_text"] for r in rows] == ["10 req/s", "20 req/s", "40 req/s", "80 req/s",
                                              "60 req/s", "70 req/s"]
    for row, probe in zip(rows, search["probes"]):
        counts = json.loads((RUN / "knee" / "sleep4" / f"r{probe['rate']}.counts.json")
                            .read_text(encoding="utf-8"))
        w = counts["window"]
        assert (row["warmup_text"], row["window_text"]) == (f"{counts['warmup_s']} s",
                                                            f"{counts['duration_s']} s")
        assert [row[f"{k}_text"] for k in ("sent", "completed", "timed_out", "errors")] == \
            [f"{w[k]:,}" for k in ("sent", "completed", "timed_out", "errors")]
        java = subprocess.run([str(oracle / "javastats"),
                               str(RUN / "knee" / "sleep4" / f"r{probe['rate']}.hlog"), "-", "99"],
                              capture_output=True, text=True, check=True, timeout=120)
        p99_ms = json.loads(java.stdout.strip().splitlines()[-1])["percentiles"]["99"] / 1000
        assert row["p99_text"] == fmt_ms(p99_ms)
        assert (row["verdict"], row["why"]) == (probe["verdict"], probe["why"])
        assert row["host_text"].startswith(counts["host_check"]["verdict"])
    # the saturated probe: 2 of its 160 window requests timed out
    assert (rows[3]["verdict"], rows[3]["sent_text"], rows[3]["timed_out_text"]) == \
        ("saturated", "160", "2")
    assert block["source"].endswith("url-knee-probes/knee.json")
    assert "as the run's knee.json records them" in block["caption"]
    page = (site / "_reports" / "url-knee-probes.html").read_text(encoding="utf-8")
    assert ("<tr><td>sleep4</td><td>80 req/s</td><td>1 s</td><td>2 s</td><td>160</td>"
            "<td>158</td><td>2</td><td>0</td>") in page
    assert 'knee.json">knee.json</a>' in page


def test_a_search_recorded_before_the_figures_prints_dashes(knee_site):
    block = _knee_block(knee_site, URL_RUN)
    row = block["systems"][0]["probes"][0]
    assert (row["rate_text"], row["sent_text"], row["p99_text"], row["verdict"]) == \
        ("10 req/s", "–", "–", "good")
    assert "source" not in block or block["source"].endswith("url-knee/knee.json")


def test_a_bad_knee_json_is_one_error_naming_it(tmp_path):
    """Three copies of the probes' run, each with its own damage, in one build."""
    def negative(run: Path):
        text = (run / "knee.json").read_text(encoding="utf-8")
        (run / "knee.json").write_text(text.replace('"sent": 20,', '"sent": -20,', 1),
                                       encoding="utf-8")

    def broken(run: Path):
        (run / "knee.json").write_text('{"rule": "x",\n "systems": {\n', encoding="utf-8")

    def stranger(run: Path):
        data = json.loads((run / "knee.json").read_text(encoding="utf-8"))
        data["systems"]["other"] = data["systems"]["sleep4"]
        (run / "knee.json").write_text(json.dumps(data), encoding="utf-8")
    proc, _ = _build(tmp_path, {"negative": (RUN, negative), "broken": (RUN, broken),
                                "stranger": (RUN, stranger)})
    assert proc.returncode == 1
    assert "negative/knee.json: systems.sleep4.probes[0].sent: must be a whole number " \
           ">= 0, not -20" in proc.stderr, proc.stderr
    assert "broken/knee.json:3: not JSON" in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert [line for line in errors if "system 'other' is not a system of run.yml" in line
            and "stranger" in line], proc.stderr
    assert "Traceback" not in proc.stderr
