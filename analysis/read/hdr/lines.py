"""The `.hlog` line parser: header comments, tags and timestamps, as HistogramLogReader reads
them, one warning per bad line; the payload text is left for the payload codec."""
from __future__ import annotations

import io
import math
import os
import stat
from dataclasses import dataclass, field

from analysis.errors import HlogError
from analysis.read.hdr.histogram import java_long
from analysis.read.hdr.payload import histogram_from_raw


# Timestamps whose millisecond value does not fit in a Java long are not times (a fuzzer's
# 1e20, a StartTime of 1e300): Java saturates them silently; we skip the line and say so.
MAX_ABS_SECONDS = 9.2e15


@dataclass
class Interval:
    """One histogram line of a log."""

    line: int                 # 1-based line number in the file
    tag: str | None           # None for untagged lines
    start_s: float            # seconds since the log's start time (HistogramLogProcessor's axis)
    length_s: float           # the interval length written in the line
    start_ms: int             # Java's getStartTimeStamp(): absolute start, ms since the epoch
    end_ms: int               # Java's getEndTimeStamp()
    log_start_s: float        # the reader's start time (s since epoch) when this line was read
    _histogram: object = field(default=None, repr=False)
    _raw: bytes | None = field(default=None, repr=False)
    total_count: int = 0
    is_double: bool = False

    @property
    def histogram(self):
        """The interval's Histogram (DoubleHistogram for DHIST payloads)."""
        if self._histogram is not None:
            return self._histogram
        return histogram_from_raw(self._raw)

    @property
    def end_s(self) -> float:
        """End of the interval on the start_s axis: HistogramLogProcessor's time column."""
        return self.end_ms / 1000.0 - self.log_start_s


def interval_matches(iv: Interval, tag, start_s: float | None, end_s: float | None) -> bool:
    """Whether `iv` has `tag` and starts in [start_s, end_s] (HistogramLogProcessor's
    -tag/-start/-end test; None leaves that side open)."""
    return (iv.tag == tag and (start_s is None or iv.start_s >= start_s)
            and (end_s is None or iv.start_s <= end_s))


def _number(text: str) -> float | None:
    """A finite decimal number as Java's Scanner.nextDouble reads it, else None."""
    try:
        value = float(text)
    except ValueError:
        return None
    if not math.isfinite(value) or "_" in text:  # Python also accepts 1_000, nan, inf
        return None
    return value


@dataclass
class HeaderState:
    """HistogramLogReader's start/base time state."""

    start_time: float = 0.0
    observed_start: bool = False
    base_time: float = 0.0
    observed_base: bool = False
    explicit_start: bool = False     # a #[StartTime] line was seen (not deduced)
    # A #[BaseTime] but no #[StartTime] before the first interval (see line_item).
    base_without_start: bool = False
    # The start time of such a log: Java's (False), or its first interval's absolute start
    # (True: an axis that -start/-end and per-interval times can use).
    axis_from_first_interval: bool = False
    # Whether some line was a histogram line or a log header: until then, warnings about lines
    # that are not interval-log lines are held here (a README given as a log is one error, not a
    # warning per line); the first recognised line releases them.
    recognised: bool = False
    held: list = field(default_factory=list)
    # Per tag: the latest timestamp so far, and the lines of intervals with a negative
    # timestamp and of intervals that start before one above them (time_order_warnings).
    latest_timestamp: dict = field(default_factory=dict)
    negative: dict = field(default_factory=dict)
    backwards: dict = field(default_factory=dict)
    # The last line, when the file ends inside it (0: it ends with a line end): a log still
    # being written (a run still recording) ends so (read_hlog's warning).
    unterminated_line: int = 0


def recognise(state: HeaderState, warnings: list[str]) -> None:
    if not state.recognised:
        state.recognised = True
        warnings.extend(state.held)
        state.held.clear()


def _line_problem(state: HeaderState, warnings: list[str], message: str) -> None:
    """A line that is not an interval-log line: reported now, or held until one is."""
    (warnings if state.recognised else state.held).append(message)


def time_order_warnings(path: str, state: HeaderState, kept: set[int]) -> list[str]:
    """One warning per tag whose intervals (those of the lines in `kept`: a line whose payload
    did not decode has its own warning) have negative or backward-going timestamps:
    HistogramLogProcessor prints such intervals without a word; they are kept in file order."""
    out = []
    for table, what in ((state.negative, "have a negative timestamp"),
                        (state.backwards, "start before an interval above them (times go "
                                          "backwards)")):
        for tag in sorted(table, key=lambda t: (t is not None, t or "")):
            lines = [n for n in table[tag] if n in kept]
            if lines:
                name = "untagged" if tag is None else f"tag {tag!r}"
                out.append(f"{path}:{lines[0]}: {len(lines)} interval(s) ({name}) {what}; kept "
                           "in file order")
    return out


def nothing_read_error(path: str, state: HeaderState, warnings: list[str]) -> HlogError:
    """The error for a file that gave no usable interval: not an interval log at all (one
    error, naming its first line), or one whose lines were all reported as warnings."""
    if not state.recognised:
        first = state.held[0] if state.held else None
        detail = ""
        if first and first.startswith(path + ":"):
            detail = f"; line {first[len(path) + 1:]}".removesuffix("; line skipped")
        return HlogError(f"not an HdrHistogram interval log: no histogram line or log header "
                         f"in it{detail}", path=path,
                         hint="give an .hlog written by HdrHistogram's HistogramLogWriter")
    return HlogError("no usable histogram interval in the file"
                     + (f" ({len(warnings)} problem(s) reported)" if warnings else ""),
                     path=path, hint="is this an HdrHistogram interval log?")


