"""Issue 32 on the charts: latency over time shades a repetition's warm-up transient up to
`steady_from_s` and marks that second with a labelled line (in the SVG and in matplotlib's
PNG, from one description); the load curve draws a cell that is not steady hollow and says in
a point's <title> when its figures are the steady part's; a run whose repetitions are all flat
draws exactly the charts it drew before steadiness existed.

The runs are synthetic `.hlog` files (HdrHistogram's encoding, tests/helpers.encode) analysed
by the real reader and model: 100 or 200 requests a second for a 20 s window, every request
of the first T seconds 300-900 ms (a backlog draining), every later one 4-6 ms. T is where the
steady part starts by construction, and the chart's positions are checked against the SVG's
own tick labels."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from analysis.read.hdr.histogram import Histogram, layout_for
from analysis.write.charts import chartlayout, chartset, plots, render, run_jobs, svgcharts
from analysis.write.charts.svgdraw import num, render_svg
from tests.helpers import encode, log_line, write_log

pytestmark = pytest.mark.slow     # (make check leaves it out; make test runs it)

LAYOUT = layout_for(1, 3_600_000_000, 3)
WINDOW_S = 20
# system -> load -> seconds of transient at the window's start (0: flat)
TRANSIENTS = {"a": {"r100": 4, "r200": 12}, "b": {"r100": 7, "r200": 0}}
FLAT = {"a": {"r100": 0, "r200": 0}, "b": {"r100": 0, "r200": 0}}
RATES = {"r100": 100, "r200": 200}
LABELS = {"a": "Warms up", "b": "Slow start"}
BLUE, ORANGE = plots.color(0).lower(), plots.color(1).lower()

MANIFEST = """\
title: "Warm-up (synthetic: tests/test_charts_steady.py, not a measurement)"
date: 2026-11-28
description: "Backlogs that drain at the window's start."
tags: [synthetic]
value_unit: us
systems:
  - {id: a, label: "Warms up"}
  - {id: b, label: "Slow start"}
load_points:
  - {id: r100, offered_rate: 100, duration_s: 20}
  - {id: r200, offered_rate: 200, duration_s: 20}
