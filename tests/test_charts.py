"""The charts: what each kind draws (svgcharts' descriptions, from which both the SVG and the
PNG are made), and render_job's files: byte-identical SVG and PNG without volatile metadata,
the same whatever was drawn before in the process, the phone variant readable."""
from __future__ import annotations

import copy
import hashlib
import os
import re

import pytest

from analysis.write.charts import chartlayout, plots, png_redraw, render, run_jobs, svgcharts, svgdraw
from tests.helpers import REPO, spectrum_curves, varied_jobs

pytestmark = pytest.mark.slow     # (make check leaves it out; make test runs it)


def test_spectrum_x_axis_is_one_over_one_minus_p():
    plot = svgcharts.spectrum({"title": "t", "curves": spectrum_curves()})
    xs = list(plot.series[0].xs)
    assert xs[:4] == pytest.approx([1.0, 2.0, 10.0, 100.0])
    assert xs[-1] == 20_000            # the max sits where one sample lies beyond
    assert plot.x.scale == "log" and plot.y.scale == "log"
    g = chartlayout.geometry(plot)
    labels = [plots.percent_label(x) for x in g.xticks]
    assert labels[:6] == ["0%", "50%", "90%", "99%", "99.9%", "99.99%"]
    assert "ms" in plot.y.label and plot.x.label
    assert [e.label for e in plot.entries] == ["Pool", "Virtual"]


def test_load_curve_marks_ceilings_and_saturation():
    systems = [{"label": "Pool", "color": plots.color(0), "offered": [10, 100, 1000],
                "p50_ms": [0.2, 0.3, 900.0], "p99_ms": [0.5, 2.0, 2000.0],
                "saturated": [False, False, True], "ceiling_rps": 100.0},
               {"label": "Virtual", "color": plots.color(1), "offered": [10, 100, 1000],
                "p50_ms": [0.2, 0.2, 0.3], "p99_ms": [0.5, 0.6, 0.9],
                "saturated": [False, False, False], "ceiling_rps": None}]
    plot = svgcharts.load_curve({"title": "t", "systems": systems})
    legend = [e.label for e in plot.entries]
    assert "Pool predicted ceiling (100/s)" in legend
    assert "saturated (see the table's rules)" in legend
    assert "Virtual predicted ceiling" not in " ".join(legend)
    assert plot.x.scale == "log" and "requests/s" in plot.x.label and "ms" in plot.y.label
    assert [r.at for r in plot.rules if r.vertical] == [100.0]
    pool_p99 = plot.series[legend.index("Pool p99")]
    assert list(pool_p99.ys) == [0.5, 2.0, 2000.0] and pool_p99.style.marker == "o"
    (ring,) = [s for s in plot.series if s.style.face == "none"]   # saturated: ringed
    assert list(ring.xs) == [1000] and list(ring.ys) == [2000.0]


def test_censored_points_sit_at_the_timeout_and_are_marked():
    systems = [{"label": "Pool", "color": plots.color(0), "offered": [10, 100, 1000],
                "p50_ms": [200.0, 300.0, 2000.0], "p99_ms": [210.0, 900.0, 2000.0],
                "p50_censored": [False, False, True], "p99_censored": [False, False, True],
                "p50_range": [[199.0, 204.0], None, None], "p99_range": [None, None, None],
                "saturated": [False, False, True], "ceiling_rps": None}]
    plot = svgcharts.load_curve({"title": "t", "systems": systems, "timeout_ms": 2000.0})
    legend = [e.label for e in plot.entries]
    assert "> 2 s: no answer within the timeout (drawn at it)" in legend
    assert "bars: range of the repetitions" in legend
    assert [(r.at, r.style.dash) for r in plot.rules if not r.vertical] == [(2000.0, "--")]
    triangles = [s for s in plot.series if s.style.marker == "^"]
    assert [list(s.ys) for s in triangles] == [[2000.0], [2000.0]]       # p99 and p50
    (bars,) = plot.bars
    assert (list(bars.xs), list(bars.lo), list(bars.hi)) == ([10], [199.0], [204.0])


