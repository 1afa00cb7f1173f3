"""The counts.json reader: the demo's v1 files, a hand-written v2 file, and broken files that must
give one CountsError naming the file."""
from __future__ import annotations

import json

import pytest

from analysis.read.counts import MAX_BYTES, read_counts
from analysis.errors import CountsError, LoadcurveError
from tests.conftest import REPO

DEMO = REPO / "runs" / "pool-vs-virtual"
V2 = REPO / "tests" / "fixtures" / "counts" / "v2-example.counts.json"
# the first demo's counts (schema 1, recorded before issue 10; commit ac7dcc8)
V1_DEMO = REPO / "tests" / "fixtures" / "counts"


def test_v1_demo_file_maps_what_exists():
    c = read_counts(V1_DEMO / "demo-v1-pool20-r800.counts.json")
    assert c.schema_version == 1
    assert (c.offered_rate, c.warmup_s, c.duration_s, c.timeout_s) == (800, 5, 12, 15)
    # v1's window.completed counted replies arriving in the window, not the window's outcomes
    assert c.window.sent == 9600 and c.window.not_sent == 0
    assert (c.window.completed, c.window.timed_out, c.window.errors) == (None, None, None)
    assert c.server_completions_window == 1181
    assert c.window.start_s is None and c.window.duration_s is None
    assert c.in_flight.window_mean is None and c.intervals == () and c.host_check is None
    assert c.send_lag_us_window.p99 == 4243 and c.send_lag_us_window.count == 9600
    assert c.machine_cpu_share_window is None and c.server_cpu_share_window is None


@pytest.mark.parametrize("path", sorted(DEMO.glob("*/*.counts.json")), ids=lambda p: p.stem)
def test_every_demo_file_reads(path):
    c = read_counts(path)
    assert c.schema_version == 2 and c.window.sent == c.offered_rate * c.duration_s


def test_v2_example():
    c = read_counts(V2)
    w = c.window
    assert (w.sent, w.completed, w.timed_out, w.errors, w.not_sent) == (300, 290, 8, 2, 0)
    assert w.duration_s == 3.0 and w.end_epoch_ms - w.start_epoch_ms == 3000
    assert c.drain_s == 1.6
    assert c.in_flight.at_window_start == 21 and c.in_flight.window_mean == 27.5
    assert [iv.phase for iv in c.intervals] == ["warmup"] * 2 + ["window"] * 3 + ["drain"] * 2
    assert len(c.window_intervals()) == 3
    assert c.server_completions_window == 97 + 96 + 95
    assert c.generator_cpu_share_window == 0.035 and c.machine_cpu_share_window == 0.14
    assert c.server_cpu_share_window == 0.06 and c.machine_cores == 2
    assert c.host_check.verdict == "quiet" and c.send_lag_us_window.max == 3100
    assert c.window_epoch_ns() == (1795307126308 * 10 ** 6, 1795307129308 * 10 ** 6)
    assert read_counts(V1_DEMO / "demo-v1-pool20-r25.counts.json").window_epoch_ns() is None


def test_warmup_block_is_read_and_older_files_have_none(tmp_path):
    """issue 32: `warmup` says how the window's start was chosen; older files have none."""
    assert read_counts(V2).warmup is None
    path = tmp_path / "r100.1.counts.json"
    path.write_text(_v2(warmup={"mode": "auto", "min_s": 1, "max_s": 60, "used_s": 2,
                                "reached": True}))
    w = read_counts(path).warmup
    assert (w.mode, w.min_s, w.max_s, w.used_s, w.reached) == ("auto", 1, 60, 2, True)


def _v2(**changes):
    doc = json.loads(V2.read_text())
    for dotted, value in changes.items():
        target = doc
        *parents, last = dotted.split("__")
        for key in parents:
            target = target[int(key)] if isinstance(target, list) else target[key]
        if isinstance(target, list):
            last = int(last)
        if value is _DELETE:
            del target[last]
        else:
            target[last] = value
    return json.dumps(doc, indent=1)


_DELETE = object()

