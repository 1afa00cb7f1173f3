"""HistogramLogProcessor's output, byte for byte: the interval summary log and the `.hgrm`
percentile distribution of the matching intervals of an `.hlog` (see `commands/hgrm.py`)."""
from __future__ import annotations

import time

import numpy as np

from analysis.errors import HlogError
from analysis.read.hdr import native
from analysis.read.hdr.distribution import EndlessDistribution, java_format_fixed
from analysis.read.hdr.batch import END_MS, LINE, LOG_START_S, START_S, TAG
from analysis.read.hdr.line_text import EXACT_MILLIS, ValueTable, exact_millis, interval_lines
from analysis.read.hdr.lines import HeaderState, nothing_read_error
from analysis.read.hdr.log import BATCH_LINES, DECODE, iter_batches
from analysis.read.hdr.running import DoubleRunning, IntegerRunning
from analysis.read.hdr.worker import use_worker



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
    # vectorised first (see line_text.exact_millis)
    whole = exact_millis(np.asarray(times, np.float64))
    if whole.all():
        return [fmt % t for t in times]
    return [fmt % t if 0 < s.find(".") >= len(s) - 4 and abs(t) < EXACT_MILLIS
            else java_format_fixed(t, 3, width) for t, s in zip(times, map(repr, times))]


class _IntervalLog:
    def __init__(self, csv: bool, ratio: float):
        self.csv = csv
        self.value = _ValueText(ratio, 0 if csv else 7)
        self.table = ValueTable(self.value)      # (the compiled printer's texts)

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

    def text(self, times, stats, start: int) -> str:
        """The summary lines of stats' rows from `start` on, joined (times: theirs)."""
        text = interval_lines(times, stats, start, self.csv, self.table)
        return text if text is not None else "".join(self.rows(times, *stats.columns(start)))

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
    `parallel`: the groups of lines read and decoded ahead by two threads while this one adds
    them up (ahead.py; None: when the input is large enough and a CPU is free,
    worker.use_worker).

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


class _Order:
    """What the intervals decide in file order, carried from batch to batch: the accumulated
    histogram, where the StartTime line and the legend go, the largest interval count and its
    line."""

    def __init__(self):
        self.kind = None
        self.acc = None
        self.start_line_done = self.legend_done = False
        self.hgrm_prefix: list[str] = []
        self.biggest = (0, None)


class _Tally:
    """What the batches add up to whatever their order: the interval lines, how many
    intervals had the tag and were chosen, the earliest start, those before StartTime."""

    def __init__(self):
        self.body: list[str] = []      # interval rows, with the StartTime line where Java puts it
        self.seen_any = False
        self.with_tag = self.selected = 0
        self.earliest = None
        self.early: list[int] = []     # lines of intervals kept although they start before StartTime


def _times(batch, rows, every_row):
    """(the chosen rows' starts, their times: Interval.end_s, and their log starts)."""
    starts = np.asarray(batch.column(START_S), np.float64)
    end_ms = np.asarray(batch.column(END_MS), np.int64)
    log_starts = np.asarray(batch.column(LOG_START_S), np.float64)
    if not every_row:
        starts, end_ms, log_starts = starts[rows], end_ms[rows], log_starts[rows]
    return starts, (end_ms / 1000.0 - log_starts).tolist(), log_starts.tolist()


def _lead_rows(order, batch, rows, stats, times, log_starts, ilog, with_interval_log, body):
    """The batch's part in file order once its rows are added: the largest count, and row by
    row only until the StartTime comment and the legend are placed (they go before the first
    row that calls for them). -> how many rows are in `body` now."""
    top = max(stats.counts)
    if top > order.biggest[0]:
        order.biggest = (top, batch.column(LINE)[int(rows[stats.counts.index(top)])])
    done = 0
    while not (order.start_line_done and order.legend_done) and done < len(times):
        if not order.start_line_done and log_starts[done] != 0.0:
            order.start_line_done = True
            line = _start_time_line(log_starts[done])
            order.hgrm_prefix.append(line)
            body.append(line)
        if not order.legend_done:
            order.legend_done = True
            body.append(ilog.legend())
        if with_interval_log:
            body.append(ilog.row(times[done], *stats.row(done)))
        done += 1
    return done


