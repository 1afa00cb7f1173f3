"""svgdraw.py / svgcharts.py: the load-run charts written straight to SVG. What they must keep
from the matplotlib drawing (plots.py) they replaced on pages: the same legend rows, the same
figure size as the PNG drawn for feeds, matplotlib's tick choices; and what any generated file
must be: well-formed, escaped, byte-identical for the same data."""
from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from matplotlib.ticker import LogLocator, MaxNLocator

from analysis.write.charts import chartlayout, chartspec, render, run_jobs, svgcharts, svgdraw
from tests.helpers import spectrum_curves, varied_jobs

SVG_JOBS = [job for job in varied_jobs() if job["kind"] in svgcharts.BUILDERS]


def _ids(job):
    return f"{job['kind']}-{job['svg']}"


@pytest.mark.parametrize("job", SVG_JOBS, ids=_ids)
def test_legend_rows_and_figure_size_are_matplotlibs(job):
    """The page's <img> carries the PNG's size (run_jobs.pixel_sizes), the PNG is drawn by
    matplotlib and the SVG by svgdraw: both must have the same legend and the same size."""
    fig, ax = render.new_figure(legend_below=run_jobs.legend_below(job))
    try:
        render.draw_chart(fig, ax, job)
        legend = ax.get_legend()
        texts = [t.get_text() for t in legend.get_texts()] if legend else []
        size = tuple(fig.get_size_inches())
    finally:
        render.plt.close(fig)
    plot = svgcharts.BUILDERS[job["kind"]](job["data"])
    assert [e.label for e in plot.entries] == texts
    assert chartlayout.figure_size_in(plot) == pytest.approx(size)


@pytest.mark.parametrize("lo,hi", [(-1.35, 28.3), (0.0, 230.0), (-0.58, 19.6), (95.0, 105.0),
                                   (0.0, 1.0), (-1250.0, 26250.0), (0.001, 0.0042)])
@pytest.mark.parametrize("bins", [9, 8, 5])
def test_linear_ticks_are_matplotlibs(lo, hi, bins):
    ref = [t for t in MaxNLocator(nbins=bins, steps=[1, 2, 2.5, 5, 10]).tick_values(lo, hi)
           if lo - 1e-9 <= t <= hi + 1e-9]
    assert chartlayout.linear_ticks(lo, hi, bins) == pytest.approx(ref)


@pytest.mark.parametrize("lo,hi", [(150.0, 16000.0), (6.5, 21000.0), (0.02, 3.0),
                                   (0.5, 2e7), (180.0, 260.0)])
def test_log_ticks_are_matplotlibs(lo, hi):
    # plots.py asks for 1-2-5 ticks only below four decades, where the stride is 1: the
    # combination of subs and a wider stride (matplotlib: no tick at all) is not compared
    for subs, numticks in (((1.0, 2.0, 5.0), 9), ((1.0,), 9), ((1.0,), 4), ((1.0,), 2)):
        ref = [t for t in LogLocator(base=10, subs=subs, numticks=numticks).tick_values(lo, hi)
               if lo * (1 - 1e-9) <= t <= hi * (1 + 1e-9)]
        assert chartlayout.log_ticks(lo, hi, subs, numticks) == pytest.approx(ref), (subs, numticks)


HOSTILE = 'A <script>alert("x")</script> & {{ site }} \x07 label'


@pytest.mark.parametrize("narrow", [False, True])
@pytest.mark.parametrize("job", SVG_JOBS, ids=_ids)
def test_every_string_is_escaped_and_the_document_parses(job, narrow):
    data = job["data"]
    data = {**data, "title": HOSTILE}
    for key in ("systems", "curves", "points"):
        if key in data:
            data[key] = [{**item, "label": HOSTILE} for item in data[key]]
    text = svgdraw.render_svg(svgcharts.BUILDERS[job["kind"]](data), narrow=narrow)
    root = ET.fromstring(text.encode())           # well-formed XML
    assert "<script" not in text and "&lt;script&gt;" in text
    assert "\x07" not in text
    shown = " ".join("".join(t.itertext()) for t in root.iter("{http://www.w3.org/2000/svg}text"))
    assert 'alert("x")' in shown          # the label is shown as text
    assert text == svgdraw.render_svg(svgcharts.BUILDERS[job["kind"]](data), narrow=narrow)


