"""bench/urls.py and bench/knee.py (issue 24): system ids from URLs, the host a URL is on, the
generator's limit, and the knee search's steps and rule, without a server."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import knee  # noqa: E402
import settle  # noqa: E402
import urls  # noqa: E402


def test_system_ids_from_urls_and_names():
    assert urls.system_id("http://127.0.0.1:8080/api/v1?x=1") == "127-0-0-1-8080-api-v1"
    assert urls.parse_systems(["http://localhost/"], ["mine=https://127.0.0.1:8443/x"]) == [
        ("localhost", "http://localhost/"), ("mine", "https://127.0.0.1:8443/x")]
    with pytest.raises(urls.UrlError, match="two systems would be called"):
        urls.parse_systems(["http://127.0.0.1:1/a", "http://127.0.0.1:1/a?b"], [])
    with pytest.raises(urls.UrlError, match="not an http"):
        urls.parse_systems(["ftp://127.0.0.1/"], [])


def test_urls_file_names_its_bad_line(tmp_path):
    f = tmp_path / "urls.txt"
    f.write_text("3 http://127.0.0.1:1/a\n# comment\nheavy http://127.0.0.1:1/b\n")
    with pytest.raises(urls.UrlError, match=r"urls.txt:3: expected `\[WEIGHT\] URL`"):
        urls.parse_systems([], [f"w=@{f}"])


def test_this_host():
    assert urls.is_this_host("127.0.0.1") and urls.is_this_host("127.3.4.5")
    assert not urls.is_this_host("192.0.2.1")   # TEST-NET-1: an address of no machine here


def test_limit_refuses_above_the_self_test():
    test = {"max_rate": 5000, "max_in_flight": 10000}
    assert urls.limit_error(test, [100, 5000], 900, 20000) is None
    assert "rate 6000 req/s is above" in urls.limit_error(test, [100, 6000], 900, 20000)
    assert "--max-in-flight 15000 is above this host's limit 10000" in urls.limit_error(
        test, [100], 15000, 20000)


def test_the_best_of_the_self_tests_tries_is_the_limit(tmp_path):
    """A try's max_rate on a busy host is a lower bound: the best of them is taken, every try's
    figure kept; tries stop at the first that allows the run's highest rate."""
    script = tmp_path / "fake_self_test.py"
    script.write_text("import json, sys\nfrom pathlib import Path\n"
                      "n = Path(sys.argv[1]); k = int(n.read_text()) if n.exists() else 0\n"
                      "n.write_text(str(k + 1))\n"
                      "rate = [0, 8000, 16000][k]\n"
                      "print(json.dumps({'max_rate': rate, 'max_in_flight': 19000, "
                      "'steps': [{'rate': 1000}]}))\nsys.exit(0 if rate else 1)\n")
    command = [sys.executable, str(script), str(tmp_path / "n")]
    best = urls.run_self_test(command, 3, None)
    assert (best["max_rate"], best["tries"]) == (16000, [0, 8000, 16000])
    assert urls.limit_text(best) == ("16000 req/s, 19000 in flight, the best of 3 tries of the "
                                     "generator's --self-test against a local null server (0, "
                                     "8000, 16000 req/s)")
    (tmp_path / "n").unlink()
    assert urls.run_self_test(command, 3, 5000)["tries"] == [0, 8000]   # enough at the second
    (tmp_path / "n").write_text("0")
    with pytest.raises(urls.UrlError, match="kept up with no rate .* --max-rate-override R"):
        urls.run_self_test(command, 1, None)


def test_the_override_is_the_limit_and_says_so():
    limit = urls.override_limit(300, 20000)
    assert limit == {"max_rate": 300, "max_in_flight": 19000, "override": True}
    assert "given by --max-rate-override: not measured" in urls.limit_error(limit, [400], 100, 20000)
    assert urls.limit_error(limit, [300], 19000, 20000) is None


class FakeProbe:
    def __init__(self, times):
        self.times = list(times)

    def seconds(self, timeout_s):
        return self.times.pop(0)


def test_settled_after_three_quick_answers_in_a_row(monkeypatch):
    monkeypatch.setattr(settle, "PAUSE_S", 0)
    probe = FakeProbe([2.0, 0.01, 0.01, None, 0.01, 0.3, 0.01, 0.01, 0.01, 5.0])
    settled, _ = settle.wait(probe, bound_s=0.2, max_s=60)
    assert settled and probe.times == [5.0]   # a failed or slow answer starts the count again
    settled, waited = settle.wait(FakeProbe([]), bound_s=0.2, max_s=0)
    assert not settled and waited >= 0


