"""Reading a big k6 `--out json` file against pandas reading the same points as k6's CSV
(issue 23's bar: at most 2x `pandas.read_csv` of the timestamp and latency columns).

    .venv/bin/python bench/perf/k6_ndjson_vs_pandas.py [--points 10000000] [--repeat 3]

Writes bench/perf/out/k6-<points>.ndjson and .csv once (kept, not committed): per request the 9
points k6 writes (http_reqs, http_req_duration, blocked, connecting, tls_handshaking, sending,
waiting, receiving, http_req_failed) and per iteration 2 more (data_sent, iterations), tags as a
default k6 run has them. Then times, side by side in one process, the k6-json reader on the
NDJSON and `pandas.read_csv(usecols=[metric_name, timestamp, metric_value])` on the CSV of the
same points (the columns it needs to find the requests' times and latencies), best of --repeat
each, with the reader's peak memory (tracemalloc) beside.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import pandas as pd  # noqa: E402

from analysis.read.loadtools import k6  # noqa: E402

OUT = REPO / "bench" / "perf" / "out"
PER_REQUEST = ("http_reqs", "http_req_duration", "http_req_blocked", "http_req_connecting",
               "http_req_tls_handshaking", "http_req_sending", "http_req_waiting",
               "http_req_receiving", "http_req_failed")
PER_ITERATION = ("data_sent", "iterations")
URL = "http://127.0.0.1:8080/api/items"
TAGS = {200: ('{"expected_response":"true","group":"","method":"GET","name":"%s",'
              '"proto":"HTTP/1.1","scenario":"default","status":"200","url":"%s"}' % (URL, URL)),
        500: ('{"error_code":"1500","expected_response":"false","group":"","method":"GET",'
              '"name":"%s","proto":"HTTP/1.1","scenario":"default","status":"500","url":"%s"}'
              % (URL, URL))}
ITERATION_TAGS = '{"group":"","scenario":"default"}'
CSV_HEADER = ("metric_name,timestamp,metric_value,check,error,error_code,expected_response,"
              "group,method,name,proto,scenario,service,status,subproto,tls_version,url,"
              "extra_tags,metadata\n")


def _csv_tags(status: int) -> str:
    code = "1500" if status == 500 else ""
    expected = "true" if status == 200 else "false"
    return f",,{code},{expected},,GET,{URL},HTTP/1.1,default,,{status},,,{URL},,"


def generate(points: int) -> tuple[Path, Path]:
    ndjson, csv = OUT / f"k6-{points}.ndjson", OUT / f"k6-{points}.csv"
    if ndjson.exists() and csv.exists():
        return ndjson, csv
    OUT.mkdir(parents=True, exist_ok=True)
    per_request = len(PER_REQUEST) + len(PER_ITERATION)
    t0 = 1_795_724_800_000_000_000
    with open(ndjson, "w") as nj, open(csv, "w") as cv:
        cv.write(CSV_HEADER)
        nj.write('{"type":"Metric","data":{"name":"http_req_duration","type":"trend",'
                 '"contains":"time","thresholds":[],"submetrics":null},'
                 '"metric":"http_req_duration"}\n')
        for i in range(points // per_request):
            end = t0 + i * 1_000_123
            status = 500 if i % 97 == 0 else 200
            duration = 0.5 + (i * 7919 % 100_000) / 1000
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(end // 10**9)) \
                + f".{end % 10**9:09d}".rstrip("0").rstrip(".") + "Z"
            values = (1, duration, 0.002, 0, 0, 0.01, duration - 0.03, 0.02,
                      0 if status == 200 else 1)
            tags, ctags = TAGS[status], _csv_tags(status)
            for name, value in zip(PER_REQUEST, values):
                nj.write(f'{{"metric":"{name}","type":"Point","data":{{"time":"{stamp}",'
                         f'"value":{value!r},"tags":{tags}}}}}\n')
                cv.write(f"{name},{end // 10**9},{value:f}{ctags}\n")
            for name, value in zip(PER_ITERATION, (63, 1)):
                nj.write(f'{{"metric":"{name}","type":"Point","data":{{"time":"{stamp}",'
                         f'"value":{value},"tags":{ITERATION_TAGS}}}}}\n')
                cv.write(f"{name},{end // 10**9},{value:f},,,,,,,,,default,,,,,,,\n")
    return ndjson, csv


def best_of(repeat: int, fn) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    return best, result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    ndjson, csv = generate(args.points)
    read_csv = lambda: pd.read_csv(csv, usecols=["metric_name", "timestamp", "metric_value"])  # noqa: E731
    read_k6 = lambda: k6.read(str(ndjson), "k6-json", {})  # noqa: E731
    t_pandas, frame = best_of(args.repeat, read_csv)
    t_reader, samples = best_of(args.repeat, read_k6)
    tracemalloc.start()
    read_k6()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    requests = int((frame["metric_name"] == "http_req_duration").sum())
    assert len(samples) == requests, (len(samples), requests)
    print(f"k6 NDJSON: {os.path.getsize(ndjson) / 1e9:.2f} GB, {len(frame):,} points, "
          f"{requests:,} requests; CSV of the same points {os.path.getsize(csv) / 1e9:.2f} GB")
    print(f"pandas.read_csv (3 columns of the CSV): {t_pandas:.2f} s")
    print(f"k6-json reader (the NDJSON):            {t_reader:.2f} s  "
          f"= {t_reader / t_pandas:.2f}x pandas; peak traced memory {peak / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
