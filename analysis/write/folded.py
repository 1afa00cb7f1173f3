"""Brendan Gregg's folded format, both ways: the `.folded` file of a flame graph's stacks
(folded_text: read.jfr.stacks.fold_jfr's result or a cell's summed profile), and the same file
read back (parse_folded: a comparison page's differential graph draws two runs' files).
"""
from __future__ import annotations

from analysis.errors import JfrError


def frame_text(frame: str) -> str:
    """A frame as a folded line can hold it: ';' separates frames and a line ends the stack,
    so those are replaced (no JVM method or class name has either; a damaged recording may)."""
    return frame.replace(";", ":").replace("\n", " ").replace("\r", " ")


def weight_text(weight: int, unit: str) -> str:
    """Samples as they are; nanoseconds as milliseconds with three decimals, rounded half up
    from the stack's exact sum (so a stack's line is within 0.5 us of its events' total)."""
    if unit == "samples":
        return str(weight)
    us = (weight + 500) // 1000
    return f"{us // 1000}.{us % 1000:03d}"


def folded_text(folded: dict) -> str:
    """Brendan Gregg's folded format: `frame;frame;... weight` per stack, root first, lines in
    the order of their text (as FlameGraph's stackcollapse scripts sort them)."""
    unit = folded["unit"]
    lines = sorted(_frames_text(stack) + " " + weight_text(w, unit)
                   for stack, w in folded["stacks"].items() if stack)
    return "".join(line + "\n" for line in lines)


def _frames_text(stack: tuple) -> str:
    """A stack's frames as its folded line holds them (frame_text each, joined by ';')."""
    text = ";".join(stack)
    # Every frame of a readable recording: no separator inside, so the plain join is the line
    # (one check a stack, not a replace per frame: the build writes ~10^5 frames a run).
    if text.count(";") == len(stack) - 1 and "\n" not in text and "\r" not in text:
        return text
    return ";".join(frame_text(f) for f in stack)


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
