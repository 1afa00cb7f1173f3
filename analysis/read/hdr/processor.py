"""HistogramLogProcessor's output, byte for byte: the interval summary log and the `.hgrm`
percentile distribution of the matching intervals of an `.hlog` (see `commands/hgrm.py`)."""
from __future__ import annotations

import time

import numpy as np

from analysis.errors import HlogError
from analysis.read.hdr.distribution import EndlessDistribution, java_format_fixed
from analysis.read.hdr.batch import END_MS, LINE, LOG_START_S, START_S, TAG
from analysis.read.hdr.lines import HeaderState, nothing_read_error
from analysis.read.hdr.log import DECODE, iter_batches
from analysis.read.hdr.running import DoubleRunning, IntegerRunning



# -- formatting -------------------------------------------------------------------------------

def _range_header(title: str, start: float, end: float | None) -> str:
    # Java prints <Infinite> unless the end is below Double.MAX_VALUE
    end_text = java_format_fixed(end, 3) if end is not None and end < 1.7976931348623157e308 \
        else "<Infinite>"
    return (f"#[{title} between {java_format_fixed(start, 3)} and {end_text} seconds "
            "(relative to StartTime)]\n")


def _start_time_line(start_time: float) -> str:
    # Java: new Date((long) (startTime * 1000)).toString(), in the local time zone.
    millis = int(start_time * 1000)
    try:
        when = time.strftime("%a %b %d %H:%M:%S %Z %Y", time.localtime(millis / 1000.0))
    except (OverflowError, OSError, ValueError):
        when = "?"
    return f"#[StartTime: {java_format_fixed(start_time, 3)} (seconds since epoch), {when}]\n"


class _ValueText(dict):
    """Formatted `value / ratio` strings by value, memoised: a log has few distinct bucket
    values, and a dict lookup is the cheapest call per printed number."""

    def __init__(self, ratio: float, width: int):
        super().__init__()
        self.ratio, self.width = ratio, width

    def __missing__(self, value) -> str:
        text = java_format_fixed(float(value) / self.ratio, 3, self.width)
        self[value] = text
        return text


def _times_text(times, width: int) -> list[str]:
    """java_format_fixed(t, 3, width) of each time: C's '%.3f' where Java's rounding cannot
    differ (a shortest repr with at most 3 decimals has no tie to round; every time of a
    normal log), java_format_fixed otherwise."""
    fmt = f"%{width}.3f" if width else "%.3f"
    # Vectorised first: in 1e-4 <= |t| < 1e15 (repr without an exponent), the shortest repr
    # has at most 3 decimals exactly when t is the double nearest some k / 1000.
    values = np.asarray(times, np.float64)
    whole = (np.round(values * 1000.0) / 1000.0 == values) & (np.abs(values) < 1e15) & \
        ((np.abs(values) >= 1e-4) | (values == 0.0))
    if whole.all():
        return [fmt % t for t in times]
    return [fmt % t if 0 < s.find(".") >= len(s) - 4 else java_format_fixed(t, 3, width)
            for t, s in zip(times, map(repr, times))]


class _IntervalLog:
    def __init__(self, csv: bool, ratio: float):
        self.csv = csv
        self.value = _ValueText(ratio, 0 if csv else 7)

    def row(self, t: float, count: int, ip50, ip90, imax, total: int, tps, tmax) -> str:
        return self.rows([t], [count], [ip50], [ip90], [imax], [total], [tps], [tmax])[0]

    def rows(self, times, counts, ip50, ip90, imax, totals, tps, tmax) -> list[str]:
        """Summary lines for parallel lists of per-interval numbers (tps: 5-tuples)."""
        v = self.value
        times = _times_text(times, 0 if self.csv else 4)
        if self.csv:
            return [f"{t},{c},{v[a]},{v[b]},{v[m]},{n},{v[p[0]]},{v[p[1]]},{v[p[2]]},"
                    f"{v[p[3]]},{v[p[4]]},{v[x]}\n"
                    for t, c, a, b, m, n, p, x in zip(times, counts, ip50, ip90, imax, totals,
                                                      tps, tmax)]
        return [f"{t}: I:{c} ( {v[a]} {v[b]} {v[m]} ) T:{n} ( {v[p[0]]} {v[p[1]]} "
                f"{v[p[2]]} {v[p[3]]} {v[p[4]]} {v[x]} )\n"
                for t, c, a, b, m, n, p, x in zip(times, counts, ip50, ip90, imax, totals, tps,
                                                  tmax)]

    def legend(self) -> str:
        if self.csv:
            return ('"Timestamp","Int_Count","Int_50%","Int_90%","Int_Max","Total_Count",'
                    '"Total_50%","Total_90%","Total_99%","Total_99.9%","Total_99.99%","Total_Max"\n')
        return ("Time: IntervalPercentiles:count ( 50% 90% Max ) TotalPercentiles:count "
                "( 50% 90% 99% 99.9% 99.99% Max )\n")


