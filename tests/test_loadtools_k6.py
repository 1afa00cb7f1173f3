"""k6's --out json, --out csv and summary files (issue 23). The fixtures are hand-made in k6's
spelling (tests/make_k6_fixtures.py; k6 is not installed here, see the fixtures' README).
Golden numbers: nearest-rank over the http_req_duration values read here with the json and csv
modules, and the numbers the summary files hold."""
from __future__ import annotations

import csv
import json
from datetime import datetime
from decimal import Decimal

import numpy as np
import pytest

from analysis.errors import ResultsError
from analysis.read.loadtools import k6
from tests.loadtools_fixtures import (FIXTURES, assert_each_unusable_variant_fails,
                                      garbage_line, nearest_rank, read_fixture,
                                      truncated_mid_line)

DIR = FIXTURES / "k6"
CLOSED = DIR / "handmade-constant-vus.ndjson"
OPEN = DIR / "handmade-arrival-rate.ndjson"


def raw_points(path):
    """(end ns, value ns, tags) of each http_req_duration point, by the json module."""
    out = []
    for line in path.read_text().splitlines():
        obj = json.loads(line)
        if obj["type"] == "Point" and obj["metric"] == "http_req_duration":
            end = datetime.fromisoformat(obj["data"]["time"][:26] + obj["data"]["time"][-6:])
            frac_ns = int((obj["data"]["time"].split(".")[1][:-6] + "000000000")[:9])
            end_ns = int(end.timestamp()) * 10**9 + frac_ns
            out.append((end_ns, int(Decimal(repr(obj["data"]["value"])) * 10**6),
                        obj["data"]["tags"]))
    return out


@pytest.mark.parametrize("name, fmt", [
    ("handmade-constant-vus.ndjson", "k6-json"), ("handmade-arrival-rate.ndjson", "k6-json"),
    ("handmade-old-order.ndjson", "k6-json"), ("handmade-constant-vus.csv", "k6-csv"),
    ("handmade-summary-export.json", "k6-summary"),
    ("handmade-handle-summary.json", "k6-summary"), ("handmade-summary-v2.json", "k6-summary"),
    ("README.md", None)])
def test_sniff_names_each_file(name, fmt):
    assert k6.sniff((DIR / name).read_bytes()[:65536]) == fmt


@pytest.mark.parametrize("path", [CLOSED, OPEN, DIR / "handmade-old-order.ndjson"])
def test_json_points_against_the_raw_values(path):
    raw = raw_points(path)
    s = read_fixture(k6, path)
    assert len(s) == len(raw)
    assert np.array_equal(s.latency_ns, [v for _, v, _ in raw])
    ordered = sorted(v for _, v, _ in raw)
    for p in (50, 90, 99, 100):
        assert np.sort(s.latency_ns)[int(np.ceil(p / 100 * len(s))) - 1] == \
            nearest_rank(ordered, p)
    # k6 stamps a request with its end: the start is end - http_req_duration
    assert np.allclose(s.start_ms, [(e - v) / 1e6 for e, v, _ in raw], rtol=0, atol=1e-3)
    assert s.epoch and s.native_unit == "ns" and s.skipped == 0
    assert np.array_equal(s.status, [int(t["status"]) for _, _, t in raw])
    assert np.array_equal(s.ok, [t["expected_response"] == "true" for _, _, t in raw])
    assert np.array_equal(s.timed_out, [t.get("error_code") == "1050" for _, _, t in raw])


def test_timeouts_and_errors_in_the_closed_run():
    s = read_fixture(k6, CLOSED)
    assert (len(s), int(s.ok.sum()), int(s.timed_out.sum())) == (24, 19, 2)
    assert set(s.status[s.timed_out]) == {0}
    assert s.latency_ns[s.timed_out].min() > 1_000_000_000
    assert s.first_error == "status 500"
    assert set(s.labels) == {"http://127.0.0.1:18923/"}


def test_load_model_from_the_scenario_tag():
    closed = read_fixture(k6, CLOSED).info
    assert (closed.tool, closed.load_model) == ("k6", "closed")
    assert closed.load_model_evidence.startswith("scenario default only")
    # a named scenario says nothing by itself about its executor
    opened = read_fixture(k6, OPEN).info
    assert (opened.load_model, opened.load_model_evidence) == ("unknown", None)


@pytest.mark.parametrize("executor, model", [
    ("constant-arrival-rate", "open"), ("ramping-arrival-rate", "open"),
    ("constant-vus", "closed"), ("ramping-vus", "closed"), ("per-vu-iterations", "closed"),
    ("shared-iterations", "closed"), ("externally-controlled", "closed")])
def test_load_model_from_the_executors_run_yml_names(executor, model):
    s = k6.read(str(OPEN), "k6-json", {"executors": {"steady": executor}})
    assert s.info.load_model == model
    assert s.info.load_model_evidence == f"scenario steady: executor {executor} (run.yml)"


def test_csv_matches_the_json_of_the_same_run():
    j = read_fixture(k6, CLOSED)
    c = read_fixture(k6, DIR / "handmade-constant-vus.csv")
    rows = [r for r in csv.DictReader((DIR / "handmade-constant-vus.csv").open())
            if r["metric_name"] == "http_req_duration"]
    assert np.array_equal(c.latency_ns, [int(Decimal(r["metric_value"]) * 10**6) for r in rows])
    assert np.array_equal(c.latency_ns, j.latency_ns)
    assert np.array_equal(c.ok, j.ok) and np.array_equal(c.timed_out, j.timed_out)
    assert np.array_equal(c.status, j.status)
    # whole-second timestamps: the start is end - latency with the end cut to the second
    ends = np.array([int(r["timestamp"]) for r in rows]) * 1000.0
    assert np.allclose(c.start_ms, ends - c.latency_ns / 1e6)
    assert c.info.load_model == "closed"