BROKEN = [
    ("not json", "{\n  \"schema_version\": 2,\n  oops\n}", ":3: column 3: invalid JSON"),
    ("empty", "", ":1: column 1: invalid JSON"),
    ("top list", "[]", "expected a JSON object"),
    ("NaN", '{"schema_version": NaN}', "NaN is not a number"),
    ("duplicate", '{"schema_version": 2, "schema_version": 1}', "appears twice"),
    ("nested duplicate", '{"schema_version": 2, "window": {"sent": 1, "errors": 0, "sent": 2}}',
     "key 'sent' appears twice in one object"),
    ("version", _v2(schema_version=3), "schema_version: expected one of 1, 2, got 3"),
    ("identity", _v2(window__completed=289),
     "sent 300 != completed 289 + timed_out 8 + errors 2 (= 299)"),
    ("negative", _v2(window__errors=-1), "window.errors: expected a whole number >= 0, got -1"),
    ("string count", _v2(window__sent="300"), 'window.sent: expected a whole number >= 0, got "300"'),
    ("bool count", _v2(window__sent=True), "window.sent: expected a whole number"),
    ("missing key", _v2(window__timed_out=_DELETE), "window.timed_out: missing"),
    ("missing block", _v2(in_flight=_DELETE), "in_flight: missing"),
    ("window order", _v2(window__end_s=1.0), "end_s 1 is not after start_s 2"),
    ("phase", _v2(intervals__2__phase="measure"), "intervals[2].phase: expected one of"),
    ("interval type", _v2(intervals__1="x"), "intervals[1]: expected an object, got a string"),
    ("interval order", _v2(intervals__3__t_s=1.5), "intervals[3].t_s: 1.5 comes before"),
    # each field of an interval row: the row is then read key by key, for the key's name
    ("interval count", _v2(intervals__2__sent=True), "intervals[2].sent: expected a whole number"),
    ("interval negative", _v2(intervals__4__in_flight_max=-1),
     "intervals[4].in_flight_max: expected a whole number >= 0, got -1"),
    ("interval number", _v2(intervals__1__t_s="1"), 'intervals[1].t_s: expected a number >= 0, got "1"'),
    ("interval null", _v2(intervals__0__in_flight_mean=None),
     "intervals[0].in_flight_mean: expected a number >= 0, got null"),
    ("interval missing", _v2(intervals__3__errors=_DELETE), "intervals[3].errors: missing"),
    ("interval length", _v2(intervals__2__length_s=-0.5),
     "intervals[2].length_s: expected a number >= 0, got -0.5"),
    ("interval phase type", _v2(intervals__1__phase=2), "intervals[1].phase: expected a string"),
    ("share", _v2(machine__cpu_share_window=1.7), "machine.cpu_share_window: a CPU share"),
    ("mean above max", _v2(in_flight__window_mean=40.0), "window_mean 40 is above window_max 38"),
    ("verdict", _v2(host_check__verdict="fine"), "host_check.verdict: expected quiet or busy"),
    ("v1 window", '{"schema_version": 1, "window": {"sent": 1}}', "window.completed: missing"),
    # issue 32: the warm-up block, optional, typed and consistent with the window
    ("warmup mode", _v2(warmup={"mode": "steady", "min_s": 2, "max_s": 2, "used_s": 2,
                                "reached": False}), 'warmup.mode: expected auto or fixed, got "steady"'),
    ("warmup reached", _v2(warmup={"mode": "auto", "min_s": 1, "max_s": 9, "used_s": 2,
                                   "reached": 1}), "warmup.reached: expected true or false, got 1"),
    ("warmup used", _v2(warmup={"mode": "auto", "min_s": 1, "max_s": 9, "used_s": 3,
                                "reached": True}), "used_s 3 is not warmup_s 2"),
    ("warmup window", _v2(warmup_s=3, warmup={"mode": "auto", "min_s": 1, "max_s": 9,
                                              "used_s": 3, "reached": True}),
     "used_s 3 is not window.start_s 2"),
    ("warmup max", _v2(warmup={"mode": "auto", "min_s": 1, "max_s": 1, "used_s": 2,
                               "reached": False}), "used_s 2 is above max_s 1"),
    ("warmup missing", _v2(warmup={"mode": "fixed", "min_s": 2, "max_s": 2, "reached": True}),
     "warmup.used_s: missing"),
]


@pytest.mark.parametrize("name,text,message", BROKEN, ids=[b[0] for b in BROKEN])
def test_broken_files_give_one_error_naming_the_file(tmp_path, name, text, message):
    path = tmp_path / "r100.1.counts.json"
    path.write_text(text)
    with pytest.raises(CountsError) as info:
        read_counts(path)
    text = str(info.value)
    assert text.startswith(str(path)) and message in text, text
    assert isinstance(info.value, LoadcurveError) and "\n" not in text


def test_not_utf8_missing_and_too_large(tmp_path):
    bad = tmp_path / "bad.counts.json"
    bad.write_bytes(b'{"schema_version": 2, "x": "\xff"}')
    with pytest.raises(CountsError, match="byte 28: not UTF-8"):
        read_counts(bad)
    with pytest.raises(CountsError, match="cannot read"):
        read_counts(tmp_path / "absent.counts.json")
    big = tmp_path / "big.counts.json"
    with open(big, "wb") as f:
        f.truncate(MAX_BYTES + 1)
    with pytest.raises(CountsError, match="more than a counts file can be"):
        read_counts(big)


def test_server_pid_unknown_gives_none(tmp_path):
    path = tmp_path / "r.counts.json"
    path.write_text(_v2(server__cpu_share_window=None))
    assert read_counts(path).server_cpu_share_window is None


def test_server_null_for_a_server_given_by_url(tmp_path):
    """bench/run.sh --url without --server-pid: the generator writes `server: null` (issue 24),
    and the file still reads, with the issue-24 keys (first_error an object, errors_by_status,
    request, the settle wait in host_check) beside the others."""
    doc = json.loads(V2.read_text())
    doc.update(server=None, errors_by_status={"500": 2},
               first_error={"status": 500, "reason": "HTTP/1.1 500 Server Error",
                            "body_head": "no\n", "intended_s": 1.25},
               request={"method": "POST", "urls": [{"url": "http://127.0.0.1:1/a", "weight": 3}],
                        "header_names": ["X-Test"], "body_bytes": 9, "success": "200-399",
                        "tls": None})
    doc["host_check"].update(settle="settled", settle_waited_s=6.1, settle_bound_ms=159.1)
    path = tmp_path / "r.counts.json"
    path.write_text(json.dumps(doc))
    c = read_counts(path)
    assert c.server_cpu_share_window is None and c.window.errors == 2
    assert c.host_check.verdict == "quiet"
