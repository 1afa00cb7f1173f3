"""Replay the fuzzer's corpus (tests/fuzz/corpus/<target>/) as regression tests.

Every file there is an input that once found a bug (`regress-*`) or seeds the fuzzer (`seed-*`).
Each must give the reader's data or its one documented error, within 10 s: see
tests/fuzz/targets.py for the contract and tests/fuzz/run.py for the fuzzer (run by hand).
"""
from __future__ import annotations

import time

import pytest

from tests.fuzz.targets import SUFFIX, TARGETS
from tests.helpers import CASES, time_limit


def test_every_target_has_regression_inputs():
    for target in TARGETS:
        assert any(t == target for t, _ in CASES), f"tests/fuzz/corpus/{target}/ is empty"
    for target, path in CASES:
        assert path.name.startswith(("regress-", "seed-")), path
        assert path.suffix in (SUFFIX[target], ""), path


# Findings not fixed yet: (target, file name) -> (exception, diagnosis). Remove when fixed.
KNOWN = {
}


def case(target, path):
    known = KNOWN.get((target, path.name))
    marks = [pytest.mark.xfail(strict=True, raises=known[0], reason=known[1])] if known else []
    return pytest.param(target, path, marks=marks, id=f"{target}/{path.name}")


@pytest.mark.parametrize("target,path", [case(t, p) for t, p in CASES])
def test_corpus_input(target, path):
    with time_limit(10):
        TARGETS[target](path.read_bytes())


def test_the_time_limit_is_the_bodys_cpu_time_not_the_clocks():
    """A loaded machine slows the clock's seconds, not the work: a body that waits is not
    stopped at the limit, one that computes is."""
    with time_limit(1):
        time.sleep(1.3)
    started = time.monotonic()
    with pytest.raises(TimeoutError, match="CPU s"):
        with time_limit(0.3):
            while time.monotonic() - started < 60:
                pass
