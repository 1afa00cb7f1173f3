"""The og:image's PNG written with compiled row filters (analysis/write/charts/png_encode.py,
_png_rows.c) against Pillow's own save of the same pixels: the same bytes for any image (the
filter rule - none, up, sub, Paeth, each kept only when strictly better - the zlib stream, the
IDAT chunking), and Pillow's save wherever the compiled chooser cannot be had."""
from __future__ import annotations

import io
import os
import shutil
import zlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from PIL import Image

from analysis.write.charts import png_encode, render

ROWS = png_encode.get()
needs_rows = pytest.mark.skipif(ROWS is None, reason=png_encode.describe())


def pillow_png(rgbx: np.ndarray, dpi: int) -> bytes:
    height, width = rgbx.shape[:2]
    out = io.BytesIO()
    Image.frombytes("RGB", (width, height), rgbx.tobytes(), "raw", "RGBX", 0, 1).save(
        out, format="png", compress_level=1, dpi=(dpi, dpi))
    return out.getvalue()


def filter_bytes(png: bytes, width: int, height: int) -> list[int]:
    """Each row's filter byte, read back from the PNG's IDAT chunks."""
    pos, stream = 8, b""
    while pos < len(png):
        size = int.from_bytes(png[pos:pos + 4], "big")
        if png[pos + 4:pos + 8] == b"IDAT":
            stream += png[pos + 8:pos + 8 + size]
        pos += 12 + size
    raw = zlib.decompress(stream)
    return list(raw[::3 * width + 1][:height])


def test_the_row_filter_is_built_wherever_there_is_a_compiler():
    """So that a silent fallback (Pillow's slower choice of filters) cannot go unnoticed."""
    if os.environ.get("LOADCURVE_NATIVE") == "0" or not (os.environ.get("CC")
                                                          or shutil.which("cc")):
        pytest.skip("no C compiler, or compiled code is switched off")
    assert ROWS is not None, png_encode.describe()


@needs_rows
def test_ties_keep_the_earlier_filter():
    """A flat image: in the first row sub and Paeth filter alike (nothing above), and Paeth,
    tried last, must not take sub's place; the second row's up gives zeros. Pillow's choice is
    [1, 2]; a rule of <= would give [4, 2]."""
    rgbx = np.zeros((2, 5, 4), np.uint8)
    rgbx[..., :3] = (200, 100, 50)
    got = png_encode.rgbx_png(rgbx.tobytes(), 5, 2, 100)
    assert filter_bytes(got, 5, 2) == [1, 2]
    assert got == pillow_png(rgbx, 100)


@needs_rows
def test_a_row_where_nothing_beats_none_keeps_none():
    """Values at the 128 boundary: unfiltered, each counts min(v, 256 - v) = 0 or 128; any
    filter of this row counts at least as much, so none stays (a <= rule would take up)."""
    rgbx = np.zeros((1, 4, 4), np.uint8)
    rgbx[0, :, :3] = [[0, 0, 0], [128, 128, 128], [0, 0, 0], [128, 128, 128]]
    got = png_encode.rgbx_png(rgbx.tobytes(), 4, 1, 100)
    assert filter_bytes(got, 4, 1) == [0]
    assert got == pillow_png(rgbx, 100)


WIDE = [16384, 16385, 21845, 21846, 30001]   # 4 x width past 64 KiB; a row past 64 KiB


@st.composite
def images(draw):
    wide = draw(st.booleans()) and draw(st.integers(0, 9)) == 0
    width = draw(st.sampled_from(WIDE)) if wide else draw(st.integers(1, 80))
    height = draw(st.integers(1, 3)) if wide else draw(st.integers(1, 60))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(["noise", "flat", "edges", "smooth", "blocks"]))
    shape = (height, width, 4)
    if kind == "noise":
        rgbx = rng.integers(0, 256, shape, dtype=np.uint8)
    elif kind == "flat":
        rgbx = np.broadcast_to(rng.integers(0, 256, 4, dtype=np.uint8), shape).copy()
    elif kind == "edges":       # values where min(v, 256 - v) turns, and the ends
        rgbx = rng.choice(np.array([0, 1, 127, 128, 129, 255], np.uint8), shape)
    elif kind == "smooth":      # gradients: sub, up and Paeth close to one another
        y, x = np.mgrid[0:height, 0:width]
        rgbx = np.stack([(x * 3 + y) % 256, (y * 5) % 256, (x + y) % 256, x % 256],
                        axis=-1).astype(np.uint8)
    else:                       # a chart: flat background, rectangles, a few noisy pixels
        rgbx = np.full(shape, 255, np.uint8)
        for _ in range(draw(st.integers(0, 6))):
            y0, x0 = rng.integers(0, height), rng.integers(0, width)
            rgbx[y0:y0 + rng.integers(1, 20), x0:x0 + rng.integers(1, 30)] = \
                rng.integers(0, 256, 4, dtype=np.uint8)
        spots = rng.random((height, width)) < 0.05
        rgbx[spots] = rng.integers(0, 256, (int(spots.sum()), 4), dtype=np.uint8)
    for y in range(1, height):      # some rows equal to the row above
        if rng.random() < 0.3:
            rgbx[y] = rgbx[y - 1]
    return rgbx


@needs_rows
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(images(), st.sampled_from([100, 72, 300]))
def test_the_same_bytes_as_pillow(rgbx, dpi):
    height, width = rgbx.shape[:2]
    assert png_encode.rgbx_png(rgbx.tobytes(), width, height, dpi) == pillow_png(rgbx, dpi)


@needs_rows
def test_wrong_sizes_are_refused():
    with pytest.raises(ValueError):
        ROWS.rows(bytes(4 * 6), 2, 2)
    with pytest.raises(ValueError):
        ROWS.rows(b"", 0, 0)


def _figure_png() -> bytes:
    fig = Figure(figsize=(2.4, 1.3))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.plot([0, 1, 2, 3], [3, 1, 4, 1], color="#1f77b4")
    ax.fill_between([0, 3], 0, 1, color="#ffcc00")
    ax.set_title("p99 latency")
    return render._png_bytes(fig)


def test_a_chart_png_is_the_same_without_the_compiled_filter(monkeypatch):
    compiled = _figure_png()
    monkeypatch.setattr(png_encode, "get", lambda: None)
    assert _figure_png() == compiled
    assert compiled.startswith(png_encode.SIGNATURE)


def test_an_unloadable_object_means_pillow(tmp_path, monkeypatch):
    broken = tmp_path / "broken.so"
    broken.write_bytes(b"not an ELF file")
    monkeypatch.setattr(png_encode.LOADER, "build", lambda: broken)
    monkeypatch.setattr(png_encode.LOADER, "loaded", [])
    assert png_encode.get() is None
    assert png_encode.describe().startswith("Pillow")
    assert png_encode.rgbx_png(bytes(4), 1, 1, 100) is None


def test_switched_off_means_pillow(monkeypatch):
    monkeypatch.setenv("LOADCURVE_NATIVE", "0")
    monkeypatch.setattr(png_encode.LOADER, "loaded", [])
    assert png_encode.get() is None
    assert "LOADCURVE_NATIVE=0" in png_encode.describe()
