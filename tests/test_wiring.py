"""Issue 10's wiring: from per-repetition figures (as analyse.read_repetition makes them from a
schema-2 cell) through aggregate.build_run to the data file and the load-curve table's text.
Synthetic repetitions with known values, so each rule is checked on its own."""
from __future__ import annotations

from pathlib import Path

import pytest

from analysis.derive import aggregate, overload
from analysis.model import Accounting, InFlight, Repetition
from analysis.read.hdr.histogram import Histogram, layout_for
from analysis.read.manifest import CellSpec, LoadPointSpec, Manifest, SystemSpec
from analysis.write import datafiles

LAYOUT = layout_for(1, 3_600_000_000, 3)
US = 0.001
TIMEOUT_MS = 2000.0


def repetition(index, latencies_us, timed_out=0, *, offered=5.0, window_s=2.0,
               machine=0.1, server=0.03, generator=0.02, in_flight=(1.0, 2, 1, 1),
               grows=False, server_completions=None):
    h = Histogram.from_values(LAYOUT, latencies_us)
    stats = overload.censored_stats(h, timed_out, TIMEOUT_MS, US)
    completed = h.total_count
    rates = overload.window_rates(completed, window_s, server_completions
                                  if server_completions is not None else completed)
    host = overload.host_health(machine, server, generator)
    queue = overload.QueueTest(5.0 if grows else 0.0, 10.0 if grows else 0.0, 0.1, 6, grows, "")
    # as the harness counts them: what the offered rate asked for in the window and was not
    # sent is not_sent (sent = completed + timed_out + errors)
    not_sent = max(0, round(offered * window_s) - (completed + timed_out))
    rep = Repetition(index, f"runs/t/s/l.{index}.hlog", stats, rates.throughput_rps,
                     Accounting(completed + timed_out, completed, timed_out, 0, not_sent), [],
                     host=host, in_flight=InFlight(*in_flight),
                     goodput_rps=rates.goodput_rps, queue=queue,
                     timeout_ms=TIMEOUT_MS)
    return rep, h


def manifest(loads=(("r5", 5.0), ("r200", 200.0)), systems=("pool2",)):
    return Manifest(
        run_id="t", run_dir=Path("/nonexistent"), path=Path("/nonexistent/run.yml"),
        title="T", date="2026-11-24", description="D", value_unit="us",
        systems=[SystemSpec(s, s.upper()) for s in systems],
        load_points=[LoadPointSpec(i, r, 2.0) for i, r in loads],
        cells=[CellSpec(s, i, 1, f"{s}/{i}.1.hlog") for i, _ in loads for s in systems],
        service_time_ms=None, load_generator={"timeout_s": 2}, schema_version=2)


def run_of(measured, **kw):
    return aggregate.build_run(manifest(**kw), measured, _combine)


def _combine(hs):
    out = hs[0]
    for h in hs[1:]:
        out = out + h
    return out


def quiet_reps(n=2):
    return [repetition(i, [200_000 + 100 * i] * 10) for i in range(1, n + 1)]


def test_censored_cell_is_null_with_a_bound_in_data_and_over_the_timeout_in_the_table():
    # offered 200/s, none of the window's 400 requests answered within 2 s, two repetitions
    sat = [repetition(i, [], 400, offered=200.0, server_completions=20, grows=True,
                      in_flight=(300.0, 500, 100, 500)) for i in (1, 2)]
    run = run_of({("r5", "pool2"): quiet_reps(), ("r200", "pool2"): sat})
    doc = datafiles.run_document(run)
    cell = doc["cells"]["r200"]["pool2"]
    assert cell["p50_ms"] is None and cell["p50_at_least_ms"] == 2000.0
    assert cell["p999_ms"] is None and cell["max_at_least_ms"] == 2000.0
    assert cell["p99_text"] == "> 2,000"            # what stat.html prints in prose
    assert (cell["sent"], cell["completed"], cell["timed_out"], cell["errors"]) == (800, 0, 800, 0)
    assert cell["drops"] == 800 and cell["drop_pct"] == 100.0
    assert cell["spread"]["p99_ms"] == [None, None, None]
    assert cell["spread_at_least"]["p99_ms"] == [2000.0, 2000.0, 2000.0]
    row = doc["load_curve_table"]["rows"][1]["cells"][0]
    assert [x["text"] for x in row["latency"]] == ["> 2 s"] * 5
    assert row["requests_text"] == "800 / 0 / 800"
    assert any("> 2 s" in rule for rule in doc["load_curve_table"]["rules"])
    assert cell["littles_law"] is None and cell["littles_law_check"] == "not checked: saturated"
    assert cell["in_flight"] == 300.0


