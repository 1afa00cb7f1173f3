"""HdrHistogram percentile distributions (`.hgrm`): what `outputPercentileDistribution` prints.

HistogramLogProcessor (`-o OUT` writes OUT.hgrm; `python -m analysis hgrm` prints the same),
wrk2's "Detailed Percentile spectrum" and any program that calls the method write it:

           Value     Percentile TotalCount 1/(1-Percentile)

            0.02 0.000000000000        107           1.00
            ...
         1895.83 1.000000000000      65964
    #[Mean    =        40.04, StdDeviation   =       201.49]
    #[Max     =      1895.83, Total count    =        65964]
    #[Buckets =           21, SubBuckets     =          256]

and with `-csv` the rows as `"Value","Percentile","TotalCount","1/(1-Percentile)"` CSV, with no
footer. A text form whose footer was cut off is read the same way, when its rows run to
1.0: count and max from the last row, no mean or standard deviation. HistogramLogProcessor
puts `#[Overall percentile distribution ...]` and `#[StartTime: ...]` comment lines first.
Each row is one step of HdrHistogram's percentile iteration: the highest value equivalent to
the bucket where the cumulative count first reaches that percentile (a fraction 0..1 in the
file), and the count up to it. The whole distribution is read into
`ResultSummary.spectrum`; the headline `percentiles_ms` are only the rows printed at exactly
50, 75, 90, 99, ... percent (at HistogramLogProcessor's default 5 ticks per half, 50, 75 and 90
are rows, 99 is not: it is not re-derived from neighbouring rows; the report shows the first
row above 99 as an upper bound, derive/imported.py's summary_percentile).

The unit is the writer's and the file does not say it. HistogramLogProcessor divides recorded
values by `-outputValueUnitRatio` (default 1e6: nanoseconds recorded, milliseconds printed);
wrk2 prints milliseconds. Values are taken as milliseconds unless `options["value_unit_ms"]`
(from run.yml) says how many milliseconds one unit of the file is (0.001 for microseconds).
The span a value covers, the load model (open/closed) and errors are not in the file: they are
the recording program's, and come from run.yml. `requests` is the footer's Total count (the
last row's TotalCount in the CSV form), which counts every recorded value, failed or not.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from analysis.errors import ResultsError
from analysis.read.loadtools.results import ResultSummary, SpectrumPoint, ToolInfo
from analysis.read.loadtools.common import SkipLog, read_text_lines

FORMAT = "hgrm"
WHAT = "an HdrHistogram percentile distribution (.hgrm)"
HEADLINE = (50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 99.999)

TEXT_HEADER = re.compile(r"^\s*Value\s+Percentile\s+TotalCount\s+1/\(1-Percentile\)\s*$")
CSV_HEADER = '"Value","Percentile","TotalCount","1/(1-Percentile)"'
_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_TEXT_ROW = re.compile(rf"^\s*({_NUMBER})\s+({_NUMBER})\s+(\d+)(?:\s+(\S+))?\s*$")
_CSV_ROW = re.compile(rf"^({_NUMBER}),({_NUMBER}),(\d+),(\S+)$")
_MEAN = re.compile(rf"^#\[Mean\s*=\s*({_NUMBER}|NaN),\s*StdDeviation\s*=\s*({_NUMBER}|NaN)\]$")
_MAX = re.compile(rf"^#\[Max\s*=\s*({_NUMBER}),\s*Total count\s*=\s*(\d+)\]$")
_BUCKETS = re.compile(r"^#\[Buckets\s*=\s*(\d+),\s*SubBuckets\s*=\s*(\d+)\]$")


@dataclass
class Spectrum:
    """A parsed distribution: its rows and its footer (None where the form has none)."""

    points: list[SpectrumPoint]
    mean_ms: float | None = None
    stddev_ms: float | None = None
    max_ms: float | None = None
    total_count: int | None = None
    end: int = 0        # index of the first line after the distribution


def sniff(head: bytes) -> str | None:
    for raw in head.splitlines()[:50]:
        line = raw.decode("utf-8", "replace").strip()
        if not line or line.startswith("#["):
            continue
        if TEXT_HEADER.match(line) or line == CSV_HEADER:
            return FORMAT
        return None
    return None


def read(path: str, fmt: str, options: dict) -> ResultSummary:
    unit_ms = value_unit_ms(options, path)
    lines = read_text_lines(path, WHAT)
    skips = SkipLog(path)
    first = _header_index(lines, path)
    tool = "HistogramLogProcessor" if any(
        line.startswith("#[Overall percentile distribution") for line in lines[:first]) \
        else "HdrHistogram"
    spectrum = parse_spectrum(lines, first, path, unit_ms, skips)
    for number in range(spectrum.end, len(lines)):
        if lines[number].strip():
            skips.skip(number + 1, "text after the distribution")
    return ResultSummary(
        path=path,
        info=ToolInfo(format=FORMAT, tool=tool,
                      measure="as the recording program timed it (the .hgrm does not say)"),
        requests=spectrum.total_count,
        percentiles_ms=headline_from_spectrum(spectrum.points),
        spectrum=spectrum.points,
        mean_ms=spectrum.mean_ms, stddev_ms=spectrum.stddev_ms, max_ms=spectrum.max_ms,
        warnings=skips.warnings(), skipped=skips.count)


def value_unit_ms(options: dict, path: str) -> float:
    unit = options.get("value_unit_ms", 1.0)
    if isinstance(unit, bool) or not isinstance(unit, (int, float)) or \
            not math.isfinite(unit) or unit <= 0:
        raise ResultsError(f"value_unit_ms must be a positive number, not {unit!r}", path=path,
                           hint="milliseconds per unit of the file's values: 1 for ms, "
                                "0.001 for us, 1e-6 for ns")
    return float(unit)


def _header_index(lines: list[str], path: str) -> int:
    for number, line in enumerate(lines):
        text = line.strip()
        if not text or text.startswith("#["):
            continue
        if TEXT_HEADER.match(text) or text == CSV_HEADER:
            return number
        break
    raise ResultsError("no 'Value Percentile TotalCount 1/(1-Percentile)' header line",
                       path=path, hint=f"expected {WHAT}")


def parse_spectrum(lines: list[str], header: int, path: str, unit_ms: float,
                   skips: SkipLog) -> Spectrum:
    """The distribution whose header line is lines[header], up to its footer (text form) or
    the end of the rows (CSV form). Raises ResultsError when it has no rows or ends early."""
    csv_form = lines[header].strip() == CSV_HEADER
    row_re = _CSV_ROW if csv_form else _TEXT_ROW
    out = Spectrum(points=[])
    number = header + 1
    while number < len(lines):
        text = lines[number].strip()
        if text.startswith("#["):
            break
        if not csv_form and not text:
            number += 1
            continue
        match = row_re.match(text)
        if match is None:
            if csv_form and out.points:
                break      # the CSV form has no footer: what follows is not the distribution
            skips.skip(number + 1, "not a distribution row")
        else:
            point = _point(match, unit_ms)
            problem = _row_problem(point, out.points)
            if problem:
                skips.skip(number + 1, problem)
            else:
                out.points.append(point)
        number += 1
    if not out.points:
        raise ResultsError("the distribution has no rows", path=path, line=header + 1,
                           hint=f"expected {WHAT}")
    number = number if csv_form else _footer(lines, number, path, unit_ms, out)
    out.end = number
    _check_complete(out, path, number)
    return out


def _point(match: re.Match, unit_ms: float) -> SpectrumPoint:
    return SpectrumPoint(percentile=float(match.group(2)) * 100.0,
                         value_ms=float(match.group(1)) * unit_ms,
                         total_count=int(match.group(3)))


def _row_problem(point: SpectrumPoint, before: list[SpectrumPoint]) -> str | None:
    if not (math.isfinite(point.value_ms) and point.value_ms >= 0):
        return "the value is not a number >= 0"
    if not 0.0 <= point.percentile <= 100.0:
        return "the percentile is not between 0 and 1"
    if before:
        last = before[-1]
        if point.percentile < last.percentile or point.value_ms < last.value_ms or \
                point.total_count < last.total_count:
            return "a row below the one before it (value, percentile or count goes down)"
    return None


def _footer(lines: list[str], number: int, path: str, unit_ms: float, out: Spectrum) -> int:
    """Reads the #[Mean], #[Max], #[Buckets] lines from lines[number]; the index after them.
    A file that ends with its rows has no footer (it was cut off, or the writer stopped
    there): _check_complete still wants its 100% row, and the count and max come from it."""
    if number >= len(lines):
        return number
    found = {}
    for name, pattern in (("Mean", _MEAN), ("Max", _MAX), ("Buckets", _BUCKETS)):
        match = pattern.match(lines[number].strip()) if number < len(lines) else None
        if match is None:
            raise ResultsError(f"the distribution's #[{name} ...] footer line is missing",
                               path=path, line=min(number + 1, len(lines)),
                               hint="the output ends early or was edited; give the whole "
                                    "distribution with its three #[...] lines")
        found[name] = match
        number += 1
    out.mean_ms = float(found["Mean"].group(1)) * unit_ms
    out.stddev_ms = float(found["Mean"].group(2)) * unit_ms
    out.max_ms = float(found["Max"].group(1)) * unit_ms
    out.total_count = int(found["Max"].group(2))
    return number


def _check_complete(out: Spectrum, path: str, number: int) -> None:
    last = out.points[-1]
    if out.total_count is not None and last.total_count != out.total_count:
        raise ResultsError(f"the last row counts {last.total_count} values, the footer "
                           f"{out.total_count}", path=path, line=number,
                           hint="rows are missing: give the whole distribution")
    if last.percentile != 100.0:
        raise ResultsError("the distribution stops before its 100% row", path=path, line=number,
                           hint="the file ends early: give the whole distribution")
    if out.total_count is None:
        out.total_count = last.total_count
        out.max_ms = last.value_ms


def headline_from_spectrum(points: list[SpectrumPoint]) -> dict[float, float]:
    """{level: value_ms} for the headline levels the distribution has a row at."""
    found = {}
    for point in points:
        for level in HEADLINE:
            if level not in found and abs(point.percentile - level) <= 1e-9:
                found[level] = point.value_ms
    return found
