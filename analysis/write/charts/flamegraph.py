"""Flame graphs, and differential flame graphs, written straight to SVG from folded stacks.

    from analysis.write.charts.flamegraph import flamegraph_svg, diff_flamegraph_svg
    svg = flamegraph_svg(stacks, unit, title, application=[regex, ...])   # -> bytes
    svg = diff_flamegraph_svg(base_stacks, stacks, unit, title)

`stacks` is {(frame, ...) root first: weight}, as analysis.read.jfr.stacks.fold_jfr gives them;
`unit` is "samples" or "ns" (off-CPU time, shown in ms).

The drawing is FlameGraph's (flamegraph.pl): the root ("all") at the bottom, each frame as wide
as its share of the total, callees above their caller, siblings in the order of their names (so
the same stacks always give the same picture). Frames are coloured by kind (KINDS: the
application, the server framework, the JDK, other libraries, the VM and native code), with
small shade differences by name so neighbours stay apart. Every frame has a <title> (the
tooltip) with its name, its weight and its share of the total (not in a phone's variant without
the script: see _render); the labels that fit are drawn.
The graph is whole without JavaScript; a small inline script adds click-to-zoom and search
(as flamegraph.pl's SVGs have) where scripts run.

Size: frames narrower than MIN_PX (NARROW_MIN_PX in the phone's variant) are merged, per parent, into one "other" frame (its title
says how many and how much), and at most MAX_FRAMES frames are drawn (the widest; their
callers are always wider, so the graph stays connected); if the text is still over MAX_BYTES the
budget shrinks until it is not. Coordinates have at most one decimal and every size is a fixed
number, so the same stacks give the same bytes. Every name is escaped for XML.

The differential graph (after FlameGraph's difffolded.pl, normalised as with its -n) is laid
out over both profiles: each stack is as wide as the mean of its share of A's total and of B's,
so what only one side does is drawn too (a layout by B alone, as difffolded.pl's, hides what
only the baseline pays for: 69 % of futures' samples against Pekko's). Each frame is coloured
by how its share of B's total differs from the same stack's share of the baseline A's total:
red where B spends a larger share, blue where it spends less, white where they are equal; the
strongest change is the full colour. Its title gives both shares and weights.
"""
from __future__ import annotations

import re
import textwrap
import zlib
from dataclasses import dataclass, field
from functools import lru_cache
from operator import attrgetter
from typing import Iterable, Sequence

from analysis.write.charts.svgdraw import FONT_FAMILY, escape

WIDTH = 1200
# The phone's variant: its 12 px text shows at >= 9 CSS px on a 390 px phone (~360 px of
# column), as the other charts' -narrow SVGs (tests/test_browser.py checks it).
NARROW_WIDTH = 420
PAD_X = 10
FRAME_H = 16
FONT_PX = 12
LABEL_Y = FRAME_H - 4  # a label's baseline below its frame's top
CHAR_W = 7.0          # the mean advance of a 12 px sans-serif character, for label truncation
LINE_H = 18           # between the heading's lines (the title's, then the subtitle's)
LEGEND_H = 30
LEGEND_ROW = 18
TITLE_CHARS = 130     # of the 15 px title line at WIDTH; longer titles go on more lines
MIN_LABEL_CHARS = 3   # the fewest characters of a name a cut label shows
MIN_PX = 0.5
# The phone's variant merges frames under 2 px: thinner ones are slivers a finger cannot pick
# nor an eye tell apart at phone size (its picture links the wide graph, which has them).
NARROW_MIN_PX = 2.0
MAX_FRAMES = 700
MAX_BYTES = 150_000
ROOT = "all"
OTHER = "other"

# (kind, label in the legend, base colour): first match wins, in this order.
KINDS = (
    ("vm", "VM, GC and native", (200, 200, 120)),
    ("application", "application", (235, 120, 80)),
    ("server", "server framework", (150, 140, 230)),
    ("jdk", "JDK", (110, 200, 110)),
    ("library", "other libraries", (90, 200, 200)),
)
SERVER_PACKAGES = ("org.eclipse.jetty.", "io.netty.", "io.vertx.", "io.helidon.",
                   "com.sun.net.httpserver.", "sun.net.httpserver.", "org.apache.pekko.",
                   "akka.", "io.undertow.", "org.apache.tomcat.", "org.apache.coyote.")
