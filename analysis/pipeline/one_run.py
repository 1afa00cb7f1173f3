"""The pool of a build in which one run changed (a run added): the run's reads spread over the
workers, then one worker draws every chart while another renders the page (runner.Build._build).

One run's 40 charts cost less than one matplotlib import (~0.1 CPU s against ~0.6 s quiet), so
a second worker loading the chart code only competes for the cores with the main process's
writes and corpus step (bench/perf/add_run_timeline.py: the second worker finished its load
after the first had drawn every chart, and the pool's shutdown waited for it). A pool cannot
send a task to a chosen worker, so the charts are handed over a pipe to the one task that
loaded the chart code (draw_handed_charts)."""
from __future__ import annotations

import importlib
import multiprocessing
import threading

from analysis.pipeline import workers
from analysis.pipeline.stages import chart_task

# The pipe the charts are handed over, made before the workers fork (they inherit it); one
# build in a process at a time holds the build lock, so one pipe a process is enough.
_HANDOFF: list = [None]


class ForkAtFirstRead:
    """The pool of a one-run build, made by `make` when the run's first read is mapped (a run
    that fails before it forks none); `pool` is then the pool, for the page, the charts and the
    stop."""

    def __init__(self, make):
        self.make, self.pool = make, None
        self.drawer = None      # the future of draw_handed_charts, once it is submitted
        self.handed = False

    def get(self):
        if self.pool is None:
            _HANDOFF[0] = multiprocessing.get_context("fork").SimpleQueue()
            self.pool = self.make()
        return self.pool

    def render(self, fn, *args):
        """`fn` on the pool: the worker that is not drawing takes it (load_page_code)."""
        return self.get().submit(fn, *args)

    def start_drawer(self) -> None:
        """A worker loads the chart code now and waits for the charts (hand_charts)."""
        self.drawer = self.pool.submit(draw_handed_charts)

    def hand_charts(self, batches: list[tuple[str, list]], site_root: str):
        """chart_task's results for `batches`, drawn by the drawer, else (none started) on the
        pool."""
        if self.drawer is None:
            return self.get().map(chart_task, *zip(*[(r, j, site_root) for r, j in batches])) \
                if batches else []
        # (from a thread: a run's jobs are ~40-180 KB pickled, more than a pipe holds, and
        # the drawer reads them only once matplotlib is loaded; the caller goes on meanwhile)
        threading.Thread(target=_HANDOFF[0].put, daemon=True,
                         args=([(run_id, jobs, site_root) for run_id, jobs in batches],)).start()
        self.handed = True
        return self._drawn()

    def _drawn(self):
        # (waited for when first read: the caller runs the corpus step meanwhile)
        yield from self.drawer.result()

    def release(self) -> None:
        """Let a drawer that got no charts (the run failed, or the build was stopped) end, so
        that the pool can shut down."""
        if self.drawer is not None and not self.handed:
            self.handed = True
            _HANDOFF[0].put(None)


def draw_handed_charts() -> list:
    """In a worker: the chart code loaded, then the charts handed over (hand_charts) drawn, one
    chart_task a batch; none when the build hands None."""
    workers.load_chart_code()
    batches = _HANDOFF[0].get()
    return [chart_task(*batch) for batch in batches or ()]


def load_page_code() -> None:
    """In a worker: python-liquid and the page renderer imported ahead of the run's page (the
    main process makes the run's model and data document meanwhile)."""
    importlib.import_module("analysis.write.liquid_pages")


def reads_then_drawer(reads: ForkAtFirstRead):
    """A map_fn for analyse_task that runs on the pool `reads` makes, then starts the drawer
    and has another worker load the page code while the caller goes on."""
    def map_fn(fn, *iterables):
        pool = reads.get()
        results = list(pool.map(fn, *iterables))
        reads.start_drawer()
        pool.submit(load_page_code)
        return results
    return map_fn
