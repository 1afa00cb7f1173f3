"""datafiles.py: the contract's document, display formatting, deterministic YAML that keeps any
string as data, and the CSV files."""
from __future__ import annotations

import csv
import io
import json
import math
import shutil
import subprocess

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis import vocabulary
from analysis.write import datafiles
from analysis.write.yaml_text import dump_yaml
from analysis.model import InFlight, Jvm, Percentile
from tests.helpers import cell, result


@pytest.mark.parametrize("value,text", [
    (None, "–"), (0.1234, "0.123"), (1.234, "1.23"), (12.34, "12.3"), (201.327, "201"),
    (2500.4, "2,500")])
def test_fmt_ms(value, text):
    assert vocabulary.fmt_ms(value) == text


@pytest.mark.parametrize("rate,clients,label", [
    (25, 5, "5 × 5/s"), (2500, 200, "200 × 12.5/s"), (100, None, "100/s"), (1000, 3, "3 × 333.333/s")])
def test_load_label(rate, clients, label):
    assert vocabulary.load_label(rate, clients) == label


def test_rounding_has_no_negative_zero():
    assert vocabulary.r3(-0.0001) == 0.0 and str(vocabulary.r3(-0.0001)) == "0.0"
    assert vocabulary.r3(1.23456) == 1.235 and vocabulary.r3(None) is None


def test_labelled_keeps_contract_order_and_only_given_keys():
    out = vocabulary.labelled({"gc": "G1", "cpu": "EPYC", "smt": False},
                             {"cpu": "CPU", "smt": "SMT", "gc": "GC", "heap": "Heap"})
    assert out == [{"key": "cpu", "label": "CPU", "value": "EPYC"},
                   {"key": "smt", "label": "SMT", "value": "no"},
                   {"key": "gc", "label": "GC", "value": "G1"}]


def test_dump_yaml_keeps_order_and_writes_null():
    text = dump_yaml({"schema_version": 1, "b": None, "a": float("nan"), "list": [1]})
    assert text == "schema_version: 1\nb: null\na: null\nlist:\n- 1\n"


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_string_round_trips_as_data(title):
    doc = {"title": title, "tags": [title], "nested": {"label": title}}
    assert yaml.safe_load(dump_yaml(doc)) == doc


def test_run_document_follows_the_contract(tmp_path):
    doc = datafiles.run_document(result(tmp_path))
    assert list(doc) == ["schema_version", "id", "title", "date", "description", "tags", "url",
                         "manifest", "value_unit", "service_time_ms", "environment",
                         "load_generator", "systems", "load_points", "cells", "stat",
                         "load_curve_table", "ceiling", "methodology", "jvm_table", "charts"]
    assert doc["schema_version"] == 5 and doc["url"] == "/reports/demo/"
    assert doc["load_generator"][0]["value"] == "open loop (latency from intended send time)"
    assert doc["load_generator"][1]["value"] == "15 s"
    assert doc["load_points"][0] == {"id": "r25", "offered_rate": 25, "clients": 5,
                                     "rate_per_client": 5.0, "duration_s": 30, "duration_text": "30",
                                     "label": "5 × 5/s"}
    assert list(doc["cells"]) == ["r25", "r50"] and list(doc["cells"]["r50"]) == ["pool"]
    cell = doc["cells"]["r25"]["pool"]
    assert cell["p50_ms"] == 201.327 and cell["drop_pct"] == 1.3 and cell["drops"] == 10
    assert cell["p50_text"] == "201" and cell["drops_text"] == "10 (1.3 %)"
    assert cell["in_flight"] is None and cell["littles_law"] == 5.038
    assert cell["littles_law_check"] == "not checked: no measurement"
    assert cell["intervals_csv"] == "assets/data/demo/pool-r25.csv" and cell["kind"] == "load"
    assert "jvm" not in cell and doc["cells"]["r50"]["pool"]["jvm"]["gc"]["count"] == 3
    table = doc["load_curve_table"]
    row = table["rows"][0]
    assert row["clients_x_rate"] == "5 × 5/s"
    assert table["latency_header"] == "p50 / p95 / p99 / p99.9 / max"
    assert [x["text"] for x in row["cells"][0]["latency"]] == ["201", "203", "205", "210", "210"]
    assert row["cells"][0]["requests_text"] == "10 (1.3 %)"
    assert row["cells"][1]["missing"] is True and row["saturated"] is False
    assert table["rows"][1]["cells"][0]["saturated"] is True and table["rows"][1]["saturated"]
    assert table["missing"] == [{"load": "r25", "system": "virt",
                                 "file": "runs/demo/virt/r25.hlog"}]
    assert doc["ceiling"]["rows"][0]["predicted_text"] == "100.0 req/s"
    assert doc["ceiling"]["rows"][1]["workers_text"] == "no limit"
    assert doc["ceiling"]["rows"][1]["vs_text"] == "–"
    assert doc["methodology"] == {
        "value_unit_text": "µs", "latency_unit": "ms", "shared_host": None,
        "raw_data_text": "the HdrHistogram log behind it",
        "estimates_text": "nothing here is estimated — every figure is computed from the "
                          "linked logs",
        "scope_text": "one JDK, one synthetic workload"}
    (jvm_row,) = doc["jvm_table"]["rows"]
    assert (jvm_row["label"], jvm_row["offered_text"], jvm_row["gc_pauses_text"],
            jvm_row["safepoints_text"]) == ("Pool", "50 req/s", "3", "–")
    assert doc["stat"]["systems"]["virt"]["label"] == "Virtual"
    assert doc["stat"]["settings"]["load_generator"]["timeout_s"] == "15 s"


