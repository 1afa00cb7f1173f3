"""Flame graphs and differential flame graphs (analysis/write/charts/flamegraph.py) and their command
line (`python -m analysis jfr FILE --flamegraph OUT.svg [--diff BASE.jfr]`).

The shares are checked on recordings of a workload with a known CPU split (tests/fixtures/jfr/
split/README.md), and the sample counts in the frames' titles against `jfr print --json`.
"""
from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from analysis.read.jfr.stacks import fold_jfr
from analysis.write.charts.flamegraph import (MAX_BYTES, OTHER, diff_flamegraph_svg, flamegraph_svg,
                                       frame_kind)
from tests.test_folded import RECORDINGS, SPLIT, aggregate, jfr_print

REPO = Path(__file__).resolve().parent.parent
SVG = "{http://www.w3.org/2000/svg}"


def frames(svg: bytes) -> list[tuple[str, dict]]:
    """(title, rect attributes) of every frame, parsed as XML (so it must be well formed)."""
    root = ET.fromstring(svg)
    drawn = root.find(f"{SVG}g[@id='frames']")
    return [(getattr(g.find(SVG + "title"), "text", None), g.find(SVG + "rect").attrib)
            for g in drawn.findall(SVG + "g")]


def titled(svg: bytes, name: str) -> list[tuple[float, float]]:
    """(weight, share %) of the frames called `name`."""
    out = []
    for title, _ in frames(svg):
        m = re.fullmatch(re.escape(name) + r" \(([\d.]+) (?:samples?|ms), ([\d.]+) %\)", title)
        if m:
            out.append((float(m.group(1)), float(m.group(2))))
    return out


@pytest.mark.parametrize("recording", list(RECORDINGS) + ["async-profiler-4.1-jdk17-split.jfr"])
def test_known_split_shows_in_the_frame_titles(recording):
    f = fold_jfr(SPLIT / recording)
    svg = flamegraph_svg(f["stacks"], f["unit"], recording)
    (three, three_pct), = titled(svg, "CpuSplit.three")
    (one, one_pct), = titled(svg, "CpuSplit.one")
    (main, main_pct), = titled(svg, "CpuSplit.main")
    # Of the main thread's samples, 3/4 should be in `three`. With n ~ 400-750 samples the
    # sampling error of that share is sqrt(.75 * .25 / n) <= 2.2 points: 6 points is ~3 sigma.
    assert abs(100 * three / (three + one) - 75) <= 6
    assert abs(three_pct / one_pct - 3) <= 0.35
    assert three + one <= main and main_pct > 90
    assert abs(three_pct - 100 * three / f["total"]) <= 0.005


@pytest.mark.jdk
@pytest.mark.parametrize("recording", list(RECORDINGS))
def test_title_counts_are_the_jdks_counts(recording):
    events = aggregate(jfr_print(recording, "jdk.ExecutionSample"), False)
    total = sum(events.values())
    f = fold_jfr(SPLIT / recording)
    svg = flamegraph_svg(f["stacks"], f["unit"], recording)
    for method in ("CpuSplit.three", "CpuSplit.one", "CpuSplit.main"):
        expected = sum(w for s, w in events.items() if method in s)
        (weight, pct), = titled(svg, method)
        assert weight == expected
        assert pct == pytest.approx(100 * expected / total, abs=0.005)


def test_off_cpu_graph_is_in_ms():
    f = fold_jfr(SPLIT / "jdk17-split.jfr", "jdk.ThreadPark")
    svg = flamegraph_svg(f["stacks"], f["unit"], "parks")
    (ms, pct), = titled(svg, "jdk.internal.misc.Unsafe.park")
    assert ms == pytest.approx(f["total"] / 1e6, abs=0.0005) and pct == 100.0
    assert b"ms off-CPU" in svg


def test_hostile_names_are_escaped():
    hostile = '<&">\'</text><script>x</script>]]>'
    svg = flamegraph_svg({("main", hostile): 3, ("main", "b"): 1}, "samples",
                         'title <&"> too', subtitle="<sub>")
    root = ET.fromstring(svg)
    assert root.find(SVG + "title").text == 'title <&"> too'
    assert [t for t, _ in frames(svg) if t.startswith(hostile)] == [hostile + " (3 samples, "
                                                                     "75.00 %)"]
    assert b"<script>x" not in svg
    diff = diff_flamegraph_svg({("main", hostile): 1}, {("main", hostile): 2}, "ns", "<d>")
    ET.fromstring(diff)