def numbered_lines(lines, state: HeaderState):
    """(line number, line) of `lines`; of a text file, noting in `state` a last line without a
    line end (a list of lines has none: nothing to note)."""
    for n, line in enumerate(lines, start=1):
        if not line.endswith("\n") and isinstance(lines, io.TextIOBase):
            state.unterminated_line = n
        yield n, line


def iter_lines(lines, path: str, warnings: list[str], state: HeaderState):
    """Yield (line_no, tag, start_s_offset, length, start_ms, end_ms, log_start, payload_text)
    for every well-formed histogram line of `lines`, updating `state` like Java's reader."""
    for line_no, line in numbered_lines(lines, state):
        item = line_item(line_no, line, path, warnings, state)
        if item is not None:
            yield item


def line_item(line_no: int, line: str, path: str, warnings: list[str], state: HeaderState):
    """iter_lines' item for one line (None for a line that is not a well-formed histogram
    line), updating `state` and adding any warning to `warnings`."""
    stripped = line.strip()
    if not stripped:
        return None
    if stripped.startswith("#"):
        words = stripped.split()
        if words[0] in ("#[StartTime:", "#[BaseTime:"):
            recognise(state, warnings)
            which = words[0][2:-1]
            value = _number(words[1].rstrip(",")) if len(words) > 1 else None
            if value is None or abs(value) >= MAX_ABS_SECONDS:
                shown = words[1] if len(words) > 1 else "(nothing)"
                warnings.append(f"{path}:{line_no}: {which} {shown} is not a usable time "
                                "in seconds; line ignored")
                return None
            if which == "StartTime":
                state.start_time, state.observed_start = value, True
                state.explicit_start = True
            else:
                state.base_time, state.observed_base = value, True
        return None
    if stripped.startswith('"StartTimestamp"'):
        recognise(state, warnings)
        return None
    fields = stripped.split(",")
    tag = None
    if fields[0].startswith("Tag="):
        tag = fields[0][4:]
        fields = fields[1:]
    if len(fields) < 4:
        _line_problem(state, warnings, f"{path}:{line_no}: expected "
                      f"'start,length,max,payload', found {len(fields)} field(s); line "
                      "skipped")
        return None
    # Plain finite numbers (every line of a normal log) are taken at once; anything else
    # goes through _number's exact rules, one field at a time.
    try:
        timestamp, length, interval_max = float(fields[0]), float(fields[1]), float(fields[2])
        plain = (math.isfinite(timestamp + length + interval_max) and "_" not in fields[0]
                 and "_" not in fields[1] and "_" not in fields[2])
    except ValueError:
        plain = False
    if not plain:
        timestamp, length, interval_max = (_number(f) for f in fields[:3])
        if timestamp is None or length is None or interval_max is None:
            bad = next(f.strip() for f, v in zip(fields[:3], (timestamp, length, interval_max))
                       if v is None)
            _line_problem(state, warnings, f"{path}:{line_no}: {bad[:40]!r} is not a "
                          "finite number; line skipped")
            return None
    recognise(state, warnings)
    payload = fields[3].split()      # (split() also drops surrounding whitespace)
    if not payload:
        warnings.append(f"{path}:{line_no}: empty histogram payload; line skipped")
        return None
    if abs(timestamp) >= MAX_ABS_SECONDS or abs(length) >= MAX_ABS_SECONDS:
        warnings.append(f"{path}:{line_no}: timestamp {fields[0].strip()[:40]} s is out of "
                        "any plausible range; line skipped")
        return None
    if not state.observed_start:
        state.start_time = timestamp
        if state.observed_base:
            # Java takes the bare relative timestamp as the start time: every offset is then
            # about BaseTime (a -start/-end window selects nothing or everything), and
            # HistogramLogProcessor prints absolute times, with no StartTime line when that
            # timestamp is 0. The other axis starts at the first interval's absolute start.
            state.base_without_start = True
            if state.axis_from_first_interval:
                state.start_time += state.base_time
        state.observed_start = True
    if not state.observed_base:
        # Java: a timestamp more than a year before StartTime means relative timestamps.
        state.base_time = (state.start_time
                           if timestamp < state.start_time - (365 * 24 * 3600.0) else 0.0)
        state.observed_base = True
    if timestamp < 0:
        state.negative.setdefault(tag, []).append(line_no)
    latest = state.latest_timestamp.get(tag)
    if latest is not None and timestamp < latest:
        state.backwards.setdefault(tag, []).append(line_no)
    else:
        state.latest_timestamp[tag] = timestamp
    absolute_start = timestamp + state.base_time
    offset = absolute_start - state.start_time
    absolute_end = absolute_start + length
    return (line_no, tag, offset, length, java_long(absolute_start * 1000.0),
            java_long(absolute_end * 1000.0), state.start_time, payload[0])


def open_lines(path: str, text):
    if text is not None:
        return None, text.splitlines()
    try:
        # Opened without blocking and checked once open: a FIFO or device named as the input
        # would otherwise block, or stream forever.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            if os.path.isdir(path):
                raise IsADirectoryError
            raise HlogError("not a regular file (a FIFO or device?); give the path of an "
                            ".hlog file, or - for standard input", path=path)
        handle = open(fd, "rb")     # (read in blocks: blocks.block_groups)
    except IsADirectoryError:
        raise HlogError("is a directory, not an .hlog file", path=path) from None
    except FileNotFoundError:
        raise HlogError("no such file", path=path) from None
    except OSError as exc:
        raise HlogError(exc.strerror or str(exc), path=path) from None
    return handle, handle

