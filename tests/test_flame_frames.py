"""A flame graph's frames written in one loop (flamegraph._frames) give the text the per-frame
writer it replaced (_frame below: _px, _label, the escape) gives, frame by frame and in whole
graphs; the heading's lines are textwrap's; a tree's children are sorted once a tree."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.write.charts import flamegraph
from analysis.write.charts.flamegraph import FRAME_H, LABEL_Y, PAD_X, Box, Node

NAMES = st.text(alphabet=st.sampled_from('ab.$<>&"\';: \u00e9\u4e2d\x01'), max_size=40)
COORDS = st.floats(min_value=-5.0, max_value=5000.0, allow_nan=False)


def _px(v: float) -> str:
    text = f"{v:.1f}"
    if text.endswith(".0"):
        text = text[:-2]
        return "0" if text == "-0" else text
    return text


def _frame(box: Box, scale: float, bottom: int, fill: str, tip: str | None) -> str:
    """The frame writer _frames replaced (a function a frame), kept as the reference."""
    x = PAD_X + box.x * scale
    w = box.node.weight * scale
    y = bottom - (box.depth + 1) * FRAME_H
    label = flamegraph._label(box.node.name, w)
    text = "" if label is None else \
        f'<text x="{_px(x + 3)}" y="{y + LABEL_Y}">{flamegraph.escape(label)}</text>'
    head = "<g>" if tip is None else f"<g><title>{tip}</title>"
    return (f'{head}<rect x="{_px(x)}" y="{y}" '
            f'width="{_px(w)}" height="{FRAME_H - 1}" fill="{fill}"/>{text}</g>')


def by_frame(boxes, scale, bottom, fills, tips):
    return [_frame(b, scale, bottom, f, t)
            for b, f, t in zip(boxes, fills, tips or [None] * len(boxes))]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), COORDS, NAMES, COORDS, NAMES), max_size=12),
       st.floats(min_value=0.0, max_value=3.0, allow_nan=False), st.integers(0, 900),
       st.booleans())
def test_frames_are_the_per_frame_writers_text(rows, scale, bottom, with_tips):
    boxes = [Box(depth, x, Node(name, weight), None) for depth, x, name, weight, _ in rows]
    fills = [f"#{i:06x}" for i in range(len(rows))]
    tips = [flamegraph._xml(tip) for *_, tip in rows] if with_tips else None
    assert flamegraph._frames(boxes, scale, bottom, fills, tips) == \
        by_frame(boxes, scale, bottom, fills, tips)


def test_coordinates_rounding_to_zero_from_below_are_written_as_zero():
    # (-0.04 formats as "-0.0": _px writes "0", and so must the loop)
    box = Box(0, -10.04 / 1.0, Node("f", -0.04), None)
    fast, = flamegraph._frames([box], 1.0, 100, ["#fff"], None)
    assert fast == by_frame([box], 1.0, 100, ["#fff"], None)[0]
    assert 'x="0"' in fast and 'width="0"' in fast


def stacks_of(seed: int) -> dict:
    """A profile of a few hundred stacks, names with markup, some frames too narrow to draw."""
    names = ["java.lang.Thread.run", "loadcurve.server.Handler.<init>", "a&b", "x" * 90,
             "io.netty.Loop.run", "libjvm.so::G1", "Q\"uote", "kotlin.K", "z"]
    out = {}
    for i in range(400):
        depth = 1 + (i * 7 + seed) % 9
        stack = tuple(names[(i * (k + 3) + seed + k) % len(names)] + str(k % 3)
                      for k in range(depth))
        out[stack] = out.get(stack, 0) + 1 + (i * 31 + seed) % 97
    return out


@pytest.mark.parametrize("seed", [0, 1, 5])
def test_whole_graphs_are_the_per_frame_writers_bytes(seed, monkeypatch):
    stacks, base = stacks_of(seed), stacks_of(seed + 11)
    fast = (flamegraph.flamegraph_svgs(stacks, "samples", "t <&>", script=False),
            flamegraph.flamegraph_svgs(stacks, "ns", "t", script=True),
            flamegraph.diff_flamegraph_svgs(base, stacks, "samples", "d", script=False))
    monkeypatch.setattr(flamegraph, "_frames", by_frame)
    assert fast == (flamegraph.flamegraph_svgs(stacks, "samples", "t <&>", script=False),
                    flamegraph.flamegraph_svgs(stacks, "ns", "t", script=True),
                    flamegraph.diff_flamegraph_svgs(base, stacks, "samples", "d", script=False))


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab -.\u00e9 \t\n\x0b\x0c\r\x1c\x85\xa0\u2003\u2028\u3000"),
               max_size=14), st.integers(0, 16))
def test_heading_lines_are_textwraps(text, chars):
    import textwrap
    assert flamegraph._lines(text, chars) == \
        (textwrap.wrap(text, max(chars, 8), break_on_hyphens=False) or [""])


def test_a_title_that_fits_is_not_chunked_by_textwrap(monkeypatch):
    monkeypatch.setattr(flamegraph.textwrap, "wrap", None)     # (a call would raise)
    assert flamegraph._lines("run-1 / pool / 200 rps: CPU (execution samples)", 130) == \
        ["run-1 / pool / 200 rps: CPU (execution samples)"]


def test_children_are_sorted_once_for_all_widths(monkeypatch):
    stacks = stacks_of(2)
    sorts = []
    real = sorted
    monkeypatch.setattr(flamegraph, "sorted", lambda x: sorts.append(1) or real(x),
                        raising=False)
    flamegraph.flamegraph_svgs(stacks, "samples", "t")
    inner = sum(1 for _ in _nodes_with_children(flamegraph.build_tree(stacks)))
    assert len(sorts) <= inner


def _nodes_with_children(root):
    todo = [root]
    while todo:
        node = todo.pop()
        if node.children:
            yield node
            todo.extend(node.children.values())