def _legend_and_area(text: str):
    boxes = {}
    for m in re.finditer(r'<g id="(plot-area|legend[\w-]*)">\s*<path d="([^"]+)"', text):
        n = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", m.group(2))]
        boxes[m.group(1)] = (min(n[0::2]), min(n[1::2]), max(n[0::2]), max(n[1::2]))
    return boxes


@pytest.mark.parametrize("narrow", [False, True])
@pytest.mark.parametrize("job", SVG_JOBS, ids=_ids)
def test_legends_fit_the_figure_and_stay_off_the_plot_area_when_below(job, narrow):
    plot = svgcharts.BUILDERS[job["kind"]](job["data"])
    text = svgdraw.render_svg(plot, narrow=narrow)
    width, height = (float(v) for v in re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"',
                                                   text).groups())
    boxes = _legend_and_area(text)
    area = boxes["plot-area"]
    legend = boxes.get("legend") or boxes.get("legend-inside")
    assert legend is not None
    assert 0 <= legend[0] and legend[2] <= width + 0.5 and 0 <= legend[1] \
        and legend[3] <= height + 0.5, (legend, width, height)
    if "legend" in boxes:
        assert legend[1] >= area[3] + 20          # under the tick labels and the axis label
    else:
        assert area[0] <= legend[0] and legend[2] <= area[2] and area[1] <= legend[1] \
            and legend[3] <= area[3]


def test_the_inside_legend_takes_the_emptiest_corner():
    """Lines along the top: the legend goes to the bottom (matplotlib's loc="best")."""
    data = {"title": "t", "offered_rate": 100.0,
            "systems": [{"label": "A", "color": "#0072B2", "t_s": [0.0, 1.0, 2.0, 3.0],
                         "throughput_rps": [100.0, 100.0, 100.0, 100.0]}]}
    text = svgdraw.render_svg(svgcharts.throughput_over_time(data))
    boxes = _legend_and_area(text)
    area, legend = boxes["plot-area"], boxes["legend-inside"]
    assert legend[1] > (area[1] + area[3]) / 2        # in the lower half


def test_steps_hold_until_the_next_interval_and_gaps_break_the_line():
    plot = chartspec.Plot(x=chartspec.Axis("s"), y=chartspec.Axis("ms", limits=(0.0, 10.0)),
                        series=[chartspec.Series([0.0, 1.0, 2.0, 3.0, 4.0],
                                               [1.0, 2.0, None, 5.0, 5.0],
                                               chartspec.Style("#000000"), steps=True)],
                        legend=None)
    d = re.search(r'<path d="(M [^"]+)" clip-path', svgdraw.render_svg(plot)).group(1)
    # two pieces: 0..2 (the value at 1 held up to 2, where the gap starts) and 3..4
    assert d.count("M ") == 2
    first, second = d.split(" M ")
    assert first.count("H ") == 2 and second.count("H ") == 1


def test_number_format_is_short_and_stable():
    assert [svgdraw.num(v) for v in (0.0, -0.001, 1.5, 2.0, 3.14159, 250.56)] == \
        ["0", "0", "1.5", "2", "3.14", "250.56"]
    assert math.isclose(chartlayout.text_width("10,000", 10), 34.99, abs_tol=0.01)
    # characters DejaVu Sans lacks are drawn from the reader's other fonts: CJK a whole em
    assert chartlayout.text_width("日本語", 10) == 30.0