# -- processing -------------------------------------------------------------------------------

def _selected(batch, tag, start_s, end_s) -> tuple[np.ndarray, int]:
    """-> (which intervals of the batch match, how many have the tag): lines.interval_matches
    of each row."""
    tags = batch.column(TAG)
    with_tag = tags.count(tag)
    if with_tag == len(tags) and start_s is None and end_s is None:
        return np.ones(len(tags), bool), with_tag     # (a whole untagged log: every line)
    chosen = np.fromiter((t == tag for t in tags), bool, len(tags))
    starts = np.asarray(batch.column(START_S), np.float64)
    if start_s is not None:
        chosen &= starts >= start_s
    if end_s is not None:
        chosen &= starts <= end_s
    return chosen, with_tag


class _NothingOnJavasAxis(Exception):
    """A window selected nothing in a log with #[BaseTime] and no #[StartTime], on Java's
    axis (where HistogramLogProcessor throws): read again on the first interval's."""


def process(source, text, warnings, *, tag=None, start_s=None, end_s=None, ratio=1e6, ticks=5,
            csv=False, with_interval_log=True, parallel=None):
    """-> (interval log text, .hgrm text). Raises HlogError when no interval matches.
    `parallel`: read ahead in a second process (None: when the input is large enough; see
    log.iter_batches).

    Java's time axis (HistogramLogProcessor's bytes) unless the log has a #[BaseTime] and no
    #[StartTime] and the window selects nothing on it: then the window counts from the first
    interval's absolute start, and the output shows that axis (its StartTime line, times
    relative to it). Only that case reads the input twice."""
    settings = dict(tag=tag, start_s=start_s, end_s=end_s, ratio=ratio, ticks=ticks, csv=csv,
                    with_interval_log=with_interval_log, parallel=parallel)
    first_pass: list[str] = []      # (the second pass warns about the same lines again)
    try:
        outputs = _process(source, text, HeaderState(), first_pass, **settings)
    except _NothingOnJavasAxis:
        return _process(source, text, HeaderState(axis_from_first_interval=True), warnings,
                        **settings)
    except BaseException:
        warnings.extend(first_pass)
        raise
    warnings.extend(first_pass)
    return outputs


