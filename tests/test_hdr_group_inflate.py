"""A group's payloads base64-decoded and inflated in one compiled call (_inflate.c, ISA-L):
the same bytes as one call a line, refusals left to that path (so its errors stand), its
room bounded, and the goldens byte-identical with it and without it."""
from __future__ import annotations

import base64
import struct
import zlib

import numpy as np
import pytest

from analysis.read.hdr import batch, group_inflate, native
from analysis.read.hdr.histogram import Histogram, layout_for
from analysis.read.hdr.log import read_hlog
from analysis.read.hdr.payload import SMALL_COMPRESSED, V2_COMPRESSED, V2_COOKIE
from tests.helpers import assert_goldens_in_fresh_interpreter, encode, log_line, write_log

INFLATER = group_inflate.get()
needs_inflater = pytest.mark.skipif(INFLATER is None or native.get() is None,
                                    reason=group_inflate.describe())


def _histogram(seed: int) -> Histogram:
    rng = np.random.default_rng(seed)
    return Histogram.from_values(layout_for(1, 3_600_000_000, 3),
                                 rng.lognormal(13, 1.5, 300).astype(np.int64) + 1)


def _payload(body: bytes, declared: int | None = None, after: bytes = b"",
             level: int = 6, dictionary: bytes | None = None) -> bytes:
    """A compressed V2 payload of a 40-byte header and `body` (declared: the header's payload
    length, default the body's), `after` appended to its zlib stream."""
    layout = layout_for(1, 3_600_000_000, 3)
    raw = struct.pack(">iiiiqqd", V2_COOKIE | 0x10, len(body) if declared is None else declared,
                      0, layout.significant_digits, layout.lowest_discernible_value,
                      layout.highest_trackable_value, 1.0) + body
    if dictionary is None:
        squeezed = zlib.compress(raw, level)
    else:
        packer = zlib.compressobj(level, zdict=dictionary)
        squeezed = packer.compress(raw) + packer.flush()
    squeezed += after
    return struct.pack(">ii", V2_COMPRESSED | 0x10, len(squeezed)) + squeezed


def _texts(raws) -> list[bytes]:
    return [base64.b64encode(r) for r in raws]


@needs_inflater
def test_a_group_inflates_to_the_bytes_of_one_call_a_line():
    raws = [encode(_histogram(seed)) for seed in range(40)]
    texts = _texts(raws)
    got = INFLATER.inflate(texts, SMALL_COMPRESSED)
    assert got is not None
    joined, offsets = got
    each = [zlib.decompress(r[8:]) for r in raws]
    assert offsets.tolist() == np.concatenate([[0], np.cumsum([len(e) for e in each])]).tolist()
    assert bytes(joined) == b"".join(each)
    # str texts (a log read as latin-1 text) the same
    assert bytes(INFLATER.inflate([t.decode() for t in texts], SMALL_COMPRESSED)[0]) == \
        bytes(joined)


@needs_inflater
def test_threads_inflate_groups_at_once_each_into_its_own_room():
    """The call releases the GIL: two threads may inflate at once, each into its own room."""
    from concurrent.futures import ThreadPoolExecutor
    groups = [_texts([encode(_histogram(10 * g + k)) for k in range(10)]) for g in range(8)]
    alone = [bytes(INFLATER.inflate(texts, SMALL_COMPRESSED)[0]) for texts in groups]
    with ThreadPoolExecutor(2) as pool:
        together = list(pool.map(lambda t: bytes(INFLATER.inflate(t, SMALL_COMPRESSED)[0]),
                                 groups * 4))
    assert together == alone * 4


@needs_inflater
def test_too_little_room_is_offered_again_larger(monkeypatch):
    monkeypatch.setattr(group_inflate, "FIRST_ROOM", 0)
    fresh = group_inflate.GroupInflater(INFLATER.lib)
    raws = [encode(_histogram(seed)) for seed in range(5)]
    joined, _ = fresh.inflate(_texts(raws), SMALL_COMPRESSED)
    assert bytes(joined) == b"".join(zlib.decompress(r[8:]) for r in raws)


@needs_inflater
def test_a_group_past_its_most_bytes_is_refused(monkeypatch):
    raws = [encode(_histogram(seed)) for seed in range(5)]
    inflated = sum(len(zlib.decompress(r[8:])) for r in raws)
    monkeypatch.setattr(group_inflate, "MOST_BYTES", inflated - 1)
    assert group_inflate.GroupInflater(INFLATER.lib).inflate(_texts(raws), SMALL_COMPRESSED) \
        is None
    monkeypatch.setattr(group_inflate, "MOST_BYTES", inflated)
    assert group_inflate.GroupInflater(INFLATER.lib).inflate(_texts(raws), SMALL_COMPRESSED)


BODY = bytes(range(1, 100)) + b"\x02"


@needs_inflater
@pytest.mark.parametrize("text", [
    base64.b64encode(_payload(BODY)) + b"\n",                       # not base64 alone
    base64.b64encode(_payload(BODY))[:-4] + b" " + base64.b64encode(_payload(BODY))[-3:],
    base64.b64encode(_payload(BODY)).rstrip(b"="),                  # padding left out
    base64.b64encode(_payload(BODY, after=b"\0\0")),                # bytes after the stream
    base64.b64encode(_payload(BODY, dictionary=b"\x02" * 64)),      # a preset dictionary
    base64.b64encode(_payload(BODY, declared=10)),                  # more than it declares
    base64.b64encode(_payload(BODY)[:-3]),                          # a stream cut short
    base64.b64encode(_payload(BODY)[:8] + b"\x78\x9c\x00"),
    base64.b64encode(struct.pack(">ii", V2_COMPRESSED, 2) + b"\x78\x9c"),
    base64.b64encode(b"\x1c\x84\x93\x02" + _payload(BODY)[4:]),     # a V1 cookie
], ids=["line-end", "space", "unpadded", "trailing", "dictionary", "over-declared", "cut",
        "empty-stream", "short", "v1"])