def _plain_num(v) -> str:
    text = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def test_number_texts_are_remembered_for_one_document_only():
    """num remembers each distinct number's text while a document is written: numbers that
    compare equal (1, 1.0, True; 0.0, -0.0) share a text that must be each one's own, and a new
    document starts with none remembered, so no chart's text comes from another's."""
    svgdraw.Canvas(10, 10)
    values = [1, 1.0, True, -0.0, 0.0, 0.004, -0.004, 2.675, 1e17, 10**17 + 1, float("nan"),
              float("inf"), 1.005, 1.0050000000000001]
    for order in (values, values[::-1]):
        svgdraw.Canvas(10, 10)
        assert [svgdraw.num(v) for v in order] == [_plain_num(v) for v in order]
    assert svgdraw._NUM_TEXTS
    svgdraw.Canvas(10, 10)
    assert not svgdraw._NUM_TEXTS
    a, b = (svgcharts.BUILDERS[job["kind"]](job["data"]) for job in SVG_JOBS[:2])
    first = svgdraw.render_svg(a)
    svgdraw.render_svg(b, narrow=True)
    assert svgdraw.render_svg(a) == first
    shown = set(re.findall(r"-?\d+(?:\.\d+)?", first))
    assert set(svgdraw._NUM_TEXTS.values()) <= shown     # only this document's numbers


def panels_job(n: int) -> dict:
    base = spectrum_curves()
    curves = [dict(base[i % 2], label=f"Server {i} with a rather long label", color=f"#00{i:02d}00")
              for i in range(n)]
    curves[-1] = dict(curves[-1], label="Idle", points=[])    # a system without samples
    return {"kind": "spectrum_panels", "svg": "p.svg", "png": None,
            "data": {"title": "Latency by percentile at 1,000 requests/s offered",
                     "curves": curves, "timeout_ms": None}}


