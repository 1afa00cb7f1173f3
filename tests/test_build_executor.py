"""The build's map step on another concurrent.futures.Executor: `--executor dask` on a
dask.distributed LocalCluster gives the same files, byte for byte, as the process pool."""
from __future__ import annotations

import pytest

from tests.test_build import build, make_site, snapshot


def test_dask_executor_builds_byte_identical_outputs(tmp_path):
    pytest.importorskip("distributed", reason="dask.distributed is not installed "
                                              "(pip install -r requirements-dev.txt)")
    sites = {}
    for executor in ("process", "dask"):
        site = make_site(tmp_path / executor, "run-a", "run-b", mini=True)
        out = build(site, "--jobs", "2", "--executor", executor, timeout=300)
        assert out.returncode == 0, out.stderr
        assert "built 2 of 2 runs" in out.stderr
        # one run changed: a single task on the executor (the local pool would spread its
        # repetitions over the cores instead: runner.py), the same bytes
        manifest = site / "runs" / "run-b" / "run.yml"
        manifest.write_text(manifest.read_text().replace("Oracle fixture", "Changed fixture"))
        out = build(site, "--jobs", "2", "--executor", executor, timeout=300)
        assert out.returncode == 0, out.stderr
        assert "built 1 of 2 runs" in out.stderr
        sites[executor] = snapshot(site)
    assert sites["dask"] and sites["dask"] == sites["process"]


def test_unknown_executor_is_refused(tmp_path):
    site = make_site(tmp_path, "run-a", mini=True)
    out = build(site, "--executor", "threads")
    assert out.returncode != 0 and "invalid choice" in out.stderr