def test_run_document_is_deterministic(tmp_path):
    a = dump_yaml(datafiles.run_document(result(tmp_path)))
    b = dump_yaml(datafiles.run_document(result(tmp_path)))
    assert a == b and yaml.safe_load(a)["schema_version"] == datafiles.SCHEMA_VERSION


def test_series_csv_full_precision_with_repetitions():
    rows = [{"t_s": 0.0, "length_s": 1.0, "count": 3, "throughput_rps": 3.0, "p50_ms": 0.1234567,
             "p99_ms": 0.5, "max_ms": 0.75},
            {"t_s": 1.0, "length_s": 1.0, "count": 0, "throughput_rps": 0.0, "p50_ms": None,
             "p99_ms": None, "max_ms": None}]
    text = datafiles.series_csv([rows, rows[:1]])
    parsed = list(csv.reader(io.StringIO(text)))
    assert parsed[0] == list(vocabulary.SERIES_COLUMNS)
    assert parsed[1] == ["1", "0.0", "1.0", "3", "3.0", "0.1234567", "0.5", "0.75", "", ""]
    assert parsed[2][5:] == ["", "", "", "", ""]
    assert parsed[3][0] == "2" and len(parsed) == 4


def test_table_csv_has_a_line_per_cell(tmp_path):
    parsed = list(csv.DictReader(io.StringIO(datafiles.table_csv(result(tmp_path)))))
    assert [(r["load"], r["system"], r["saturated"]) for r in parsed] == [
        ("r25", "pool", "false"), ("r50", "pool", "true")]
    assert parsed[0]["p99_ms"] == "205.0" and parsed[0]["sent"] == "760" and parsed[1]["sent"] == ""
    assert not any(math.isnan(float(r["mean_ms"])) for r in parsed)


def test_jfr_summary_is_trimmed_for_data_and_pauses_go_on_the_time_axis():
    from analysis.derive.analyse import jvm_for_data, pauses_on_series_axis
    summary = {"schema_version": 1, "jdk": "OpenJDK 25", "start_epoch_s": 1000.0,
               "duration_s": 17.7919, "truncated": False, "warnings": ["x"],
               "gc": {"count": 2, "pause_max_ms": 6.12345,
                      "pauses": [[1004.5, 6.1], [1010.0, 2.0], [1030.0, 1.0]]},
               "cpu": {"jvm_user": 0.0389641}, "hot_methods": [{"method": f"m{i}"} for i in range(20)]}
    jvm = jvm_for_data(summary)
    assert list(jvm) == ["jdk", "duration_s", "truncated", "gc", "cpu", "hot_methods"]
    assert jvm["gc"] == {"count": 2, "pause_max_ms": 6.123} and jvm["duration_s"] == 17.792
    assert len(jvm["hot_methods"]) == 5 and jvm["cpu"]["jvm_user"] == 0.039
    # the series starts at epoch 1002 s and spans 12 s: the pause at 1030 s is outside
    assert pauses_on_series_axis(summary, 1002.0, 12.0) == [
        {"t_s": 2.5, "duration_ms": 6.1}, {"t_s": 8.0, "duration_ms": 2.0}]


# --- the JVM hot-methods and attribution block, and formatted prose numbers -----------------