def test_spectrum_draws_the_censored_tail_dotted_at_the_timeout():
    curves = [{"label": "Pool", "color": plots.color(0), "count": 100,
               "points": [(0.0, 100.0, False), (50.0, 150.0, False), (90.0, 2000.0, True),
                          (100.0, 2000.0, True)]}]
    plot = svgcharts.spectrum({"title": "t", "curves": curves, "timeout_ms": 2000.0})
    dotted = [s for s in plot.series if s.style.dash == ":"]
    assert dotted and list(dotted[0].ys) == [2000.0, 2000.0]
    assert "Pool: no answer (> timeout)" in [e.label for e in plot.entries]
    assert [r.at for r in plot.rules] == [2000.0] and "> 2 s" in plot.notes[0].text


def test_latency_over_time_draws_gaps_and_gc_hook():
    systems = [{"label": "Pool", "color": plots.color(0), "t_s": [0.0, 1.0, 2.0],
                "p99_ms": [1.0, None, 3.0], "max_ms": [2.0, None, 250.0]}]
    plot = svgcharts.latency_over_time({"title": "t", "systems": systems,
                                        "gc_pauses": [{"t_s": 2.0, "duration_ms": 200}]})
    assert plot.series[0].ys[1] is None     # an empty interval is a gap, not a zero
    assert "GC pause" in [e.label for e in plot.entries]
    assert [(r.at, r.vertical, r.span) for r in plot.rules] == [(2.0, True, (0.0, 0.04))]
    assert "(s since" in plot.x.label and "(ms)" in plot.y.label


def test_latency_over_time_says_when_nothing_was_answered():
    systems = [{"label": "Pool", "color": plots.color(0), "t_s": [0.0, 1.0, 2.0],
                "p99_ms": [None, None, None], "max_ms": [None, None, None]}]
    plot = svgcharts.latency_over_time({"title": "t", "systems": systems})
    assert "Pool p99 (no request answered)" in [e.label for e in plot.entries]


def test_throughput_over_time_shows_offered_line():
    systems = [{"label": "Pool", "color": plots.color(0), "t_s": [0.0, 1.0],
                "throughput_rps": [480.0, 300.0]}]
    plot = svgcharts.throughput_over_time({"title": "t", "systems": systems,
                                           "offered_rate": 500})
    assert [r.at for r in plot.rules] == [500] and plot.entries[0].label == "offered (500/s)"
    assert plot.y.limits == (0.0, 500 * 1.15) and "requests/s" in plot.y.label


def render_spectrum(tmp_path, name):
    job = {"kind": "spectrum", "svg": f"{name}.svg", "png": f"{name}.png",
           "data": {"title": "Latency by percentile", "curves": spectrum_curves()}}
    assert render.render_job(job, str(tmp_path)) == []
    assert not render.plt.get_fignums(), "render_job leaves no pyplot figure open"
    return (tmp_path / f"{name}.svg").read_bytes(), (tmp_path / f"{name}.png").read_bytes()


def test_saved_charts_are_byte_identical_and_free_of_volatile_metadata(tmp_path):
    svg1, png1 = render_spectrum(tmp_path, "a")
    svg2, png2 = render_spectrum(tmp_path, "b")
    assert hashlib.sha256(svg1).digest() == hashlib.sha256(svg2).digest()
    assert png1 == png2
    text = svg1.decode()
    assert "<dc:date>" not in text and not re.search(r"20\d\d-\d\d-\d\dT", text)
    assert b"Software" not in png1 and b"matplotlib" not in png1.lower()
    assert png1.startswith(b"\x89PNG")
    # 7 in x 100 dpi: a 700 px blog column
    width = int.from_bytes(png1[16:20], "big")
    assert width == 700
    assert "<text" in text and "DejaVu Sans" in text  # labels stay text, with a named font