def test_same_stacks_same_bytes_in_two_processes(tmp_path):
    outs = []
    for i in range(2):
        out = tmp_path / f"g{i}.svg"
        run = subprocess.run([sys.executable, "-m", "analysis", "jfr",
                              str(SPLIT / "jdk25-split.jfr"), "--flamegraph", str(out)],
                             cwd=REPO, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] and len(outs[0]) > 1000
    f = fold_jfr(SPLIT / "jdk25-split.jfr")
    assert outs[0] == flamegraph_svg(f["stacks"], f["unit"],
                                     f"CPU samples (jdk.ExecutionSample): "
                                     f"{SPLIT / 'jdk25-split.jfr'}")


def test_largest_demo_cell_stays_under_the_size_limit():
    """The committed recording with the most samples (of every run's cells)."""
    cells = sorted((REPO / "runs").glob("**/*.jfr"), key=lambda p: p.stat().st_size)
    if not cells:
        pytest.skip("no recordings under runs/")
    largest = max((fold_jfr(p) for p in cells[-4:]), key=lambda f: len(f["stacks"]))
    svg = flamegraph_svg(largest["stacks"], largest["unit"], "largest")
    assert len(svg) < 150_000 and len(frames(svg)) > 100


@pytest.mark.slow
def test_narrow_frames_merge_into_other_and_the_size_holds():
    # 20,000 distinct stacks of 30 frames: far over the budget if drawn one by one
    stacks = {tuple(f"pkg.C{d}.m{(i >> d) % 7}" for d in range(30)): 1 + i % 5
              for i in range(20_000)}
    svg = flamegraph_svg(stacks, "samples", "many")
    assert len(svg) <= MAX_BYTES
    drawn = frames(svg)
    others = [t for t, _ in drawn if t.startswith(OTHER + ":")]
    assert others and all(re.match(r"other: \d+ frames too narrow to draw, merged", t) for t in others)
    # the root spans the whole width and says the whole total
    total = sum(stacks.values())
    assert drawn[0][0] == f"all ({total} samples, 100.00 %)"
    assert float(drawn[0][1]["width"]) == 1180


def test_phone_variant_merges_frames_under_two_pixels_and_has_no_frame_titles():
    from analysis.write.charts.flamegraph import NARROW_WIDTH, flamegraph_svgs
    # thin: 3 of 1,002 samples, 3.5 px of the wide graph's 1,180, 1.2 px of the phone's 400
    stacks = {("a", "big"): 999, ("a", "thin"): 3}
    wide, phone = flamegraph_svgs(stacks, "samples", "t", script=False)
    assert phone == flamegraph_svg(stacks, "samples", "t", script=False, width=NARROW_WIDTH)
    assert [t.split(" (")[0] for t, _ in frames(wide)] == ["all", "a", "big", "thin"]
    # the phone's: all, a, big and one grey "other" of 1.2 px in thin's place; no tooltips
    # (shown as an <img> only, where none would show: the wide graph has them)
    drawn = frames(phone)
    assert [t for t, _ in drawn] == [None] * 4 and phone.count(b"<title>") == 1
    assert [(r["fill"], r["width"]) for _, r in drawn][-1] == ("#d0d0d0", "1.2")
    # with the script (which reads the titles) a narrow graph keeps them
    scripted = flamegraph_svg(stacks, "samples", "t", width=NARROW_WIDTH)
    assert "other: 1 frames too narrow to draw, merged (3 samples, 0.30 %)" in \
        [t for t, _ in frames(scripted)]


def test_frames_carry_tenths_of_a_pixel_and_no_class_each():
    # widths 1180 * k / 7: 168.571428.. px and the like, drawn as 168.6
    svg = flamegraph_svg({("a", f"m{k}"): k for k in range(1, 7)}, "samples", "t", script=False)
    coords = [r[key] for _, r in frames(svg) for key in ("x", "width")]
    assert "168.6" in coords and all(re.fullmatch(r"\d+(\.\d)?", c) for c in coords), coords
    assert b'class="f"' not in svg
    for label in re.findall(rb'<text x="[\d.]+" y="([\d.]+)">', svg):
        assert label.isdigit()                  # a label's baseline on a whole pixel


def test_children_fill_their_parent_and_follow_name_order():
    svg = flamegraph_svg({("a", "c"): 2, ("a", "b"): 1, ("a",): 1}, "samples", "t",
                         script=False)
    rects = {t.split(" (")[0]: (float(r["x"]), float(r["width"])) for t, r in frames(svg)}
    assert rects["a"] == (10, 1180)
    assert rects["b"] == (10, 295) and rects["c"] == (305, 590)   # b before c; a's self last
    assert b"<script" not in svg