def hotspot_result(tmp_path, attribution=True):
    """A run with JFR summaries on two cells (summarize_jfr's shape, as jvm_for_data keeps
    it): pool at r25 with samples, virt at r50 with none."""
    res = result(tmp_path, [{"pattern": r"app\..*", "label": "app <b>"}] if attribution else ())
    scenario = res.scenario
    hot = [{"method": f"app.M{i}.run<{i}>", "self_samples": 10 - i, "self_pct": 100 * (10 - i) / 55,
            "total_samples": 11, "total_pct": 20.0} for i in range(7)]
    scenario.cells[("r25", "pool")].jvm = Jvm("runs/demo/pool/r25.jfr", {
        "samples": {"count": 57, "unresolved": 2, "truncated_stacks": 0}, "hot_methods": hot,
        "attribution": [{"label": "app <b>", "samples": 41, "pct": 74.545},
                        {"label": "other", "samples": 14, "pct": 25.455}] if attribution else None})
    scenario.cells[("r50", "virt")] = cell(
        "r50", "virt", 1500, 50.0, False,
        jvm={"samples": {"count": 0, "unresolved": 0}, "hot_methods": [],
             "attribution": [{"label": "app <b>", "samples": 0, "pct": None},
                             {"label": "other", "samples": 0, "pct": None}]
             if attribution else None})
    return res


def test_jvm_hotspots_are_shaped_for_printing(tmp_path):
    doc = datafiles.run_document(hotspot_result(tmp_path))
    keys = list(doc)
    assert keys.index("jvm_table") + 1 == keys.index("jvm_hotspots") == keys.index("charts") - 1
    hs = doc["jvm_hotspots"]
    assert hs["attribution_labels"] == ["app <b>", "other"] and hs["attribution_caption"]
    assert hs["attribution_colspan"] == 4
    pool, virt = hs["systems"]
    assert (pool["system"], pool["label"], virt["system"]) == ("pool", "Pool", "virt")
    assert "Pool" in pool["methods_caption"] and "top 5" in pool["methods_caption"]
    (r25,) = pool["loads"]       # the r50 cell has no `jvm`: left out
    assert r25["load"] == "r25" and r25["offered"] == "25"
    assert r25["samples"] == "55"                      # 57 samples, 2 without a stack
    assert len(r25["methods"]) == 5
    assert r25["methods"][0] == {"method": "app.M0.run<0>", "self_pct": "18.2", "total_pct": "20.0"}
    assert r25["attribution"] == [{"label": "app <b>", "samples": "41", "pct": "74.5"},
                                  {"label": "other", "samples": "14", "pct": "25.5"}]
    (r50,) = virt["loads"]
    assert r50["methods"] == [] and r50["samples"] == "0"
    assert [a["pct"] for a in r50["attribution"]] == ["–", "–"]
    text = dump_yaml(doc)
    assert yaml.safe_load(text)["jvm_hotspots"] == hs


def test_jvm_hotspots_without_attribution_or_jfr(tmp_path):
    hs = datafiles.run_document(hotspot_result(tmp_path, attribution=False))["jvm_hotspots"]
    assert "attribution_labels" not in hs and "attribution_caption" not in hs
    assert all("attribution" not in x for s in hs["systems"] for x in s["loads"])
    # no cell with hot methods (the contract test's result): no block at all
    assert "jvm_hotspots" not in datafiles.run_document(result(tmp_path))


def test_table_cells_carry_mean_and_in_flight_as_prose_prints_them(tmp_path):
    res = result(tmp_path)
    pool_r25 = res.scenario.cells[("r25", "pool")]
    pool_r25.stats.mean = Percentile(5842.689)
    pool_r25.in_flight = InFlight(measured_mean=1175.521)
    cells = datafiles.run_document(res)["cells"]
    r25, r50 = cells["r25"]["pool"], cells["r50"]["pool"]
    assert r25["mean_text"] == "5,843" and r25["in_flight_text"] == "1,176"
    assert r50["mean_text"] == "202" and r50["in_flight_text"] == "–"
    assert "virt" not in cells["r25"]      # no log: no cell (the table says "no data")


NUMBER_LIKE = ["1,180", "1,234.5", "0,5", "12.3", "25", "1_000", "-3", ".5", "0x1f", "0b101"]


def test_strings_ruby_would_read_as_numbers_are_quoted():
    text = dump_yaml({"v": NUMBER_LIKE, "plain": ["5,845 / 8,552", "12 (1.6 %)", "r25"]})
    for value in NUMBER_LIKE:
        assert f"- '{value}'\n" in text, value
    assert "- 5,845 / 8,552\n" in text          # not a number to anyone: left plain
    assert yaml.safe_load(text)["v"] == NUMBER_LIKE


@pytest.mark.skipif(shutil.which("ruby") is None, reason="needs ruby (Jekyll's YAML reader)")
def test_jekylls_yaml_reader_gets_the_strings_back():
    doc = {"v": NUMBER_LIKE + ["5,845 / 8,552", "1,218 (50.8 %)", "–", "2026-11-22"]}
    out = subprocess.run(["ruby", "-ryaml", "-rjson", "-e",
                          "puts JSON.generate(YAML.safe_load(STDIN.read))"],
                         input=dump_yaml(doc), capture_output=True, text=True,
                         timeout=60, check=True)
    assert json.loads(out.stdout) == doc