cells:
"""


def write_hlog(path: Path, transient_s: int, rate: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    lines = []
    for second in range(WINDOW_S):
        low, high = (300_000, 900_000) if second < transient_s else (4_000, 6_000)   # us
        values = rng.uniform(low, high, rate).astype(np.int64)
        lines.append(log_line(encode(Histogram.from_values(LAYOUT, values)), float(second)))
    write_log(path, lines)


def analysed(site: Path, run_id: str, transients: dict[str, dict[str, int]]):
    from analysis.derive.analyse import analyse_run
    from analysis.read.manifest import load_manifest
    run_dir = site / "runs" / run_id
    run_dir.mkdir(parents=True)
    cells = []
    for k, (system, loads) in enumerate(sorted(transients.items())):
        for j, (load, transient) in enumerate(sorted(loads.items())):
            write_hlog(run_dir / f"{system}-{load}.hlog", transient, RATES[load], 10 * k + j)
            cells.append(f"  - {{system: {system}, load: {load}, hlog: {system}-{load}.hlog}}")
    (run_dir / "run.yml").write_text(MANIFEST + "\n".join(cells) + "\n")
    return analyse_run(load_manifest(run_dir, site / "runs"), site)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    site = tmp_path_factory.mktemp("steady")
    return analysed(site, "warm", TRANSIENTS), analysed(site, "flat", FLAT)


def jobs_of(run) -> dict[str, dict]:
    return {Path(job["svg"]).stem: job for job in run_jobs.chart_plan(run)}


def svg_of(job: dict, narrow: bool = False) -> str:
    return render_svg(svgcharts.BUILDERS[job["kind"]](job["data"]), narrow)


def x_scale(svg: str):
    """Seconds (or req/s) -> SVG x, read from the x axis's own tick labels: the texts centred
    under the plot area (the y tick labels are right-aligned)."""
    ticks = [(float(text.replace(",", "")), float(x)) for x, text in re.findall(
        r'<text x="([\d.]+)" y="[\d.]+" style="font-size: 10px; text-anchor: middle">'
        r'([\d,.]+)</text>', svg)]
    assert len(ticks) >= 2, svg[:200]
    (v0, x0), (v1, x1) = ticks[0], ticks[-1]
    return lambda v: x0 + (v - v0) * (x1 - x0) / (v1 - v0)


def bands(svg: str) -> list[tuple[str, float, float, str]]:
    """(colour, x0, x1, title) of each shaded band: a filled, unstroked, titled rectangle."""
    out = []
    for d, fill, title in re.findall(r'<path d="([^"]+)" clip-path="url\(#clip-\d+\)" '
                                     r'style="fill: (#[0-9a-f]{6}); fill-opacity: [\d.]+; '
                                     r'stroke: none"><title>([^<]*)</title></path>', svg):
        xs = [float(v) for v in re.findall(r"[ML] (-?[\d.]+) ", d)]
        out.append((fill, min(xs), max(xs), title))
    return out


def test_the_model_classifies_the_synthetic_runs_as_built(runs):
    """The premise of the chart tests below: the transients are where they were written."""
    warm, flat = runs
    cell = {(c.system, c.load): c for c in warm.cells()}
    assert [(r.steady.cls, r.steady.steady_from_s) for r in cell[("a", "r100")].repetitions] \
        == [("warmup", 4.0)]
    assert cell[("b", "r100")].repetitions[0].steady.steady_from_s == 7.0
    assert cell[("a", "r200")].not_steady and not cell[("a", "r100")].not_steady
    assert {r.steady.cls for c in flat.cells() for r in c.repetitions} == {"flat"}


def test_latency_chart_shades_each_transient_up_to_where_its_steady_part_starts(runs):
    job = jobs_of(runs[0])["latency-r100"]
    svg = svg_of(job)
    x = x_scale(svg)
    found = sorted(bands(svg), key=lambda b: b[2])
    assert [c for c, _, _, _ in found] == [BLUE, ORANGE]
    assert [(x0, x1) for _, x0, x1, _ in found] == [
        (pytest.approx(x(0), abs=0.02), pytest.approx(x(4), abs=0.02)),
        (pytest.approx(x(0), abs=0.02), pytest.approx(x(7), abs=0.02))]
    assert "Warms up: the warm-up transient, from the window's start to 4 s" in found[0][3]
    assert "Slow start: the warm-up transient, from the window's start to 7 s" in found[1][3]
    for colour, at, label in ((BLUE, 4, "Warms up: steady from 4 s"),
                              (ORANGE, 7, "Slow start: steady from 7 s")):
        # the dashed vertical line at steady_from_s, in the system's colour, and its label
        px = num(x(at))
        assert re.search(rf'<path d="M {re.escape(px)} [\d.]+ V [\d.]+" clip-path="[^"]+" '
                         rf'style="fill: none; stroke: {colour}; stroke-width: 1; '
                         rf'stroke-dasharray: [\d.,]+"/>', svg), (label, px)
        assert re.search(rf'<text x="([\d.]+)" [^>]*>{label}</text>', svg)
        # the p99 line itself drops there: the transient ends where the band does
        p99 = re.search(rf'<path d="([^"]+)" clip-path="[^"]+" style="fill: none; stroke: '
                        rf'{colour}; stroke-width: 1.6"(?:/>|><title>)', svg).group(1)
        assert re.search(rf"H {re.escape(px)} V ", p99)
    # two labels a row apart, not on top of each other
    rows = re.findall(r'<text x="[\d.]+" y="([\d.]+)" style="font-size: 8px; text-anchor: '
                      r'(?:start|end)">(?:Warms up|Slow start): steady from', svg)
    assert len(set(rows)) == 2
    assert ">shaded: warm-up transient</text>" in svg
    # the load point without a transient in one system: only the other's band
    svg200 = svg_of(jobs_of(runs[0])["latency-r200"])
    assert [(c, x1) for c, _, x1, _ in bands(svg200)] == \
        [(BLUE, pytest.approx(x_scale(svg200)(12), abs=0.02))]
    assert "not steady" in bands(svg200)[0][3]


def test_the_png_draws_the_same_band(runs, tmp_path):
    job = dict(jobs_of(runs[0])["latency-r100"], svg="l.svg", narrow_svg=None, png="l.png")
    render.render_job(job, str(tmp_path))
    image = Image.open(tmp_path / "l.png").convert("RGB")
    plot = svgcharts.latency_over_time(job["data"])
    g = chartlayout.geometry(plot)
    sx = chartlayout.Scale(plot.x.scale, *g.xlim, g.box[0], g.box[2])
    px = plots.PNG_DPI / 72

    def column(seconds: float) -> list[tuple[int, int, int]]:
        top, bottom = int(g.box[1] * px) + 3, int(g.box[3] * px) - 3
        return [image.getpixel((int(sx(seconds) * px), y)) for y in range(top, bottom)]

    def share(pixels, rgb) -> float:
        return sum(1 for p in pixels if max(abs(a - b) for a, b in zip(p, rgb)) <= 3) / len(pixels)

    white = (255, 255, 255)
    orange = tuple(int(svgcharts._tint(ORANGE, svgcharts.TRANSIENT_ALPHA)[i:i + 2], 16)
                   for i in (1, 3, 5))
    # 4-7 s: the orange system's band alone, in the tint its legend handle has; before 4 s
    # both bands; after 7 s none
    assert share(column(5.5), orange) > 0.8
    assert share(column(2.5), white) < 0.1 and share(column(2.5), orange) < 0.1
    assert share(column(15.5), white) > 0.8


def centre_x(d: str) -> float:
    """A marker's centre: a circle is "M x-r y A r r 0 1 0 x+r y ...", a square
    "M x-r y-r H x+r ..."."""
    numbers = [float(v) for v in re.findall(r"-?[\d.]+", d)]
    return (numbers[0] + (numbers[7] if " A " in d else numbers[2])) / 2


def test_load_curve_draws_the_cell_that_is_not_steady_hollow(runs):
    svg = svg_of(jobs_of(runs[0])["load-curve"])
    x = x_scale(svg)
    hollow = re.findall(r'<path d="([^"]+)" class="pt" style="fill: #ffffff; stroke: '
                        rf'{BLUE}; stroke-width: 1.2"><title>([^<]*)</title></path>', svg)
    # p99's circle and p50's square, both at 200 req/s
    assert len(hollow) == 2
    for d, title in hollow:
        assert centre_x(d) == pytest.approx(x(200), abs=0.05)
        # its values (issue 34), then why it is hollow
        assert re.fullmatch(r"Warms up at 200 requests/s offered: p(50|99) [\d.,]+ ms, 1 "
                            r"repetition; saturated; not steady, 1 of 1 repetitions measured "
                            r"a transient, "
                            r"not a steady state", title), title
    assert "hollow: not steady (transient)" in svg
    # the warm-up cell whose figures are its steady part's says so on its points
    noted = [t for t in re.findall(rf'style="fill: {BLUE}; stroke: {BLUE}; stroke-width: 1">'
                                   r"<title>([^<]*)</title>", svg)
             if t.startswith("Warms up at 100 ")]
    assert len(noted) == 2 and all(re.match(
        r"Warms up at 100 requests/s offered: p(50|99) [\d.,]+ ms, 1 repetition; 1 of 1 "
        r"repetitions warmed up inside the window; their figures are their steady parts' "
        r"\(over the whole windows, p99 ", t) for t in noted)
    assert "Hollow points: cells that are not steady" in chartset.chart_set(runs[0])[0].alt


def test_captions_say_what_the_shading_means(runs):
    warm = runs[0]
    section = chartset.chart_section(warm)
    (r100,) = [c for c in section["latency_over_time"] if c["load"] == "r100"]
    assert r100["caption"].startswith(
        "Latency over time at 100 req/s offered. Shaded from the window's start to the dashed "
        "line: the drawn repetition's warm-up transient. Warms up, repetition 1 (drawn), "
        "warm-up: steady from 4 s of the 20 s window")
    flat_section = chartset.chart_section(runs[1])
    assert [c["caption"] for c in flat_section["latency_over_time"]] == \
        ["Latency over time at 100 req/s offered", "Latency over time at 200 req/s offered"]


def without_steadiness(run):
    """The run as it was before issue 32: no repetition classified, no cell marked."""
    for cell in run.cells():
        for rep in cell.repetitions:
            rep.steady = None
        cell.steady_counts, cell.not_steady, cell.window_stats = {}, False, None
    return run


def test_a_flat_run_draws_the_charts_it_drew_before(tmp_path_factory):
    site = tmp_path_factory.mktemp("flat")
    flat = analysed(site, "flat", FLAT)
    before = jobs_of(without_steadiness(analysed(site / "again", "flat", FLAT)))
    now = jobs_of(flat)
    assert now.keys() == before.keys()
    for name, job in now.items():
        for narrow in (False, True):
            text = svg_of(job, narrow)
            assert text == svg_of(before[name], narrow), name
            # every point has its values as <title> (issue 34), none a steadiness note
            assert "not steady" not in text and "warmed up" not in text
    assert chartset.chart_section(flat) == chartset.chart_section(
        without_steadiness(analysed(site / "third", "flat", FLAT)))
    # the same comparison sees a warm-up run's marks
    warm = jobs_of(analysed(site / "warm", "warm", TRANSIENTS))
    old = jobs_of(without_steadiness(analysed(site / "warm-old", "warm", TRANSIENTS)))
    assert svg_of(warm["latency-r100"]) != svg_of(old["latency-r100"])
    assert svg_of(warm["load-curve"]) != svg_of(old["load-curve"])


def test_a_repetition_with_no_steady_state_says_so_in_the_plot_area(tmp_path):
    """A growing queue's repetition (saturated) and a backlog still draining at the end: each
    is said once, in a framed box inside the plot area (in the corner its lines leave empty),
    in the SVG and in the PNG's layout alike."""
    t = [float(i) for i in range(11)]
    data = {"title": "t", "origin": "the window's start", "window_end_s": 10.0, "gc_pauses": None,
            "systems": [{"label": "Pool", "color": BLUE, "t_s": t,
                         "p99_ms": [100.0 * (i + 1) for i in range(11)],
                         "max_ms": [110.0 * (i + 1) for i in range(11)],
                         "steady": {"class": "no-steady-state", "from_s": None,
                                    "not_steady": False, "saturated": True}},
                        {"label": "Virtual", "color": ORANGE, "t_s": t, "p99_ms": [5.0] * 11,
                         "max_ms": [6.0] * 11,
                         "steady": {"class": "no-steady-state", "from_s": None,
                                    "not_steady": True, "saturated": False}}]}
    plot = svgcharts.latency_over_time(data)
    assert plot.remarks == ["Pool: no steady state (saturated: the queue grew)",
                            "Virtual: no steady state"]
    assert not plot.bands and not [r for r in plot.rules if r.label]
    svg = render_svg(plot)
    assert ">Pool: no steady state (saturated: the queue grew)</text>" in svg
    g = chartlayout.geometry(plot)
    x, y, w, h, lines = g.remarks
    box = g.box
    assert box[0] <= x and x + w <= box[2] and box[1] <= y and y + h <= box[3]
    # the Pool line climbs to the top right: the box takes the top left
    assert x < (box[0] + box[2]) / 2 and y < (box[1] + box[3]) / 2
    narrow = chartlayout.geometry(plot, narrow=True)
    assert all(chartlayout.text_width(line, chartlayout.REMARK_PT) <= narrow.box[2] - narrow.box[0]
               for line in narrow.remarks[4])
    job = {"kind": "latency_over_time", "data": data, "svg": "r.svg", "png": "r.png"}
    render.render_job(job, str(tmp_path))
    image = Image.open(tmp_path / "r.png").convert("RGB")
    px = plots.PNG_DPI / 72
    # the frame's top edge in the PNG where the SVG has it: light grey (#cccccc) pixels
    edge = [image.getpixel((int((x + w / 2) * px), int(y * px) + dy)) for dy in (-1, 0, 1)]
    assert any(max(abs(a - 0xcc) for a in p) <= 0x20 for p in edge), edge