def probe(rate, verdict):
    return {"rate": rate, "verdict": verdict, "why": ""}


def test_knee_doubles_then_bisects_twice():
    probes = []
    for expected, verdict in ((10, "good"), (20, "good"), (40, "good"), (80, "saturated"),
                              (60, "good"), (70, "saturated")):
        assert knee.next_step(probes, 10, 100000, 2) == expected
        probes.append(probe(expected, verdict))
    assert knee.next_step(probes, 10, 100000, 2) is None
    assert knee.curve(probes, 100000) == (60, 70, [15, 30, 45, 60, 70, 105])


def test_knee_stops_at_the_ceiling():
    probes = [probe(10, "good"), probe(20, "good")]
    assert knee.next_step(probes, 10, 39, 2) is None
    assert knee.curve(probes, 39) == (20, None, [5, 10, 15, 20])


def counts(sent, completed, timed_out=0, errors=0, send_rate=50.0, completion_rate=50.0):
    # (as the generator writes them: the probe's warm-up and window, which knee.json keeps)
    return {"offered_rate": 50, "warmup_s": 1, "duration_s": 2, "achieved_send_rate": send_rate,
            "achieved_completion_rate": completion_rate,
            "window": {"sent": sent, "completed": completed, "timed_out": timed_out,
                       "errors": errors, "not_sent": 0}}


def test_knee_saturation_rule():
    assert knee.verdict(counts(100, 100), None, None)[0] == "good"
    assert knee.verdict(counts(100, 99, errors=1), None, None)[0] == "good"   # 1 %: not above
    assert knee.verdict(counts(100, 98, timed_out=2), None, None) == (
        "saturated", "2 timed out + 0 errors of 100 sent")
    assert knee.verdict(counts(100, 100, send_rate=49.0), None, None)[0] == "saturated"
    assert knee.verdict(counts(100, 100, completion_rate=47.0), None, None) == (
        "saturated", "completed 47.0/s of 50 offered")


@pytest.mark.slow
@pytest.mark.parametrize("ci, status, outcome", [("true", 1, "1 error"), (None, 0, "1 skipped")])
def test_harness_tests_fail_in_ci_without_the_bench_jars(tmp_path, ci, status, outcome):
    """A checkout whose bench jars are not built: the harness tests skip on a developer's
    machine, but fail in CI, where a skip hid them for a whole session (make test once ran
    pytest before bench/test.sh built the jars)."""
    tests = Path(__file__).resolve().parent
    (tmp_path / "tests").mkdir()
    (tmp_path / "bench").mkdir()   # no server/target/server.jar, no loadgen/target/loadgen.jar
    for name in ("__init__.py", "conftest.py", "test_harness_url.py"):
        shutil.copy(tests / name, tmp_path / "tests" / name)
    env = {k: v for k, v in os.environ.items() if k != "CI"} | ({"CI": ci} if ci else {})
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfs", "-p", "no:cacheprovider",
                           "tests/test_harness_url.py", "-k", "every_tenth_500"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == status and outcome in proc.stdout, proc.stdout + proc.stderr
    assert ("CI needs the bench jars" if ci else "needs the bench jars") in proc.stdout


UNSETTLED = "settle=unsettled,settle_waited_s=60.0,settle_bound_ms=53"


def knee_step(state, *args):
    return knee.main(["step", "--state", str(state), "--system", "s", "--start", "10",
                      "--ceiling", "8000", *args])


def test_knee_search_stops_where_the_server_did_not_settle(tmp_path, capsys):
    """A probe that leaves the server unsettled (the wait before the next probe ran out) counts
    as saturated, and the search stops: the knee is the highest good probe before it."""
    state = tmp_path / "knee.json"
    state.write_text(json.dumps({"rule": knee.rule_text(None), "systems": {"s": {"probes": [
        probe(10, "good"), probe(20, "good"), probe(40, "good")]}}}))
    assert knee_step(state, "--unsettled-before", "80", "--settle", UNSETTLED) == 0
    assert capsys.readouterr().out == "done 5,10,15,20,40,60\n"
    search = json.loads(state.read_text())["systems"]["s"]
    assert [(p["rate"], p["verdict"]) for p in search["probes"]] == [
        (10, "good"), (20, "good"), (40, "saturated")]
    assert search["probes"][-1]["why"].endswith(
        "; the server was not settled 60 s later (never 3 answers in a row within 53 ms)")
    assert (search["knee"], search["first_saturated"]) == (20, 40)
    assert search["stopped"] == ("the server was not settled 60 s after the 40 req/s probe "
                                 "(never 3 answers in a row within 53 ms), so the 80 req/s probe "
                                 "was not made")


