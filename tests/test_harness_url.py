"""bench/run.sh --url (issue 24): servers the harness did not start, measured by URL.

Each test starts its own server on 127.0.0.1 (a Python http.server with a known ceiling, or the
bundled server.jar as a plain process) and runs the harness against it with 1-2 s windows at low
rates. Needs the jars (bench/test.sh or `bash bench/run.sh x --smoke` builds them).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
SERVER_JAR = BENCH / "server" / "target" / "server.jar"
LOADGEN_JAR = BENCH / "loadgen" / "target" / "loadgen.jar"
JAVA = Path("/usr/lib/jvm/temurin-25-jdk-amd64/bin/java")

pytestmark = [pytest.mark.harness,
              pytest.mark.skipif(not (SERVER_JAR.is_file() and LOADGEN_JAR.is_file()),
                                 reason="bench jars not built (run bench/test.sh)")]

# Short cells on a 2-core machine shared with others: the host check only records the verdict.
SHORT = ["--no-build", "--warmup-s", "1", "--duration-s", "2", "--timeout-s", "1",
         "--repetitions", "1", "--busy-wait-s", "0"]


class SleepServer(ThreadingHTTPServer):
    """N handlers at most at a time, each holding its request SLEEP_S: ceiling N / SLEEP_S req/s.
    With fail_every=K, every K-th request (in arrival order) is answered 500."""
    daemon_threads = True

    def __init__(self, workers: int, sleep_s: float, fail_every: int | None = None):
        self.slots = threading.Semaphore(workers)
        self.sleep_s, self.fail_every = sleep_s, fail_every
        self.arrivals = 0
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), SleepHandler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def handle_error(self, request, client_address):
        pass  # the generator resets the connections of timed-out requests: broken pipes

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/sleep"


class SleepHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"   # keep-alive, as the generator expects

    def do_GET(self):  # noqa: N802 (http.server's name)
        server = self.server
        with server.lock:
            server.arrivals += 1
            failing = server.fail_every and server.arrivals % server.fail_every == 0
        with server.slots:
            time.sleep(server.sleep_s)
        body = b"no\n" if failing else b"ok\n"
        self.send_response(500 if failing else 200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def sleep_server():
    servers = []

    def start(workers, sleep_s, fail_every=None):
        servers.append(SleepServer(workers, sleep_s, fail_every))
        return servers[-1]
    yield start
    for s in servers:
        s.shutdown()
        s.server_close()


def run_harness(out: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(["bash", str(BENCH / "run.sh"), "urltest", "--out", str(out), *SHORT,
                           *args], capture_output=True, text=True, timeout=600)
    if check:
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def cells(out: Path) -> dict[str, dict]:
    run = yaml.safe_load((out / "run.yml").read_text(encoding="utf-8"))
    return {f"{c['system']}/{c['load']}": json.loads((out / c["counts"]).read_text())
            for c in run["cells"]}


def check_run(out: Path) -> str:
    proc = subprocess.run([sys.executable, str(BENCH / "check_run.py"), str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout
    return proc.stdout


def test_sleep_server_by_url_accounting_and_ceiling(sleep_server, tmp_path):
    server = sleep_server(workers=4, sleep_s=0.05)   # ceiling 80 req/s
    sid = f"127-0-0-1-{server.server_address[1]}-sleep"
    # Two runs, the saturated one last: http.server keeps serving the queue of requests whose
    # clients have gone, so a cell measured right after a saturated one would still see it.
    run_harness(tmp_path / "below", "--url", server.url, "--rates", "20")
    run_harness(tmp_path, "--url", server.url, "--rates", "200")
    measured = {**cells(tmp_path / "below"), **cells(tmp_path)}
    assert set(measured) == {f"{sid}/r20", f"{sid}/r200"}
    for counts in measured.values():
        w = counts["window"]
        assert w["sent"] == w["completed"] + w["timed_out"] + w["errors"]
    below, above = measured[f"{sid}/r20"]["window"], measured[f"{sid}/r200"]
    assert below["sent"] == 40 and below["completed"] == 40 and below["timed_out"] == 0
    # 2.5 x the ceiling: the queue grows 120 requests a second past a 1 s timeout, and the
    # server completes no more than its ceiling (plus the 4 under way).
    assert above["window"]["timed_out"] > 0
    assert above["achieved_completion_rate"] <= 80 + 4 / 2
    run = yaml.safe_load((tmp_path / "run.yml").read_text(encoding="utf-8"))
    assert run["systems"][0]["description"] == f"Given by URL, not started by the harness: GET {server.url}."
    assert run["load_generator"]["server_observed"].startswith("no:")
    assert run["environment"]["shared_host"] is True and "jdk" not in run["environment"]
    assert run["method"]["jfr_repetitions"] == 0 and "service_time_ms" not in run
    assert "0 failed" in check_run(tmp_path)
    # the analysis reads the run, and its methodology says the server was not observed
    from analysis.read.manifest import load_manifest
    from analysis.vocabulary import LOAD_GENERATOR_LABELS, labelled
    rows = labelled(load_manifest(tmp_path).load_generator, LOAD_GENERATOR_LABELS)
    assert {"key": "server_observed", "label": "Server side observed",
            "value": run["load_generator"]["server_observed"]} in rows


def test_errors_counted_from_every_tenth_500(sleep_server, tmp_path):
    server = sleep_server(workers=8, sleep_s=0.005, fail_every=10)
    run_harness(tmp_path, "--system", f"tenth={server.url}", "--rates", "50")
    w = cells(tmp_path)["tenth/r50"]["window"]
    assert w["sent"] == 100 and w["timed_out"] == 0
    assert abs(w["errors"] - w["sent"] / 10) <= 1
    assert w["completed"] == w["sent"] - w["errors"]


def test_find_knee_lands_within_one_bisection_step_of_the_ceiling(sleep_server, tmp_path):
    server = sleep_server(workers=4, sleep_s=0.05)   # ceiling 80 req/s
    proc = run_harness(tmp_path, "--system", f"knee={server.url}", "--find-knee",
                       "--knee-start", "10", "--knee-probe-s", "2")
    search = json.loads((tmp_path / "knee.json").read_text())["systems"]["knee"]
    knee, past = search["knee"], search["first_saturated"]
    step = past - knee
    assert abs(knee - 80) <= step, (search, proc.stdout)
    rates = [p["rate"] for p in search["probes"]]
    assert rates[:3] == [10, 20, 40] and len(rates) <= 5 + 2
    run = yaml.safe_load((tmp_path / "run.yml").read_text(encoding="utf-8"))
    assert [lp["offered_rate"] for lp in run["load_points"]] == search["rates"]
    assert run["method"]["knee_search"]["systems"][0]["probes"] == search["probes"]


def test_ctrl_c_keeps_measured_cells_and_writes_run_yml(sleep_server, tmp_path):
    server = sleep_server(workers=4, sleep_s=0.01)
    proc = subprocess.Popen(["bash", str(BENCH / "run.sh"), "urltest", "--out", str(tmp_path),
                             *SHORT, "--url", server.url, "--rates", "20,30,40"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not list(tmp_path.glob("*/*.counts.json")) and time.monotonic() < deadline:
            time.sleep(0.2)
        os.killpg(proc.pid, signal.SIGINT)   # as a terminal's Ctrl-C: the whole group
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    measured = cells(tmp_path)
    assert 1 <= len(measured) < 3, err
    assert len(list(tmp_path.glob("*/*.counts.json"))) == len(measured)


def test_bundled_server_by_url_with_jfr_pid(tmp_path):
    from analysis.read.jfr import summarize_jfr
    port_file = tmp_path / "port"
    server = subprocess.Popen([str(JAVA), "-Xmx256m", "-jar", str(SERVER_JAR), "--executor",
                               "pool:4", "--port", "0", "--port-file", str(port_file)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            if port_file.is_file() and port_file.read_text().strip():
                break
            time.sleep(0.1)
        url = f"http://127.0.0.1:{port_file.read_text().strip()}/sleep?ms=20"
        out = tmp_path / "run"
        run_harness(out, "--system", f"jdk-pool4={url}", "--rates", "20,40",
                    "--jfr-pid", str(server.pid))
    finally:
        server.terminate()
        server.wait(timeout=30)
    run = yaml.safe_load((out / "run.yml").read_text(encoding="utf-8"))
    assert run["load_generator"]["server_observed"].startswith("yes:")
    for cell in run["cells"]:
        counts = json.loads((out / cell["counts"]).read_text())
        assert counts["server"]["pid"] == server.pid
        w = counts["window"]
        summary = summarize_jfr(out / cell["jfr"],
                                window=(w["start_epoch_ms"] * 10**6, w["end_epoch_ms"] * 10**6))
        # the recording covers the whole window (started before the warm-up, dumped after)
        assert summary["window"]["covered_s"] >= 0.99 * counts["duration_s"], summary["window"]
    assert "0 failed" in check_run(out)
