"""bench/run.sh --warmup auto (issue 32): the harness warms a server until it is steady.

A Python server started inside the test plays a fresh JVM: for its first SLOW_S seconds of load
it handles one request at a time, each for HOLD_S (10 req/s), so at RATE a queue builds; then it
answers each in about a millisecond, and the queue drains at once. The harness measures it by
URL, once with --warmup auto and once with the old fixed warm-up of 1 s.

Little's law is the yardstick: in a steady state the requests in flight are the rate times the
time each spends in flight. That time is taken from the server after the run, by a plain Python
client (sequential GETs, their median round trip): a source independent of the generator. The
window's first second must hold that many in flight, within a factor of 2 or one request,
whichever is more: at 40 req/s and a few milliseconds a steady server holds a small fraction of
one request on average, so a second's mean can only be off by a request when requests queue (a
scheduling hiccup of the Python server of tens of milliseconds adds under one); the transient
here holds tens.
"""
from __future__ import annotations

import http.client
import json
import socket
import statistics
import threading
import time
from pathlib import Path

import pytest
import yaml

from tests.test_harness_url import LOADGEN_JAR, SERVER_JAR, LocalServer, QuietHandler, run_harness

pytestmark = pytest.mark.harness

RATE = 40          # req/s: 4 x what the server does while slow
SLOW_S = 4.0       # seconds of load the server is slow for
HOLD_S = 0.1       # each request's time while slow, one at a time
MAX_S = 20         # --warmup-max-s: the transient (SLOW_S + its drain) and K steady seconds fit


class SlowStartServer(LocalServer):
    """Slow (one request at a time, HOLD_S each) for SLOW_S seconds from the first request of
    the load generator (its User-Agent; run.sh's own check before the cell does not start the
    clock), then quick. Records when the last request that arrived while slow was answered:
    the end of the transient."""
    request_queue_size = 1024   # the generator opens a connection per request in flight

    def __init__(self):
        self.first_load_s: float | None = None
        self.slow_lock = threading.Lock()
        self.transient_end_epoch_s = 0.0
        super().__init__(SlowStartHandler)


class SlowStartHandler(QuietHandler):
    def setup(self):
        super().setup()
        # http.server writes the head and the body apart: without this, Nagle's algorithm holds
        # the body until the client's delayed ACK of the head, 40 ms on Linux loopback.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_GET(self):  # noqa: N802 (http.server's name)
        server = self.server
        now = time.monotonic()
        if "loadcurve" in (self.headers.get("User-Agent") or ""):
            with server.lock:
                if server.first_load_s is None:
                    server.first_load_s = now
        start = server.first_load_s
        arrived_slow = start is not None and now < start + SLOW_S
        if arrived_slow:
            with server.slow_lock:
                if time.monotonic() < start + SLOW_S:
                    time.sleep(HOLD_S)
        self.answer(200, b"ok\n")
        if arrived_slow:
            with server.lock:
                server.transient_end_epoch_s = max(server.transient_end_epoch_s, time.time())


@pytest.fixture(autouse=True)
def loadgen_jar():
    from tests.conftest import need
    need(LOADGEN_JAR.is_file() and SERVER_JAR.is_file(),
         "the bench jars (bash bench/test.sh, or bash bench/run.sh x --smoke, builds them)")


def steady_round_trip_s(server: SlowStartServer, n: int = 50) -> float:
    """The server's answer time once quick, as a plain client sees it: the median of n
    sequential GETs on one keep-alive connection."""
    conn = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=5)
    times = []
    for _ in range(n):
        t = time.perf_counter()
        conn.request("GET", "/sleep")
        conn.getresponse().read()
        times.append(time.perf_counter() - t)
    conn.close()
    return statistics.median(times)


def measure(tmp_path: Path, name: str, *warmup: str) -> tuple[dict, dict, SlowStartServer, float]:
    """One cell at RATE against a fresh slow-start server; its counts, run.yml, the server and
    the server's steady round trip measured afterwards."""
    server = SlowStartServer()
    try:
        out = tmp_path / name
        # --warmup-s and the rest of SHORT's fixed warm-up are overridden by the later options.
        run_harness(out, "--url", server.url, "--rates", str(RATE), "--duration-s", "2",
                    "--timeout-s", "10", "--settle-max-s", "0", *warmup)
        run = yaml.safe_load((out / "run.yml").read_text(encoding="utf-8"))
        (cell,) = run["cells"]
        counts = json.loads((out / cell["counts"]).read_text(encoding="utf-8"))
        return counts, run, server, steady_round_trip_s(server)
    finally:
        server.shutdown()
        server.server_close()


def first_window_second(counts: dict) -> dict:
    window = [iv for iv in counts["intervals"] if iv["phase"] == "window"]
    assert window and window[0]["t_s"] == counts["window"]["start_s"]
    return window[0]


def holds_littles_law(counts: dict, round_trip_s: float) -> bool:
    predicted = counts["offered_rate"] * round_trip_s
    measured = first_window_second(counts)["in_flight_mean"]
    return abs(measured - predicted) <= max(predicted, 1.0)


def test_auto_warmup_starts_the_window_after_a_slow_start(tmp_path):
    counts, run, server, round_trip_s = measure(
        tmp_path, "auto", "--warmup", "auto", "--warmup-s", "1", "--warmup-max-s", str(MAX_S))
    w = counts["warmup"]
    assert (w["mode"], w["min_s"], w["max_s"], w["reached"]) == ("auto", 1, MAX_S, True), w
    assert counts["warmup_s"] == w["used_s"] == counts["window"]["start_s"]
    # After the transient, as the server saw it: its last slow request was answered before the
    # window's first request was due.
    window_start_epoch_s = counts["window"]["start_epoch_ms"] / 1000
    assert server.transient_end_epoch_s > 0
    assert window_start_epoch_s > server.transient_end_epoch_s, (counts["window"], server.transient_end_epoch_s)
    assert w["used_s"] >= SLOW_S
    assert holds_littles_law(counts, round_trip_s), (first_window_second(counts), round_trip_s)
    assert counts["in_flight"]["at_window_start"] <= 1
    # run.yml's method carries it per cell repetition (bench/manifest.py), with the run's setting.
    method = run["method"]["warmup"]
    assert (method["mode"], method["min_s"], method["max_s"]) == ("auto", 1, MAX_S)
    (entry,) = method["cells"]
    assert entry == {"cell": run["cells"][0]["counts"].removesuffix(".counts.json"),
                     "used_s": w["used_s"], "reached": True}


def test_fixed_warmup_of_one_second_measures_the_transient(tmp_path):
    counts, run, server, round_trip_s = measure(tmp_path, "fixed", "--warmup", "fixed",
                                                "--warmup-s", "1")
    w = counts["warmup"]
    assert (w["mode"], w["min_s"], w["max_s"], w["used_s"]) == ("fixed", 1, 1, 1), w
    # Fewer than the rule's 5 s to judge: not shown steady.
    assert w["reached"] is False
    assert counts["warmup_s"] == counts["window"]["start_s"] == 1
    assert counts["window"]["start_epoch_ms"] / 1000 < server.transient_end_epoch_s
    assert not holds_littles_law(counts, round_trip_s), (first_window_second(counts), round_trip_s)
    assert run["method"]["warmup"]["mode"] == "fixed"