def test_diff_normalises_by_totals_and_colours_by_change():
    base = {("m", "x"): 30, ("m", "y"): 10}
    same = diff_flamegraph_svg(base, {k: 2 * v for k, v in base.items()}, "samples", "same")
    assert {r["fill"] for _, r in frames(same)} == {"#ffffff"}
    moved = diff_flamegraph_svg(base, {("m", "x"): 10, ("m", "y"): 30}, "samples", "moved")
    titles = {t.split(":")[0]: (t, r["fill"]) for t, r in frames(moved)}
    assert titles["x"][0] == ("x: B 25.00 % (10 samples), A 75.00 % (30 samples), change "
                              "-50.00 points")
    assert titles["y"][1] == "#ff2d2d" and titles["x"][1] == "#2d2dff"   # full red and blue
    assert titles["m"][1] == "#ffffff"


def test_diff_lays_out_both_profiles_by_mean_share():
    # A: gone 1/4, x 3/4; B: x all. Mean shares: gone 1/8, x 7/8 of the 1180 px.
    svg = diff_flamegraph_svg({("m", "gone"): 1, ("m", "x"): 3}, {("m", "x"): 2}, "ns", "t")
    rects = {t.split(":")[0]: (t, r) for t, r in frames(svg)}
    assert float(rects["gone"][1]["width"]) == 147.5 and float(rects["x"][1]["width"]) == 1032.5
    assert rects["gone"][0] == ("gone: B 0.00 % (0.000 ms), A 25.00 % (0.000 ms), change "
                                "-25.00 points")
    assert rects["gone"][1]["fill"] == "#2d2dff"        # the largest change: full blue
    assert b"not drawn" not in svg


def test_diff_of_two_jdks_running_the_same_split_is_pale():
    a = fold_jfr(SPLIT / "jdk17-split.jfr")
    b = fold_jfr(SPLIT / "jdk25-split.jfr")
    svg = diff_flamegraph_svg(a["stacks"], b["stacks"], "samples", "17 vs 25")
    m = re.search(r"CpuSplit\.three: B ([\d.]+) % \(\d+ samples\), A ([\d.]+) %", svg.decode())
    assert abs(float(m.group(1)) - float(m.group(2))) < 5


def test_cli_diff_writes_the_differential_graph(tmp_path):
    out = tmp_path / "d.svg"
    run = subprocess.run([sys.executable, "-m", "analysis", "jfr", str(SPLIT / "jdk25-split.jfr"),
                          "--flamegraph", str(out), "--diff", str(SPLIT / "jdk17-split.jfr")],
                         cwd=REPO, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    a, b = fold_jfr(SPLIT / "jdk17-split.jfr"), fold_jfr(SPLIT / "jdk25-split.jfr")
    assert out.read_bytes() == diff_flamegraph_svg(
        a["stacks"], b["stacks"], "samples",
        f"CPU samples (jdk.ExecutionSample): {SPLIT / 'jdk25-split.jfr'} (B) against "
        f"{SPLIT / 'jdk17-split.jfr'} (A)")


@pytest.mark.parametrize("name,kind", [
    ("loadcurve.server.Fanout.withFutures", "application"),
    ("org.eclipse.jetty.server.Server.handle", "server"),
    ("sun.net.httpserver.ServerImpl$Exchange.run", "server"),
    ("com.sun.net.httpserver.Filter$Chain.doFilter", "server"),
    ("java.util.concurrent.ForkJoinPool.runWorker", "jdk"),
    ("com.fasterxml.jackson.core.JsonGenerator.writeString", "library"),
    ("libjvm.so.G1ParScanThreadState::trim_queue", "vm"),
    ("<unknown class>.[vdso]", "vm"),
    ("[no frames]", "vm"),
])
def test_frame_kinds(name, kind):
    assert frame_kind(name, [re.compile(r"loadcurve\..*")]) == kind


def test_one_tree_is_ranked_once_for_both_widths(monkeypatch):
    """The wide and the phone's graph of a profile share one tree and one ranking of its
    frames' weights (the frame budget's cut), not one a width (issue 25: the build draws both
    of every cell)."""
    from analysis.write.charts import flamegraph
    ranked = []
    inner = flamegraph.ranked_weights
    monkeypatch.setattr(flamegraph, "ranked_weights", lambda root: ranked.append(root) or
                        inner(root))
    stacks = {("main", f"m{k}", f"n{j}"): k + j for k in range(40) for j in range(30)}
    wide, phone = flamegraph.flamegraph_svgs(stacks, "samples", "t", script=False)
    assert len(ranked) == 1 and ranked[0].weight == sum(stacks.values())
    # the phone's budget cut it to fewer frames than the wide graph's
    assert 0 < len(frames(phone)) < len(frames(wide))
