"""Brendan Gregg's folded format, written: the `.folded` file of a flame graph's stacks
(folded_text: read.jfr.stacks.fold_jfr's result or a cell's summed profile). The same file read
back is read/folded.py's (a comparison page's differential graph draws two runs' files).
"""
from __future__ import annotations


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
