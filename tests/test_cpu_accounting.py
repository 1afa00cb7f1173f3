"""Per-request accounting (issue 25) against an independent computation on a real cell.

The referee reads the recordings with the JDK's own `jfr print --json`, labels each execution
sample by walking its stack from the leaf with run.yml's patterns (re.fullmatch, first match
wins), takes the sampling period from the .jfc the run's JVM flags name, and the server's CPU
and replies from counts.json with the json module; then does the arithmetic the caption
describes. None of analysis' readers is used for the expected values.
"""
from __future__ import annotations

import calendar
import json
import re
import shutil
import subprocess
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from analysis.derive import cpu_accounting
from analysis.derive.analyse import analyse_run
from analysis.errors import ManifestError
from analysis.model import Percentile
from analysis.read.manifest import load_manifest
from analysis.write import overload_views
from tests.conftest import REPO
from tests.test_manifest import MINIMAL, write_run

RUN = REPO / "runs" / "fanout-startup"
CELL = ("fanout-pekko", "jdk-virtual", "r1000")


@pytest.fixture(scope="module")
def run():
    return analyse_run(load_manifest(RUN), REPO)


def _epoch_ns(text: str) -> int:
    m = re.fullmatch(r"(\d+)-(\d+)-(\d+)T(\d+):(\d+):(\d+)(?:\.(\d+))?Z", text)
    y, mo, d, h, mi, s, frac = m.groups()
    whole = calendar.timegm((int(y), int(mo), int(d), int(h), int(mi), int(s)))
    return whole * 10 ** 9 + int((frac or "0").ljust(9, "0")[:9])


def _jfc_period_ms(doc: dict) -> float:
    jfc = re.search(r"settings=(\S+\.jfc)", doc["environment"]["jvm_flags"]).group(1)
    root = ET.parse(REPO / jfc).getroot()
    event = next(e for e in root.iter("event") if e.get("name") == "jdk.ExecutionSample")
    value = next(s.text for s in event.iter("setting") if s.get("name") == "period")
    number, unit = value.split()
    return float(number) * {"ms": 1.0, "s": 1000.0}[unit]


def _label(frames, patterns):
    for f in frames:  # leaf first, as jfr prints them; the JSON names classes "a/b/C"
        name = f"{f['method']['type']['name'].replace('/', '.')}.{f['method']['name']}"
        for pattern, label in patterns:
            if re.fullmatch(pattern, name):
                return label
    return "other"


def _referee(jfr: str, doc: dict) -> dict:
    """CPU seconds, replies, and Java CPU seconds per label of every repetition, pooled."""
    patterns = [(a["pattern"], a["label"]) for a in doc["jfr_attribution"]]
    period_s = _jfc_period_ms(doc) / 1000.0
    scenario, system, load = CELL
    out = {"cpu_s": 0.0, "replies": 0, "samples": 0, "by_label": {}}
    for cell in doc["cells"]:
        if (cell["scenario"], cell["system"], cell["load"]) != CELL:
            continue
        counts = json.loads((RUN / cell["counts"]).read_text())
        w = counts["window"]
        w0, w1 = w["start_epoch_ms"] * 10 ** 6, w["end_epoch_ms"] * 10 ** 6
        out["cpu_s"] += (counts["server"]["cpu_share_window"] * counts["machine"]["cores"]
                         * (w["end_s"] - w["start_s"]))
        out["replies"] += sum(iv["completed"] for iv in counts["intervals"]
                              if iv["phase"] == "window")
        printed = subprocess.run([jfr, "print", "--json", "--stack-depth", "2048", "--events",
                                  "jdk.ExecutionSample", str(RUN / cell["jfr"])],
                                 capture_output=True, text=True, timeout=120, check=True).stdout
        for e in json.loads(printed)["recording"]["events"]:
            v = e["values"]
            if not w0 <= _epoch_ns(v["startTime"]) < w1:
                continue
            label = _label(v["stackTrace"]["frames"], patterns)
            out["samples"] += 1
            out["by_label"][label] = out["by_label"].get(label, 0) + period_s
    return out


@pytest.mark.slow
@pytest.mark.jdk
def test_accounting_matches_jfr_print_and_counts_json(run):
    jfr = shutil.which("jfr")
    if jfr is None:
        pytest.skip("needs the JDK's jfr tool")
    doc = yaml.safe_load((RUN / "run.yml").read_text())
    ref = _referee(jfr, doc)
    per_request = 1000.0 / ref["replies"]
    java_s = sum(ref["by_label"].values())
    assert java_s < ref["cpu_s"]            # this cell's samples do not need scaling

    def ms(*labels):
        return sum(ref["by_label"].get(x, 0.0) for x in labels) * per_request
    scenario = next(s for s in run.scenarios if s.id == CELL[0])
    a = scenario.cell(CELL[2], CELL[1]).cpu_account
    assert a.repetitions == 3 and a.replies == ref["replies"] and a.samples == ref["samples"]
    assert a.period_ms == _jfc_period_ms(doc)
    assert a.cpu_ms == pytest.approx(ref["cpu_s"] * per_request, rel=1e-9)
    assert a.handler_ms == pytest.approx(ms("request handler"), rel=1e-9)
    coordination = ("virtual-thread scheduling", "executor and queues", "Pekko Streams")
    assert a.coordination_ms == pytest.approx(ms(*coordination), rel=1e-9)
    others = set(ref["by_label"]) - {"request handler", *coordination}
    assert a.other_java_ms == pytest.approx(ms(*others), rel=1e-9, abs=1e-12)
    assert a.gc_vm_ms == pytest.approx((ref["cpu_s"] - java_s) * per_request, rel=1e-9)
    # Pekko's materialisation is the coordination the post is about: it must show
    assert a.coordination_ms > 0.1 and a.handler_ms < a.coordination_ms


