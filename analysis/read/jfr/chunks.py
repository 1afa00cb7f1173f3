"""Finding the chunks of a recording: a `.jfr` file, a `.jfr.gz`, or a repository folder.

A recording is chunks back to back; each starts with a 68-byte header:

    offset  0  magic "FLR\\0"          offset 32  start time, epoch ns
            4  major, minor (u16)             40  duration, ns
            8  chunk size (i64)               48  start time, ticks
           16  last checkpoint offset         56  ticks per second
           24  metadata offset                64  file state: 0 finished, else in progress
                                              67  flags: 1 compressed ints, 2 final chunk

Offsets are relative to the chunk start, big-endian. Format 1.0 (JDK 9 and 10) has the same
layout (bytes 64-67 are one "features" int whose bit 0 says integers are LEB128-compressed) and
the same encoding when that bit is set, which is how the JDK's own `jfr` tool reads it; its
event types are named `com.oracle.jdk.*` (metadata.py maps them to `jdk.*`). A 1.0 chunk with
fixed-width integers is refused. A JVM writing a chunk updates size and
offsets at each flush, so a chunk whose file state is not 0 (the JVM died) or whose size runs
past the end of the file (the copy was cut) is read as far as its bytes go. Only one chunk is
held in memory at a time.
"""
from __future__ import annotations

import io
import os
import struct
import zlib
from pathlib import Path

from analysis.errors import JfrError

HEADER = struct.Struct(">4sHHqqqqqqqBBBB")
HEADER_SIZE = HEADER.size  # 68
MAGIC = b"FLR\0"
FLAG_COMPRESSED_INTS = 1
FLAG_COMPRESSED_TICKS = 4

# One chunk is read into memory at once. JVMs rotate chunks at 12 MB by default (maxchunksize);
# a header that claims more than this is refused rather than allocated.
MAX_CHUNK_BYTES = 256 << 20


class ChunkHeader:
    # (plain classes, not dataclasses: see metadata._Fields)
    __slots__ = ("major", "minor", "size", "constant_pool_offset", "metadata_offset",
                 "start_nanos", "duration_nanos", "start_ticks", "ticks_per_second",
                 "file_state", "flags")

    def __init__(self, major: int, minor: int, size: int, constant_pool_offset: int,
                 metadata_offset: int, start_nanos: int, duration_nanos: int, start_ticks: int,
                 ticks_per_second: int, file_state: int, flags: int):
        self.major, self.minor, self.size = major, minor, size
        self.constant_pool_offset, self.metadata_offset = constant_pool_offset, metadata_offset
        self.start_nanos, self.duration_nanos = start_nanos, duration_nanos
        self.start_ticks, self.ticks_per_second = start_ticks, ticks_per_second
        self.file_state, self.flags = file_state, flags

    @property
    def finished(self) -> bool:
        return self.file_state == 0

    def __repr__(self):
        return "ChunkHeader(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__) \
            + ")"


class Chunk:
    __slots__ = ("path", "offset", "header", "data", "complete")

    def __init__(self, path: str, offset: int, header: ChunkHeader, data: bytes,
                 complete: bool):
        self.path = path            # the file it came from (for messages)
        self.offset = offset        # absolute byte offset of the chunk in that file
        self.header = header
        self.data = data            # the chunk's bytes, header included, as far as they exist
        self.complete = complete    # all `header.size` bytes present, the JVM finished it


def parse_header(raw: bytes, path: str, offset: int) -> ChunkHeader:
    if len(raw) < HEADER_SIZE:
        raise JfrError(f"chunk header cut short ({len(raw)} of {HEADER_SIZE} bytes)",
                       path=path, offset=offset)
    fields = HEADER.unpack_from(raw)
    if fields[0] != MAGIC:
        raise JfrError("not a JFR recording (no FLR magic)", path=path, offset=offset,
                       hint="give a .jfr, .jfr.gz, a JFR repository folder or a "
                            "`jfr print --json` export")
    h = ChunkHeader(fields[1], fields[2], fields[3], fields[4], fields[5], fields[6], fields[7],
                    fields[8], fields[9], fields[10], fields[13])
    if h.major not in (1, 2):
        raise JfrError(f"JFR format {h.major}.{h.minor} is not supported", path=path,
                       offset=offset, hint="recordings from JDK 9 and later (formats 1.x and "
                       "2.x) read; convert older ones with JDK Mission Control")
    if h.major == 1 and not h.flags & FLAG_COMPRESSED_INTS:
        raise JfrError(f"JFR format {h.major}.{h.minor} with uncompressed integers is not "
                       "supported", path=path, offset=offset,
                       hint="export it with `jfr print --json` and give the .json")
    if h.ticks_per_second <= 0:
        raise JfrError(f"chunk header gives {h.ticks_per_second} ticks per second",
                       path=path, offset=offset)
    return h


