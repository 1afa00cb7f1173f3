"""Writes the hand-made k6 fixtures in tests/fixtures/loadtools/k6/ (see the README there: k6
itself is not installed here).

    python3 tests/make_k6_fixtures.py

Each file is spelled the way k6's source writes it (internal/output/json/wrapper.go,
internal/output/csv/output.go, lib/netext/httpext/tracer.go and transport.go, the summary
wrapper): the per-request set of points stamped with the request's end, tags in key order,
status 0 with error_code 1050 for a timeout, error_code 1000+status for a 4xx/5xx. The timings
are a fixed pseudo-random sequence, not a measurement.
"""
from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).parent / "fixtures" / "loadtools" / "k6"
URL = "http://127.0.0.1:18923/"
ZONE = timezone(timedelta(hours=2))
PER_REQUEST = ("http_reqs", "http_req_duration", "http_req_blocked", "http_req_connecting",
               "http_req_tls_handshaking", "http_req_sending", "http_req_waiting",
               "http_req_receiving", "http_req_failed")
METRIC_TYPES = {"http_reqs": "counter", "http_req_failed": "rate", "vus": "gauge",
                "iterations": "counter", "iteration_duration": "trend",
                "data_sent": "counter", "data_received": "counter"}


def rfc3339_nano(t_ns: int) -> str:
    """Go's time.RFC3339Nano: trailing zeros of the fraction dropped, the zone's offset."""
    t = datetime.fromtimestamp(t_ns // 10**9, ZONE)
    frac = f"{t_ns % 10**9:09d}".rstrip("0")
    return t.strftime("%Y-%m-%dT%H:%M:%S") + (f".{frac}" if frac else "") + "+02:00"


def requests(seed: int, n: int, start_ns: int, spacing_ns: int):
    """(end ns, duration ns, status, error_code, error) per request."""
    rnd = random.Random(seed)
    t = start_ns
    for i in range(1, n + 1):
        t += spacing_ns + rnd.randrange(0, spacing_ns // 4)
        if i % 11 == 0:
            yield t + 1_000_000_000, 1_000_181_337 + rnd.randrange(9_000), 0, "1050", \
                "request timeout"
            continue
        duration = rnd.randrange(900_000, 9_000_000) + rnd.randrange(0, 1000)
        status = 500 if i % 7 == 0 else 200
        yield t + duration, duration, status, ("1500" if status == 500 else ""), ""


def tags(scenario: str, status: int, error_code: str, error: str) -> dict:
    t = {"expected_response": "true" if 200 <= status < 400 else "false", "group": "",
         "method": "GET", "name": URL, "scenario": scenario, "status": str(status),
         "url": URL}
    if status:
        t["proto"] = "HTTP/1.1"
    if error_code:
        t["error_code"] = error_code
    if error:
        t["error"] = error
    return dict(sorted(t.items()))


def metric_line(name: str, old: bool) -> str:
    kind = METRIC_TYPES.get(name, "trend")
    contains = "time" if kind == "trend" else "data" if name.startswith("data_") else "default"
    data = {"name": name, "type": kind, "contains": contains, "thresholds": [],
            "submetrics": None}
    if old:
        data.pop("name")
    return json.dumps({"type": "Metric", "data": data, "metric": name}, separators=(",", ":"))


def point_line(name: str, t_ns: int, value: float, tag: dict, old: bool) -> str:
    data = {"time": rfc3339_nano(t_ns), "value": value, "tags": tag}
    doc = {"type": "Point", "data": data, "metric": name} if old else \
        {"metric": name, "type": "Point", "data": data}
    return json.dumps(doc, separators=(",", ":"))


def ndjson(rows, scenario: str, old: bool = False) -> tuple[str, list[list[str]]]:
    seen: set[str] = set()
    out: list[str] = []
    csv_rows: list[list[str]] = []

    def emit(name, t_ns, value, tag):
        if name not in seen:
            seen.add(name)
            out.append(metric_line(name, old))
        out.append(point_line(name, t_ns, value, tag, old))
        csv_rows.append([name, str(t_ns // 10**9), f"{value:f}", tag])

    emit("vus", rows[0][0] - rows[0][1], 4, None)
    for end, duration, status, code, error in rows:
        tag = tags(scenario, status, code, error)
        ms = duration / 1e6
        parts = {"http_reqs": 1, "http_req_duration": ms, "http_req_blocked": 0.004512,
                 "http_req_connecting": 0, "http_req_tls_handshaking": 0,
                 "http_req_sending": 0.021, "http_req_waiting": round(ms - 0.05, 6),
                 "http_req_receiving": 0.029, "http_req_failed": 0 if 200 <= status < 400 else 1}
        for name in PER_REQUEST:
            emit(name, end, parts[name], tag)
        iteration = {"group": "", "scenario": scenario}
        emit("data_sent", end, 63, iteration)
        emit("iterations", end, 1, iteration)
    return "\n".join(out) + "\n", csv_rows


CSV_TAGS = ("check", "error", "error_code", "expected_response", "group", "method", "name",
            "proto", "scenario", "service", "status", "subproto", "tls_version", "url")


def k6_csv(csv_rows) -> str:
    import csv
    import io
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["metric_name", "timestamp", "metric_value", *CSV_TAGS, "extra_tags", "metadata"])
    for name, ts, value, tag in csv_rows:
        tag = tag or {}
        w.writerow([name, ts, value, *(tag.get(k, "") for k in CSV_TAGS), "", ""])
    return buf.getvalue()


def trend(values_ms: list[float]) -> dict:
    """k6's trend sink: avg, min, med, max, p(90), p(95) with linear interpolation."""
    v = sorted(values_ms)

    def pct(p):
        if len(v) == 1:
            return v[0]
        x = p / 100 * (len(v) - 1)
        lo = int(x)
        return v[lo] + (v[min(lo + 1, len(v) - 1)] - v[lo]) * (x - lo)

    return {"avg": sum(v) / len(v), "min": v[0], "med": pct(50), "max": v[-1],
            "p(90)": pct(90), "p(95)": pct(95)}


def summaries(rows, run_s: float) -> dict[str, dict]:
    durations = [d / 1e6 for _, d, *_ in rows]
    failed = sum(1 for r in rows if not 200 <= r[2] < 400)
    n = len(rows)
    stats = trend(durations)
    export = {"root_group": {"name": "", "path": "", "id": "d41d8cd98f00b204e9800998ecf8427e",
                             "groups": {}, "checks": {}},
              "metrics": {"http_req_duration": stats,
                          "http_reqs": {"count": n, "rate": n / run_s},
                          "http_req_failed": {"passes": failed, "fails": n - failed,
                                              "value": failed / n},
                          "iterations": {"count": n, "rate": n / run_s}}}
    handle = {"root_group": export["root_group"],
              "options": {"summaryTrendStats": ["avg", "min", "med", "max", "p(90)", "p(95)"],
                          "summaryTimeUnit": "", "noColor": False},
              "state": {"isStdErrTTY": False, "isStdOutTTY": False,
                        "testRunDurationMs": run_s * 1000},
              "metrics": {"http_req_duration": {"type": "trend", "contains": "time",
                                                "values": stats},
                          "http_reqs": {"type": "counter", "contains": "default",
                                        "values": {"count": n, "rate": n / run_s}},
                          "http_req_failed": {"type": "rate", "contains": "default",
                                              "values": {"passes": failed, "fails": n - failed,
                                                         "rate": failed / n}}}}
    v2 = {"config": {"duration": run_s, "execution": "local", "script": "script.js"},
          "metadata": {"generatedAt": "2026-11-26T20:30:00Z", "k6Version": "2.2.0"},
          "results": {"metrics": [
              {"name": "http_req_duration", "type": "trend", "contains": "time",
               "values": stats},
              {"name": "http_reqs", "type": "counter", "contains": "default",
               "values": {"count": n, "rate": n / run_s}},
              {"name": "http_req_failed", "type": "rate", "contains": "default",
               "values": {"matches": failed, "rate": failed / n, "total": n}}]},
          "version": "1.0.0"}
    return {"handmade-summary-export.json": export, "handmade-handle-summary.json": handle,
            "handmade-summary-v2.json": v2}


def main() -> None:
    t0 = 1_795_724_800_000_000_000
    closed = list(requests(1, 24, t0, 20_000_000))
    open_ = list(requests(2, 24, t0, 25_000_000))
    text, csv_rows = ndjson(closed, "default")
    (HERE / "handmade-constant-vus.ndjson").write_text(text)
    (HERE / "handmade-constant-vus.csv").write_text(k6_csv(csv_rows))
    (HERE / "handmade-arrival-rate.ndjson").write_text(ndjson(open_, "steady")[0])
    (HERE / "handmade-old-order.ndjson").write_text(ndjson(closed[:8], "default", old=True)[0])
    run_s = (closed[-1][0] - t0) / 1e9
    for name, doc in summaries(closed, run_s).items():
        (HERE / name).write_text(json.dumps(doc, indent=4) + "\n")


if __name__ == "__main__":
    main()
