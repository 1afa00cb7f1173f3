"""A `.folded` file read back (Brendan Gregg's folded format, as write/folded.py writes it): a
comparison page's differential graph (corpus/flame_diffs.py) compares two runs' files.
"""
from __future__ import annotations

from analysis.errors import JfrError


def parse_folded(text: str, unit: str = "samples", source: str = "") -> dict:
    """folded_text's lines back to {stack root first: weight} (weights in `unit`: samples, or
    ns from the ms printed); JfrError naming the line for one that is not `frames weight`."""
    stacks: dict = {}
    for n, line in enumerate(text.splitlines(), 1):
        frames, _, weight = line.rpartition(" ")
        try:
            value = int(weight) if unit == "samples" else round(float(weight) * 1e6)
        except ValueError:
            value = None
        if not frames or value is None:
            raise JfrError(f"line {n} is not `frame;frame;... weight`", path=source,
                           hint="rebuild the run (python -m analysis build --force)")
        key = tuple(frames.split(";"))
        stacks[key] = stacks.get(key, 0) + value
    return stacks