def test_saturation_reasons_each_rule():
    base = quiet_reps()
    # throughput only: 10 of 20 answered per second... at offered 5 -> fine; offered 200: not
    slow = [repetition(i, [900_000] * 10, offered=200.0) for i in (1, 2)]    # p50 4.5x base
    run = run_of({("r5", "pool2"): base, ("r200", "pool2"): slow})
    cell = run.scenario.cell("r200", "pool2")
    assert cell.saturation.reasons == ("goodput", "latency")
    assert len(cell.saturation.sentences) == 2
    queued = [repetition(i, [210_000] * 10, grows=True) for i in (1, 2)]
    run = run_of({("r5", "pool2"): base, ("r200", "pool2"): queued},
                 loads=(("r5", 5.0), ("r200", 5.0)))
    assert run.scenario.cell("r200", "pool2").saturation.reasons == ("queue",)
    # the queue rule needs more than half of the repetitions
    mixed = [repetition(1, [210_000] * 10, grows=True), repetition(2, [210_000] * 10)]
    run = run_of({("r5", "pool2"): base, ("r200", "pool2"): mixed},
                 loads=(("r5", 5.0), ("r200", 5.0)))
    assert not run.scenario.cell("r200", "pool2").saturation.saturated
    assert not run.scenario.cell("r5", "pool2").saturation.saturated


def test_host_busy_when_any_repetition_was():
    reps = [repetition(1, [200_000] * 10), repetition(2, [200_000] * 10, machine=0.93)]
    run = run_of({("r5", "pool2"): reps}, loads=(("r5", 5.0),))
    cell = run.scenario.cell("r5", "pool2")
    assert cell.host.host_busy and "93%" in cell.host.reason
    doc = datafiles.run_document(run)
    assert doc["cells"]["r5"]["pool2"]["host_busy"] is True
    assert doc["load_curve_table"]["rows"][0]["cells"][0]["host_busy"] is True
    assert doc["host_health"]["busy_text"] == "1 of 1"
    assert doc["host_health"]["caption"].endswith("): host busy in 1 of 1 cells")
    quiet = run_of({("r5", "pool2"): quiet_reps()}, loads=(("r5", 5.0),))
    assert datafiles.run_document(quiet)["cells"]["r5"]["pool2"]["host_busy"] is False


def test_median_with_range_text_and_spread():
    reps = [repetition(1, [199_000] * 10), repetition(2, [201_000] * 10),
            repetition(3, [204_000] * 10)]
    run = run_of({("r5", "pool2"): reps}, loads=(("r5", 5.0),))
    doc = datafiles.run_document(run)
    cell = doc["cells"]["r5"]["pool2"]
    assert cell["p50_ms"] == 201.087 and cell["count"] == 30 and cell["repetitions"] == 3
    assert cell["spread"]["p50_ms"] == [199.039, 201.087, 204.031]
    text = doc["load_curve_table"]["rows"][0]["cells"][0]["latency"][0]["text"]
    assert text == "201 (199–204)"
    assert cell["repetitions_disagree"] is False


def test_repetitions_disagree_below_saturation():
    reps = [repetition(1, [100_000] * 10), repetition(2, [100_000] * 10),
            repetition(3, [300_000] * 10)]
    run = run_of({("r5", "pool2"): reps}, loads=(("r5", 5.0),))
    assert run.scenario.cell("r5", "pool2").repetitions_disagree


def test_littles_law_only_on_unsaturated_cells_and_measured_in_flight_printed():
    reps = [repetition(i, [200_000] * 10, in_flight=(1.1, 2, 1, 1)) for i in (1, 2)]
    run = run_of({("r5", "pool2"): reps}, loads=(("r5", 5.0),))
    cell = datafiles.run_document(run)["cells"]["r5"]["pool2"]
    assert cell["in_flight"] == 1.1 and cell["in_flight_text"] == "1.10"
    assert cell["littles_law"] == pytest.approx(1.0, abs=0.01)
    assert cell["littles_law_check"] == "consistent"


def test_where_the_time_went_uses_the_lowest_load_p50_without_a_service_time():
    base = quiet_reps()
    slow = [repetition(i, [500_000] * 10) for i in (1, 2)]
    run = run_of({("r5", "pool2"): base, ("r200", "pool2"): slow},
                 loads=(("r5", 5.0), ("r200", 5.0)))
    cell = run.scenario.cell("r200", "pool2")
    split = cell.time_split
    base = run.scenario.cell("r5", "pool2").stats.get("p50").value_ms
    assert 200.0 < base < 200.4 and split.mean.service_ms == base
    assert split.mean.waiting_ms == pytest.approx(cell.stats.mean.value_ms - base)
    assert split.mean.waiting_pct == pytest.approx(100 * split.mean.waiting_ms /
                                                   cell.stats.mean.value_ms)
    doc = datafiles.run_document(run)
    assert doc["where_the_time_went"]["rows"][1]["waiting_pct_text"].endswith("%")
