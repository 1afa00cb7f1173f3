"""bench/run.sh --generators N and the generator's --start-at (issue 33): one cell, N generators.

The bundled server (JDK HttpServer, a pool of 4, 20 ms a request: a ceiling of 200 req/s) is
measured by URL at 40 and 80 req/s with two generators per cell, 2 s windows. Each generator must
have sent half the cell's rate over the window, from the same instant as the other; run.yml lists
the two logs and counts files of each cell in generator order (the contract with the analysis's
merge). Needs the jars (bench/test.sh or `bash bench/run.sh x --smoke` builds them).
"""
from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from tests.test_harness_url import (JAVA, LOADGEN_JAR, bundled_server, check_run, error_lines,
                                    run_harness)

pytestmark = pytest.mark.harness

RATES = (40, 80)
WINDOW_S = 2   # test_harness_url.SHORT's --duration-s


@pytest.fixture(scope="module")
def two_generator_run(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("generators")
    out = tmp_path / "run"
    with bundled_server(tmp_path, "-Xmx256m") as (_, url):
        proc = run_harness(out, "--system", f"pool4={url}", "--rates", ",".join(map(str, RATES)),
                           "--generators", "2", "--settle-max-s", "0")
    return out, proc


def test_two_generators_write_one_cell_each_at_half_the_rate(two_generator_run):
    out, proc = two_generator_run
    run = yaml.safe_load((out / "run.yml").read_text(encoding="utf-8"))
    assert [c["load"] for c in run["cells"]] == [f"r{r}" for r in RATES]
    for cell, rate in zip(run["cells"], RATES):
        rel = f"pool4/r{rate}.1"
        assert cell["hlog"] == [f"{rel}.g1.hlog", f"{rel}.g2.hlog"]
        assert cell["counts"] == [f"{rel}.g1.counts.json", f"{rel}.g2.counts.json"]
        assert not (out / f"{rel}.hlog").exists() and not (out / f"{rel}.counts.json").exists()
        generated = [json.loads((out / c).read_text(encoding="utf-8")) for c in cell["counts"]]
        assert [(g["generator_index"], g["generators"]) for g in generated] == [(1, 2), (2, 2)]
        assert len({g["start_epoch_ms"] for g in generated}) == 1, generated
        assert len({g["window"]["start_epoch_ms"] for g in generated}) == 1
        for g, hlog in zip(generated, cell["hlog"]):
            assert g["offered_rate"] == rate / 2
            assert g["hlog"] == Path(hlog).name and (out / hlog).is_file()
            # intended send times: exactly the share's; actual ones within a request or two
            assert g["window"]["sent"] == rate / 2 * WINDOW_S
            assert abs(g["sent_in_window_by_actual_time"] - rate / 2 * WINDOW_S) <= 2, g
            w = g["window"]
            assert w["sent"] == w["completed"] + w["timed_out"] + w["errors"]
            assert w["completed"] == w["sent"], w   # 80 req/s is well below the ceiling
            # the log's StartTime is the shared instant (seconds since the epoch, 3 decimals)
            assert f"#[StartTime: {g['start_epoch_ms'] / 1000:.3f} " in (out / hlog).read_text()
    # The generators' fixed warm-up, said so in the methodology's rule, and per cell whether
    # every generator's last seconds were steady
    warmup = run["method"]["warmup"]
    assert warmup["mode"] == "fixed" and "with 2 generators per cell the warm-up is fixed" in warmup["rule"]
    assert [c["cell"] for c in warmup["cells"]] == [f"pool4/r{r}.1" for r in RATES]
    assert "2 processes per cell" in run["load_generator"]["name"]
    assert "   g2 window 2 s: offered 20.0/s" in proc.stdout
    # bench/check_run.py: each generator's log and counts file agree, and the cell's are in order
    checked = check_run(out)
    assert "0 failed" in checked
    assert "pool4/r80.1: 2 generators, as many logs as counts files, in order, from one instant" in checked


def test_the_analysis_reads_a_two_generator_run(two_generator_run):
    from analysis.read.manifest import load_manifest
    out, _ = two_generator_run
    run = yaml.safe_load((out / "run.yml").read_text(encoding="utf-8"))
    cells = load_manifest(out).cells
    assert [(c.parts, c.counts_parts) for c in cells] == [
        (tuple(c["hlog"]), tuple(c["counts"])) for c in run["cells"]]


def test_auto_warmup_and_find_knee_are_refused_with_several_generators(tmp_path):
    for args, says in ((["--warmup", "auto"], "--warmup auto lets each generator choose its own window"),
                       (["--find-knee"], "--find-knee probes with one generator")):
        proc = run_harness(tmp_path, "--url", "http://127.0.0.1:9/", "--generators", "2", *args,
                           check=False)
        assert proc.returncode == 2 and [line[:len("error: ") + len(says)]
                                         for line in error_lines(proc)] == [f"error: {says}"], proc.stderr
    assert not (tmp_path / "run.yml").exists()


def generator(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(JAVA), "-jar", str(LOADGEN_JAR), "--url", "http://127.0.0.1:9/x",
                           "--rate", "10", "--duration-s", "1", "--hlog", str(tmp_path / "x.hlog"),
                           "--counts", str(tmp_path / "x.counts.json"), *args],
                          capture_output=True, text=True, timeout=60)


def test_a_start_at_in_the_past_is_one_error_line(tmp_path):
    past = int(time.time() * 1000) - 2000
    proc = generator(tmp_path, "--start-at", str(past))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith(f"error: --start-at {past} is ") and " ms in the past (now " in line
    assert not list(tmp_path.iterdir())


def test_a_start_at_too_far_ahead_is_refused(tmp_path):
    proc = generator(tmp_path, "--start-at", str(int(time.time() * 1000) + 3_600_000))
    assert proc.returncode == 2 and "more than 600 s" in proc.stderr, proc.stderr
