"""Issue 32's "found in the same reading": verdicts that described the wrong thing.

- An error is an answer: a server answering 500 to a tenth of its requests at half its capacity
  is not saturated; its error rate is its own verdict.
- A collapsed repetition does not hide behind the others' median, and the measured ceiling is
  not taken from a collapse or a backlog draining.
- A host-health row's figures agree with its verdict.
- The bundled pages say which samples a table counts and every load's window cut.
- The site's tagline is true of every bundled run.
The cells below are built from counts whose outcome the test states by hand.
"""
from __future__ import annotations

import csv
import re
from pathlib import Path

import yaml

from analysis.derive import aggregate, overload
from analysis.model import Accounting, InFlight, Repetition
from analysis.read.hdr.histogram import Histogram, layout_for
from analysis.read.manifest import CellSpec, LoadPointSpec, Manifest, SystemSpec
from analysis.write import datafiles, load_curve_views, overload_views
from analysis.paths import find_data

REPO = Path(__file__).resolve().parents[1]
LAYOUT = layout_for(1, 3_600_000_000, 3)
US = 0.001
TIMEOUT_MS = 5000.0


def repetition(index, *, offered, window_s=10.0, answered_share=1.0, errors=0,
               throughput=None, latency_us=5_000, host=None):
    """A schema-2 repetition: offered x window requests sent, `answered_share` of those that
    are not errors answered at `latency_us`, the rest timed out."""
    sent = round(offered * window_s)
    completed = round((sent - errors) * answered_share)
    timed_out = sent - errors - completed
    h = Histogram.from_values(LAYOUT, [latency_us] * completed) if completed else \
        Histogram.from_values(LAYOUT, [], [])
    stats = overload.censored_stats(h, timed_out, TIMEOUT_MS, US, errors)
    delivered = throughput if throughput is not None else (completed + errors) / window_s
    return Repetition(index, f"runs/t/s/l.{index}.hlog", stats, delivered,
                      Accounting(sent, completed, timed_out, errors, 0), [],
                      host=host or overload.host_health(0.3, 0.1, 0.1),
                      in_flight=InFlight(1.0, 2, 1, 1), goodput_rps=completed / window_s,
                      timeout_ms=TIMEOUT_MS), h


def manifest(loads):
    return Manifest(
        run_id="t", run_dir=Path("/nonexistent"), path=Path("/nonexistent/run.yml"),
        title="T", date="2026-11-24", description="D", value_unit="us",
        systems=[SystemSpec("s", "S")],
        load_points=[LoadPointSpec(i, r, 10.0) for i, r in loads],
        cells=[CellSpec("s", i, 1, f"s/{i}.1.hlog") for i, _ in loads],
        service_time_ms=None, load_generator={"timeout_s": 5}, schema_version=2)


def run_of(cells):
    """cells: {(load id, offered rate): [repetition(...), ...]}"""
    def combine(hs):
        out = hs[0]
        for h in hs[1:]:
            out = out + h
        return out
    return aggregate.build_run(manifest([k for k in cells]),
                               {(load, "s"): reps for (load, _), reps in cells.items()}, combine)


def test_errors_are_answers_not_saturation():
    # 100 req/s offered to a server of 200 req/s: 900 answered 200 in 5 ms, 100 answered 500
    run = run_of({("r100", 100.0): [repetition(1, offered=100.0, errors=100)]})
    c = run.scenario.cell("r100", "s")
    assert c.saturation.saturated is False and c.saturation.reasons == ()
    errors = overload.error_rate(c.accounting)
    assert (errors.errors, errors.sent, errors.share, errors.high) == (100, 1000, 0.1, True)
    assert errors.sentence == ("100 of the window's 1,000 requests were answered with an error "
                               "(10.0 %, over 1 %): the latencies describe the other requests "
                               "only")
    doc = datafiles.run_document(run)
    assert doc["cells"]["r100"]["s"]["error_rate"] == {
        "share": 0.1, "high": True, "sentence": errors.sentence}
    table_cell = doc["load_curve_table"]["rows"][0]["cells"][0]
    assert table_cell["saturation_text"] is None and table_cell["error_text"] == "errors: 10.0 %"
    assert any(rule.startswith("errors: more than 1 % of the window's requests")
               for rule in doc["load_curve_table"]["rules"])


