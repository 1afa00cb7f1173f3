"""JMeter's timeStamp written as a date (`jmeter.save.saveservice.timestamp_format`, a Java
SimpleDateFormat pattern such as `yyyy/MM/dd HH:mm:ss.SSS`) instead of ms since the epoch.

The pattern is in the writer's properties, not in the file. The common year-first ones
(`COMMON`) cannot be misread, so they are recognised from the first sample; any other (day and
month in either order, `dd/MM/yyyy`) needs run.yml's `options: {timestamp_format: PATTERN}`,
and a date that matches no common pattern is one error saying so. The pattern letters taken:
yyyy, M/MM, d/dd, H/HH, mm, ss and SSS (ms, three digits as JMeter writes them: S and SS
would print 7 ms as "7"), text in single quotes, any other non-letter as itself.

Time zone: JMeter formats the date in its JVM's zone and writes no zone. loadcurve reads the
date as UTC, so that the same file gives the same numbers on every machine, unless
`options: {utc_offset: "+01:00"}` gives the zone's offset. A wrong offset moves every send time
by the same whole minutes: the latencies, the per-second intervals (counted from the first
send) and their one-second boundaries are unchanged; only the absolute times shown (and the
alignment with other files of the cell by absolute time) depend on it. A run across a daylight
saving change has a one-hour jump in its dates that no offset undoes.
"""
from __future__ import annotations

import calendar
import re
from datetime import datetime

import numpy as np
import pandas as pd

from analysis.errors import ResultsError

COMMON = ("yyyy/MM/dd HH:mm:ss.SSS", "yyyy/MM/dd HH:mm:ss", "yyyy-MM-dd HH:mm:ss.SSS",
          "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd'T'HH:mm:ss.SSS", "yyyy-MM-dd'T'HH:mm:ss")
# pattern letter run -> (regex group, strftime directive)
_FIELDS = {"yyyy": (r"(?P<y>\d{4})", "%Y"), "MM": (r"(?P<M>\d{2})", "%m"),
           "M": (r"(?P<M>\d{1,2})", "%m"), "dd": (r"(?P<d>\d{2})", "%d"),
           "d": (r"(?P<d>\d{1,2})", "%d"), "HH": (r"(?P<H>\d{2})", "%H"),
           "H": (r"(?P<H>\d{1,2})", "%H"), "mm": (r"(?P<m>\d{2})", "%M"),
           "ss": (r"(?P<s>\d{2})", "%S"), "SSS": (r"(?P<S>\d{3})", "%f")}
_TOKENS = re.compile(r"'([^']*)'|([A-Za-z])\2*|(.)", re.DOTALL)
_OFFSET = re.compile(r"^([+-])(\d{2}):?(\d{2})$")
_HINT = ("give the file's jmeter.save.saveservice.timestamp_format, a Java SimpleDateFormat "
         "pattern, in run.yml: options: {timestamp_format: \"dd/MM/yyyy HH:mm:ss.SSS\"}; or "
         "write the .jtl with timestamp_format=ms, the default")


class DateFormat:
    """One SimpleDateFormat pattern, as a regex (row by row) and a strftime format (pandas)."""

    def __init__(self, pattern: str, offset_ms: int = 0):
        self.pattern, self.offset_ms = pattern, offset_ms
        regex, strftime, seen = [], [], set()
        for match in _TOKENS.finditer(pattern):
            quoted, letter, other = match.groups()
            if letter:
                run = match.group(0)
                if run not in _FIELDS or run[0] in seen:
                    raise ValueError(f"{run!r} is not a pattern letter loadcurve reads "
                                     "(yyyy, MM, dd, HH, mm, ss, SSS; once each)")
                seen.add(run[0])
                regex.append(_FIELDS[run][0])
                strftime.append(_FIELDS[run][1])
            else:
                text = quoted if quoted is not None else other
                text = "'" if match.group(0) == "''" else text
                regex.append(re.escape(text))
                strftime.append(text.replace("%", "%%"))
        if not {"y", "M", "d", "H", "m"} <= seen:
            raise ValueError("a pattern needs at least yyyy, MM, dd, HH and mm")
        self.regex = re.compile("".join(regex) + r"\Z")
        self.strftime = "".join(strftime)

    def parse(self, text: str) -> int | None:
        """ms since the epoch, None when `text` is not a date of this pattern."""
        m = self.regex.match(text)
        if m is None:
            return None
        g = m.groupdict()
        try:
            when = datetime(int(g["y"]), int(g["M"]), int(g["d"]), int(g["H"]), int(g["m"]),
                            int(g.get("s") or 0))
        except ValueError:
            return None
        ms = int(g.get("S") or 0)
        return calendar.timegm(when.timetuple()) * 1000 + ms - self.offset_ms

    def parse_all(self, column) -> np.ndarray:
        """ms since the epoch of a pandas column of dates; ValueError at the first that is not
        one of this pattern."""
        # no zone in the text: naive times, read as UTC (the module docstring)
        when = pd.to_datetime(column.astype(str), format=self.strftime, exact=True)
        return when.to_numpy().astype("datetime64[ms]").astype(np.int64) - self.offset_ms


def offset_ms(options: dict, path: str) -> int:
    text = options.get("utc_offset")
    if text is None:
        return 0
    m = _OFFSET.match(str(text).strip())
    if m is None or int(m[2]) > 23 or int(m[3]) > 59:
        raise ResultsError(f"utc_offset {text!r} is not an offset like +01:00 or -05:30",
                           path=path, hint="the offset from UTC of the zone JMeter ran in")
    sign = -1 if m[1] == "-" else 1
    return sign * (int(m[2]) * 60 + int(m[3])) * 60_000


def date_format(sample: str, options: dict, path: str, line: int) -> DateFormat | None:
    """The DateFormat of a .jtl whose first timeStamp is `sample` (data line `line`); None
    when it is ms since the epoch (and no pattern is given)."""
    pattern = options.get("timestamp_format")
    offset = offset_ms(options, path)
    if pattern is None or str(pattern) == "ms":
        if sample.isdigit() or not re.search(r"\d[-/:.]\d", sample):
            return None     # ms, or a damaged first row: skipped as such, with its line
        for common in COMMON:
            candidate = DateFormat(common, offset)
            if candidate.parse(sample) is not None:
                return candidate
        what = "with its day and month in an order the file does not say" if re.match(
            r"^\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}", sample) else "in a pattern not known here"
        raise ResultsError(f"timeStamp {sample[:40]!r} is a date {what}", path=path, line=line,
                           hint=_HINT)
    try:
        chosen = DateFormat(str(pattern), offset)
    except ValueError as e:
        raise ResultsError(f"timestamp_format {pattern!r}: {e}", path=path, hint=_HINT) from None
    if chosen.parse(sample) is None:
        raise ResultsError(f"timeStamp {sample[:40]!r} is not a date of timestamp_format "
                           f"{pattern!r}", path=path, line=line, hint=_HINT)
    return chosen