def test_unknown_chart_kind_is_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown chart kind"):
        render.render_job({"kind": "pie", "data": {}, "svg": "a.svg", "png": "a.png"}, str(tmp_path))
    assert not render.plt.get_fignums()


def test_reused_figures_draw_the_same_bytes_as_fresh_ones_in_any_order(tmp_path):
    """render_job keeps one figure and clears it between charts (speed); a chart
    must not depend on the charts drawn before it in the same process."""
    jobs = varied_jobs()
    fresh = {}
    for job in jobs:
        fig, ax = render.new_figure(legend_below=run_jobs.legend_below(job))
        render.draw_chart(fig, ax, job)
        render.save_figure(fig, tmp_path / "fresh.svg", tmp_path / "fresh.png")
        fresh[job["svg"]] = ((tmp_path / "fresh.svg").read_bytes(),
                             (tmp_path / "fresh.png").read_bytes())
    for order in (jobs, jobs[::-1], jobs[1::2] + jobs[::2] + jobs):
        for job in order:
            assert render.render_job(job, str(tmp_path)) == []
            got = ((tmp_path / job["svg"]).read_bytes(), (tmp_path / job["png"]).read_bytes())
            if job["kind"] in svgcharts.BUILDERS:     # the SVG is written without matplotlib
                plot = svgcharts.BUILDERS[job["kind"]](job["data"])
                assert got[0] == svgdraw.render_svg(plot).encode(), f"{job['svg']}: SVG differs"
            else:
                assert got[0] == fresh[job["svg"]][0], f"{job['svg']}: SVG differs"
            assert got[1] == fresh[job["svg"]][1], f"{job['svg']}: PNG differs"
    assert not render.plt.get_fignums()  # the reused figures are not pyplot's


# At 390 px the page column is 350 CSS px (390 minus .wrapper's 1.25rem padding each side).
PHONE_COLUMN_PX = 390 - 2 * 20


def _smallest_text_px(svg: str) -> float:
    """The smallest font size of an SVG as shown PHONE_COLUMN_PX wide (img width: 100%)."""
    view_width = float(re.search(r'viewBox="0 0 ([\d.]+) ', svg).group(1))
    sizes = [float(s) for s in re.findall(r"font-size: ([\d.]+)px", svg)]
    return min(sizes) * PHONE_COLUMN_PX / view_width