def test_one_error_in_a_thousand_is_not_flagged():
    c = run_of({("r100", 100.0): [repetition(1, offered=100.0, errors=1)]}).scenario.cell(
        "r100", "s")
    assert overload.error_rate(c.accounting).high is False
    assert load_curve_views.error_flag_text(c) is None


def test_unanswered_requests_still_saturate():
    # 89 % of the non-error requests answered: 0.89 * 990 + 10 errors = 891 of 1,000 answered
    c = run_of({("r100", 100.0): [repetition(1, offered=100.0, errors=10,
                                             answered_share=0.9)]}).scenario.cell("r100", "s")
    assert c.saturation.reasons == ("goodput",)
    assert c.saturation.sentences[0] == (
        "901 of the window's 1,000 requests got an answer (of any status) within the timeout "
        "(90.1 %, under 95 %): the rest got none")


def test_a_collapsed_repetition_marks_the_cell_and_is_named():
    # WireMock at 4,000 req/s: repetition 1 answered 113 of 40,000, the others all
    collapsed = repetition(1, offered=4000.0, answered_share=113 / 40000, throughput=124.1)
    run = run_of({("r3000", 3000.0): [repetition(i, offered=3000.0) for i in (1, 2, 3)],
                  ("r4000", 4000.0): [collapsed, repetition(2, offered=4000.0),
                                      repetition(3, offered=4000.0)]})
    c = run.scenario.cell("r4000", "s")
    assert c.throughput_rps == 4000.0 and c.goodput_rps == 4000.0     # the medians hide it
    assert c.saturation.reasons == ("goodput",)
    assert c.saturation.sentences[0] == (
        "fewer than 95 % of the window's requests got an answer (of any status) within the "
        "timeout in 1 of 3 repetitions (repetition 1: 113 of 40,000, 0.3 %; 66.8 % over all 3)")
    system = run.scenario.systems[0]
    assert system.measured_peak_rps == 3000.0
    row = overload_views.ceiling(run)["rows"][0]
    assert row["measured_text"] == "3000.0 req/s"
    assert row["left_out_text"] == ("not counted: 4,000 req/s (throughput 4,000.0): repetition 1 "
                                    "delivered only 124.1 req/s")


def test_a_backlog_draining_is_not_the_ceiling():
    # the window opens with thousands in flight: 1,837 replies a second at 1,500 offered
    run = run_of({("r1500", 1500.0): [repetition(i, offered=1500.0, throughput=t)
                                      for i, t in ((1, 1742.0), (2, 2048.0), (3, 1837.2))]})
    assert run.scenario.cell("r1500", "s").throughput_rps == 1837.2
    assert run.scenario.systems[0].measured_peak_rps == 1500.0
    assert overload_views.ceiling(run)["rows"][0]["left_out_text"] == (
        "not counted: 1,500 req/s (throughput 1,837.2): more than offered, a backlog from before "
        "the window draining (repetitions 1, 2, 3)")


def test_ceiling_rate_is_the_lowest_repetition_capped_at_the_offered_rate():
    assert overload.ceiling_rate([98.2, 99.1, 98.7], 400.0) == 98.2       # past the knee
    assert overload.ceiling_rate([124.1, 4000.0, 4000.0], 4000.0) == 124.1
    assert overload.ceiling_rate([2118.0, 2000.0, 1999.9], 2000.0) == 1999.9
    assert overload.ceiling_rate([310.0, None], None) == 310.0             # a closed loop
    assert overload.ceiling_rate([None], 100.0) is None


def test_host_row_prints_the_busy_repetitions_figures():
    busy = overload.host_health(0.99, 0.55, 0.41)
    quiet = [overload.host_health(m, 0.3, 0.2) for m in (0.40, 0.61)]
    run = run_of({("r4000", 4000.0): [repetition(1, offered=4000.0, host=busy),
                                      repetition(2, offered=4000.0, host=quiet[0]),
                                      repetition(3, offered=4000.0, host=quiet[1])]})
    h = run.scenario.cell("r4000", "s").host
    assert (h.machine_cpu, h.server_cpu, h.generator_cpu, h.host_busy) == (0.99, 0.55, 0.41, True)
    assert h.reason == ("repetition 1: the machine's CPU was 99% busy during the window "
                        "(over 80%)")
    row = overload_views.host_health(run)["rows"][0]
    assert (row["machine_text"], row["host_busy"]) == ("99.0 %", True)
    # quiet: the medians
    calm = overload.repetitions_host([(1, quiet[0]), (2, quiet[1]),
                                      (3, overload.host_health(0.5, 0.3, 0.2))])
    assert (calm.machine_cpu, calm.host_busy, calm.reason) == (0.5, False, None)
    assert overload.repetitions_host([(1, busy)]).reason == busy.reason


