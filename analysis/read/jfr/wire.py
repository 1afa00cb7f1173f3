"""The primitive encodings of JFR 2.x: varints and strings.

`Damage` is raised (or an IndexError escapes, when a value runs off the end of the bytes) and the
chunk reader turns either into "the data stops here" with the byte offset; neither reaches the
user as a traceback.
"""
from __future__ import annotations

import struct


class Damage(Exception):
    """Bytes that cannot be what the format says (a damaged or hostile recording)."""


# What damaged bytes can raise while decoding one event or checkpoint: the event is skipped
# with a warning (TypeError/ValueError: a damaged metadata event gave a field a wrong type).
DECODE_ERRORS = (Damage, IndexError, struct.error, UnicodeError, TypeError, ValueError,
                 OverflowError)


class StringRef:
    """A string stored in the java.lang.String constant pool (encoding 2), resolved later."""
    __slots__ = ("key",)

    def __init__(self, key: int):
        self.key = key

    def __repr__(self) -> str:
        return f"StringRef({self.key})"


# Strings longer than this are refused: no JFR string (a class name, a JVM flag, a thread name)
# comes near it, and a damaged length must not become a huge allocation.
MAX_STRING_BYTES = 1 << 20


def read_varint(data, pos: int):
    """Unsigned LEB128 as JFR writes it: up to 8 bytes of 7 bits, then a 9th of 8 bits.
    Unrolled: this is the reader's innermost function (timestamps take 5-6 bytes)."""
    b = data[pos]
    if b < 0x80:
        return b, pos + 1
    r = b & 0x7F
    b = data[pos + 1]
    if b < 0x80:
        return r | b << 7, pos + 2
    r |= (b & 0x7F) << 7
    b = data[pos + 2]
    if b < 0x80:
        return r | b << 14, pos + 3
    r |= (b & 0x7F) << 14
    b = data[pos + 3]
    if b < 0x80:
        return r | b << 21, pos + 4
    r |= (b & 0x7F) << 21
    b = data[pos + 4]
    if b < 0x80:
        return r | b << 28, pos + 5
    r |= (b & 0x7F) << 28
    b = data[pos + 5]
    if b < 0x80:
        return r | b << 35, pos + 6
    r |= (b & 0x7F) << 35
    b = data[pos + 6]
    if b < 0x80:
        return r | b << 42, pos + 7
    r |= (b & 0x7F) << 42
    b = data[pos + 7]
    if b < 0x80:
        return r | b << 49, pos + 8
    r |= (b & 0x7F) << 49
    return r | data[pos + 8] << 56, pos + 9


def _length(data, pos):
    n = data[pos]
    if n < 128:
        pos += 1
    else:
        n, pos = read_varint(data, pos)
    if n > MAX_STRING_BYTES or n > len(data) - pos:
        raise Damage(f"string claims {n} bytes, more than remain or than any JFR string holds")
    return n, pos


def read_string(data, pos: int):
    encoding = data[pos]
    pos += 1
    if encoding == 3:
        n, pos = _length(data, pos)
        return bytes(data[pos:pos + n]).decode("utf-8", "replace"), pos + n
    if encoding == 4:
        n, pos = _length(data, pos)
        raw = bytes(data[pos:pos + n])
        if raw.isascii():
            # Every char below 128 is a one-byte varint: the n bytes are the text (the JVM
            # writes most thread names and settings this way).
            return raw.decode("ascii"), pos + n
        chars = []
        for _ in range(n):
            c, pos = read_varint(data, pos)
            chars.append(c & 0xFFFF)
        return "".join(map(chr, chars)).encode("utf-16", "surrogatepass").decode(
            "utf-16", "replace"), pos
    if encoding == 5:
        n, pos = _length(data, pos)
        return bytes(data[pos:pos + n]).decode("latin-1"), pos + n
    if encoding == 1:
        return "", pos
    if encoding == 0:
        return None, pos
    if encoding == 2:
        key, pos = read_varint(data, pos)
        return StringRef(key), pos
    raise Damage(f"unknown string encoding {encoding}")


def skip_string(data, pos: int) -> int:
    """read_string(data, pos)[1] (the same checks, the same errors) without making the
    string: for the strings of constant-pool entries the summary steps over."""
    encoding = data[pos]
    pos += 1
    if encoding == 3 or encoding == 5:
        n, pos = _length(data, pos)
        return pos + n
    if encoding == 4:
        n, pos = _length(data, pos)
        if bytes(data[pos:pos + n]).isascii():
            return pos + n
        for _ in range(n):
            pos = read_varint(data, pos)[1]
        return pos
    if encoding == 0 or encoding == 1:
        return pos
    if encoding == 2:
        return read_varint(data, pos)[1]
    raise Damage(f"unknown string encoding {encoding}")
