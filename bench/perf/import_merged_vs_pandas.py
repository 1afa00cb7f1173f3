"""`python -m analysis import A B C D` (issue 33: one cell's files of four load generators,
merged) against `pandas.read_csv` of the same files' time columns.

    .venv/bin/python bench/perf/import_merged_vs_pandas.py [--samples N] [--parts 4] [--repeat R]

Writes a JMeter 5 default-column .jtl of N samples (default 10,000,000, as
import_vs_pandas.py does) and deals its rows round robin into `--parts` files, header kept in
each, in a temporary folder. Then, side by side in this one process, R times each in turns:

    merged: the import command on the parts (read each, merge, record, print --json)
    one:    the import command on the whole file
    pandas: pandas.read_csv(part, usecols=["timeStamp", "elapsed"]) of every part, concatenated

and prints the wall time and peak RSS of each, and the ratios merged/pandas and merged/one
(best of R, and turn by turn: the calls of one turn see the same load). Target (issue 33):
merged <= 2x pandas. Exit status 1 when the merge's request count is not N; the speed is
reported, not enforced (it depends on the machine and its load). The files are deleted at the
end.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import pandas as pd   # noqa: E402

from analysis import cli   # noqa: E402
from import_vs_pandas import timed, write_jtl   # noqa: E402

COLUMNS = ["timeStamp", "elapsed"]


def split(path: Path, parts: int) -> list[Path]:
    """The rows of `path` dealt round robin into `parts` files, the header line in each."""
    outs = [path.with_name(f"part{i + 1}.jtl") for i in range(parts)]
    files = [open(p, "w", encoding="utf-8") for p in outs]
    try:
        with open(path, encoding="utf-8") as f:
            header = f.readline()
            for out in files:
                out.write(header)
            for i, line in enumerate(f):
                files[i % parts].write(line)
    finally:
        for out in files:
            out.close()
    return outs


def run_import(paths: list[Path]) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli.main(["import", *map(str, paths), "--json", "-q"])
    if code != 0:
        raise SystemExit(f"import failed with exit status {code}")
    return json.loads(out.getvalue())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=10_000_000)
    parser.add_argument("--parts", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    mb = 1024 * 1024
    with tempfile.TemporaryDirectory(prefix="import_merged_vs_pandas-") as tmp:
        whole = Path(tmp) / "whole.jtl"
        start = time.perf_counter()
        write_jtl(whole, args.samples)
        parts = split(whole, args.parts)
        print(f"generated {args.samples:,} samples in {args.parts} files of "
              f"{sum(p.stat().st_size for p in parts) / mb:,.0f} MiB together in "
              f"{time.perf_counter() - start:.1f} s", flush=True)
        calls = {
            "pandas": lambda: pd.concat([pd.read_csv(p, usecols=COLUMNS) for p in parts]),
            "merged": lambda: run_import(parts),
            "one": lambda: run_import([whole]),
        }
        best = {name: float("inf") for name in calls}
        turns = []
        failed = False
        for _ in range(args.repeat):
            walls = {}
            for name, call in calls.items():
                result, wall, rss = timed(call)
                count = len(result) if name == "pandas" else result["requests"]
                if name == "merged" and count != args.samples:
                    print(f"the merge counted {count:,} requests, not {args.samples:,}")
                    failed = True
                del result
                walls[name] = wall
                best[name] = min(best[name], wall)
                print(f"  {name:6} {wall:7.2f} s  peak RSS {rss.peak / mb:7.0f} MiB "
                      f"(+{(rss.peak - rss.before) / mb:.0f} MiB over {rss.before / mb:.0f})"
                      f"  {count:,} requests", flush=True)
            turns.append((walls["merged"] / walls["pandas"], walls["merged"] / walls["one"]))
        print(f"merged/pandas = {best['merged'] / best['pandas']:.2f} (best "
              f"{best['merged']:.2f} s / {best['pandas']:.2f} s; target <= 2.00); merged/one = "
              f"{best['merged'] / best['one']:.2f}; by turn "
              f"{', '.join(f'{a:.2f}/{b:.2f}' for a, b in turns)} (median merged/pandas "
              f"{statistics.median(a for a, _ in turns):.2f})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