JDK_PACKAGES = ("java.", "javax.", "jdk.", "sun.", "com.sun.")
DEFAULT_APPLICATION = (r"loadcurve\..*",)
# Native and VM frames as async-profiler names them ("libjvm.so.G1ParScanThreadState::...",
# "<unknown class>.[vdso]"), and the frame of a stack the JVM recorded without frames.
_VM = re.compile(r"^(?:\[|<unknown class>\.|lib[^.]*\.so|[^.]*$)|::")


def frame_kind(name: str, application: Sequence[re.Pattern]) -> str:
    if name in (OTHER, ROOT):
        return "other"
    if _VM.search(name):
        return "vm"
    if any(p.fullmatch(name) for p in application):
        return "application"
    if name.startswith(SERVER_PACKAGES):
        return "server"
    if name.startswith(JDK_PACKAGES):
        return "jdk"
    return "library"


def _shade(base: tuple[int, int, int], name: str) -> str:
    # A stable shade per name (not Python's hash, which changes per process).
    v = zlib.crc32(name.encode("utf-8", "replace")) % 31 - 15
    return "#" + "".join(f"{max(0, min(255, c + v)):02x}" for c in base)


def kind_fill(name: str, application: Sequence[re.Pattern]) -> str:
    kind = frame_kind(name, application)
    if kind == "other":
        return "#d0d0d0"
    return _shade(next(c for k, _, c in KINDS if k == kind), name)


@lru_cache(maxsize=None)
def _fills(application: tuple[str, ...]):
    """kind_fill for one set of application patterns, remembered per name: a run's graphs
    draw the same few thousand frame names over and over (a third of the stage's time)."""
    apps = [re.compile(p) for p in application]
    return lru_cache(maxsize=None)(lambda name: kind_fill(name, apps))


# -- the tree ----------------------------------------------------------------------------------

@dataclass(slots=True)
class Node:
    name: str
    weight: int = 0
    children: dict = field(default_factory=dict)
    merged: tuple = ()            # for an "other" frame: the names merged into it
    order: list | None = None     # its children's names sorted (layout's, once for all widths)


def build_tree(stacks: dict) -> Node:
    root = Node(ROOT)
    for stack, weight in stacks.items():
        root.weight += weight
        children = root.children
        for frame in stack:
            child = children.get(frame)
            if child is None:
                child = children[frame] = Node(frame)
            child.weight += weight
            children = child.children
    return root


def ranked_weights(root: Node) -> list:
    """Every node's weight, heaviest first: _cutoff's input, the same for each width drawn of
    one tree (so it is gathered once, not once a width)."""
    weights = []
    todo = [root]
    while todo:
        node = todo.pop()
        weights.append(node.weight)
        todo.extend(node.children.values())
    weights.sort(reverse=True)
    return weights


def _cutoff(ranked: list, min_weight: float, budget: int) -> float:
    """The weight a frame must exceed to be drawn: at least min_weight, and at most `budget`
    frames above it (a caller is never lighter than its callees, so what is drawn is whole);
    `ranked`: ranked_weights of the tree."""
    if len(ranked) <= budget:
        return min_weight
    return max(min_weight, ranked[budget])


@dataclass(slots=True)
class Box:
    depth: int
    x: float                      # in weight units from the left
    node: Node
    parent: Node | None           # the caller (an "other" frame's baseline is found through it)