@pytest.mark.parametrize("narrow", [False, True])
@pytest.mark.parametrize("n", [7, 12, 13])
def test_small_multiples_sit_where_matplotlibs_subplots_put_them(n, narrow):
    """The panel grid is chartlayout.panel_layout's, as matplotlib lays it out (the PNG): each
    plot area where matplotlib puts that axes, titles named, hidden panels absent."""
    job = panels_job(n)
    fig = render.draw_panels(job, narrow=narrow)
    try:
        width, height = (v * 72 for v in fig.get_size_inches())
        expected = [(ax.get_position().x0 * width, (1 - ax.get_position().y1) * height,
                     ax.get_position().x1 * width, (1 - ax.get_position().y0) * height)
                    for ax in fig.axes if ax.get_visible()]
    finally:
        render.plt.close(fig)
    text = svgcharts.spectrum_panels(job["data"], narrow=narrow)
    ET.fromstring(text.encode())
    boxes = {}
    for m in re.finditer(r'<g id="(plot-area-\d+)">\s*<path d="([^"]+)"', text):
        v = [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", m.group(2))]
        boxes[m.group(1)] = (min(v[0::2]), min(v[1::2]), max(v[0::2]), max(v[1::2]))
    assert list(boxes) == [f"plot-area-{i + 1}" for i in range(n)]
    for got, want in zip(boxes.values(), expected):
        assert got == pytest.approx(want, abs=0.02)
    assert all(f'id="panel-title-{i + 1}"' in text for i in range(n))
    assert "Idle (no samples)" in text
    assert f'viewBox="0 0 {svgdraw.num(width)} {svgdraw.num(height)}"' in text


def many_rows_job() -> dict:
    """A latency chart of 25 systems: 51 legend entries in 26 rows, a height (8.45 in) whose
    float is just under its whole pixels."""
    systems = [{"label": f"S{i}", "color": "#0072B2", "t_s": [0.0, 1.0], "p99_ms": [1.0, 2.0],
                "max_ms": [2.0, 3.0]} for i in range(25)]
    return {"kind": "latency_over_time", "svg": "m.svg", "png": "m.png",
            "data": {"title": "t", "systems": systems,
                     "gc_pauses": [{"t_s": 0.5, "duration_ms": 1.0}]}}


@pytest.mark.parametrize("job", SVG_JOBS + [dict(panels_job(7), png="p.png"), many_rows_job()],
                         ids=_ids)
def test_the_img_size_is_the_pngs_pixels_and_the_svgs_aspect(job, tmp_path):
    """run_jobs.pixel_sizes (the <img> width and height, from svgdraw's layout) must be the PNG
    matplotlib writes, pixel for pixel, and the SVG's shape."""
    assert render.render_job(job, str(tmp_path)) == []
    png = (tmp_path / job["png"]).read_bytes()
    real = (int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big"))
    assert run_jobs.pixel_sizes([job])[job["png"]] == real
    svg = (tmp_path / job["svg"]).read_text()
    w, h = (float(v) for v in re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg).groups())
    assert abs(w / 72 * 100 - real[0]) <= 1 and abs(h / 72 * 100 - real[1]) <= 1


def test_a_phone_legend_wraps_a_label_wider_than_the_figure():
    """On a phone a label that would run off the 3.6-inch figure is written on more lines (the
    figure grows by a row for each); the wide chart keeps it on one."""
    long = "Fixed pool of 20 platform threads predicted ceiling (100/s) with a longer tail"
    data = {"title": "t", "systems": [
        {"label": "A", "color": "#0072B2", "offered": [10, 100, 1000], "p50_ms": [1.0, 2.0, 3.0],
         "p99_ms": [2.0, 3.0, 4.0], "saturated": [False] * 3, "ceiling_rps": None},
        {"label": long, "color": "#D55E00", "offered": [10, 100, 1000],
         "p50_ms": [1.0, 2.0, 3.0], "p99_ms": [2.0, 3.0, 5.0], "saturated": [False] * 3,
         "ceiling_rps": None}]}
    plot = svgcharts.load_curve(data)
    layout = chartlayout.layout_for(plot, narrow=True)
    labels = chartlayout.legend_labels(plot, layout)
    wrapped = [lines for lines in labels if len(lines) > 1]
    assert wrapped and " ".join(wrapped[0]) == f"{long} p99"
    text = svgdraw.render_svg(plot, narrow=True)
    width, height = (float(v) for v in re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"',
                                                   text).groups())
    legend = _legend_and_area(text)["legend"]
    assert legend[2] <= width and legend[3] <= height
    for m in re.finditer(r'<text x="([\d.]+)" y="[\d.]+" style="font-size: ([\d.]+)px; '
                         r'text-anchor: start">([^<]*)</text>', text):
        x, size, words = float(m.group(1)), float(m.group(2)), m.group(3)
        assert x + chartlayout.text_width(words, size) <= width, words
    assert sum(len(lines) for lines in labels) > len(plot.entries)
    one_row_less = dict(data, systems=[data["systems"][0],
                                       dict(data["systems"][1], label="B")])
    assert chartlayout.figure_size_in(plot, narrow=True)[1] > \
        chartlayout.figure_size_in(svgcharts.load_curve(one_row_less), narrow=True)[1]
    assert [[e.label] for e in plot.entries] == chartlayout.legend_labels(
        plot, chartlayout.layout_for(plot, narrow=False))


def _spot_one_point_at_a_time(plot, box, size_wh, sx, sy, pad):
    """best_spot as it was written before numpy took the points: the reference."""
    x0, y0, x1, y1 = box
    w, h = size_wh
    left, right, cx = x0 + pad, x1 - pad - w, (x0 + x1 - w) / 2
    top, bottom, cy = y0 + pad, y1 - pad - h, (y0 + y1 - h) / 2
    spots = [(right, top), (left, top), (left, bottom), (right, bottom), (right, cy),
             (left, cy), (right, cy), (cx, bottom), (cx, top), (cx, cy)]
    points = []
    for s in plot.series:
        prev = None
        for x, y in zip(s.xs, s.ys):
            if not (chartlayout.finite(x) and chartlayout.finite(y)) or \
                    (sy.kind == "log" and y <= 0) or (sx.kind == "log" and x <= 0):
                prev = None
                continue
            p = (sx(x), sy(y))
            if prev is not None:
                corner = (p[0], prev[1]) if s.steps else None
                for a, b in ((prev, corner), (corner, p)) if corner else ((prev, p),):
                    for k in range(1, 4):
                        points.append((a[0] + (b[0] - a[0]) * k / 4, a[1] + (b[1] - a[1]) * k / 4))
            points.append(p)
            prev = p
    for r in plot.rules:
        for k in range(21):
            t = k / 20
            points.append((sx(r.at), y1 + (y0 - y1) * t) if r.vertical else
                          (x0 + (x1 - x0) * t, sy(r.at)))
    scores = [sum(1 for px, py in points if sxp <= px <= sxp + w and syp <= py <= syp + h)
              for sxp, syp in spots]
    return spots[scores.index(min(scores))]


