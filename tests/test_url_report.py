"""The report of a run measured by URL (issue 24, bench/run.sh --url --find-knee): its
methodology says what the target was, that generator and server shared the host, that the server
side was not observed, how each cell waited for the server to settle, and the knee search probe
by probe (tests/fixtures/runs/url-knee: a Python http.server, 4 workers x 50 ms, ceiling 80 req/s)."""
from __future__ import annotations

import html
import re
import shutil
import subprocess
import sys

import pytest
import yaml

from tests.conftest import REPO
from tests.helpers import URL_RUN


# A probe recorded before knee.json kept its figures (issue 32): warm-up, window, sent,
# completed, timed out, errors and p99 are dashes.
NO_FIGURES = "– – – – – – –"


# run.sh --find-knee now host-checks each probe as it does each cell, and stops where the server
# does not settle after a probe: a copy of the fixture run's run.yml with both
CHECKED = ("        why: 0 of 20 failed, sent 10.0/s, completed 10.0/s\n"
           "        host_check: {busy_share_before: 0.071, loadavg_1m_before: 0.42, "
           "waited_s: 0, threshold: 0.2, action: warn, verdict: quiet, settle: settled, "
           "settle_waited_s: 0.4, settle_bound_ms: 168.1}\n")
STOPPED = ("the server was not settled 60 s after the 160 req/s probe (never 3 answers in a "
           "row within 168.1 ms), so the 120 req/s probe was not made")


def _stopped_and_checked(text: str) -> str:
    text = text.replace("        why: 0 of 20 failed, sent 10.0/s, completed 10.0/s\n", CHECKED)
    return text.replace("      knee: 80\n", f"      stopped: {STOPPED}\n      knee: 80\n")


@pytest.fixture(scope="module")
def url_site(tmp_path_factory):
    """One build of the fixture run (`url-knee`) and of the copy _stopped_and_checked made
    (`url-knee-stopped`, without the knee.json that the probe table would otherwise come
    from): one build's start and chart imports for both."""
    tmp = tmp_path_factory.mktemp("url")
    runs, site = tmp / "runs", tmp / "site"
    shutil.copytree(URL_RUN, runs / "url-knee")
    edited = runs / "url-knee-stopped"
    shutil.copytree(URL_RUN, edited)
    (edited / "knee.json").unlink()
    manifest = edited / "run.yml"
    manifest.write_text(_stopped_and_checked(manifest.read_text(encoding="utf-8")),
                        encoding="utf-8")
    site.mkdir()
    proc = subprocess.run([sys.executable, "-m", "analysis", "build", "--runs", str(runs),
                           "--site", str(site), "-q"], cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    return site


def _page_text(site, run_id: str) -> str:
    """The methodology section's text of the run's page."""
    page = (site / "_reports" / f"{run_id}.html").read_text(encoding="utf-8")
    start = page.index('<section class="methodology">')
    section = page[start:page.index("</section>", start)]
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", section)).split())


@pytest.mark.slow
def test_methodology_of_a_run_given_by_url(url_site):
    run = yaml.safe_load((URL_RUN / "run.yml").read_text(encoding="utf-8"))
    text = _page_text(url_site, "url-knee")
    url = run["systems"][0]["description"].split(": ", 1)[1]
    assert f"sleep4 Given by URL, not started by the harness: {url}" in text
    assert "Generator and server on one host yes" in text
    assert ("Server side observed no: the server was given by URL without --server-pid or "
            "--jfr-pid, so there are no server CPU or JVM figures") in text
    assert "Generator limit (self-test) " in text and "the best of 3 tries" in text
    # what the numbers are not: a server by URL is not "one JDK, one synthetic workload"
    assert "one server given by URL, and the requests this run sent to it." in text
    assert "synthetic workload" not in text
    settle = run["method"]["settle"]["systems"][0]
    assert (f"sleep4: within {settle['bound_ms']:.0f} ms (quiet answer "
            f"{settle['quiet_answer_ms']:.1f} ms)") in text
    search = run["method"]["knee_search"]["systems"][0]
    for probe in search["probes"]:   # every probe, in the order it was made
        # recorded before probes got the cells' host check
        assert (f"sleep4 {probe['rate']} req/s {NO_FIGURES} {probe['verdict']} {probe['why']} "
                f"not checked") in text
    order = [text.index(f"sleep4 {p['rate']} req/s {NO_FIGURES} {p['verdict']}")
             for p in search["probes"]]
    assert order == sorted(order)
    assert (f"knee {search['knee']} req/s (the highest good probe), first saturated "
            f"{search['first_saturated']} req/s; measured in full at "
            f"{', '.join(map(str, search['rates']))} req/s") in text
    # the rates measured in full are the run's load points
    assert [lp["offered_rate"] for lp in run["load_points"]] == search["rates"]


def test_a_bundled_run_has_no_knee_search_or_settle_text(tmp_path):
    from analysis.derive.analyse import analyse_run
    from analysis.read.manifest import load_manifest
    from analysis.write import datafiles
    demo = REPO / "tests" / "fixtures" / "runs" / "bench-short"
    doc = datafiles.run_document(analyse_run(load_manifest(demo, demo.parent), tmp_path))
    assert "knee_search" not in doc["methodology"] and "settle_text" not in doc["methodology"]
    assert doc["methodology"]["scope_text"] == "one JDK, one synthetic workload"


def test_a_bad_knee_search_or_settle_names_its_line(tmp_path):
    from analysis.errors import ManifestError
    from analysis.read.manifest import load_manifest
    import pytest
    text = (URL_RUN / "run.yml").read_text(encoding="utf-8")
    for old, new, what in (("verdict: saturated", "verdict: maybe", "must be good or saturated"),
                           ("bound_ms: ", "bound_ms: -", "bound_ms")):
        run = tmp_path / what.split()[0]
        shutil.copytree(URL_RUN, run)
        (run / "run.yml").write_text(text.replace(old, new, 1), encoding="utf-8")
        with pytest.raises(ManifestError, match=what) as e:
            load_manifest(run, tmp_path)
        line = text.splitlines().index(next(x for x in text.splitlines() if old in x)) + 1
        assert f"run.yml: line {line}: method." in str(e.value), str(e.value)


@pytest.mark.slow
def test_a_stopped_search_and_the_probes_host_checks_are_on_the_page(url_site):
    """run.sh --find-knee now host-checks each probe as it does each cell, and stops where the
    server does not settle after a probe: the methodology's table shows both."""
    stopped = STOPPED
    text = _page_text(url_site, "url-knee-stopped")
    assert (f"sleep4 10 req/s {NO_FIGURES} good 0 of 20 failed, sent 10.0/s, completed 10.0/s "
            f"quiet (CPU 7% busy; server settled in 0.4 s) sleep4 20 req/s") in text
    assert f"first saturated 100 req/s; the search stopped: {stopped}; measured in full" in text
