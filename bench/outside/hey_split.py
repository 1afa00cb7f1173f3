"""Split what hey printed with bench/outside/hey-csv-and-summary.tmpl into its two files.

    T=$(cat bench/outside/hey-csv-and-summary.tmpl)
    hey -o "$T" ... | python3 bench/outside/hey_split.py CSV_OUT TEXT_OUT

hey (0.1.4) prints either its CSV (`-o csv`) or its text summary, never both, and its CSV leaves
out the requests that got no answer; a second invocation for the summary would count other
requests. `-o` also takes a Go template over the report of the run, so our template prints two
parts from that one report: rows in the column layout of `hey -o csv` (what the hey-csv reader
takes), a marker line, then the summary lines the build reads (Total, Slowest, Requests/sec, the
status code and error distributions, in the sections the hey-text reader parses). The lines
before the marker go to CSV_OUT, the lines after it to TEXT_OUT.
"""
from __future__ import annotations

import sys
from pathlib import Path

MARKER = b"== hey summary of the same run =="


def split(output: bytes) -> tuple[bytes, bytes]:
    """(the CSV part, the summary part); ValueError when the marker line is missing."""
    lines = output.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.rstrip(b"\r\n") == MARKER:
            return b"".join(lines[:i]), b"".join(lines[i + 1:])
    raise ValueError("hey's output has no summary marker line: was it run with "
                     "-o \"$(cat bench/outside/hey-csv-and-summary.tmpl)\"?")


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: hey_split.py CSV_OUT TEXT_OUT  (hey's output on stdin)", file=sys.stderr)
        return 2
    try:
        csv, text = split(sys.stdin.buffer.read())
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    Path(argv[0]).write_bytes(csv)
    Path(argv[1]).write_bytes(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