def read_chunks_from_stream(stream, path: str, limit_total: int | None, offset: int = 0):
    """Yield the chunks of one file-like object, stopping after the first incomplete one
    (`offset`: where in the file the stream is, for messages)."""
    while True:
        raw = stream.read(HEADER_SIZE)
        if not raw:
            return
        header = parse_header(raw, path, offset)
        claimed = header.size
        if claimed > MAX_CHUNK_BYTES:
            raise JfrError(f"chunk header claims {claimed} bytes, more than the "
                           f"{MAX_CHUNK_BYTES >> 20} MiB this reader holds in memory",
                           path=path, offset=offset)
        if header.finished and claimed >= HEADER_SIZE:
            if type(stream) is io.BufferedReader:
                # A plain file: the chunk read whole, header again included, so that its bytes
                # are copied once (a header and body joined are a second copy of ~13 MB).
                stream.seek(-HEADER_SIZE, io.SEEK_CUR)
                data = stream.read(claimed)
            else:
                data = raw + stream.read(claimed - HEADER_SIZE)
            complete = len(data) == claimed
        else:
            # An unfinished chunk: the JVM died or is still writing; read what is there.
            body = stream.read(MAX_CHUNK_BYTES - HEADER_SIZE + 1)
            if len(body) > MAX_CHUNK_BYTES - HEADER_SIZE:
                raise JfrError(f"unfinished chunk larger than {MAX_CHUNK_BYTES >> 20} MiB",
                               path=path, offset=offset)
            data = raw + body
            complete = False
        yield Chunk(path, offset, header, data, complete)
        if not complete:
            return
        offset += len(data)
        if limit_total is not None and offset > limit_total:
            raise JfrError(f"decompresses to more than {limit_total >> 30} GiB", path=path,
                           hint="a recording that large is not a benchmark's; check the file")


# A .jfr.gz that inflates past this is refused (a JFR recording compresses 3-10x; a benchmark's
# recording is tens of MB).
MAX_DECOMPRESSED_BYTES = 16 << 30


def iter_chunks(path: str | os.PathLike):
    """Yield every chunk of a .jfr, .jfr.gz or repository folder, in recording order."""
    p = Path(path)
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.suffix == ".jfr" and f.is_file())
        if not files:
            # The repository root: the JVM makes one sub-folder per process in it.
            subs = sorted(d for d in p.iterdir() if d.is_dir() and any(d.glob("*.jfr")))
            if len(subs) == 1:
                yield from iter_chunks(subs[0])
                return
            raise JfrError("folder holds no .jfr chunk files" if not subs else
                           f"folder holds {len(subs)} JVMs' chunk folders", path=p,
                           hint="give one JFR repository folder (one JVM's chunk files)")
        for f in files:
            yield from iter_chunks(f)
        return
    with open(p, "rb") as f:
        magic = f.read(2)
        f.seek(0)
        if magic == b"\x1f\x8b":
            yield from read_chunks_from_stream(_Gunzip(f, str(p)), str(p),
                                                MAX_DECOMPRESSED_BYTES)
        else:
            yield from read_chunks_from_stream(f, str(p), None)


class _Gunzip:
    """Streaming gunzip with `read(n)` that, unlike gzip.GzipFile, returns the bytes inflated so
    far when the compressed file is cut short (so a cut .jfr.gz reads like a cut .jfr). Each
    inflate step is capped, so a small file that inflates hugely never sits in memory at once."""

    BLOCK = 1 << 16
    MAX_OUT = 1 << 20

    def __init__(self, raw, path: str):
        self.raw = raw
        self.path = path
        self.inflater = zlib.decompressobj(wbits=31)
        self.tail = b""
        self.pending = bytearray()
        self.eof = False

    def read(self, n: int) -> bytes:
        while len(self.pending) < n and not self.eof:
            data_in = self.tail or self.raw.read(self.BLOCK)
            if not data_in:
                self.eof = True  # cut short or ended: what was inflated is all there is
                break
            try:
                self.pending += self.inflater.decompress(data_in, self.MAX_OUT)
            except zlib.error as exc:
                raise JfrError(f"gzip data is damaged: {exc}", path=self.path) from None
            self.tail = self.inflater.unconsumed_tail
            if self.inflater.eof:
                # A gzip member ended. Another may follow (`cat a.gz b.gz`); anything else
                # (zero padding) ends the data, as gzip(1) treats it.
                rest = self.inflater.unused_data or self.raw.read(self.BLOCK)
                self.inflater = zlib.decompressobj(wbits=31)
                if rest[:2] == b"\x1f\x8b":
                    self.tail = rest
                else:
                    self.tail = b""
                    self.eof = True
        out = bytes(self.pending[:n])
        del self.pending[:n]
        return out
