"""Compare two runs (or run:system against run:system) cell by cell, with significance.

    python -m analysis compare A B [--metric p99] [--scenario S] [--system X]
                                   [--json | --markdown] [--fail-on-regression PCT]

A and B are run ids (folders of runs/) or `run:system`. Per cell present in both: A's and B's
median (range) over the repetitions, the change of B against A with its confidence interval, and
a verdict - faster, slower or no significant difference (method and alpha are printed; see
analysis/corpus/compare.py). Fewer than 3 repetitions a side: "not enough repetitions". A side censored
in every repetition, beyond every repetition of the other: no test and no p, the direction
comes from the bounds ("slower (direction from the bounds)"). Differences in
the runs' environments (CPU, JDK, flags, GC, busy host) are listed as warnings.

Reads the cell table the build writes (`assets/data/<run>/cells.csv`): run `python -m analysis
build` first. Exit status 0; with --fail-on-regression PCT, 3 when a cell is significantly (or,
by its bounds, certainly) slower by more than PCT %, so a CI job can fail on it.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from analysis.corpus import cell_table, compare
from analysis.errors import LoadcurveError
from analysis.paths import run_cells_csv_path
from analysis.vocabulary import COMPARED_METRICS

REGRESSION_EXIT = 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a", metavar="A", help="baseline: a run id or run:system")
    parser.add_argument("b", metavar="B", help="candidate: a run id or run:system")
    parser.add_argument("--metric", default="p99", choices=COMPARED_METRICS,
                        help="the statistic compared (default p99)")
    parser.add_argument("--scenario", help="only this scenario")
    parser.add_argument("--system", help="only this system (when A and B are run ids)")
    parser.add_argument("--alpha", type=float, default=compare.DEFAULT_ALPHA,
                        help=f"family-wise significance level (default {compare.DEFAULT_ALPHA})")
    fmt = parser.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="JSON output")
    fmt.add_argument("--markdown", action="store_true", help="a Markdown table")
    parser.add_argument("--fail-on-regression", type=float, metavar="PCT",
                        help="exit 3 when a cell is significantly slower by more than PCT %%")
    parser.add_argument("--site", default=".", metavar="DIR",
                        help="the site folder holding assets/data/ (default: .)")


def load_table(site: Path, run_id: str):
    path = site / run_cells_csv_path(run_id)
    if not path.is_file():
        raise LoadcurveError(f"no cell table for run {run_id!r} ({path})",
                             hint="build the site first: python -m analysis build")
    return cell_table.read_csv(path)


def run(args) -> int:
    if not 0.0 < args.alpha < 0.5:
        raise LoadcurveError(f"--alpha must be between 0 and 0.5, not {args.alpha}")
    site = Path(args.site)
    sides = []
    for spec in (args.a, args.b):
        table = load_table(site, spec.partition(":")[0])
        rows, _, system = compare.select(table, spec, scenario=args.scenario, system=args.system)
        if rows.empty:
            raise LoadcurveError(f"{spec}: no measured cells"
                                 + (f" of system {system!r}" if system else ""))
        sides.append((rows, system))
    (a, sys_a), (b, sys_b) = sides
    by_system = sys_a is None and sys_b is None
    if (sys_a is None) != (sys_b is None):
        raise LoadcurveError("give a system on both sides (run:system) or on neither")
    result = compare.compare_frames(a, b, metric=args.metric, alpha=args.alpha,
                                    by_system=by_system)
    if not result:
        raise LoadcurveError(f"{args.a} and {args.b} have no cell in common")
    env = compare.environment_differences(a, b)
    method = compare.method_text(args.metric, args.alpha, len(result))
    if args.json:
        json.dump({"a": args.a, "b": args.b, "metric": args.metric, "unit": "ms",
                   "method": method, "alpha": args.alpha,
                   "environment_differences": env,
                   "cells": [compare.as_dict(c) for c in result]}, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(render(args, result, env, method, markdown=args.markdown))
    if args.fail_on_regression is not None:
        bad = compare.regressions(result, args.fail_on_regression)
        for c in bad:
            print(f"regression: {c.load} {c.system_b}: {compare.change_text(c)}", file=sys.stderr)
        if bad:
            return REGRESSION_EXIT
    return 0


HEADERS = {"load": "load", "system": "system", "a": "A", "b": "B", "change": "change (CI)",
           "p": "p", "mann_whitney_p": "MW p", "verdict": "verdict", "flags": "flags"}


def render(args, result, env, method, *, markdown: bool) -> str:
    rows = [compare.row_texts(c) for c in result]
    cols = [k for k in HEADERS if k != "flags" or any(r["flags"] for r in rows)]
    lines = [f"{args.metric} (ms), median (range) of the repetitions: A = {args.a}, "
             f"B = {args.b}", f"method: {method}", ""]
    if markdown:
        lines.append("| " + " | ".join(HEADERS[k] for k in cols) + " |")
        lines.append("|" + "|".join("---" for _ in cols) + "|")
        lines += ["| " + " | ".join(r[k] for k in cols) + " |" for r in rows]
    else:
        widths = {k: max(len(HEADERS[k]), *(len(r[k]) for r in rows)) for k in cols}
        lines.append("  ".join(HEADERS[k].ljust(widths[k]) for k in cols).rstrip())
        lines.append("  ".join("-" * widths[k] for k in cols))
        lines += ["  ".join(r[k].ljust(widths[k]) for k in cols).rstrip() for r in rows]
    if env:
        lines.append("")
        lines.append("warning: the environments differ:")
        lines += [f"  {d['key']}: A {d['a']}; B {d['b']}" for d in env]
    return "\n".join(lines) + "\n"
