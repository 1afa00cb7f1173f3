"""Issue 11: runs with `scenarios:` - the manifest (validation with lines; the old form still
one implicit scenario), the model (a Scenario each, its own load points, service time, ceilings
and latency baseline), the data file (schema 4: per-scenario blocks, the summary table), and the
fixture run's golden data, checked against HdrHistogram's Java."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from analysis.errors import ManifestError
from analysis.read.manifest import load_manifest
from tests.conftest import REPO
from tests.helpers import ENV, GOLDEN
from analysis.paths import find_data

pytestmark = pytest.mark.slow     # (make check leaves it out; make test runs it)

FIXTURE = REPO / "tests" / "fixtures" / "runs" / "scenarios-demo"

HEAD = """\
title: T
date: 2026-11-24
description: D
value_unit: us
systems:
  - {id: a, label: A, family: Server A, model: pool, concurrency_limit: 4}
  - {id: b, label: B, family: Server B, model: event-loop}
load_points:
  - {id: r10, offered_rate: 10, duration_s: 5}
  - {id: r20, offered_rate: 20, duration_s: 5}
"""
SCENARIOS = """\
scenarios:
  - id: slow
    label: Slow
    endpoint: /sleep?ms=100
    service_time_ms: 100
    load_points: [r10, r20]
  - {id: fast, label: Fast, service_time_ms: 0, load_points: [r20]}
