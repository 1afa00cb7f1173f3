"""The PNG's text drawn from remembered glyph bitmaps (issue 36).

matplotlib's Agg renderer lays out and rasterises every text it draws with FreeType, at each
draw: `set_text` (glyph loading with the auto-hinter) and `draw_glyphs_to_bitmap`. A build's
PNGs draw the same texts again and again (tick labels, axis labels, legend entries, in every
run's og:image), and those two calls were about a fifth of a PNG's drawing. The bitmap FreeType
makes depends only on the text, the font files, the size, the resolution, the hinting and
anti-aliasing, so a worker keeps each one it made and lays the same bitmap down the same way
(`draw_text_image`, at the same rounded pixel): the PNG's bytes are the same
(tests/test_png_text.py). What FreeType warned of while making a bitmap (a glyph the font
lacks) is warned again each time it is laid down, so render_job reports it for every chart.
"""
from __future__ import annotations

import warnings
import weakref
from math import cos, radians, sin

import matplotlib as mpl
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg, get_hinting_flag
from matplotlib.font_manager import fontManager, get_font
from matplotlib.text import Text

# A worker's texts: run titles differ from run to run, so the memory is bounded (a bitmap is a
# few KB; tick and axis labels, the recurring ones, are made again at once after a clear).
MAX_BITMAPS = 4000
_BITMAPS: dict[tuple, tuple[np.ndarray, float, int, int, tuple]] = {}


def _bitmap(s: str, prop, dpi: float, antialiased) -> tuple[np.ndarray, float, int, int, tuple]:
    """(FreeType's bitmap of `s`, the font's descent, the bitmap's offset, its warnings), as
    RendererAgg's draw_text makes them (its _prepare_font, set_text, draw_glyphs_to_bitmap)."""
    paths = tuple(fontManager._find_fonts_by_props(prop))
    size = prop.get_size_in_points()
    flags = get_hinting_flag()
    key = (s, paths, size, dpi, flags, bool(antialiased), mpl.rcParams["text.hinting_factor"],
           mpl.rcParams["text.kerning_factor"])
    found = _BITMAPS.get(key)
    if found is None:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            font = get_font(paths)
            font.clear()
            font.set_size(size, dpi)
            font.set_text(s, 0, flags=flags)
            font.draw_glyphs_to_bitmap(antialiased=antialiased)
        xo, yo = font.get_bitmap_offset()
        found = (np.array(font), font.get_descent() / 64.0, xo, yo,
                 tuple((str(w.message), w.category) for w in caught))
        if len(_BITMAPS) >= MAX_BITMAPS:
            _BITMAPS.clear()
        _BITMAPS[key] = found
    return found


class TextBitmapRenderer(RendererAgg):
    """RendererAgg whose plain texts come from the remembered bitmaps; math text as before."""

    def draw_text(self, gc, x, y, s, prop, angle, ismath=False, mtext=None):
        if ismath:
            return super().draw_text(gc, x, y, s, prop, angle, ismath, mtext)
        image, d, xo, yo, notes = _bitmap(s, prop, self.dpi, gc.get_antialiased())
        for message, category in notes:
            warnings.warn(message, category, stacklevel=2)
        # RendererAgg.draw_text's placement: the descent turned with the text, to whole pixels
        x = round(x + xo / 64.0 + d * sin(radians(angle)))
        y = round(y + yo / 64.0 + d * cos(radians(angle)))
        self._renderer.draw_text_image(image, x, y + 1, angle, gc)


class TextBitmapCanvas(FigureCanvasAgg):
    """FigureCanvasAgg drawing with TextBitmapRenderer (kept while the size and dpi hold)."""

    def get_renderer(self):
        _LAYOUTS.clear()    # (a draw begins here: the layouts it remembers are its own)
        w, h = self.figure.bbox.size
        key = w, h, self.figure.dpi
        if self._lastKey != key:
            self.renderer = TextBitmapRenderer(w, h, self.figure.dpi)
            self._lastKey = key
        return self.renderer


# A text's layout (Text._get_layout: its lines' sizes from the font's metrics, its box turned and
# aligned), remembered within one draw of a TextBitmapCanvas. An og:image's draw laid out ~80
# texts, most of them several times (the legend's offset boxes ask for each of its texts' size
# six times a draw, the axes for their tick labels' twice), and each layout paid matplotlib's
# metrics cache (a copy and hashes of the font properties a line) and a few small numpy
# transforms: ~10 % of the PNG. The layout depends only on what the key holds: the text, its
# font properties (by their hash, as matplotlib's own metrics cache compares them), math
# parsing, line spacing, alignments, rotation and its mode, the figure's dpi and the renderer.
# Not remembered: a text that wraps or whose rotation follows its transform (both depend on
# its position), TeX, a Text subclass, another renderer. The memory is cleared at each draw
# (get_renderer), so the rcParams in force and the font files found are those of that draw.
# Callers read the returned Bbox, never change it; each gets its own copy all the same.
_LAYOUTS: dict[tuple, tuple] = {}
_layout = Text._get_layout      # matplotlib's own


def _remembered_layout(text: Text, renderer):
    if type(renderer) is not TextBitmapRenderer or type(text) is not Text or text._wrap \
            or text._transform_rotates_text or text._usetex:
        return _layout(text, renderer)
    key = (text._text, hash(text._fontproperties), text._parse_math, text._linespacing,
           text._multialignment, text._horizontalalignment, text._verticalalignment,
           text._rotation, text._rotation_mode, text.get_figure(root=True).dpi,
           weakref.ref(renderer))
    found = _LAYOUTS.get(key)
    if found is None:
        found = _LAYOUTS[key] = _layout(text, renderer)
    bbox, lines, descent = found
    return bbox.frozen(), list(lines), descent


Text._get_layout = _remembered_layout
