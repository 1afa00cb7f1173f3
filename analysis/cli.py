"""`python -m analysis COMMAND`: one subcommand per module.

Each command module provides `add_arguments(parser)` and `run(args) -> int`, and a module
docstring whose first line is the command's one-line help. Errors the user can fix are
`LoadcurveError`s: printed as one `error: ...` line, exit 1. Anything else is a bug: one line
too (set LOADCURVE_DEBUG=1 for the traceback), exit 2.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys

from analysis.errors import LoadcurveError, os_error_text

# the exit status of a command stopped by Ctrl-C (128 + SIGINT, as a shell reports it)
INTERRUPTED = 130

# name -> (module, one-line help). Order is the order shown by --help. Only the chosen
# command's module is imported (numpy, matplotlib, jinja2 are slow to load and `hgrm` is timed
# against HistogramLogProcessor end to end); tests/test_cli.py checks each line against the
# module's docstring.
COMMANDS = {
    "build": ("analysis.commands.build",
              "Analyse runs/ into _data, charts and report pages (only the runs whose inputs "
              "changed)."),
    "compare": ("analysis.commands.compare",
                "Compare two runs (or run:system against run:system) cell by cell, with "
                "significance."),
    "hgrm": ("analysis.commands.hgrm",
             "Percentile distribution (.hgrm) and interval summary of an .hlog, like "
             "HistogramLogProcessor."),
    "import": ("analysis.commands.import_results",
               "Show what a load tool's result file holds: format, tool, load model, counts, "
               "latency."),
    "jfr": ("analysis.commands.jfr",
            "Summarise one JFR recording: GC pauses, safepoints, CPU, allocation, locks, hot "
            "methods."),
    "jmh": ("analysis.commands.jmh",
            "Summarise one JMH result file (-rf json, csv or text): score ± error per benchmark "
            "and params."),
    "new-post": ("analysis.commands.new_post",
                 "Draft a methodology post for a run into _drafts/ (never overwrites a draft)."),
}


def _chosen_command(argv: list[str]) -> str | None:
    for arg in argv:
        if not arg.startswith("-"):
            return arg if arg in COMMANDS else None
    return None


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser; with `argv`, only the command it names gets its module loaded."""
    parser = argparse.ArgumentParser(
        prog="python -m analysis",
        description="loadcurve: turn benchmark runs (HdrHistogram logs, JFR, run.yml) into "
                    "Jekyll data, charts and report pages.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    chosen = _chosen_command(argv) if argv is not None else None
    for name, (module_name, summary) in COMMANDS.items():
        if argv is not None and name != chosen:
            sub.add_parser(name, help=summary)
            continue
        module = importlib.import_module(module_name)
        cmd = sub.add_parser(name, help=summary, description=(module.__doc__ or "").strip(),
                             formatter_class=argparse.RawDescriptionHelpFormatter,
                             allow_abbrev=False)
        module.add_arguments(cmd)
        cmd.set_defaults(func=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(argv).parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except LoadcurveError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return INTERRUPTED
    except BrokenPipeError:
        # The reader of our stdout went away (e.g. `| head`); not an error worth a message.
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    except OSError as exc:
        print(f"error: {os_error_text(exc)}", file=sys.stderr)
        return 1
    except Exception as exc:  # noqa: BLE001 - a bug; still no traceback unless asked for
        if _interrupted(exc):
            print("error: interrupted", file=sys.stderr)
            return INTERRUPTED
        if os.environ.get("LOADCURVE_DEBUG"):
            raise
        print(f"error: internal error: {type(exc).__name__}: {exc} "
              f"(re-run with LOADCURVE_DEBUG=1 for a traceback, and please report it)",
              file=sys.stderr)
        return 2


def _interrupted(exc: BaseException | None) -> bool:
    """Whether Ctrl-C is behind `exc`: Python 3.11 wraps a KeyboardInterrupt that lands while
    a class is being made (a dataclass's fields, in a module imported on first use) in a
    RuntimeError ("Error calling __set_name__"), which was reported as an internal error."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False