def test_knee_search_with_nothing_good_left_is_one_error_line(tmp_path, capsys):
    state = tmp_path / "knee.json"
    assert knee_step(state) == 0 and capsys.readouterr().out == "probe 10\n"
    assert knee_step(state, "--unsettled-before", "10", "--settle", UNSETTLED) == 1
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert err == ["error: s: the knee search found no good rate before it stopped: the server "
                   "had not settled before the first probe, at 10 req/s, in 60 s (never 3 answers "
                   "in a row within 53 ms); let the server recover (or restart it), then start "
                   "lower with --knee-start or allow longer with --settle-max-s"]


def test_a_knee_probe_keeps_its_host_check(tmp_path, capsys):
    state, counts_file = tmp_path / "knee.json", tmp_path / "r10.counts.json"
    host = {"busy_share_before": 0.071, "verdict": "quiet", "settle": "settled",
            "settle_waited_s": 0.4}
    counts_file.write_text(json.dumps({**counts(20, 20, send_rate=10.0, completion_rate=10.0),
                                       "offered_rate": 10, "host_check": host}))
    assert knee_step(state, "--rate", "10", "--counts", str(counts_file)) == 0
    assert capsys.readouterr().out == "probe 20\n"
    (only,) = json.loads(state.read_text())["systems"]["s"]["probes"]
    assert only["host_check"] == host and only["verdict"] == "good"
    # issue 32: and its figures, for the methodology's probe table (no .hlog given: no p99)
    assert {k: only[k] for k in ("warmup_s", "window_s", "sent", "completed", "timed_out",
                                 "errors", "not_sent", "p99_ms")} == {
        "warmup_s": 1, "window_s": 2, "sent": 20, "completed": 20, "timed_out": 0, "errors": 0,
        "not_sent": 0, "p99_ms": None}


def test_a_knee_probe_says_how_long_it_warmed_and_whether_it_was_steady(tmp_path, capsys):
    """issue 32: a probe warms until steady like a cell; its why says so (the methodology's
    probe table prints it). A counts file from before has no warm-up block and no words."""
    state, counts_file = tmp_path / "knee.json", tmp_path / "r10.counts.json"
    counts_file.write_text(json.dumps({
        **counts(20, 20, send_rate=10.0, completion_rate=10.0), "offered_rate": 10,
        "warmup": {"mode": "auto", "min_s": 1, "max_s": 20, "used_s": 20, "reached": False}}))
    assert knee_step(state, "--rate", "10", "--counts", str(counts_file)) == 0
    (only,) = json.loads(state.read_text())["systems"]["s"]["probes"]
    assert only["why"] == ("0 of 20 failed, sent 10.0/s, completed 10.0/s; "
                           "warm-up 20 s (auto, not steady)")
    assert knee.warmup_text(counts(20, 20)) == ""


def test_the_estimate_counts_an_auto_warmup_and_gives_its_bound():
    """A cell below its ceiling is steady at the rule's first look (5 s); a saturated one
    once its queue stops growing at the timeout (timeout + 5 s); the bound has every warm-up at
    its maximum. pool20 at 800 req/s x 200 ms is saturated (ceiling 100 req/s), at 25 it is not."""
    import plan
    args = ["--systems", "pool20", "--rates", "25,800", "--repetitions", "1", "--seed", "1",
            "--warmup-s", "1", "--duration-s", "10", "--timeout-s", "15", "--estimate"]
    fixed = subprocess.run([sys.executable, plan.__file__, *args], capture_output=True, text=True)
    auto = subprocess.run([sys.executable, plan.__file__, *args, "--warmup-max-s", "60"],
                          capture_output=True, text=True)
    # Per cell: 5 s overhead + warm-up + 10 s window + drain (0.2 s below the ceiling, 15 s
    # above). Fixed: (5 + 1 + 10 + 0.2) + (5 + 1 + 10 + 15) = 47.2 s. Auto: (5 + 5 + 10 + 0.2) +
    # (5 + 20 + 10 + 15) = 70.2 s; at most 70.2 + 55 + 40 = 165.2 s, under 3 min.
    assert "(47 s)" in fixed.stdout and "at most" not in fixed.stdout, fixed.stdout
    assert "(70 s)" in auto.stdout and "at most 3 min if no warm-up" in auto.stdout, auto.stdout