def test_execution_sample_period_is_read_from_the_recording():
    from analysis.derive.jvm_summary import summarize_jfr
    doc = yaml.safe_load((RUN / "run.yml").read_text())
    s = summarize_jfr(RUN / doc["cells"][0]["jfr"])
    assert s["samples"]["period_ms"] == _jfc_period_ms(doc) == 20.0
    # a JDK 17 profile.jfc recording samples every 10 ms (its settings, not ours)
    profile = summarize_jfr(REPO / "tests" / "fixtures" / "jfr" / "jdk17-profile.jfr")
    assert profile["samples"]["period_ms"] == 10.0


def test_waiting_is_latency_minus_cpu_and_a_bound_when_censored():
    w = cpu_accounting.waiting(Percentile(10.0), 2.5)
    assert (w.waiting_ms, w.waiting_pct, w.lower_bound) == (7.5, 75.0, False)
    censored = cpu_accounting.waiting(Percentile(None, 15000.0), 1.0)
    assert censored.lower_bound and censored.waiting_ms == 14999.0
    assert censored.waiting_pct == pytest.approx(100 * 14999 / 15000)
    assert cpu_accounting.waiting(None, 1.0).waiting_ms is None


def test_caption_names_its_inputs_and_the_waiting_share_grows_to_the_knee(run):
    scenario = next(s for s in run.scenarios if s.id == "fanout-pekko")
    block = overload_views.cpu_accounting(run, scenario)
    method = block["caption"]
    assert method.startswith("Per-request accounting (Fan-out, Pekko Streams): ")
    for name in ("counts.json", "server.cpu_share_window", "machine.cores", "jdk.ExecutionSample",
                 "20 ms", "cpu_accounting", "“request handler”", "“Pekko Streams”",
                 "GC, JIT compiler and VM threads", "system calls"):
        assert name in method, name
    assert len(block["rows"]) == 6
    (growth,) = block["growth"]
    # issue 32: this recording's saturated Pekko cells all measured the start-up backlog (not
    # steady), so none of them is the knee; the steady recording's knee is tested below
    assert [p["knee"] for p in growth["points"]].count(True) == 0
    assert all(c.not_steady for c in scenario.measured() if c.saturation.saturated)
    shares = [scenario.cell(lp.id, "jdk-virtual").cpu_account.p99.waiting_pct
              for lp in scenario.load_points]
    assert shares == sorted(shares) and shares[0] < 90 < shares[-1]
    # the lower-bound row is printed as one, and no share rounds up to 100 %
    assert growth["points"][-1]["pct_text"].startswith("≥ ")
    assert not any(p["pct_text"].endswith("100.0 %") for p in growth["points"])


def _manifest_problems(tmp_path: Path, accounting: str) -> list:
    run_dir = write_run(tmp_path, MINIMAL + textwrap.dedent("""\
        jfr_attribution:
          - {pattern: 'app\\..*', label: handler code}
          - {pattern: 'java\\.util\\.concurrent\\..*', label: queues}
        """) + accounting)
    try:
        m = load_manifest(run_dir, run_dir.parent)
    except ManifestError as exc:
        return exc.problems
    return [m.cpu_accounting]


def test_cpu_accounting_in_run_yml(tmp_path):
    (ok,) = _manifest_problems(tmp_path / "a", "cpu_accounting:\n  handler: [handler code]\n"
                                              "  coordination: [queues]\n")
    assert ok == {"handler": ("handler code",), "coordination": ("queues",)}
    (default,) = _manifest_problems(tmp_path / "b", "")
    assert default == {"handler": (), "coordination": ()}     # no bundled label in this run
    bad = _manifest_problems(tmp_path / "c", "cpu_accounting:\n  handler: [handler code, nope]\n"
                                             "  coordination: [handler code]\n  gc: []\n")
    assert any(p.startswith("line 13: cpu_accounting.handler[1]: 'nope' is not a "
                            "jfr_attribution label") for p in bad), bad
    assert any("line 14" in p and "already under handler" in p for p in bad), bad
    assert any("line 15: cpu_accounting.gc: unknown key" in p for p in bad), bad


def test_the_knee_is_the_first_saturated_load_that_was_steady():
    """runs/fanout-curve, warmed until steady: the Pekko scenario saturates from 4,000 req/s on;
    its first saturated load (no steady state: requests time out to the end) is the knee."""
    steady_run = analyse_run(load_manifest(REPO / "runs" / "fanout-curve"), REPO)
    scenario = next(s for s in steady_run.scenarios if s.id == "fanout-pekko")
    (growth,) = overload_views.cpu_accounting(steady_run, scenario)["growth"]
    knees = [p["offered_text"] for p in growth["points"] if p["knee"]]
    first = next(lp for lp in scenario.load_points
                 if scenario.cell(lp.id, "jdk-virtual").saturation.saturated)
    assert first.id == "r4000" and not scenario.cell("r4000", "jdk-virtual").not_steady
    assert knees == ["4,000 req/s"]