def layout(root: Node, keep_above: float, min_other: float) -> list[Box]:
    """The frames to draw, callers before callees: the children heavier than keep_above, then
    the others merged into one "other" frame per parent (drawn when it is at least min_other)."""
    boxes = []
    todo = [(root, 0, 0.0, None)]
    while todo:
        node, depth, x, parent = todo.pop()
        boxes.append(Box(depth, x, node, parent))
        children = node.children
        if not children:        # a leaf: most of the frames drawn
            continue
        narrow = []
        names = node.order
        if names is None:
            names = node.order = sorted(children)
        for name in names:
            child = children[name]
            if child.weight > keep_above:
                todo.append((child, depth + 1, x, node))
                x += child.weight
            else:
                narrow.append(name)
        if narrow:
            rest = sum(children[n].weight for n in narrow)
            if rest >= min_other:
                todo.append((Node(OTHER, rest, {}, tuple(narrow)), depth + 1, x, node))
    boxes.sort(key=_DEPTH_X)
    return boxes


_DEPTH_X = attrgetter("depth", "x")


# -- the SVG -----------------------------------------------------------------------------------

def weight_text(weight: float, unit: str) -> str:
    if unit == "samples":
        return f"{weight:g} sample" + ("" if weight == 1 else "s")
    return f"{weight / 1e6:.3f} ms"


def _label(name: str, width_px: float) -> str | None:
    """A frame's label: its name, or its first characters and "..", never fewer than
    MIN_LABEL_CHARS of them (an "o.." names nothing: the frame stays unlabelled)."""
    chars = int((width_px - 4) / CHAR_W)
    if len(name) <= chars:
        return name
    return name[:chars - 2] + ".." if chars - 2 >= MIN_LABEL_CHARS else None


def _lines(text: str, chars: int) -> list[str]:
    """`text` broken between words into lines of at most `chars` characters (a longer word
    across lines), so that a title is whole however narrow the graph."""
    if len(text) <= max(chars, 8) and text.isprintable() and _ONE_LINE.fullmatch(text):
        return [text]   # what textwrap gives such a text, without its chunking (~0.1 ms)
    return textwrap.wrap(text, max(chars, 8), break_on_hyphens=False) or [""]


# A text textwrap.wrap leaves as it is when it fits the width: printable (no whitespace but
# the space: tabs and breaks are replaced, and any other one str.strip drops at a line's end),
# words between single spaces, no space at either end.
_ONE_LINE = re.compile(r"[^ ]+(?: [^ ]+)*")


# escape, remembered per text: a run's graphs draw the same frame names (and labels) again
# and again, wide and narrow, cell after cell.
_xml = lru_cache(maxsize=1 << 16)(escape)


def _frames(boxes: list[Box], scale: float, bottom: int, fills: list[str],
            tips: list[str] | None) -> list[str]:
    """Each box's frame: a <g> child of #frames (the style and the script find frames so,
    with no class repeated on each) holding its <title> (`tips`: escaped already), its <rect>
    and its label; `bottom`: the y where the root frame's row ends. Coordinates to a tenth of
    a pixel (finer is not seen) without a trailing ".0". One loop, everything inline: a run's
    graphs draw ~3,200 frames, and a function a frame (with _px three times and _label) was
    two thirds of the flame graphs' time (tests/test_flame_frames.py: the same text)."""
    out = []
    append = out.append
    xml = _xml
    height = FRAME_H - 1
    for box, fill, tip in zip(boxes, fills, tips or [None] * len(boxes)):
        node = box.node
        x = PAD_X + box.x * scale
        w = node.weight * scale
        y = bottom - (box.depth + 1) * FRAME_H
        # ("-0": a coordinate that rounds to zero from below is written "0")
        xs = f"{x:.1f}".removesuffix(".0")
        ws = f"{w:.1f}".removesuffix(".0")
        if xs == "-0":
            xs = "0"
        if ws == "-0":
            ws = "0"
        name = node.name
        chars = int((w - 4) / CHAR_W)       # _label, inline
        if len(name) <= chars:
            label = name
        elif chars - 2 >= MIN_LABEL_CHARS:
            label = name[:chars - 2] + ".."
        else:
            label = None
        head = "<g>" if tip is None else f"<g><title>{tip}</title>"
        if label is None:
            append(f'{head}<rect x="{xs}" y="{y}" width="{ws}" height="{height}" '
                   f'fill="{fill}"/></g>')
        else:
            ts = f"{x + 3:.1f}".removesuffix(".0")
            if ts == "-0":
                ts = "0"
            append(f'{head}<rect x="{xs}" y="{y}" width="{ws}" height="{height}" '
                   f'fill="{fill}"/><text x="{ts}" y="{y + LABEL_Y}">{xml(label)}</text></g>')
    return out