@pytest.mark.parametrize("seed", range(12))
def test_the_spot_search_counts_every_point_and_sample_as_one_at_a_time(seed):
    """best_spot samples each segment in numpy: the same spot as the point-at-a-time count,
    with gaps (None, NaN, inf, values a log axis cannot show), steps, rules and log axes;
    Scale.at gives each value's __call__ to the bit."""
    import random
    rnd = random.Random(seed)
    x_log, y_log = seed % 3 == 1, seed % 4 == 2

    def value(log):
        pick = rnd.random()
        if pick < 0.08:
            return rnd.choice([None, float("nan"), float("inf"), -1.0 if log else 0.0])
        return rnd.uniform(0.5, 200.0) ** (2 if log else 1)

    n = rnd.randint(0, 40)
    series = [chartspec.Series(sorted(rnd.uniform(1, 100) ** (2 if x_log else 1)
                                      for _ in range(n)) if i % 2 else
                               [value(x_log) for _ in range(n)],
                               [value(y_log) for _ in range(n)],
                               chartspec.Style("#000000"), steps=bool(rnd.getrandbits(1)))
              for i in range(rnd.randint(1, 4))]
    rules = [chartspec.Rule(rnd.uniform(1, 100), bool(rnd.getrandbits(1)),
                            chartspec.Style("#000000")) for _ in range(rnd.randint(0, 2))]
    plot = chartspec.Plot(x=chartspec.Axis("x", "log" if x_log else "linear"),
                          y=chartspec.Axis("y", "log" if y_log else "linear"),
                          series=series, rules=rules)
    box = (40.0, 20.0, 640.0, 380.0)
    sx = chartlayout.Scale(plot.x.scale, 1.0, 4e4 if x_log else 200.0, box[0], box[2])
    sy = chartlayout.Scale(plot.y.scale, 0.25, 4e4 if y_log else 200.0, box[3], box[1])
    for s in series:
        for scale, values in ((sx, s.xs), (sy, s.ys)):
            shown = [v for v in values if chartlayout.finite(v) and v > 0]
            assert scale.at(np.array(shown, dtype=float)).tolist() == [scale(v) for v in shown]
    for size in ((120.0, 60.0), (300.0, 200.0)):
        assert chartlayout.best_spot(plot, box, size, sx, sy, 4.0) == \
            _spot_one_point_at_a_time(plot, box, size, sx, sy, 4.0)