def _process(source, text, state, warnings, *, tag, start_s, end_s, ratio, ticks, csv,
             with_interval_log, parallel):
    ilog = _IntervalLog(csv, ratio)
    body: list[str] = []         # interval rows, with the StartTime line where Java puts it
    hgrm_prefix: list[str] = []
    start_line_done = False
    legend_done = False
    earliest = None
    seen_any = False
    early: list[int] = []        # lines of intervals kept although they start before StartTime
    kind = None
    acc = None
    selected = with_tag = 0      # intervals in the window, intervals with the tag
    biggest = (0, None)          # the largest interval count and its line, for a refusal
    batches = iter_batches(source, warnings, state, text=text, parallel=parallel,
                           keep_raws=False, undecoded=True)
    for batch in batches:
        chosen, batch_with_tag = _selected(batch, tag, start_s, end_s)
        stats = None
        if batch.joined is not None:
            # decoded as its rows are added; otherwise (a row the general decoder must take,
            # only unchosen rows, a DoubleHistogram log) decoded now
            if chosen.any() and kind != "double":
                running = acc if acc is not None else \
                    IntegerRunning(batch.payloads[int(chosen.argmax())].layout)
                stats = running.add_undecoded(batch, chosen)
                if stats is not None:
                    kind, acc = "integer", running
            if stats is None:
                batch = batches.send(DECODE)
                if batch is None:
                    continue
                chosen, batch_with_tag = _selected(batch, tag, start_s, end_s)
        seen_any = True
        with_tag += batch_with_tag
        selected += int(chosen.sum())
        if not chosen.any():
            continue
        rows = np.flatnonzero(chosen)
        every_row = rows.size == len(chosen)
        if stats is None:
            doubles = np.asarray(batch.is_double, bool)
            if kind is None:
                kind = "double" if doubles[rows[0]] else "integer"
                acc = IntegerRunning(batch.payloads[rows[0]].layout) if kind == "integer" \
                    else DoubleRunning(batch.histogram(int(rows[0])))
            other_kind = np.flatnonzero(doubles[rows] != (kind == "double"))
            if other_kind.size:
                r = int(rows[other_kind[0]])
                raise HlogError(f"a {'DoubleHistogram' if doubles[r] else 'Histogram'} line "
                                f"in a log of "
                                f"{'DoubleHistograms' if kind == 'double' else 'Histograms'}; "
                                "they cannot be added", path=source,
                                line=batch.column(LINE)[r])
            stats = acc.add_rows(batch, rows)
        top = max(stats.counts)
        if top > biggest[0]:
            biggest = (top, batch.column(LINE)[int(rows[stats.counts.index(top)])])
        starts = np.asarray(batch.column(START_S), np.float64)
        if not every_row:
            starts = starts[rows]
        lowest = float(starts.min())
        earliest = lowest if earliest is None else min(earliest, lowest)
        if lowest < 0 and state.explicit_start:
            lines = np.asarray(batch.column(LINE))[rows]
            early.extend(lines[starts < 0].tolist())
        # the time column: Interval.end_s of each chosen row
        end_ms = np.asarray(batch.column(END_MS), np.int64)
        log_starts = np.asarray(batch.column(LOG_START_S), np.float64)
        if not every_row:
            end_ms, log_starts = end_ms[rows], log_starts[rows]
        times = (end_ms / 1000.0 - log_starts).tolist()
        log_starts = log_starts.tolist()
        done = 0
        # Row by row only until the StartTime comment and the legend are placed (they go
        # before the first row that calls for them); then the batch's lines all at once.
        while not (start_line_done and legend_done) and done < len(times):
            if not start_line_done and log_starts[done] != 0.0:
                start_line_done = True
                line = _start_time_line(log_starts[done])
                hgrm_prefix.append(line)
                body.append(line)
            if not legend_done:
                legend_done = True
                body.append(ilog.legend())
            if with_interval_log:
                body.append(ilog.row(times[done], *stats.row(done)))
            done += 1
        if with_interval_log and done < len(times):
            body.extend(ilog.rows(times[done:], *stats.columns(done)))
    if not seen_any:
        raise nothing_read_error(source, state, warnings)
    if kind is None:
        if state.base_without_start and not state.axis_from_first_interval and with_tag:
            raise _NothingOnJavasAxis
        raise HlogError(_no_match_message(tag, start_s, end_s, state), path=source)
    if (start_s is not None or end_s is not None) and selected == with_tag:
        warnings.append(f"{source}: the window -start {_or(start_s, '-inf')} -end "
                        f"{_or(end_s, 'inf')} selects all {selected} "
                        f"{'untagged' if tag is None else repr(tag)} intervals "
                        f"(times are seconds since {_axis(state)})")
    if early:
        warnings.append(f"{source}:{early[0]}: {len(early)} interval(s) start before "
                        "#[StartTime]; kept (HistogramLogProcessor drops them; -start 0 does too)")
    range_start = start_s if start_s is not None else min(0.0, earliest)
    interval_log = _range_header("Interval percentile log", range_start, end_s) + "".join(body)
    try:
        hgrm = acc.percentile_distribution(ticks, ratio, csv)
    except EndlessDistribution as e:
        raise HlogError(f"the selected intervals add up to a total count of {e.total}: {e}, so "
                        f"HistogramLogProcessor prints rows without end or fails; the interval "
                        f"on this line holds {biggest[0]} of them: leave it out (-start, -end, "
                        f"-tag) or fix its counts", path=source, line=biggest[1]) from None
    if with_interval_log:
        hgrm = _range_header("Overall percentile distribution", range_start, end_s) + \
            "".join(hgrm_prefix) + hgrm
    else:
        hgrm = "".join(hgrm_prefix) + hgrm
    return interval_log, hgrm


def _or(value, default):
    return default if value is None else value


def _axis(state) -> str:
    """What -start/-end count from (see lines.line_item)."""
    if state.explicit_start:
        return "#[StartTime]"
    if not state.base_without_start:
        return "the first interval's start"
    if state.axis_from_first_interval:
        return "the first interval's start (timestamp + #[BaseTime])"
    return ("the first interval's bare timestamp, as HistogramLogProcessor counts them: each "
            "interval is about #[BaseTime] s after it; a window that selects nothing there "
            "counts from the first interval's start (timestamp + #[BaseTime])")


def _no_match_message(tag, start_s, end_s, state) -> str:
    what = "untagged interval" if tag is None else f"interval with tag {tag!r}"
    window = ""
    if start_s is not None or end_s is not None:
        window = (f" starting between {_or(start_s, '-inf')} and {_or(end_s, 'inf')} s after "
                  f"{_axis(state)}")
    return f"no {what}{window} in the log (use -listtags to see its tags)"