@pytest.mark.parametrize("kind", run_jobs.CHART_KINDS)
def test_phone_variant_text_is_at_least_9_css_px_at_390_px(tmp_path, kind):
    """Issue 14: on a 390 px phone the 700 px chart shows at half size (legend text about
    5 CSS px). The narrow SVG (served below 36rem by _includes/chart.html) keeps >= 9 px."""
    many = [f"System with a rather long label number {i}" for i in range(4)]
    data = {
        "spectrum": {"title": "Latency by percentile at 1,000 requests/s offered",
                     "curves": [dict(c, label=label) for c, label in
                                zip(spectrum_curves() * 2, many)]},
        "load_curve": {"title": "Latency vs offered load", "systems": [
            {"label": label, "color": plots.color(i), "offered": [10, 100, 1000],
             "p50_ms": [0.2, 0.3, 900.0], "p99_ms": [0.5, 2.0, 2000.0],
             "saturated": [False, False, True], "ceiling_rps": 100.0}
            for i, label in enumerate(many)]},
        "latency_over_time": {"title": "Latency per interval at 1,000 requests/s offered",
                              "systems": [{"label": label, "color": plots.color(i),
                                           "t_s": [0.0, 1.0, 2.0], "p99_ms": [1.0, 2.0, 3.0],
                                           "max_ms": [2.0, 9.0, 250.0]}
                                          for i, label in enumerate(many)],
                              "gc_pauses": [{"t_s": 1.5, "duration_ms": 20.0}]},
        "throughput_over_time": {"title": "Throughput per interval at 1,000 requests/s offered",
                                 "offered_rate": 1000.0,
                                 "systems": [{"label": label, "color": plots.color(i),
                                              "t_s": [0.0, 1.0, 2.0],
                                              "throughput_rps": [990.0, 1000.0, 1000.0]}
                                             for i, label in enumerate(many)]},
        "spectrum_panels": {"title": "Latency by percentile at 1,000 requests/s offered",
                            "curves": [dict(c, label=label, color=plots.color(i)) for i, (c, label)
                                       in enumerate(zip(spectrum_curves() * 2, many))]},
        "gc_tail": {"title": "Longest GC pause in the window against the tail",
                    "points": [{"label": label, "color": plots.color(i), "pause_ms": 2.0 * i,
                                "p999_ms": 5.0 + i, "p999_censored": False,
                                "max_ms": 40.0 + i, "max_censored": i == 3}
                               for i, label in enumerate(many)]},
        "jmh_sweep": {"title": "Actor ring: against ringSize at messages 1000",
                      "xlabel": "ringSize", "ylabel": "time per operation (µs/op)",
                      "log_x": True, "lines": [{"label": label, "color": plots.color(i),
                                                "x": [16, 1024], "y": [10.0 * (i + 1), 90.0],
                                                "error": [2.0, None]}
                                               for i, label in enumerate(many)]},
        "jmh_spectrum": {"title": "Every mode: time per operation by percentile",
                         "ylabel": "time per operation (ns/op)",
                         "curves": [dict(c, label=label) for c, label in
                                    zip(spectrum_curves() * 2, many)]},
        "summary_dot": {"title": "Sleep 100 ms at 1,000 requests/s offered", "rows": [
            {"label": label, "color": plots.color(i), "measured": True, "saturated": i == 3,
             "not_steady": False, **{f"{k}_{f}": v for k, vs in
                                     (("p50", (1.0 + i, False, [0.9, 1.5 + i], "p50 of x")),
                                      ("p99", (5.0 + i, i == 2, None, "p99 of x")))
                                     for f, v in zip(("ms", "censored", "range", "title"), vs)}}
            for i, label in enumerate(many)], "timeout_ms": 5000.0},
    }
    data["compare_curve"] = data["load_curve"]
    data = data[kind]
    if kind == "summary_dot":
        # issue 34: phone-sized already (no narrow variant), shown at most 20rem wide
        job = {"kind": kind, "data": data, "svg": "c.svg", "png": "c.png", "narrow_svg": None}
        assert render.render_job(job, str(tmp_path)) == []
        svg = (tmp_path / "c.svg").read_text()
        assert _smallest_text_px(svg) * 320 / PHONE_COLUMN_PX >= 9
        assert not (tmp_path / "c-narrow.svg").exists()
        assert all(f">{label}" in svg for label in many)
        return
    job = {"kind": kind, "data": data, "svg": "c.svg", "png": "c.png",
           "narrow_svg": "c-narrow.svg"}
    assert render.render_job(job, str(tmp_path)) == []
    wide = (tmp_path / "c.svg").read_text()
    narrow = (tmp_path / "c-narrow.svg").read_text()
    assert _smallest_text_px(wide) < 9                    # why the variant exists
    assert _smallest_text_px(narrow) >= 9
    assert 'width="259.2pt"' in narrow                     # 3.6 in
    for label in many:             # the legend keeps every entry (a panel title: wrapped)
        assert (label[:10] if kind == "spectrum_panels" else label) in narrow
    # the title is wrapped, not cut: every word is there
    for word in data["title"].split():
        assert word in narrow
    # drawn again: the same bytes
    render.render_job(job, str(tmp_path / "again"))
    assert (tmp_path / "again" / "c-narrow.svg").read_text() == narrow


def _scaled(value, k: float):
    """A chart job's data with every number times k: the same chart's shape, other numbers."""
    if isinstance(value, dict):
        return {key: _scaled(v, k) for key, v in value.items()}
    if isinstance(value, list):
        return [_scaled(v, k) for v in value]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    return int(value * k) if isinstance(value, int) else value * k