def test_run_yml_gets_each_cells_warmup_and_a_cell_measured_otherwise_keeps_its_own():
    from bench import manifest as bench_manifest
    args = bench_manifest.parse_args([
        "--run-dir", "x", "--systems", "pool20", "--rates", "25", "--service-ms", "200",
        "--warmup-s", "5", "--warmup", "auto", "--warmup-max-s", "60", "--duration-s", "2",
        "--timeout-s", "2", "--max-in-flight", "100", "--repetitions", "2", "--seed", "1",
        "--busy-threshold", "0.2", "--busy-wait-s", "0", "--on-busy", "warn", "--java", "java",
        "--server-flags=-Xmx1g", "--generator-flags=-Xmx256m"])
    entries = [{"cell": "pool20/r25.1", "mode": "auto", "min_s": 5, "max_s": 60, "used_s": 7,
                "reached": True},
               {"cell": "pool20/r25.2", "mode": "fixed", "min_s": 5, "max_s": 5, "used_s": 5,
                "reached": False}]
    block = bench_manifest.warmup_block(args, entries)
    assert {k: block[k] for k in ("mode", "min_s", "max_s")} == {"mode": "auto", "min_s": 5,
                                                                  "max_s": 60}
    assert block["cells"] == [
        {"cell": "pool20/r25.1", "used_s": 7, "reached": True},
        {"cell": "pool20/r25.2", "mode": "fixed", "min_s": 5, "max_s": 5, "used_s": 5,
         "reached": False}]
    assert bench_manifest.warmup_block(args, []) is None


def test_the_limit_is_per_generator_with_several():
    """The self-test measures one generator process; each of a cell's N sends rate / N."""
    test = {"max_rate": 5000, "max_in_flight": 10000}
    assert urls.limit_error(test, [9000], 900, 20000, generators=2) is None
    problem = urls.limit_error(test, [12000], 900, 20000, generators=2)
    assert problem.startswith("rate 12000 req/s is 6000 req/s for each of 2 generators, above "
                              "what one generator of this host can send on time, 5000 req/s")
    assert "lower --rates or raise --generators" in problem
    # the cap is each process's own: not divided
    assert urls.limit_error(test, [100], 9000, 20000, generators=4) is None


def test_the_estimate_of_several_generators_adds_their_start_ahead():
    import plan
    args = ["--systems", "pool20", "--rates", "25", "--repetitions", "1", "--seed", "1",
            "--warmup-s", "1", "--duration-s", "10", "--timeout-s", "15", "--estimate"]
    one = subprocess.run([sys.executable, plan.__file__, *args], capture_output=True, text=True)
    two = subprocess.run([sys.executable, plan.__file__, *args, "--generators", "2"],
                         capture_output=True, text=True)
    # 5 s overhead + 1 s warm-up + 10 s window + 0.2 s drain; + 4 s start-ahead with two
    assert "(16 s)" in one.stdout and "(20 s)" in two.stdout, (one.stdout, two.stdout)


def test_generators_of_one_cell_must_share_their_start_and_say_their_index():
    from bench import manifest as bench_manifest

    def counts(index, of, start):
        return {"generator_index": index, "generators": of, "start_epoch_ms": start}
    assert bench_manifest.generators_apart("a/r10.1", [counts(1, 2, 5), counts(2, 2, 5)]) == []
    assert bench_manifest.generators_apart("a/r10.1", [{"start_epoch_ms": 5}]) == []
    assert bench_manifest.generators_apart("a/r10.1", [counts(1, 2, 5), counts(1, 2, 7)]) == [
        "a/r10.1.g2.counts.json says generator 1 of 2, not 2 of 2 (its --generator)",
        "a/r10.1: its generators started at 5, 7 (start_epoch_ms), not one instant: give every "
        "copy the same --start-at"]
    assert bench_manifest.cell_files("a/r10.1", 1) == ["a/r10.1"]
    assert bench_manifest.cell_files("a/r10.1", 2) == ["a/r10.1.g1", "a/r10.1.g2"]