def _other_tip(node: Node) -> str:
    return f"{OTHER}: {len(node.merged)} frames too narrow to draw, merged"


def _tip_name(node: Node) -> str:
    """The start of a frame's title, escaped: its name, or what an "other" frame merged (the
    rest of a title is numbers and plain words, which escaping leaves as they are)."""
    return _other_tip(node) if node.merged else _xml(node.name)


def _heading(title: str, subtitle: str, script: bool, width: int) -> list[tuple[str, bool]]:
    """The heading's lines, (text, is the title's): the title and the subtitle, each whole,
    wrapped to the width (a phone's graph names both sides of a differential graph in full)."""
    room = 180 if script else 2 * PAD_X     # the controls' room at both ends of the line
    return ([(line, True) for line in _lines(title, int(TITLE_CHARS * width / WIDTH))]
            + [(line, False) for line in _lines(subtitle, int((width - room) / CHAR_W))])


def _top(heading: list) -> int:
    """Where the frames may start: below the heading's last line."""
    return 20 + (len(heading) - 1) * LINE_H + 14


def _document(height: int, title: str, heading: list, frames: list[str], legend: str,
              script: bool, width: int) -> str:
    head = (f'<?xml version="1.0" encoding="utf-8" standalone="no"?>\n'
            f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{width}" '
            f'height="{height}" viewBox="0 0 {width} {height}">\n'
            f'<title>{escape(title)}</title>\n'
            f'<style type="text/css">text{{font-family: {FONT_FAMILY}; font-size: {FONT_PX}px;'
            f' fill: #000000}} #frames>g:hover rect{{stroke: #000000; stroke-width: 0.5}} '
            f'.c{{cursor: pointer; fill: #404040}}</style>\n'
            f'<rect width="100%" height="100%" fill="#ffffff"/>\n')
    for i, (line, is_title) in enumerate(heading):
        style = "font-size: 15px; text-anchor: middle" if is_title else "text-anchor: middle"
        head += (f'<text x="{width // 2}" y="{20 + i * LINE_H}" style="{style}">'
                 f'{escape(line)}</text>\n')
    controls = ""
    if script:       # on the subtitle's first line, whose ends _heading leaves free
        y = 20 + LINE_H * sum(1 for _, is_title in heading if is_title)
        controls = (f'<text id="reset" class="c" x="{PAD_X}" y="{y}" visibility="hidden">'
                    f'Reset zoom</text>\n<text id="search" class="c" x="{width - PAD_X}" y="{y}" '
                    f'style="text-anchor: end">Search</text>\n'
                    f'<text id="matched" x="{width - PAD_X}" y="20" style="text-anchor: end">'
                    f'</text>\n<script type="text/ecmascript"><![CDATA[{_script(width)}]]>'
                    f'</script>\n')
    return (head + '<g id="frames">\n' + "\n".join(frames) + "\n</g>\n" + legend + controls
            + "</svg>\n")


def _legend_rows(items: Iterable[tuple[str, str]], width: int) -> list[list]:
    """The legend's items as rows of (x, fill, text) that fit the width (a phone's graph
    stacks them)."""
    rows: list[list] = [[]]
    x = PAD_X
    for fill, text in items:
        step = 16 + int(len(text) * CHAR_W) + 18
        if rows[-1] and x + step - 18 > width - PAD_X:
            rows.append([])
            x = PAD_X
        rows[-1].append((x, fill, text))
        x += step
    return rows


def _legend(top: int, rows: list[list]) -> str:
    out = ['<g id="legend">']
    for i, row in enumerate(rows):
        y = top + 10 + i * LEGEND_ROW
        for x, fill, text in row:
            out.append(f'<rect x="{x}" y="{y}" width="12" height="12" fill="{fill}"/>'
                       f'<text x="{x + 16}" y="{y + 10}">{escape(text)}</text>')
    out.append("</g>\n")
    return "".join(out)