def test_anything_unusual_is_refused_for_the_group(text):
    good = base64.b64encode(_payload(BODY))
    assert INFLATER.inflate([good], SMALL_COMPRESSED) is not None
    assert INFLATER.inflate([good, text, good], SMALL_COMPRESSED) is None


ALPHABET = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


@needs_inflater
@pytest.mark.parametrize("padding", [1, 2])
def test_base64_with_bits_left_over_is_refused(padding):
    text = next(t for t in (bytearray(base64.b64encode(_payload(BODY + b"\x02" * k)))
                            for k in range(12)) if len(t) - len(t.rstrip(b"=")) == padding)
    last = len(text) - padding - 1        # the character whose low bits are left over
    text[last] = ALPHABET[ALPHABET.index(text[last]) | 1]
    assert INFLATER.inflate([bytes(text)], SMALL_COMPRESSED) is None


@needs_inflater
def test_the_line_path_takes_a_refused_group_with_its_errors(tmp_path, monkeypatch):
    """A group the compiled pass refuses reads as it does with no compiled pass at all."""
    h = _histogram(1)
    lines = [log_line(encode(h), float(k)) for k in range(6)]
    lines[3] = log_line(_payload(BODY, after=b"junk"), 3.0)
    lines[4] = lines[4][:-8] + "!!!!" + lines[4][-4:]
    path = tmp_path / "odd.hlog"
    write_log(path, lines)
    calls = []
    real = INFLATER.inflate
    monkeypatch.setattr(INFLATER, "inflate", lambda *a: calls.append(1) or real(*a))
    compiled = read_hlog(path)
    assert calls
    monkeypatch.setattr(group_inflate, "get", lambda: None)
    by_line = read_hlog(path)
    assert compiled.warnings == by_line.warnings and compiled.warnings
    assert [iv.line for iv in compiled.intervals] == [iv.line for iv in by_line.intervals]
    assert [iv.histogram.total_count for iv in compiled.intervals] == \
        [iv.histogram.total_count for iv in by_line.intervals]


@needs_inflater
def test_a_plain_group_takes_one_compiled_call_and_no_call_a_line(monkeypatch):
    items = [(k + 1, None, float(k), 1.0, 0, 1000, 0.0, base64.b64encode(encode(_histogram(k))))
             for k in range(30)]
    calls = []
    real = INFLATER.inflate
    monkeypatch.setattr(INFLATER, "inflate", lambda *a: calls.append(1) or real(*a))
    monkeypatch.setattr(batch, "_inflate_each", lambda *a: pytest.fail("a call a line"))
    compiled = batch.inflate_items(items)
    assert calls == [1]
    monkeypatch.undo()
    monkeypatch.setattr(group_inflate, "get", lambda: None)
    by_line = batch.inflate_items(items)
    assert bytes(compiled[3][0]) == bytes(by_line[3][0])
    assert compiled[3][1].tolist() == by_line[3][1].tolist()
    assert compiled[0][0].layout == by_line[0][0].layout


@needs_inflater
def test_a_large_log_kept_undecoded_keeps_its_raw_payloads(tmp_path, monkeypatch):
    """read_hlog past KEEP_DECODED_ENTRIES keeps each interval's raw payload to decode later:
    the compiled pass keeps none, so they are decoded from the line's text again."""
    import analysis.read.hdr.log as log
    monkeypatch.setattr(log, "KEEP_DECODED_ENTRIES", 0)
    path = tmp_path / "big.hlog"
    write_log(path, [log_line(encode(_histogram(k)), float(k)) for k in range(4)])
    read = read_hlog(path)
    assert [iv.histogram.total_count for iv in read.intervals] == [300] * 4


def test_unbuildable_means_a_call_a_line(tmp_path, monkeypatch):
    """A machine without libisal-dev: the object does not link, and the lines are inflated
    one call each."""
    monkeypatch.setattr(group_inflate.native_build, "CACHE", tmp_path)
    loader = group_inflate.native_build.Loader(
        group_inflate.SOURCE, group_inflate.FLAGS, "hdr-inflate-test",
        group_inflate.GroupInflater, group_inflate._self_check, "a call a line", "inflater",
        ("-lno_such_library_anywhere",))
    assert loader.get() is None and "no inflater" in loader.describe()


GROUP_INFLATER_OFF = """
from analysis.read.hdr import group_inflate
group_inflate.LOADER.loaded.append((None, "switched off"))
assert group_inflate.get() is None
"""


@pytest.mark.slow
def test_goldens_without_the_group_inflater(tmp_path):
    assert_goldens_in_fresh_interpreter(tmp_path, GROUP_INFLATER_OFF)


GROUP_INFLATER_ON = """
from analysis.read.hdr import group_inflate
assert group_inflate.get() is not None, group_inflate.describe()
"""


@needs_inflater
@pytest.mark.slow
def test_goldens_with_the_group_inflater(tmp_path):
    assert_goldens_in_fresh_interpreter(tmp_path, GROUP_INFLATER_ON)