def test_titles_and_labels_from_a_manifest_are_escaped():
    """A system's label (from run.yml) goes into the band's <title>, the line's label and a
    point's <title>: the SVG still parses, and reads back the label as written."""
    import xml.etree.ElementTree as ET
    label = 'A <b>&"c"'
    t = [0.0, 1.0, 2.0, 3.0, 4.0]
    latency = {"title": "t", "origin": "the window's start", "window_end_s": 4.0,
               "gc_pauses": None,
               "systems": [{"label": label, "color": BLUE, "t_s": t, "p99_ms": [900.0, 5, 5, 5, 5],
                            "max_ms": [950.0, 6, 6, 6, 6],
                            "steady": {"class": "warmup", "from_s": 1.0, "not_steady": False,
                                       "saturated": False}},
                           {"label": "B", "color": ORANGE, "t_s": t, "p99_ms": [5.0] * 5,
                            "max_ms": [6.0] * 5}]}
    curve = {"title": "t", "systems": [{"label": label, "color": BLUE, "offered": [10, 20],
                                        "p50_ms": [1.0, 2.0], "p99_ms": [2.0, 3.0],
                                        "saturated": [False, False], "ceiling_rps": None,
                                        "not_steady": [False, True],
                                        "steady_notes": [f"{label}: steady part", f"{label}: not"]}]}
    for plot in (svgcharts.latency_over_time(latency), svgcharts.load_curve(curve)):
        for narrow in (False, True):
            root = ET.fromstring(render_svg(plot, narrow))
            texts = [e.text for e in root.iter() if e.tag.endswith(("title", "text"))]
            assert any(text and text.startswith(label) for text in texts), texts