def test_a_charts_wide_layout_is_worked_out_once_for_its_svg_and_png(tmp_path, monkeypatch):
    """render_job lays out the wide SVG and the PNG with one geometry (it was worked out for
    each: the spot search and tick choice twice for every chart with a PNG); the SVG is the
    one render_svg makes on its own, and the phone layout is still its own."""
    job = dict(next(j for j in SVG_JOBS if j["png"]), narrow_svg="c-narrow.svg")
    plot = svgcharts.BUILDERS[job["kind"]](job["data"])
    wide, narrow = svgdraw.render_svg(plot), svgdraw.render_svg(plot, narrow=True)
    made = []
    real = chartlayout.geometry

    def counted(p, narrow=False, **kwargs):
        made.append(narrow)
        return real(p, narrow, **kwargs)

    monkeypatch.setattr(chartlayout, "geometry", counted)
    monkeypatch.setattr(svgdraw, "geometry", counted)
    render.render_job(job, str(tmp_path))
    assert sorted(made) == [False, True]
    assert (tmp_path / job["svg"]).read_text() == wide
    assert (tmp_path / job["narrow_svg"]).read_text() == narrow
    assert (tmp_path / job["png"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_charts_data_ranges_are_worked_out_once_for_its_wide_and_phone_layouts(tmp_path,
                                                                                 monkeypatch):
    """The axes' ranges come from the plot's data alone: render_job gathers the data
    (data_values) once a chart, for the wide layout, and gives the phone layout its ranges;
    both SVGs are the ones render_svg makes on its own."""
    jobs = [dict(j, narrow_svg=f"n{i}.svg", svg=f"w{i}.svg", png=None)
            for i, j in enumerate(SVG_JOBS) if j["kind"] in svgcharts.BUILDERS
            and j["kind"] != "spectrum_panels"]
    expected = []
    for job in jobs:
        plot = svgcharts.BUILDERS[job["kind"]](job["data"])
        expected.append((svgdraw.render_svg(plot), svgdraw.render_svg(plot, narrow=True)))
    gathered = []
    real = chartlayout.data_values
    monkeypatch.setattr(chartlayout, "data_values", lambda p: gathered.append(p) or real(p))
    for job, (wide, narrow) in zip(jobs, expected):
        gathered.clear()
        render.render_job(job, str(tmp_path))
        assert len(gathered) == 1, job["kind"]
        assert (tmp_path / job["svg"]).read_text() == wide
        assert (tmp_path / job["narrow_svg"]).read_text() == narrow


@given(st.text(alphabet=st.sampled_from('ab &<>"\'\x00\x07\t\n\x0b\x1f\x7f\u00e9\ufffd'),
               max_size=12))
def test_escape_changes_what_the_plain_definition_changes(text):
    """escape returns a text with nothing to escape as it is (one search): the same as the
    substitution and the four replaces made on every text."""
    plain = re.sub("[\x00-\x08\x0b-\x1f]", "\ufffd", text).replace("&", "&amp;") \
        .replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    assert svgdraw.escape(text) == plain
    assert svgdraw.escape(7) == "7"


def _polyline_by_calls(xs, ys, sx, sy, steps):
    """svgdraw._polyline as it was written with a Scale call a coordinate: the reference."""
    parts, pen = [], False
    for x, y in zip(xs, ys):
        x_shown = chartlayout.finite(x) and (sx.kind != "log" or x > 0)
        if not (x_shown and chartlayout.finite(y) and (sy.kind != "log" or y > 0)):
            if steps and pen and x_shown:
                parts.append(f"H {svgdraw.num(sx(x))}")
            pen = False
            continue
        px, py = svgdraw.num(sx(x)), svgdraw.num(sy(y))
        parts.append(f"{'H' if steps else 'L'} {px}{' V' if steps else ''} {py}" if pen
                     else f"M {px} {py}")
        pen = True
    return " ".join(parts)


@pytest.mark.parametrize("seed", range(8))
def test_a_polyline_has_each_scale_calls_numbers(seed):
    """_polyline works Scale.__call__'s arithmetic out inline: the same path data as a call a
    coordinate, with gaps, steps, ints and log axes."""
    import random
    rnd = random.Random(seed)

    def value():
        pick = rnd.random()
        if pick < 0.15:
            return rnd.choice([None, float("nan"), float("inf"), -3.0, 0.0, 0])
        return rnd.choice([rnd.randint(1, 500), rnd.uniform(0.001, 3e5)])

    for x_kind, y_kind in (("linear", "linear"), ("log", "linear"), ("linear", "log"),
                           ("log", "log")):
        sx = chartlayout.Scale(x_kind, 0.5, 2e5, 40.0, 640.0)
        sy = chartlayout.Scale(y_kind, 0.01, 4e5, 380.0, 20.0)
        xs, ys = [value() for _ in range(60)], [value() for _ in range(60)]
        for steps in (False, True):
            assert svgdraw._polyline(xs, ys, sx, sy, steps) == \
                _polyline_by_calls(xs, ys, sx, sy, steps)
