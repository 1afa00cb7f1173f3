"""The PNG's texts from remembered FreeType bitmaps (analysis/write/charts/png_text.py): the same
bytes as matplotlib's own Agg canvas, and no text laid out twice in a worker."""
from __future__ import annotations

import io

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from analysis.write.charts import png_text, render
from tests.helpers import varied_jobs


def _png_with(canvas_class, draw) -> bytes:
    fig = Figure(figsize=(4, 3))
    canvas_class(fig)
    ax = fig.add_subplot()
    draw(fig, ax)
    return render._png_bytes(fig)


def _texts(fig, ax):
    ax.set_title("Latency — p99 (ms) ±5 %, 東京")
    ax.set_ylabel("rotated label")
    ax.text(0.2, 0.5, "two\nlines", rotation=30, fontsize=7)
    ax.text(0.5, 0.2, "no anti-aliasing", antialiased=False)
    ax.text(0.1, 0.8, r"$\alpha^2$ math")
    ax.plot([0, 1], [0, 1], label="a line")
    ax.legend()


def test_bitmaps_draw_matplotlibs_bytes():
    # drawn twice: the second from the remembered bitmaps
    png_text._BITMAPS.clear()
    reference = _png_with(FigureCanvasAgg, _texts)
    assert _png_with(png_text.TextBitmapCanvas, _texts) == reference
    assert png_text._BITMAPS
    assert _png_with(png_text.TextBitmapCanvas, _texts) == reference


def test_every_chart_kinds_png_is_matplotlibs(tmp_path):
    for job in varied_jobs():
        if not job["png"]:
            continue
        fig, ax = render.new_figure()     # pyplot's figure: matplotlib's own canvas
        render.draw_chart(fig, ax, job)
        reference = render._png_bytes(fig)
        render.plt.close(fig)
        assert render.render_job(job, str(tmp_path)) == []
        assert (tmp_path / job["png"]).read_bytes() == reference, job["png"]


def test_a_text_drawn_again_is_not_rasterised_again(tmp_path, monkeypatch):
    job = next(j for j in varied_jobs() if j["kind"] == "load_curve")
    assert render.render_job(job, str(tmp_path)) == []
    first = (tmp_path / job["png"]).read_bytes()
    fonts = []
    real_get_font = png_text.get_font
    monkeypatch.setattr(png_text, "get_font", lambda *a, **k: fonts.append(a) or real_get_font(*a, **k))
    assert render.render_job(job, str(tmp_path)) == []
    assert (tmp_path / job["png"]).read_bytes() == first
    assert fonts == [], "every text of the chart drawn before came from its bitmap"
    assert isinstance(render._reused_figure()[0].canvas, png_text.TextBitmapCanvas)


def test_the_memory_is_bounded(monkeypatch):
    monkeypatch.setattr(png_text, "MAX_BITMAPS", 3)
    png_text._BITMAPS.clear()
    fig = Figure(figsize=(2, 2))
    png_text.TextBitmapCanvas(fig)
    for i in range(7):
        fig.text(0.1, 0.1 * i, f"text {i}")
    fig.savefig(io.BytesIO(), format="rgba")
    assert 0 < len(png_text._BITMAPS) <= 3


def test_a_missing_glyph_is_reported_for_every_chart_that_shows_it(tmp_path):
    job = next(j for j in varied_jobs() if j["kind"] == "load_curve")
    job = {**job, "data": {**job["data"], "title": "Load 東京"}}
    for _ in range(2):    # the second from the remembered bitmap
        problems = render.render_job(job, str(tmp_path))
        assert len(problems) == 1 and "4EAC" in problems[0] and "6771" in problems[0], problems


def _figure_of_alpha(alpha: float):
    fig = Figure(figsize=(2, 1.5))
    png_text.TextBitmapCanvas(fig)
    fig.patch.set_alpha(alpha)
    ax = fig.add_subplot()
    ax.plot([0, 1], [1, 0], label="a")
    ax.set_title("pixels")
    return fig


def test_the_png_holds_the_canvas_pixels_rgb_when_opaque_rgba_when_not():
    from PIL import Image
    for alpha, mode in ((1.0, "RGB"), (0.5, "RGBA")):
        fig = _figure_of_alpha(alpha)
        png = Image.open(io.BytesIO(render._png_bytes(fig)))
        canvas = Image.frombuffer("RGBA", png.size, bytes(fig.canvas.buffer_rgba()), "raw",
                                  "RGBA", 0, 1)
        assert png.mode == mode
        assert png.tobytes() == canvas.convert(mode).tobytes()


def _laid_out_texts(fig, ax):
    ax.plot([0, 1], [0, 1], label="first line")
    ax.plot([0, 1], [1, 0], label="second line")
    ax.set_title("a title")
    ax.legend()


def test_a_draw_lays_each_text_out_once(monkeypatch):
    # the legend's offset boxes ask for each of its texts' size several times a draw
    import matplotlib.text
    asked = []
    real = matplotlib.text._get_text_metrics_with_cache
    monkeypatch.setattr(matplotlib.text, "_get_text_metrics_with_cache",
                        lambda renderer, text, *a, **k: asked.append(text) or real(renderer, text, *a, **k))
    fig = Figure(figsize=(4, 3))
    png_text.TextBitmapCanvas(fig)
    _laid_out_texts(fig, fig.add_subplot())
    render._png_bytes(fig)
    assert asked.count("first line") == 1 and asked.count("a title") == 1
    asked.clear()
    render._png_bytes(fig)      # the next draw: laid out again, once
    assert asked.count("first line") == 1


def _changing_texts(fig, ax):
    _laid_out_texts(fig, ax)
    ax.text(0.1, 0.3, "a long text that wraps at the figure's edge " * 3, wrap=True)
    ax.text(0.5, 0.5, "turns with its transform", rotation=20, transform_rotates_text=True)
    ax.annotate("an annotation", (0.2, 0.2))


def test_layouts_follow_each_texts_change_between_draws():
    def drawn_twice(canvas_class) -> bytes:
        fig = Figure(figsize=(4, 3))
        canvas_class(fig)
        ax = fig.add_subplot()
        _changing_texts(fig, ax)
        render._png_bytes(fig)
        ax.title.set_fontsize(17)              # (its font properties changed in place)
        ax.get_legend().get_texts()[0].set_text("first line, renamed")
        ax.texts[1].set_rotation(40)
        ax.set_xlim(0.2, 0.9)
        return render._png_bytes(fig)
    assert drawn_twice(png_text.TextBitmapCanvas) == drawn_twice(FigureCanvasAgg)
