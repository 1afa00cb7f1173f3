"""What recording 10 million request samples into 1-second HdrHistogram intervals costs
(analysis/read/loadtools/record.py, issue 23), beside what pandas takes just to read the same
two columns from a CSV.

    .venv/bin/python bench/perf/record_speed.py [--samples 10000000] [--repeat 3]

The samples look like a JMeter run: 10 minutes, send times in ms (nearly in order), latencies
in whole ms (lognormal, median 5 ms, with a 2% tail up to 10 s), 1% errors, 0.1% timeouts.
Timed, best of --repeat, wall and CPU: record_samples in the native unit (ms), in us and in ns;
with the coordinated-omission correction at 10 ms; writing the .hlog of the result; and
pandas.read_csv(usecols=[timestamp, elapsed]) of a CSV of those two columns (written to a temp
file first, not timed). Target (issue 23): recording well under the pandas read.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from analysis.read.loadtools.record import record_samples  # noqa: E402
from analysis.read.loadtools.results import RequestSamples, ToolInfo  # noqa: E402
from analysis.read.hdr.log_writer import hlog_text  # noqa: E402


def make_samples(n: int, seed: int = 23) -> RequestSamples:
    rng = np.random.default_rng(seed)
    start = np.floor(1_700_000_000_000 + np.sort(rng.uniform(0, 600_000, n)))
    start += rng.integers(-50, 50, n)                    # not quite in order, as a .jtl
    latency_ms = np.maximum(rng.lognormal(np.log(5), 0.8, n).astype(np.int64), 0)
    tail = rng.random(n) < 0.02
    latency_ms[tail] = rng.integers(50, 10_000, int(tail.sum()))
    return RequestSamples(path="bench.jtl", info=ToolInfo("jmeter-jtl", "JMeter"),
                          start_ms=start, latency_ns=latency_ms * 1_000_000,
                          ok=rng.random(n) >= 0.01, timed_out=rng.random(n) < 0.001,
                          native_unit="ms")


def best(fn, repeat: int):
    walls, cpus, result = [], [], None
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus), result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    samples = make_samples(args.samples)
    rows = []
    for label, kwargs in (("record, ms (native)", {}), ("record, us", {"unit": "us"}),
                          ("record, ns", {"unit": "ns"}),
                          ("record, ms + correction 10 ms", {"expected_interval_ms": 10.0})):
        wall, cpu, rec = best(lambda: record_samples(samples, **kwargs), args.repeat)
        extra = f", {rec.correction_values:,} extra values" if rec.correction_values else ""
        rows.append((label, wall, cpu, f"{len(rec.intervals)} intervals{extra}"))
    rec = record_samples(samples)
    wall, cpu, text = best(lambda: hlog_text(rec.intervals, 1.0), args.repeat)
    rows.append((".hlog text of the ms intervals", wall, cpu, f"{len(text) / 1e6:.1f} MB"))
    import pandas as pd
    with tempfile.TemporaryDirectory() as tmp:
        csv = os.path.join(tmp, "two_columns.csv")
        pd.DataFrame({"timeStamp": samples.start_ms.astype(np.int64),
                      "elapsed": samples.latency_ns // 1_000_000}).to_csv(csv, index=False)
        size = os.path.getsize(csv)
        wall, cpu, _ = best(lambda: pd.read_csv(csv, usecols=["timeStamp", "elapsed"],
                                                dtype={"timeStamp": np.int64,
                                                       "elapsed": np.int64}), args.repeat)
        rows.append(("pandas.read_csv, the two columns", wall, cpu, f"{size / 1e6:.0f} MB CSV"))
    print(f"{args.samples:,} samples, best of {args.repeat}")
    for label, wall, cpu, note in rows:
        print(f"{label:<36} wall {wall:6.2f} s   cpu {cpu:6.2f} s   {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