def _render_widths(root: Node, title: str, subtitle: str, paint, legend_items,
                   script: bool, widths: Sequence[int]) -> list[bytes]:
    """_render's SVG of one tree at each of `widths`, as bytes."""
    ranked = ranked_weights(root)
    return [_render(root, ranked, title, subtitle, paint, legend_items, script,
                    w).encode("utf-8") for w in widths]


def _render(root: Node, ranked: list, title: str, subtitle: str, paint, legend_items,
            script: bool, width: int) -> str:
    """The SVG text within MAX_BYTES: paint(boxes, tips) -> the frames' fills, and their
    <title>s (escaped: _tip_name) when `tips`, else None: in the wide graph, or one with the
    script (which reads them). A phone's graph without the script has none: pages show it
    only as an <img>, where no title shows, and its picture links the wide graph, which has
    them (they were half its bytes)."""
    tips = script or width >= WIDTH
    scale = (width - 2 * PAD_X) / root.weight if root.weight else 0.0
    rows = _legend_rows(legend_items, width)
    # a narrower graph draws fewer frames: half as many per pixel of width as the wide one (a
    # phone's graph shows the main stacks; the wide one it links has the rest): the build
    # writes one of each per cell, and their bytes are most of the site's charts
    legend_h = LEGEND_H + (len(rows) - 1) * LEGEND_ROW
    heading = _heading(title, subtitle, script, width)
    top = _top(heading)
    budget = MAX_FRAMES if width >= WIDTH else MAX_FRAMES * width // WIDTH // 2
    min_px = MIN_PX if width >= WIDTH else NARROW_MIN_PX
    while True:
        px = 1 / scale if scale else 0.0
        boxes = layout(root, _cutoff(ranked, min_px * px, budget), 0.3 * px) if root.weight \
            else [Box(0, 0.0, root, None)]
        depth = max(b.depth for b in boxes)
        bottom = top + (depth + 1) * FRAME_H
        text = _document(bottom + legend_h, title, heading,
                         _frames(boxes, scale, bottom, *paint(boxes, tips)),
                         _legend(bottom, rows), script, width)
        if len(text.encode("utf-8")) <= MAX_BYTES or budget <= 20:
            return text
        budget = budget * 3 // 4


def flamegraph_svg(stacks: dict, unit: str, title: str, subtitle: str = "",
                   application: Sequence[str] = DEFAULT_APPLICATION,
                   script: bool = True, width: int = WIDTH) -> bytes:
    """One profile's flame graph (see the module docstring); `application`: regexes a frame
    name fully matches to be coloured as the application; `width` in px (NARROW_WIDTH: the
    phone's variant, fewer frames wide enough to draw)."""
    return flamegraph_svgs(stacks, unit, title, subtitle, application, script, (width,))[0]


def flamegraph_svgs(stacks: dict, unit: str, title: str, subtitle: str = "",
                    application: Sequence[str] = DEFAULT_APPLICATION, script: bool = True,
                    widths: Sequence[int] = (WIDTH, NARROW_WIDTH)) -> list[bytes]:
    """flamegraph_svg at each of `widths`, from one tree (the build draws a wide graph and a
    phone's of every profile)."""
    fill = _fills(tuple(application))
    root = build_tree(stacks)
    total = root.weight

    def paint(boxes: list[Box], tips: bool) -> tuple[list[str], list[str] | None]:
        nodes = [b.node for b in boxes]
        fills = [fill(n.name) for n in nodes]
        if not tips:
            return fills, None
        return fills, [f"{_tip_name(n)} ({weight_text(n.weight, unit)}, "
                       f"{100.0 * n.weight / total if total else 0.0:.2f} %)" for n in nodes]

    measure = "samples" if unit == "samples" else "ms off-CPU"
    line = subtitle or f"total {weight_text(total, unit)}; width = share of {measure}"
    legend = [(_shade(c, ""), label) for _, label, c in KINDS] + [("#d0d0d0", "merged")]
    return _render_widths(root, title, line, paint, legend, script, widths)


