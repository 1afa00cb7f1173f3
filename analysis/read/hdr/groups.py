"""Histogram lines in groups, the unit the reader decodes (and hgrm's threads decode ahead):
text lines go through lines.iter_lines, a binary file through blocks.block_groups (the same
groups, faster). Apart from both so that blocks depends on lines and not the reverse."""
from __future__ import annotations

import io

from analysis.read.hdr.blocks import block_groups
from analysis.read.hdr.lines import HeaderState, iter_lines


def item_groups(lines, path: str, state: HeaderState, batch_size: int):
    """(items, warnings raised while reading them) per group of batch_size histogram lines of
    `lines`: text lines, or lines.open_lines' binary file (read as latin-1 text with universal
    newlines)."""
    if isinstance(lines, io.BufferedIOBase):
        yield from block_groups(lines, path, state, batch_size)
        return
    own: list[str] = []          # (iter_lines keeps appending to this very list)
    group = []
    for item in iter_lines(lines, path, own, state):
        group.append(item)
        if len(group) >= batch_size:
            yield group, own[:]
            group = []
            own.clear()
    if group or own:
        yield group, own[:]
