"""tests/conftest.py's LOADCURVE_TEST_CPU log: each test's CPU seconds, its children's included."""
from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import REPO

BUSY_TEST = '''
import subprocess, sys

def test_busy_child():
    subprocess.run([sys.executable, "-c", "sum(range(10_000_000))"], check=True)

def test_idle():
    pass
'''


def test_the_cpu_log_holds_each_test_and_its_childrens_cpu(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_busy.py").write_text(BUSY_TEST)
    log = tmp_path / "cpu"
    env = {**os.environ, "LOADCURVE_TEST_CPU": str(log)}
    env.pop("PYTEST_XDIST_WORKER", None)
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "-p", "tests.conftest", "--rootdir", str(tmp_path),
                             str(tmp_path / "tests" / "test_busy.py")],
                            cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [line.split("\t") for line in (tmp_path / "cpu.main").read_text().splitlines()]
    by_test = {node.rsplit("::", 1)[1]: (float(cpu), float(wall)) for cpu, wall, node in rows}
    assert set(by_test) == {"test_busy_child", "test_idle"}
    busy, idle = by_test["test_busy_child"], by_test["test_idle"]
    assert busy[0] > 0.1 and busy[0] > 10 * idle[0]
    assert busy[1] > 0 and idle[1] >= 0
