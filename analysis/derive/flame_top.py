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


def self_shares(stacks: dict) -> dict[str, float]:
    """{frame: self share} of every frame that ends some stack."""
    total = sum(stacks.values())
    if not total:
        return {}
    own: dict[str, int] = {}
    for stack, weight in stacks.items():
        if stack:
            own[stack[-1]] = own.get(stack[-1], 0) + weight
    return {f: w / total for f, w in own.items()}


def top_frames(stacks: dict, n: int = TOP_FRAMES) -> list[FrameShare]:
    """The n frames of largest self share (ties by name, so the list is stable)."""
    ranked = sorted(((f, s) for f, s in self_shares(stacks).items() if s > 0),
                    key=lambda fs: (-fs[1], fs[0]))[:n]
    # Total shares only for the listed frames (a profile has hundreds of frames, and a set of
    # every stack's frames was most of a run's top tables): the same sums, in the same order.
    through = dict.fromkeys((f for f, _ in ranked), 0)
    for stack, weight in stacks.items():
        for frame in through:
            if frame in stack:
                through[frame] += weight
    total = sum(stacks.values())
    return [FrameShare(f, s, through[f] / total) for f, s in ranked]


def top_changes(base: dict, stacks: dict, n: int = TOP_FRAMES) -> list[FrameChange]:
    """The n frames whose self share changed most from A (`base`) to B (`stacks`), either
    way (ties by name)."""
    a, b = self_shares(base), self_shares(stacks)
    changes = [FrameChange(f, a.get(f, 0.0), b.get(f, 0.0))
               for f in sorted(set(a) | set(b))]
    changes = [c for c in changes if c.change != 0]
    changes.sort(key=lambda c: (-abs(c.change), c.name))
    return changes[:n]