def test_charts_of_one_shape_are_redrawn_on_the_artists_with_the_same_bytes(tmp_path,
                                                                            monkeypatch):
    """A run's og:image (error bars, lines, markers alone, a rule, an inside legend) and the
    same chart with other numbers, one after the other: drawn on the artists of the chart
    before (png_redraw: the figure cleared once), each PNG equal to a fresh figure's."""
    import shutil
    from analysis.pipeline.stages import analyse_task
    runs = tmp_path / "runs"
    shutil.copytree(REPO / "runs" / "pool-vs-virtual", runs / "pool-vs-virtual",
                    copy_function=os.link)
    result = analyse_task(str(runs / "pool-vs-virtual"), str(runs), str(tmp_path), False)
    og = next(j for j in result["chart_jobs"] if j["png"])
    jobs = [{**og, "data": _scaled(og["data"], k), "png": f"og{i}.png", "svg": f"og{i}.svg",
             "narrow_svg": None} for i, k in enumerate((1.0, 1.7, 0.4, 3.0))]
    plot = svgcharts.BUILDERS[og["kind"]](og["data"])
    assert plot.bars and plot.rules and plot.entries and \
        {png_redraw._drawn_as(s) for s in plot.series} == {"line", "markers"}
    fresh = {}
    for job in jobs:
        fig, ax = render.new_figure()
        render.draw_chart(fig, ax, job)
        render.save_figure(fig, None, tmp_path / "fresh.png")
        fresh[job["png"]] = (tmp_path / "fresh.png").read_bytes()
    assert len(set(fresh.values())) == len(jobs)     # (other numbers: other pixels)
    cleared = []
    clear = render._reused_figure
    monkeypatch.setattr(render, "_reused_figure", lambda: cleared.append(1) or clear())
    render._REUSED.clear()
    for job in jobs + jobs[::-1]:
        assert render.render_job(job, str(tmp_path)) == []
        assert (tmp_path / job["png"]).read_bytes() == fresh[job["png"]], job["png"]
    assert len(cleared) == 1
    # a chart of another shape is drawn on the cleared figure, and the next one again
    other = varied_jobs()[1]
    for job in (other, jobs[1]):
        assert render.render_job(job, str(tmp_path)) == []
    assert len(cleared) == 3
    assert (tmp_path / jobs[1]["png"]).read_bytes() == fresh[jobs[1]["png"]]
    # what errorbar or scatter would refuse or mask is drawn fresh, so their errors stay
    g = chartlayout.geometry(plot)
    assert png_redraw.shape(plot, g) is not None
    for spoil in (lambda p: p.bars[0].hi.__setitem__(0, p.bars[0].lo[0] - 1.0),
                  lambda p: p.bars[0].lo.append(1.0),
                  lambda p: next(s for s in p.series
                                 if png_redraw._drawn_as(s) == "markers").ys.__setitem__(0, None)):
        spoilt = copy.deepcopy(plot)
        spoil(spoilt)
        assert png_redraw.shape(spoilt, g) is None


def test_a_png_is_drawn_under_the_house_style_without_copying_every_rc_parameter(tmp_path,
                                                                                 monkeypatch):
    """render_job sets STYLE's few rcParams for a PNG and puts them back (png_redraw.
    style_params): no copy of all ~320 (matplotlib.rc_context's, two to four a PNG), on a
    cleared figure and on the artists of the chart before; rcParams as they were after."""
    import matplotlib
    job = next(j for j in varied_jobs() if j["png"] and j["kind"] != "spectrum_panels")
    before = dict(matplotlib.rcParams)
    copies = []
    real = matplotlib.RcParams.copy
    monkeypatch.setattr(matplotlib.RcParams, "copy", lambda self: copies.append(1) or real(self))
    render._REUSED.clear()
    for _ in range(2):
        assert render.render_job(job, str(tmp_path)) == []
        assert dict(matplotlib.rcParams) == before
    assert copies == []
    with png_redraw.style_params():
        assert all(matplotlib.rcParams[key] == value for key, value in plots.STYLE.items())
    assert dict(matplotlib.rcParams) == before