def _other_rows(tally, state, batch, rows, stats, starts, times, done, ilog, with_interval_log,
                body):
    """The batch's part in any order: its earliest start and the rest of its lines (the
    batch's lines all at once). -> the lines of its intervals that start before StartTime."""
    lowest = float(starts.min())
    tally.earliest = lowest if tally.earliest is None else min(tally.earliest, lowest)
    early = []
    if lowest < 0 and state.explicit_start:
        lines = np.asarray(batch.column(LINE))[rows]
        early = lines[starts < 0].tolist()
    if with_interval_log and done < len(times):
        body.append(ilog.text(times[done:], stats, done))
    return early


def _process(source, text, state, warnings, *, tag, start_s, end_s, ratio, ticks, csv,
             with_interval_log, parallel):
    ilog = _IntervalLog(csv, ratio)
    window = (tag, start_s, end_s)
    # (without the compiled kernels every group goes the general way, in which Python holds
    # the GIL: a second thread would only take turns with this one)
    threads = 2 if use_worker(source, text, parallel) and native.get() is not None else 1
    order, tally = _Order(), _Tally()
    batches = iter_batches(source, warnings, state, BATCH_LINES, text=text, undecoded=True,
                           threads=threads)
    for batch in batches:
        chosen, batch_with_tag = _selected(batch, *window)
        stats = None
        if batch.joined is not None:
            # decoded as its rows are added; otherwise (a row the general decoder must take,
            # only unchosen rows, a DoubleHistogram log) decoded now
            if chosen.any() and order.kind != "double":
                running = order.acc if order.acc is not None else \
                    IntegerRunning(batch.payloads[int(chosen.argmax())].layout)
                stats = running.add_undecoded(batch, chosen)
                if stats is not None:
                    order.kind, order.acc = "integer", running
            if stats is None:
                batch = batches.send(DECODE)
                if batch is None:
                    continue
                chosen, batch_with_tag = _selected(batch, *window)
        tally.seen_any = True
        tally.with_tag += batch_with_tag
        tally.selected += int(chosen.sum())
        if not chosen.any():
            continue
        rows = np.flatnonzero(chosen)
        every_row = rows.size == len(chosen)
        if stats is None:
            doubles = np.asarray(batch.is_double, bool)
            if order.kind is None:
                order.kind = "double" if doubles[rows[0]] else "integer"
                order.acc = IntegerRunning(batch.payloads[rows[0]].layout) \
                    if order.kind == "integer" else DoubleRunning(batch.histogram(int(rows[0])))
            other_kind = np.flatnonzero(doubles[rows] != (order.kind == "double"))
            if other_kind.size:
                r = int(rows[other_kind[0]])
                raise HlogError(f"a {'DoubleHistogram' if doubles[r] else 'Histogram'} line "
                                f"in a log of "
                                f"{'DoubleHistograms' if order.kind == 'double' else 'Histograms'}; "
                                "they cannot be added", path=source,
                                line=batch.column(LINE)[r])
            stats = order.acc.add_rows(batch, rows)
        starts, times, log_starts = _times(batch, rows, every_row)
        done = _lead_rows(order, batch, rows, stats, times, log_starts, ilog, with_interval_log,
                          tally.body)
        tally.early.extend(_other_rows(tally, state, batch, rows, stats, starts, times, done,
                                       ilog, with_interval_log, tally.body))
    return _outputs(source, state, warnings, order, tally, window, ratio, ticks, csv,
                    with_interval_log)


def _outputs(source, state, warnings, order, tally, window, ratio, ticks, csv,
             with_interval_log):
    """The two outputs from what the batches made, or the error that nothing matched."""
    tag, start_s, end_s = window
    kind, acc, biggest, hgrm_prefix = order.kind, order.acc, order.biggest, order.hgrm_prefix
    seen_any, selected, with_tag = tally.seen_any, tally.selected, tally.with_tag
    earliest, early, body = tally.earliest, tally.early, tally.body
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
