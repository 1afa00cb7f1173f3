"""Percentile distribution (.hgrm) and interval summary of an .hlog, like HistogramLogProcessor.

A drop-in for HdrHistogram's `org.HdrHistogram.HistogramLogProcessor` (2.2.2): the same flags,
and for every valid input the same output bytes (the date text of the `#[StartTime: ...]`
comment follows the local time zone). `-o OUT` writes the interval summary to OUT and the
percentile distribution to OUT.hgrm; without `-o` the distribution goes to standard output.

Where HistogramLogProcessor misbehaves, this command does not: a bad line (trailing blank line,
unparsable line, corrupt payload) is skipped with one `warning: file:line: reason` on stderr and
reading goes on; intervals that start before #[StartTime] are kept (and reported) unless -start
excludes them; a tag or window that matches nothing is an error, and a window that selects every
interval a warning; negative or backward-going timestamps are reported once per tag; a file that
is not an interval log at all is one error.

A log with `#[BaseTime]` but no `#[StartTime]` gets HistogramLogProcessor's bytes too: absolute
times, and no StartTime line unless the first timestamp is not 0. Java's -start/-end offsets
there are about BaseTime, so a window in seconds selects nothing (Java throws) or everything.
Only where it selects nothing does this command differ: the window then counts from the first
interval's absolute start (timestamp + BaseTime), and the output is Java's for that log with
its StartTime line set to that start (the line printed, times relative to it).

Exit status: 0 on success, 1 with one `error: ...` line when nothing usable remains or an
argument is invalid.
"""
from __future__ import annotations

import argparse
import math
import sys

from analysis import atomic
from analysis.errors import HlogError, LoadcurveError
from analysis.read.hdr.batch import TAG
from analysis.read.hdr.log import iter_batches
from analysis.read.hdr.processor import process


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # HistogramLogProcessor's single-dash long flags, declared whole so argparse keeps them.
    parser.add_argument("-i", dest="input", metavar="FILE",
                        help="the .hlog to read (default: standard input)")
    parser.add_argument("-o", dest="output", metavar="OUT",
                        help="write the interval summary to OUT and the distribution to OUT.hgrm")
    parser.add_argument("-csv", dest="csv", action="store_true", help="CSV output format")
    parser.add_argument("-tag", dest="tag", metavar="TAG",
                        help="read only the lines with this tag (default: untagged lines)")
    parser.add_argument("-start", dest="start", type=float, metavar="SEC",
                        help="skip intervals that start before SEC seconds after #[StartTime] "
                             "(without one: after the first interval's timestamp; with "
                             "#[BaseTime] and no #[StartTime], a window that selects nothing "
                             "that way counts from the first interval's start; default: keep "
                             "all)")
    parser.add_argument("-end", dest="end", type=float, metavar="SEC",
                        help="skip intervals that start after SEC seconds after #[StartTime] "
                             "(or the first interval's timestamp, as for -start)")
    parser.add_argument("-outputValueUnitRatio", dest="ratio", type=float, default=1000000.0,
                        metavar="R", help="divide recorded values by R in the output "
                                          "(default 1000000.0: ns recorded, ms shown)")
    parser.add_argument("-percentilesOutputTicksPerHalf", dest="ticks", type=int, default=5,
                        metavar="N", help="percentile rows per halving of the distance to 100%% "
                                          "(default 5)")
    parser.add_argument("-listtags", dest="listtags", action="store_true",
                        help="list the tags found in the log and exit")


def run(args) -> int:
    if not (math.isfinite(args.ratio) and args.ratio > 0):
        raise LoadcurveError(f"-outputValueUnitRatio must be a positive number, not {args.ratio}")
    if args.ticks < 1:
        raise LoadcurveError(f"-percentilesOutputTicksPerHalf must be at least 1, not {args.ticks}")
    source = args.input or "-"
    text = sys.stdin.buffer.read().decode("latin-1") if source == "-" else None
    warnings: list[str] = []
    try:
        if args.listtags:
            return _list_tags(source, text, warnings)
        outputs = process(source, text, warnings, tag=args.tag, start_s=args.start,
                          end_s=args.end, ratio=args.ratio, ticks=args.ticks, csv=args.csv,
                          with_interval_log=args.output is not None)
    except HlogError:
        _print_warnings(warnings)
        raise
    _print_warnings(warnings)
    interval_log, hgrm = outputs
    if args.output:
        atomic.write_text(args.output, interval_log)
        atomic.write_text(args.output + ".hgrm", hgrm)
    else:
        sys.stdout.write(hgrm)
        sys.stdout.flush()
    return 0


def _print_warnings(warnings) -> None:
    for w in warnings:
        print(f"warning: {w}", file=sys.stderr)


def _list_tags(source, text, warnings) -> int:
    tags = set()
    for batch in iter_batches(source, warnings, text=text):
        tags.update(batch.column(TAG))
    untagged = None in tags
    tags.discard(None)
    _print_warnings(warnings)
    print("Tags found in input file:")
    if untagged:
        print("[NO TAG (default)]")
    for t in sorted(tags):
        print(t)