def _diff_fill(delta: float, biggest: float) -> str:
    if biggest <= 0 or delta == 0:
        return "#ffffff"
    fade = int(round(210 * min(1.0, abs(delta) / biggest)))
    return f"#ff{255 - fade:02x}{255 - fade:02x}" if delta > 0 else \
        f"#{255 - fade:02x}{255 - fade:02x}ff"


def _twins(root: Node, other: Node) -> dict:
    """{id(node of root): the node of the same stack in `other`, or None}."""
    twins: dict[int, Node | None] = {id(root): other}
    todo = [(root, other)]
    while todo:
        node, twin = todo.pop()
        for name, child in node.children.items():
            match = twin.children.get(name) if twin is not None else None
            twins[id(child)] = match
            todo.append((child, match))
    return twins


def _mean_shares(base: dict, stacks: dict) -> dict:
    """{stack: the mean of its share of A's total and of B's}, every stack of either profile:
    the differential graph's widths (the shares are fractions, summing to 1 per profile)."""
    total_a, total_b = sum(base.values()), sum(stacks.values())
    out: dict = {}
    for profile, total in ((base, total_a), (stacks, total_b)):
        if total:
            for stack, weight in profile.items():
                out[stack] = out.get(stack, 0.0) + weight / total / 2
    return dict(sorted(out.items()))


def diff_flamegraph_svg(base: dict, stacks: dict, unit: str, title: str, subtitle: str = "",
                        script: bool = True, width: int = WIDTH) -> bytes:
    """The differential flame graph of `stacks` (B) against `base` (A); see the module
    docstring."""
    return diff_flamegraph_svgs(base, stacks, unit, title, subtitle, script, (width,))[0]


def diff_flamegraph_svgs(base: dict, stacks: dict, unit: str, title: str, subtitle: str = "",
                         script: bool = True,
                         widths: Sequence[int] = (WIDTH, NARROW_WIDTH)) -> list[bytes]:
    """diff_flamegraph_svg at each of `widths`, from one set of trees."""
    root = build_tree(_mean_shares(base, stacks))
    tree_a, tree_b = build_tree(base), build_tree(stacks)
    total_a, total_b = tree_a.weight, tree_b.weight
    twin_a, twin_b = _twins(root, tree_a), _twins(root, tree_b)

    def weight_in(twins: dict, box: Box) -> int:
        if box.node.merged:
            twin = twins.get(id(box.parent))
            return 0 if twin is None else sum(twin.children[n].weight for n in box.node.merged
                                              if n in twin.children)
        twin = twins.get(id(box.node))
        return 0 if twin is None else twin.weight

    def shares(weight_b: int, weight_a: int) -> tuple[float, float]:
        return (100.0 * weight_b / total_b if total_b else 0.0,
                100.0 * weight_a / total_a if total_a else 0.0)

    # The colour scale: the largest change of any stack, drawn or not (so that merging narrow
    # frames does not recolour the ones that stay).
    biggest = 0.0
    todo = [root]
    while todo:
        node = todo.pop()
        a, b = twin_a[id(node)], twin_b[id(node)]
        sb, sa = shares(0 if b is None else b.weight, 0 if a is None else a.weight)
        biggest = max(biggest, abs(sb - sa))
        todo.extend(node.children.values())

    def paint(boxes: list[Box], tips: bool) -> tuple[list[str], list[str] | None]:
        fills, titles = [], []
        for box in boxes:
            a, b = weight_in(twin_a, box), weight_in(twin_b, box)
            sb, sa = shares(b, a)
            fills.append(_diff_fill(sb - sa, biggest))
            if tips:
                titles.append(f"{_tip_name(box.node)}: B {sb:.2f} % ({weight_text(b, unit)}), "
                              f"A {sa:.2f} % ({weight_text(a, unit)}), change {sb - sa:+.2f} "
                              f"points")
        return fills, titles if tips else None

    measure = "samples" if unit == "samples" else "ms off-CPU"
    line = subtitle or (
        f"B {weight_text(total_b, unit)}, A {weight_text(total_a, unit)}; width = mean share "
        f"of {measure}; colour = change of share, B minus A (red: more in B, blue: less)")
    legend = [(_diff_fill(-1, 1), "less of the total in B"), ("#ffffff", "same share"),
              (_diff_fill(1, 1), "more of the total in B")]
    return _render_widths(root, title, line, paint, legend, script, widths)


