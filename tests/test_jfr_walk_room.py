"""The compiled walk's room (native.Kernels.checkpoints): a chunk is walked again when its
arrays were too small, so the first walk's room must fit the chunks the build reads."""
from __future__ import annotations

import pytest

from analysis.derive.jvm_summary import summarize_and_fold
from analysis.read.jfr import native
from tests.conftest import REPO

KERNELS = native.get()


class _Counting:
    """The loaded object, counting the walks C makes."""

    def __init__(self, lib):
        self._lib = lib
        self.walks = 0

    def lc_jfr_checkpoints(self, *args):
        self.walks += 1
        return self._lib.lc_jfr_checkpoints(*args)

    def __getattr__(self, name):
        return getattr(self._lib, name)


@pytest.mark.skipif(KERNELS is None, reason=native.describe())
def test_a_runs_chunks_are_walked_once(monkeypatch):
    """runs/pool-vs-virtual's chunks (~200 KB, ~120 checkpoints each: more than one per
    4 KB) need one walk each, not a second one with more room."""
    counting = _Counting(KERNELS.lib)
    monkeypatch.setattr(KERNELS, "lib", counting)
    asked = []
    walk = native.Kernels.checkpoints
    monkeypatch.setattr(native.Kernels, "checkpoints",
                        lambda self, *a, **k: asked.append(1) or walk(self, *a, **k))
    recordings = sorted((REPO / "runs" / "pool-vs-virtual").glob("*/*.jfr"))
    assert len(recordings) >= 30
    for path in recordings:
        summarize_and_fold(path)
    assert len(asked) >= len(recordings) and counting.walks == len(asked)