"""


def manifest_at(tmp_path: Path, text: str):
    run = tmp_path / "runs" / "t"
    run.mkdir(parents=True, exist_ok=True)
    (run / "run.yml").write_text(text)
    return load_manifest(run)


def problems(tmp_path: Path, text: str) -> str:
    with pytest.raises(ManifestError) as exc:
        manifest_at(tmp_path, text)
    return str(exc.value)


# --- manifest -------------------------------------------------------------------------------

def test_scenarios_give_each_scenario_its_cells_at_its_own_load_points(tmp_path):
    m = manifest_at(tmp_path, HEAD + SCENARIOS)
    assert [(s.id, s.load_points, s.service_time_ms) for s in m.scenarios] == [
        ("slow", ("r10", "r20"), 100), ("fast", ("r20",), 0)]
    assert m.systems[0].family == "Server A" and m.systems[1].model == "event-loop"
    cells = [(c.scenario, c.load, c.system, c.hlog) for c in m.cells]
    assert cells == [("slow", "r10", "a", "slow/a/r10.hlog"), ("slow", "r10", "b", "slow/b/r10.hlog"),
                     ("slow", "r20", "a", "slow/a/r20.hlog"), ("slow", "r20", "b", "slow/b/r20.hlog"),
                     ("fast", "r20", "a", "fast/a/r20.hlog"), ("fast", "r20", "b", "fast/b/r20.hlog")]


def test_the_old_form_is_one_implicit_scenario(tmp_path):
    m = manifest_at(tmp_path, HEAD + "service_time_ms: 5\n")
    assert m.scenarios == [] and {c.scenario for c in m.cells} == {None}
    assert [c.hlog for c in m.cells][:2] == ["a/r10.hlog", "b/r10.hlog"]


def test_a_scenario_without_service_time_takes_the_runs(tmp_path):
    m = manifest_at(tmp_path, HEAD + "service_time_ms: 7\nscenarios:\n"
                    "  - {id: s, label: S, load_points: [r10]}\n")
    assert m.scenarios[0].service_time_ms == 7


@pytest.mark.parametrize("extra,expected", [
    ("cells:\n  - {system: a, load: r10}\n", "line 19: cells[0].scenario: required: the run has 2"),
    ("cells:\n  - {scenario: nope, system: a, load: r10}\n",
     "line 19: cells[0].scenario: 'nope' is not a scenario id"),
    ("cells:\n  - {scenario: fast, system: a, load: r10}\n",
     "line 19: cells[0].load: 'r10' is not a load point of scenario 'fast' (r20)"),
    ("  - {id: slow, label: Again, load_points: [r10]}\n", "line 18: scenarios[2].id: duplicate"),
    ("  - {id: x, label: X, load_points: [r30]}\n",
     "line 18: scenarios[2].load_points[0]: 'r30' is not a load point id"),
    ("  - {id: x, label: X, load_points: []}\n", "line 18: scenarios[2].load_points: must be a list"),
    ("  - {id: x, label: X, load_points: [r10], headline: r20}\n",
     "line 18: scenarios[2].headline: 'r20' is not one of this scenario's load_points"),
    ("  - {id: x, label: X, load_points: [r10], speed: 3}\n", "scenarios[2].speed: unknown key"),
    ("  - {id: X Y, label: X, load_points: [r10]}\n", "scenarios[2].id: 'X Y' must use only"),
])
def test_scenario_problems_name_their_line(tmp_path, extra, expected):
    assert expected in problems(tmp_path, HEAD + SCENARIOS + extra)


def test_a_cell_scenario_in_a_run_without_scenarios_is_an_error(tmp_path):
    text = HEAD + "cells:\n  - {scenario: s, system: a, load: r10}\n"
    assert "line 12: cells[0].scenario: the run declares no scenarios" in problems(tmp_path, text)


def test_one_scenario_lets_cells_leave_it_out(tmp_path):
    text = HEAD + "scenarios:\n  - {id: s, label: S, load_points: [r10]}\n" \
        "cells:\n  - {system: a, load: r10, hlog: x.hlog}\n"
    m = manifest_at(tmp_path, text)
    assert [(c.scenario, c.system, c.hlog) for c in m.cells] == [("s", "a", "x.hlog"),
                                                                  ("s", "b", "s/b/r10.hlog")]


def test_reads_the_form_bench_writes(tmp_path):
    """bench/manifest.py's run.yml with --scenarios (bench/README.md): pool_threads,
    jfr_repetitions, per-scenario load points, cells with their scenario."""
    sys.path.insert(0, str(REPO / "bench"))
    import catalog
    from bench import manifest as bench_manifest
    args = bench_manifest.parse_args([
        "--run-dir", str(tmp_path), "--systems", "jetty-pool,vertx-eventloop", "--rates", "1",
        "--service-ms", "100", "--warmup-s", "1", "--duration-s", "2", "--timeout-s", "2",
        "--max-in-flight", "100", "--repetitions", "2", "--seed", "1", "--busy-threshold", "0.2",
        "--busy-wait-s", "0", "--on-busy", "warn", "--java", "java", "--server-flags=-Xmx1g",
        "--generator-flags=-Xmx256m", "--jfr-repetitions", "1"])
    systems = [catalog.target_info(t, 100) for t in ("jetty-pool", "vertx-eventloop")]
    scenarios = [catalog.scenario_info(s, r) for s, r in catalog.parse_scenarios("sleep:250/500,json")]
    load_points = [{"id": f"r{r}", "offered_rate": r, "duration_s": 2} for r in (250, 500, 2000)]
    cells = [{"scenario": sc["id"], "system": s["id"], "load": lp, "repetition": rep,
              "hlog": f"{sc['id']}/{s['id']}/{lp}.{rep}.hlog", "jfr": None,
              "counts": f"{sc['id']}/{s['id']}/{lp}.{rep}.counts.json"}
             for sc in scenarios for lp in sc["load_points"] for s in systems for rep in (1, 2)]
    run = bench_manifest.build(args, systems, load_points, {"cores": 2}, cells, "T", "D",
                               "2026-11-24", [], scenarios)
    m = manifest_at(tmp_path, bench_manifest.render(run, "-Xmx256m"))
    assert [s.id for s in m.scenarios] == ["sleep", "json"]
    assert m.scenarios[1].service_time_ms == 0 and m.method.pool_threads == 100
    assert m.method.jfr_repetitions == 1 and m.systems[0].family == "Jetty 12"
    assert len(m.cells) == 12 and m.cells[-1].scenario == "json"


MANY_SERVERS = REPO / "runs" / "many-servers"


def test_reads_the_committed_many_servers_run():
    """The committed recording of the real corpus (bench/run.sh many-servers): its run.yml
    loads with every scenario, system and cell the file lists (read here with PyYAML alone),
    and every file a cell names is in the run folder."""
    raw = yaml.safe_load((MANY_SERVERS / "run.yml").read_text())
    m = load_manifest(MANY_SERVERS, MANY_SERVERS.parent)
    assert m.run_id == "many-servers"
    assert [(s.id, s.load_points) for s in m.scenarios] == \
        [(s["id"], tuple(s["load_points"])) for s in raw["scenarios"]]
    assert [s.id for s in m.systems] == [s["id"] for s in raw["systems"]]
    assert len(m.systems) == 7 and len(m.scenarios) == 5
    # every system at every load point of every scenario, each repetition
    repetitions = raw["method"]["repetitions"]
    assert repetitions == 3
    expected = {(sc["id"], lp, sy["id"], rep) for sc in raw["scenarios"]
                for lp in sc["load_points"] for sy in raw["systems"]
                for rep in range(1, repetitions + 1)}
    assert len(expected) == 7 * (4 + 1 + 1 + 1 + 1) * 3
    got = {(c.scenario, c.load, c.system, c.repetition) for c in m.cells}
    assert got == expected and len(m.cells) == len(expected)
    named = [c.hlog for c in m.cells] + [c.counts for c in m.cells] + \
        [c.jfr for c in m.cells if c.jfr]
    assert len(named) == 168 * 2 + 56        # a JFR recording for one repetition in three
    assert [n for n in named if not (MANY_SERVERS / n).is_file()] == []
    assert m.method.pool_threads == 100 and m.method.jfr_repetitions == 1


def test_no_test_reads_a_machine_local_path():
    """A test that needs a file from one machine (/tmp/...) skips everywhere else and so checks
    nothing: committed inputs only."""
    machine_local = re.compile(r"""Path\(\s*["']/tmp/""")
    local = [f"{p.name}:{n}" for p in sorted((REPO / "tests").glob("*.py"))
             for n, line in enumerate(p.read_text().splitlines(), 1)
             if machine_local.search(line)]
    assert local == []


# --- the fixture: model, data file, golden ----------------------------------------------------

@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("scenarios") / "site"
    shutil.copytree(FIXTURE, site / "runs" / FIXTURE.name)
    out = subprocess.run([sys.executable, "-m", "analysis", "build", "--runs", "runs", "-q"],
                         cwd=site, capture_output=True, text=True, timeout=600, env=ENV)
    assert out.returncode == 0, out.stderr
    return site


def doc_of(site: Path) -> dict:
    return yaml.safe_load(find_data(site, f"{FIXTURE.name}").read_text())


def test_golden_data_file_of_a_run_with_scenarios(built):
    data = find_data(built, f"{FIXTURE.name}")
    assert data.read_bytes() == (GOLDEN / f"{FIXTURE.name}.yml").read_bytes(), \
        "data differs from the golden; if intended, run `make golden`"


def test_scenario_numbers_equal_hdrhistogram_java(built):
    from tests.golden.site.record import check_against_java, expected_cell, scenario_cells
    java = json.loads((GOLDEN / f"javastats-{FIXTURE.name}.json").read_text())
    sent: dict[str, int] = {}
    for c in scenario_cells():
        key = f"{c['scenario']}/{c['load']}/{c['system']}"
        sent[key] = sent.get(key, 0) + c["sent"]
    want = {}
    for key, reps in java.items():
        want[key] = {**expected_cell(reps), "sent": sent[key]}
        want[key]["drops"] = max(sent[key] - want[key]["count"], 0)
    assert len(want) == 12 * 4
    assert check_against_java(doc_of(built), want) == []


def test_each_scenario_has_its_own_ceiling_baseline_and_blocks(built):
    doc = doc_of(built)
    assert doc["schema_version"] == 5 and list(doc["scenarios"]) == ["sleep", "cpu", "json"]
    assert "cells" not in doc and doc["service_time_ms"] is None
    ceilings = {sid: {s["id"]: s["predicted_ceiling_rps"] for s in block["systems"]}
                for sid, block in doc["scenarios"].items()}
    assert ceilings["sleep"]["a-pool"] == 200.0 and ceilings["cpu"]["a-pool"] == 1000.0
    assert ceilings["json"]["a-pool"] is None          # a nominal 0 ms predicts nothing
    sleep = doc["scenarios"]["sleep"]
    assert [lp["id"] for lp in sleep["load_points"]] == ["r50", "r100"]
    assert sleep["load_curve_table"]["caption_id"] == f"load-curve-{FIXTURE.name}-sleep"
    assert sleep["load_curve_table"]["csv"] == f"assets/data/{FIXTURE.name}/sleep-load-curve.csv"
    assert sleep["charts"]["load_curve"]["svg"].endswith("/sleep-load-curve.svg")
    cell = sleep["cells"]["r100"]["a-pool"]
    # 80 of 100 req/s recorded, 2 repetitions of 6 s: 240 of 1,200 sent got no answer
    assert cell["saturated"] and "goodput" in cell["saturation"] and cell["drops"] == 240
    assert cell["intervals_csv"] == f"assets/data/{FIXTURE.name}/sleep-a-pool-r100.csv"
    assert (built / cell["intervals_csv"]).is_file()
    for sid in doc["scenarios"]:
        assert (built / f"_reports/{FIXTURE.name}/{sid}.html").is_file()
        assert (built / f"assets/data/{FIXTURE.name}/{sid}-load-curve.csv").is_file()
    page = (built / f"_reports/{FIXTURE.name}/cpu.html").read_text()
    assert f"permalink: /reports/{FIXTURE.name}/cpu/" in page and "tags" not in page


def test_summary_table_picks_a_point_per_scenario_and_marks_the_best(built):
    doc = doc_of(built)
    st = doc["summary_table"]
    points = {s["id"]: (s["point_text"], s["point_reason"]) for s in st["scenarios"]}
    # a-pool saturates sleep at 100 req/s: the summary shows 50
    assert points["sleep"] == ("50 req/s", "the highest rate at which no target saturated")
    assert points["cpu"] == ("100 req/s", "its only rate")
    assert [o["id"] for o in st["orders"]] == ["family", "model", "by-sleep", "by-cpu", "by-json"]
    family = st["orders"][0]
    assert [g["label"] for g in family["groups"]] == [f"Server {x}" for x in "ABCDE"]
    assert [g["label"] for g in st["orders"][1]["groups"]] == [
        "thread pool", "virtual threads", "event loop"]
    rows = [r for g in family["groups"] for r in g["rows"]]
    assert len(rows) == 12 and all(len(r["cells"]) == 3 for r in rows)
    for col in range(5):
        for i in range(3):
            marked = [r["cells"][i]["values"][col] for r in rows if r["cells"][i]["values"][col]["best"]]
            texts = {r["cells"][i]["values"][col]["text"] for r in rows}
            assert bool(marked) == (len(texts) > 1)
            assert len({m["text"] for m in marked}) <= 1
    # json's cells drop 1-3 requests: the fewest are marked
    errors = [r["cells"][2]["values"][4] for r in rows]
    assert {e["text"] for e in errors if e["best"]} == {"1"}
    assert {e["text"] for e in errors} == {"1", "2", "3"}
    by_cpu = [r["system"] for r in st["orders"][3]["groups"][0]["rows"]]
    p99 = {s: doc["scenarios"]["cpu"]["cells"]["r100"][s]["p99_ms"] for s in by_cpu}
    assert [p99[s] for s in by_cpu] == sorted(p99.values())
    csv = (built / st["csv"]).read_text().splitlines()
    assert csv[0].startswith("scenario,load,offered_rate,system,family,model,throughput_rps")
    assert len(csv) == 1 + 3 * 12 and csv[1].startswith("sleep,r50,50")


def test_run_without_scenarios_keeps_its_names():
    """The implicit scenario's names are today's (no prefix anywhere)."""
    from analysis.paths import series_csv_path, table_csv_path
    assert series_csv_path("r", "pool", "r5") == "assets/data/r/pool-r5.csv"
    assert table_csv_path("r") == "assets/data/r/load-curve.csv"
    assert table_csv_path("r", "sleep") == "assets/data/r/sleep-load-curve.csv"


def test_best_is_marked_only_where_the_printed_values_differ():
    from analysis.derive.summary_marks import best_rows
    assert best_rows([((0, 1.0), "1.00"), ((0, 2.0), "2.00")]) == {0}
    assert best_rows([((0, 1.0), "1.00"), ((0, 1.001), "1.00")]) == set()
    assert best_rows([((0, 1.0), "1.00"), ((0, 1.001), "1.00"), ((0, 3.0), "3.00")]) == {0, 1}
    assert best_rows([((1, 5000.0), "> 5 s"), ((0, 9.0), "9.00"), ((2, 0.0), "–")]) == set()
    assert best_rows([((1, 5000.0), "> 5 s"), ((0, 9.0), "9.00"), ((0, 8.0), "8.00")]) == {2}


def test_docs_describe_the_scenario_blocks():
    docs = (REPO / "docs" / "data-format.md").read_text()
    for key in ("scenarios:", "summary_table:", "scenario_list:", "headline:", "family:",
                "model:", "pool_threads", "jfr_repetitions", "scenario=ID"):
        assert key in docs, key


def test_new_post_drafts_a_section_per_scenario():
    """`make post` on a run with scenarios: the summary table, then per scenario its tables
    through includes given scenario=; the fixture's load_generator has no connections (as
    bench's schema 2 has none), which the draft must not need."""
    from analysis.derive.aggregate import build_run
    from analysis.write.post import render_draft
    text = render_draft(build_run(load_manifest(FIXTURE)))
    assert '{%- assign run_data = site.data.runs["scenarios-demo"] -%}' in text
    assert '{% include summary-table.html block=run_data %}' in text
    for sid in ("sleep", "cpu", "json"):
        section = text.split(f'{{% assign scenario = run_data.scenarios["{sid}"] %}}\n', 1)[1]
        assert section.startswith('{% include ceiling.html block=scenario %}\n'), sid
        assert '{% include load-curve-table.html block=scenario %}' in section.split("## ")[0]
    assert 'block=scenario load="r100"' in text and "## The load curve" not in text
    assert "image: /assets/charts/scenarios-demo/sleep-load-curve.png" in text


def test_achieved_rates_within_one_percent_of_the_offered_tie():
    """999.9 against 1,000.1 req/s at 1,000 offered is the window's edge, not a better server:
    no mark; a target that fell behind (950) leaves the others best."""
    from analysis.derive.summary_marks import best_rows
    keep_up = [((0, -100), "999.9"), ((0, -100), "1,000.1"), ((0, -100), "1,000.0")]
    assert best_rows(keep_up, by_key=True) == set()
    behind = keep_up + [((0, -95), "950.0")]
    assert best_rows(behind, by_key=True) == {0, 1, 2}
    # latencies tie by their printed text only
    assert best_rows([((0, 1.0), "1.00"), ((0, 1.001), "1.00"), ((0, 2.0), "2.00")]) == {0, 1}