# Click a frame to zoom to it (its callers stretch to the full width, the rest hide); "Search"
# shades the frames whose names match a regular expression and sums their share. It reads the
# drawn frames back, so the SVG is the same picture with or without it.
_SCRIPT = """
(function () {
var W = %(w)d, X0 = %(x0)d, CW = %(cw)s, frames = [].slice.call(document.querySelectorAll('#frames>g'));
var reset = document.getElementById('reset'), matched = document.getElementById('matched');
function info(g) {
  if (!g.lc) {
    var r = g.querySelector('rect'), t = g.querySelector('title').textContent;
    var cut = t.lastIndexOf(': B ') >= 0 ? t.lastIndexOf(': B ') : t.lastIndexOf(' (');
    g.lc = {x: +r.getAttribute('x'), w: +r.getAttribute('width'), y: +r.getAttribute('y'),
            fill: r.getAttribute('fill'), name: cut > 0 ? t.slice(0, cut) : t};
  }
  return g.lc;
}
function place(g, x, w) {
  var r = g.querySelector('rect'), t = g.querySelector('text'), n = info(g).name;
  r.setAttribute('x', x.toFixed(2)); r.setAttribute('width', w.toFixed(2));
  var c = Math.floor((w - 4) / CW), s = n.length <= c ? n : c - 2 >= %(mc)d ? n.slice(0, c - 2) + '..' : '';
  if (!t && s) { t = document.createElementNS('http://www.w3.org/2000/svg', 'text');
    t.setAttribute('y', info(g).y + %(ty)d); g.appendChild(t); }
  if (t) { t.setAttribute('x', (x + 3).toFixed(2)); t.textContent = s; }
}
function zoom(z) {
  var o = info(z), k = W / o.w;
  frames.forEach(function (g) {
    var i = info(g), inside = i.x >= o.x - 0.01 && i.x + i.w <= o.x + o.w + 0.01;
    if (i.y <= o.y && inside) { g.style.display = ''; place(g, X0 + (i.x - o.x) * k, i.w * k); }
    else if (i.y > o.y && i.x <= o.x + 0.01 && i.x + i.w >= o.x + o.w - 0.01) {
      g.style.display = ''; place(g, X0, W); }
    else { g.style.display = 'none'; }
  });
  reset.setAttribute('visibility', 'visible');
}
function unzoom() {
  frames.forEach(function (g) { var i = info(g); g.style.display = ''; place(g, i.x, i.w); });
  reset.setAttribute('visibility', 'hidden');
}
frames.forEach(function (g) { g.addEventListener('click', function () { zoom(g); }); });
reset.addEventListener('click', unzoom);
document.getElementById('search').addEventListener('click', function () {
  var term = window.prompt('Frames to shade (regular expression):', '');
  var re = null, total = info(frames[0]).w, hit = 0, seen = [];
  try { re = term ? new RegExp(term) : null; } catch (e) { re = null; }
  frames.forEach(function (g) {
    var i = info(g), r = g.querySelector('rect'), on = re !== null && re.test(i.name);
    r.setAttribute('fill', on ? '#ee00ee' : i.fill);
    if (on && !seen.some(function (s) { return i.x >= s.x && i.x + i.w <= s.x + s.w; })) {
      seen.push(i); hit += i.w; }
  });
  matched.textContent = re && total ? 'matched ' + (100 * hit / total).toFixed(1) + ' %%' : '';
});
})();
"""


def _script(width: int) -> str:
    return _SCRIPT % {"w": width - 2 * PAD_X, "x0": PAD_X, "cw": CHAR_W, "ty": LABEL_Y,
                      "mc": MIN_LABEL_CHARS}