# --- the bundled runs -----------------------------------------------------------------------

def _fanout_pekko() -> dict:
    doc = yaml.safe_load(find_data(REPO, "fanout-startup").read_text())
    return doc["scenarios"]["fanout-pekko"]


def test_fanout_tables_say_which_samples_they_count():
    """547 samples at 750 req/s in the accounting (three repetitions' windows), 223 in the hot
    methods (repetition 1's window): each table says so; the counts are the JFR summaries'."""
    from analysis.read.counts import read_counts
    from analysis.derive.jvm_summary import summarize_jfr
    run_dir = REPO / "runs" / "fanout-startup" / "fanout-pekko" / "jdk-virtual"
    per_rep = []
    for i in (1, 2, 3):
        counts = read_counts(run_dir / f"r750.{i}.counts.json")
        summary = summarize_jfr(run_dir / f"r750.{i}.jfr", [], window=counts.window_epoch_ns())
        per_rep.append(summary["samples"]["count"] - summary["samples"]["unresolved"])
    pekko = _fanout_pekko()
    accounting = next(r for r in pekko["cpu_accounting"]["rows"]
                      if r["offered_text"] == "750 req/s")
    assert accounting["samples_text"] == f"{sum(per_rep):,} (3 repetitions)"
    assert pekko["cpu_accounting"]["samples_note"] == "in the pooled repetitions' windows"
    hot = next(x for x in pekko["jvm_hotspots"]["systems"][0]["loads"] if x["load"] == "r750")
    assert hot["samples_text"] == f"{per_rep[0]:,} samples in repetition 1's measured window"
    assert "in repetition 1's measured window of each load" in \
        pekko["jvm_hotspots"]["attribution_caption"]


def test_methodology_gives_every_loads_window_cut():
    """vegeta-vs-hey: the requests sent before the window's start (the first 5 s of sends),
    counted here from vegeta's own CSV, for every load, not the first's alone."""
    doc = yaml.safe_load(find_data(REPO, "vegeta-vs-hey").read_text())
    tool = next(t for t in doc["methodology"]["load_tools"] if t["tool_text"].startswith("vegeta"))
    assert tool["window_text"] == "the first 5 s of sends skipped, the 20 s after it kept"
    run_yml = yaml.safe_load((REPO / "runs" / "vegeta-vs-hey" / "run.yml").read_text())
    rates = {lp["id"]: lp["offered_rate"] for lp in run_yml["load_points"]}
    want = []
    for lp in run_yml["load_points"]:
        with open(REPO / "runs" / "vegeta-vs-hey" / "vegeta" / f"{lp['id']}.csv") as f:
            sent_ns = [int(row[0]) for row in csv.reader(f)]
        start = min(sent_ns)
        before = sum(1 for t in sent_ns if t < start + 5_000_000_000)
        after = sum(1 for t in sent_ns if t >= start + 25_000_000_000)
        want.append(f"{rates[lp['id']]:,} req/s: {before:,} requests before the window and "
                    f"{after:,} after it left out")
    assert tool["window_loads"] == want and len(want) == 6


def test_tagline_is_true_of_every_bundled_run():
    description = yaml.safe_load((REPO / "_config.yml").read_text())["description"]
    manifests = [yaml.safe_load(p.read_text()) for p in sorted(REPO.glob("runs/*/run.yml"))]
    kinds = {m.get("kind", "load") for m in manifests}
    closed = any("closed" in str(m.get("load_generator", {}).get("model", ""))
                 or any("hey" in str(c.get("results", "")) for c in m.get("cells") or [])
                 for m in manifests)
    tool_files = any(c.get("results") for m in manifests for c in m.get("cells") or [])
    assert "jmh" in kinds and closed and tool_files       # what the bundled runs hold
    assert not re.search(r"open-loop", description, re.I)
    assert "JMH" in description and "closed loop" in description
    assert "HdrHistogram logs" in description and "load tools' result files" in description
    index = (REPO / "reports" / "index.html").read_text()
    assert "raw HdrHistogram logs behind" not in index
