"""The frames a flame graph's top-10 table lists (issue 34): a touch screen cannot hover a
frame for its share, so the pages print the heaviest frames beside each graph.

A frame's self share is the part of the total whose stack ends in it (where the CPU or the
waiting was spent); its total share the part whose stack passes through it, counted once per
stack however often a recursive stack repeats it. Shares are fractions of the profile's
total (samples or off-CPU nanoseconds), from the folded stacks {(frame, ...) root first:
weight} the graph was drawn from.
"""
from __future__ import annotations

from dataclasses import dataclass

TOP_FRAMES = 10


@dataclass(frozen=True)
class FrameShare:
    name: str
    self_share: float
    total_share: float


@dataclass(frozen=True)
class FrameChange:
    """A frame in B (the candidate) against A (the baseline): each side's self share."""
    name: str
    self_a: float
    self_b: float

    @property
    def change(self) -> float:
        return self.self_b - self.self_a


def frame_shares(stacks: dict) -> dict[str, tuple[float, float]]:
    """{frame: (self share, total share)} of every frame of the profile."""
    total = sum(stacks.values())
    if not total:
        return {}
    own: dict[str, int] = {}
    through: dict[str, int] = {}
    for stack, weight in stacks.items():
        if not stack:
            continue
        own[stack[-1]] = own.get(stack[-1], 0) + weight
        for frame in set(stack):
            through[frame] = through.get(frame, 0) + weight
    return {f: (own.get(f, 0) / total, w / total) for f, w in through.items()}


def top_frames(stacks: dict, n: int = TOP_FRAMES) -> list[FrameShare]:
    """The n frames of largest self share (ties by name, so the list is stable)."""
    shares = frame_shares(stacks)
    ranked = sorted(shares.items(), key=lambda kv: (-kv[1][0], kv[0]))
    return [FrameShare(f, s, t) for f, (s, t) in ranked[:n] if s > 0]


def top_changes(base: dict, stacks: dict, n: int = TOP_FRAMES) -> list[FrameChange]:
    """The n frames whose self share changed most from A (`base`) to B (`stacks`), either
    way (ties by name)."""
    a, b = frame_shares(base), frame_shares(stacks)
    changes = [FrameChange(f, a.get(f, (0.0, 0.0))[0], b.get(f, (0.0, 0.0))[0])
               for f in sorted(set(a) | set(b))]
    changes = [c for c in changes if c.change != 0]
    changes.sort(key=lambda c: (-abs(c.change), c.name))
    return changes[:n]
