"""derive/flame_top.py (issue 34): the shares a flame graph's top-10 table prints, against
shares counted by hand from the folded stacks, and the label rule of the graphs."""
from analysis.derive.flame_top import top_changes, top_frames
from analysis.write.charts import flamegraph

# 10 samples: main->a->b (4), main->a (3), main->c (2), main->a->a (1, recursion)
STACKS = {("main", "a", "b"): 4, ("main", "a"): 3, ("main", "c"): 2, ("main", "a", "a"): 1}


def test_self_and_total_shares_are_the_stacks_own():
    got = {f.name: (f.self_share, f.total_share) for f in top_frames(STACKS)}
    # b ends 4 of 10; a ends 3 + 1; c ends 2; main ends none (left out); a's total counts the
    # recursive stack once: 4 + 3 + 1 = 8 of 10
    assert got == {"b": (0.4, 0.4), "a": (0.4, 0.8), "c": (0.2, 0.2)}
    assert [f.name for f in top_frames(STACKS)] == ["a", "b", "c"]   # ties by name
    assert len(top_frames(STACKS, n=2)) == 2


def test_changes_rank_by_size_either_way():
    base = {("main", "a"): 5, ("main", "c"): 5}                    # A: a 0.5, c 0.5
    got = [(c.name, round(c.change, 3)) for c in top_changes(base, STACKS)]
    # B: a 0.4 (-0.1), b 0.4 (+0.4), c 0.2 (-0.3)
    assert got == [("b", 0.4), ("c", -0.3), ("a", -0.1)]


def test_a_label_shows_at_least_three_characters_or_none():
    name = "java.util.concurrent.ForkJoinPool.runWorker"
    for width in range(0, 400, 3):
        label = flamegraph._label(name, width)
        if label is not None and label != name:
            assert label.endswith("..") and len(label) - 2 >= 3, (width, label)
    assert flamegraph._label(name, 4 + 4 * flamegraph.CHAR_W) is None     # "ja.." would show
    assert flamegraph._label("all", 4 + 3 * flamegraph.CHAR_W) == "all"   # whole: fits


def test_a_narrow_title_is_whole_on_several_lines():
    title = ("fanout-curve at r3000: fanout-pekko/jdk-virtual (B) against "
             "fanout-futures/jdk-virtual (A), CPU")
    svg = flamegraph.diff_flamegraph_svg(STACKS, STACKS, "samples", title, script=False,
                                         width=flamegraph.NARROW_WIDTH).decode()
    import re
    lines = re.findall(r'style="font-size: 15px; text-anchor: middle">([^<]*)<', svg)
    assert len(lines) >= 2 and " ".join(lines) == title


def test_the_top_frames_are_those_of_every_frames_shares():
    """A profile's top frames and their total shares, against every frame's shares counted
    the plain way (a frame's total: the weight of every stack it is in), on generated stacks
    with recursion, ties and frames that end no stack."""
    import random
    rng = random.Random(36)
    frames = [f"f{i}" for i in range(40)]
    for weights in (lambda: rng.randint(1, 5), lambda: rng.random() * 1e6):
        stacks = {}
        for _ in range(300):
            stack = ("main",) + tuple(rng.choice(frames) for _ in range(rng.randint(0, 12)))
            stacks[stack] = stacks.get(stack, 0) + weights()
        total = sum(stacks.values())
        shares = {}
        for f in {f for s in stacks for f in s}:
            own = sum(w for s, w in stacks.items() if s[-1] == f)
            through = 0
            for s, w in stacks.items():
                if f in s:
                    through += w
            shares[f] = (own / total, through / total)
        expected = sorted(((f, s, t) for f, (s, t) in shares.items() if s > 0),
                          key=lambda x: (-x[1], x[0]))
        for n in (1, 10, 100):
            got = [(f.name, f.self_share, f.total_share) for f in top_frames(stacks, n)]
            assert got == expected[:n]