@pytest.mark.parametrize("name, version", [
    ("handmade-summary-export.json", None), ("handmade-handle-summary.json", None),
    ("handmade-summary-v2.json", "2.2.0")])
def test_summaries_hold_the_files_numbers(name, version):
    doc = json.loads((DIR / name).read_text())
    r = read_fixture(k6, DIR / name)
    stats = (doc["metrics"]["http_req_duration"] if "root_group" in doc and "state" not in doc
             else doc["metrics"]["http_req_duration"]["values"] if "state" in doc
             else doc["results"]["metrics"][0]["values"])
    assert r.percentiles_ms == {50.0: stats["med"], 90.0: stats["p(90)"], 95.0: stats["p(95)"]}
    assert (r.mean_ms, r.min_ms, r.max_ms) == (stats["avg"], stats["min"], stats["max"])
    assert (r.requests, r.errors, r.timeouts) == (24, 5, None)
    assert r.info.version == version and r.info.load_model == "unknown"
    raw = sorted(v for _, v, _ in raw_points(CLOSED))
    assert r.min_ms * 1e6 == pytest.approx(raw[0]) and r.max_ms * 1e6 == pytest.approx(raw[-1])
    assert r.duration_s == pytest.approx(0.54094631)


def test_a_point_line_cut_in_the_middle_is_skipped_and_named(tmp_path):
    lines = CLOSED.read_text().splitlines()
    last = max(i for i, line in enumerate(lines) if '"http_req_duration","type":"Point"' in line)
    cut = tmp_path / "cut.ndjson"
    cut.write_text("\n".join(lines[:last] + [lines[last][:120]]) + "\n")
    s = k6.read(str(cut), "k6-json", {})
    assert len(s) == 23 and s.skipped == 1
    assert s.warnings == [f"{cut}:{last + 1}: not a JSON line (cut short, or not k6 output) "
                          "(skipped)"]


@pytest.mark.parametrize("name, fmt", [("handmade-constant-vus.ndjson", "k6-json"),
                                       ("handmade-constant-vus.csv", "k6-csv")])
def test_truncated_and_junk_lines(name, fmt, tmp_path):
    cut = tmp_path / ("cut" + (DIR / name).suffix)
    line = truncated_mid_line(DIR / name, cut)
    s = k6.read(str(cut), fmt, {})
    # the last line is an iterations point, not a request: cut, it is still named
    assert len(s) == 24 and s.skipped == 1 and s.warnings[0].startswith(f"{cut}:{line}: ")
    bad = tmp_path / ("junk" + (DIR / name).suffix)
    line = garbage_line(DIR / name, bad)
    s = k6.read(str(bad), fmt, {})
    assert len(s) == 24 and s.skipped == 1 and s.warnings[0].startswith(f"{bad}:{line}: ")


def test_small_chunks_and_a_line_longer_than_a_chunk_read_the_same(tmp_path, monkeypatch):
    whole = read_fixture(k6, CLOSED)
    monkeypatch.setattr(k6, "CHUNK_BYTES", 256)     # every line is longer than a chunk
    small = k6.read(str(CLOSED), "k6-json", {})
    assert np.array_equal(whole.latency_ns, small.latency_ns)
    assert np.array_equal(whole.start_ms, small.start_ms)


def test_vu_and_iter_metadata_and_other_spellings_are_read(tmp_path):
    lines = []
    for line in CLOSED.read_text().splitlines():
        obj = json.loads(line)
        if obj.get("metric") == "http_req_duration" and obj["type"] == "Point":
            obj["data"]["metadata"] = {"iter": str(len(lines)), "vu": "1"}
            # spaced out, as another JSON writer would: the slow path reads it
            line = json.dumps(obj) if len(lines) % 2 else json.dumps(obj, separators=(",", ":"))
        lines.append(line)
    path = tmp_path / "meta.ndjson"
    path.write_text("\n".join(lines) + "\n")
    s = k6.read(str(path), "k6-json", {})
    base = read_fixture(k6, CLOSED)
    assert np.array_equal(s.latency_ns, np.sort(base.latency_ns)[np.argsort(np.argsort(
        s.latency_ns))]) and len(s) == 24 and s.skipped == 0
    assert sorted(s.latency_ns) == sorted(base.latency_ns)
    assert int(s.timed_out.sum()) == 2 and int(s.ok.sum()) == 19


@pytest.mark.parametrize("name, fmt", [
    ("handmade-constant-vus.ndjson", "k6-json"), ("handmade-constant-vus.csv", "k6-csv"),
    ("handmade-summary-export.json", "k6-summary")])
def test_unusable_files_give_one_clear_error(name, fmt, tmp_path):
    assert_each_unusable_variant_fails(k6, DIR / name, fmt, tmp_path)


def test_a_file_without_requests_says_so(tmp_path):
    path = tmp_path / "vus-only.ndjson"
    path.write_text("\n".join(line for line in CLOSED.read_text().splitlines()
                              if "http_req_duration" not in line) + "\n")
    with pytest.raises(ResultsError, match="no http_req_duration points"):
        k6.read(str(path), "k6-json", {})
