"""Reading a big load-tool file (issue 23) against `pandas.read_csv` of just its time columns.

    .venv/bin/python bench/perf/import_vs_pandas.py [--samples N] [--format jmeter-jtl] [--repeat R]

Writes a result file of N samples (default 10,000,000: a JMeter 5 default-column .jtl of about
1.1 GB) into a temporary folder, then, side by side in this one process, R times each in turns:

    ours:   analysis.read.loadtools.read_results(path, format)
    pandas: pandas.read_csv(path, usecols=<its timestamp and latency columns>)

and prints the wall time of each, the ratio ours/pandas (best of R each, and turn by turn:
on a shared machine the two calls of one turn see the same load), and the peak resident
memory of each (sampled every 5 ms by a thread; both the process's whole RSS at the peak and
the rise over the RSS before the call). The file is deleted at the end.
Targets (issue 23): ours <= 2x pandas, and a peak RSS under 1 GB. Exit status 1 when ours
returns the wrong number of samples or misses the memory target; the speed ratio is reported,
not enforced (it depends on the machine and its load).

Another format is added by writing its generator and the pandas baseline's columns into
FORMATS (k6 NDJSON: a generator of `--out json` points, and its baseline).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import numpy as np    # noqa: E402
import pandas as pd   # noqa: E402

from analysis.read.loadtools import read_results   # noqa: E402

JTL_HEADER = ("timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,"
              "failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,"
              "Connect\n")
BLOCK = 100_000


def write_jtl(path: Path, samples: int, seed: int = 1) -> None:
    """A JMeter 5 default-column CSV as `jmeter -l` writes it: 200 threads, four labels, 1%
    HTTP 500s and 0.1% read timeouts, times in whole ms."""
    rng = np.random.default_rng(seed)
    tails = (  # responseCode .. allThreads, by outcome: ok, 500, timeout
        "200,OK,users 1-{},text,true,,2173,120,200,200,http://127.0.0.1:8080/{},{},0,{}\n",
        "500,Internal Server Error,users 1-{},text,false,,232,120,200,200,"
        "http://127.0.0.1:8080/{},{},0,{}\n",
        "Non HTTP response code: java.net.SocketTimeoutException,Non HTTP response message: "
        "Read timed out,users 1-{},text,false,,2783,120,200,200,http://127.0.0.1:8080/{},{},0,{}\n")
    labels = ("home", "search", "item", "cart")
    t = 1_795_000_000_000
    with open(path, "w", encoding="utf-8") as f:
        f.write(JTL_HEADER)
        done = 0
        while done < samples:
            n = min(BLOCK, samples - done)
            stamps = t + np.cumsum(rng.integers(0, 2, n))
            t = int(stamps[-1])
            elapsed = rng.lognormal(3.0, 0.8, n).astype(np.int64)
            roll = rng.random(n)
            outcome = np.where(roll < 0.001, 2, np.where(roll < 0.011, 1, 0))
            label = rng.integers(0, 4, n)
            thread = rng.integers(1, 201, n)
            connect = rng.integers(0, 3, n)
            latency = np.maximum(elapsed - 2, 0)
            f.write("".join(
                f"{s},{e},{labels[lb]},"
                + tails[o].format(th, labels[lb], 0 if o == 2 else la, c)
                for s, e, lb, o, th, la, c in zip(
                    stamps.tolist(), elapsed.tolist(), label.tolist(), outcome.tolist(),
                    thread.tolist(), latency.tolist(), connect.tolist())))
            done += n


FORMATS = {
    # format: (generator, the pandas baseline's columns: its timestamp and latency)
    "jmeter-jtl": (write_jtl, ["timeStamp", "elapsed"]),
}


class PeakRss:
    """The highest resident set size seen while a block runs, sampled from /proc."""

    def __init__(self, every_s: float = 0.005):
        self.every_s = every_s

    @staticmethod
    def now() -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def __enter__(self):
        self.before = self.peak = self.now()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def _watch(self):
        while not self._stop.wait(self.every_s):
            self.peak = max(self.peak, self.now())

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.now())


def timed(call):
    with PeakRss() as rss:
        start = time.perf_counter()
        result = call()
        wall = time.perf_counter() - start
    return result, wall, rss


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=10_000_000)
    parser.add_argument("--format", choices=sorted(FORMATS), default="jmeter-jtl")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    generate, columns = FORMATS[args.format]
    mb = 1024 * 1024
    with tempfile.TemporaryDirectory(prefix="import_vs_pandas-") as tmp:
        path = Path(tmp) / f"big.{args.format}"
        start = time.perf_counter()
        generate(path, args.samples)
        size = path.stat().st_size / mb
        print(f"generated {args.samples:,} samples of {args.format}: {size:,.0f} MiB in "
              f"{time.perf_counter() - start:.1f} s", flush=True)
        best = {"ours": float("inf"), "pandas": float("inf")}
        peaks = {"ours": 0, "pandas": 0}
        turns = []     # ours/pandas of each turn: the two calls of a turn saw the same load
        failed = False
        for turn in range(args.repeat):
            walls = {}
            for name in ("pandas", "ours"):
                if name == "ours":
                    result, wall, rss = timed(lambda: read_results(path, args.format))
                    count = len(result)
                    if count != args.samples:
                        print(f"ours read {count:,} samples, not {args.samples:,}")
                        failed = True
                else:
                    result, wall, rss = timed(lambda: pd.read_csv(path, usecols=columns))
                    count = len(result)
                del result
                walls[name] = wall
                best[name] = min(best[name], wall)
                peaks[name] = max(peaks[name], rss.peak)
                print(f"  {name:6} {wall:7.2f} s  peak RSS {rss.peak / mb:7.0f} MiB "
                      f"(+{(rss.peak - rss.before) / mb:.0f} MiB over {rss.before / mb:.0f})"
                      f"  {count:,} rows", flush=True)
            turns.append(walls["ours"] / walls["pandas"])
        ratio = best["ours"] / best["pandas"]
        print(f"ours/pandas = {ratio:.2f} (best {best['ours']:.2f} s / {best['pandas']:.2f} s;"
              f" target <= 2.00); by turn {', '.join(f'{r:.2f}' for r in turns)} (median "
              f"{statistics.median(turns):.2f}); ours peak RSS {peaks['ours'] / mb:.0f} MiB "
              f"(target < 1024)")
        if peaks["ours"] >= 1024 * mb:
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
