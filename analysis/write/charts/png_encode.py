"""The og:image's RGB PNG written as Pillow writes it (`image.save(format="png",
compress_level=1, dpi=...)`), the same bytes, with the rows' filters chosen by compiled code
(_png_rows.c, built into .cache/native/ by native_build.py): Pillow's per-row choice
(ZipEncode.c) was ~70 % of the PNG's encoding instructions (docs/performance.md, issue 36).
zlib and the chunks stay in Python, with Pillow's parameters: level 1, memory level 9,
Z_FILTERED, IDAT chunks of max(64 KiB, 4 x width) bytes (ImageFile._save's buffer), a pHYs
chunk. `rgbx_png` returns None when the compiled chooser cannot be had (no compiler,
LOADCURVE_NATIVE=0): the caller then saves with Pillow."""
from __future__ import annotations

import ctypes
import struct
import zlib
from pathlib import Path

import numpy as np

from analysis import native_build

SOURCE = Path(__file__).with_name("_png_rows.c")
FLAGS = ["-O3", "-shared", "-fPIC"]
ABI = 1              # lc_png_abi() of the source this module was written against
PILLOW_BLOCK = 65536     # ImageFile.MAXBLOCK: Pillow's smallest encoder buffer, one IDAT each
SIGNATURE = b"\x89PNG\r\n\x1a\n"

_u8 = native_build.array_of(np.uint8)
_I64 = ctypes.c_int64


class RowFilter:
    def __init__(self, lib):
        native_build.check_abi(lib, "lc_png_abi", ABI, SOURCE)
        lib.lc_png_rows_rgbx.restype = _I64
        lib.lc_png_rows_rgbx.argtypes = [_u8, _I64, _I64, _u8, _u8]
        self.lib = lib

    def rows(self, rgbx, width: int, height: int) -> np.ndarray:
        """Per row the filter byte and the filtered RGB row (lc_png_rows_rgbx); `rgbx` any
        contiguous buffer (the canvas's memoryview is read in place)."""
        pixels = np.frombuffer(rgbx, np.uint8)
        if width <= 0 or height < 0 or pixels.size != 4 * width * height:
            raise ValueError(f"{pixels.size} bytes are not {width} x {height} RGBX pixels")
        out = np.empty(height * (3 * width + 1), np.uint8)
        work = np.empty(12 * width, np.uint8)
        if self.lib.lc_png_rows_rgbx(pixels, width, height, out, work) != out.size:
            raise RuntimeError("lc_png_rows_rgbx: inconsistent sizes")
        return out


def _self_check(rows: RowFilter, path: Path) -> None:
    # two pixels over two rows: row 0 keeps sub (|5| + |5| + ... beats none), row 1 up (zeros)
    pixels = bytes([10, 20, 30, 255, 15, 25, 35, 255] * 2)
    want = bytes([1, 10, 20, 30, 5, 5, 5, 2, 0, 0, 0, 0, 0, 0])
    if rows.rows(pixels, 2, 2).tobytes() != want:
        raise RuntimeError(f"{path.name} fails its self-check")


LOADER = native_build.Loader(SOURCE, FLAGS, "png-rows", RowFilter, _self_check, "Pillow",
                             "compiled PNG row filter")
get = LOADER.get
describe = LOADER.describe


def _chunk(tag: bytes, data: bytes | memoryview) -> bytes:
    return b"".join((struct.pack(">I", len(data)), tag, data,
                     struct.pack(">I", zlib.crc32(data, zlib.crc32(tag)))))


def rgbx_png(rgbx, width: int, height: int, dpi: int) -> bytes | None:
    """The RGB PNG of `rgbx` (4 bytes a pixel, the fourth ignored) as Pillow saves it at
    compress_level=1 with `dpi`; None when the compiled row filter is not available."""
    rows = get()
    if rows is None:
        return None
    filtered = rows.rows(rgbx, width, height)
    deflate = zlib.compressobj(1, zlib.DEFLATED, 15, 9, zlib.Z_FILTERED)
    stream = memoryview(deflate.compress(filtered) + deflate.flush())
    per_metre = int(dpi / 0.0254 + 0.5)
    block = max(PILLOW_BLOCK, 4 * width)
    parts = [SIGNATURE, _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)),
             _chunk(b"pHYs", struct.pack(">IIB", per_metre, per_metre, 1))]
    parts += [_chunk(b"IDAT", stream[i:i + block]) for i in range(0, len(stream), block)]
    parts.append(_chunk(b"IEND", b""))
    return b"".join(parts)


if __name__ == "__main__":      # `make`'s install step: build the object ahead of first use
    print(f"PNG row filter: {describe()}")
