"""What hgrm's two processes do inside the turn to add (processor._own_group, split.py): only
the adding, the one step in file order; a group's decoding comes before its turn, so that
neither process waits for the other's decoding."""
from __future__ import annotations

import pytest

from analysis.read.hdr import native, processor, split
from analysis.read.hdr.lines import HeaderState
from tests.helpers import HLOG_FIXTURES


class _Loopback:
    """Both sides' turns in one process: every group is this side's, and the turn it passes
    on comes straight back."""

    side = 0

    def __init__(self, events):
        self.events, self.carried = events, None

    def mine(self, group):
        return True

    def wait(self, group):
        self.events.append(("wait", group))
        return self.carried

    def pass_on(self, group, carried):
        self.events.append(("pass", group))
        self.carried = carried


def test_a_group_is_decoded_before_its_turn_and_only_added_in_it(monkeypatch):
    kernels = native.get()
    if kernels is None:
        pytest.skip("the split needs the compiled kernels")
    events = []
    for name in ("decode_v2_joined", "running", "add_bodies"):
        original = getattr(type(kernels), name)

        def recording(self, *args, _name=name, _original=original, **kwargs):
            events.append((_name,))
            return _original(self, *args, **kwargs)
        monkeypatch.setattr(type(kernels), name, recording)
    monkeypatch.setattr(processor, "BATCH_LINES", 7)
    source = str(HLOG_FIXTURES / "gen-ns-plain.hlog")
    _, tally = processor._own_turns(_Loopback(events), split.Arena(1 << 16), source, None,
                                    HeaderState(), (None, None, None),
                                    processor._IntervalLog(False, 1e6), True)

    groups = len(tally.body)
    assert groups > 3
    turns = [k for k, event in enumerate(events) if event[0] == "wait"]
    passes = [k for k, event in enumerate(events) if event[0] == "pass"]
    assert len(turns) == groups - 1 and len(passes) == groups
    for group, (wait, passed) in enumerate(zip(turns, passes[1:]), start=1):
        before = events[passes[group - 1] + 1:wait]
        inside = events[wait + 1:passed]
        assert before == [("decode_v2_joined",)], group
        assert inside == [("running",)], group
    serial, _ = processor.process(source, None, [], parallel=False)
    assert "".join(text for _, text in tally.body) == serial.split("\n", 1)[1]
