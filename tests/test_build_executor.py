"""The build's map step on another concurrent.futures.Executor: `--executor dask` on a
dask.distributed LocalCluster gives the same files, byte for byte, as the process pool."""
from __future__ import annotations

import pytest

from tests.helpers import build, make_site, snapshot

pytestmark = pytest.mark.slow     # (make check leaves it out; make test runs it)


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


def test_the_corpus_table_leaves_out_a_run_whose_charts_failed(tmp_path, monkeypatch):
    """The reduce step runs while the workers draw the charts (runner._build's while_charts);
    a run whose charts then fail is left out of the corpus table by a second reduce."""
    from concurrent.futures import ThreadPoolExecutor

    import analysis.pipeline.runner as runner
    from analysis.paths import CELLS_CSV

    site = make_site(tmp_path, "run-a", "run-b", mini=True)
    real_chart_task = runner.chart_task

    def failing_for_b(run_id, jobs, site_root):
        if run_id == "run-b":
            return {"run": run_id, "ok": False, "error": "chart drawing failed"}
        return real_chart_task(run_id, jobs, site_root)

    monkeypatch.setattr(runner, "chart_task", failing_for_b)
    calls = []
    real_reduce = runner.Build._reduce
    monkeypatch.setattr(runner.Build, "_reduce",
                        lambda self, run_ids, *codes: calls.append(run_ids) or
                        real_reduce(self, run_ids, *codes))
    with ThreadPoolExecutor(1) as pool:   # (one thread: the chart figures are per process)
        status = runner.Build(site / "runs", site, quiet=True, force=False, jobs=2,
                              executor=pool).run()
    assert status == 1
    assert calls == [["run-a", "run-b"], ["run-a"]]
    runs_in_table = {line.split(",")[0] for line in
                     (site / CELLS_CSV).read_text().splitlines()[1:]}
    assert runs_in_table == {"run-a"}
