"""Writes the hand-made pre-v12.6 vegeta reports in tests/fixtures/loadtools/vegeta/ (see the
README there: the Go module proxy serves vegeta v12.8.4 and newer only).

    python3 tests/make_vegeta_old_fixtures.py

The numbers are those of a real attack: v12.8.4-report.json, vegeta v12.8.4's own JSON report
of the attack that also wrote v12.8.4-report.txt. They are laid out as vegeta v12.5.1's source
writes them (lib/reporters.go NewTextReporter, lib/metrics.go): the text report prints
"Requests [total, rate]" and "Latencies [mean, 50, 95, 99, max]", each duration with Go's
`time.Duration.String()` unrounded; the JSON report has no `min`, `90th` or `throughput`.
"""
from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent / "fixtures" / "loadtools" / "vegeta"
SOURCE = HERE / "v12.8.4-report.json"
# the JSON keys of v12.5.1's Metrics and LatencyMetrics, in its field order
METRICS_KEYS = ("latencies", "bytes_in", "bytes_out", "earliest", "latest", "end", "duration",
                "wait", "requests", "rate", "success", "status_codes", "errors")
LATENCY_KEYS = ("total", "mean", "50th", "95th", "99th", "max")


def go_duration(ns: int) -> str:
    """Go's time.Duration.String(): "1.564328ms", "12.5µs", "1m2.3s", trailing zeros cut."""
    if ns == 0:
        return "0s"
    sign, ns = ("-", -ns) if ns < 0 else ("", ns)
    if ns < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= size:
                return sign + _fraction(ns, size) + unit
    hours, rest = divmod(ns, 3_600_000_000_000)
    minutes, rest = divmod(rest, 60_000_000_000)
    text = _fraction(rest, 1_000_000_000) + "s"
    if hours or minutes:
        text = f"{minutes}m" + text
    if hours:
        text = f"{hours}h" + text
    return sign + text


def _fraction(value: int, size: int) -> str:
    whole, frac = divmod(value, size)
    digits = str(size).count("0")
    tail = f"{frac:0{digits}d}".rstrip("0") if digits else ""
    return f"{whole}.{tail}" if tail else str(whole)


def text_report(m: dict) -> str:
    lat = m["latencies"]
    rows = [("Requests", "[total, rate]", f"{m['requests']}, {m['rate']:.2f}"),
            ("Duration", "[total, attack, wait]",
             ", ".join(go_duration(d) for d in (m["duration"] + m["wait"], m["duration"],
                                                m["wait"]))),
            ("Latencies", "[mean, 50, 95, 99, max]",
             ", ".join(go_duration(lat[k]) for k in ("mean", "50th", "95th", "99th", "max"))),
            ("Bytes In", "[total, mean]",
             f"{m['bytes_in']['total']}, {m['bytes_in']['mean']:.2f}"),
            ("Bytes Out", "[total, mean]",
             f"{m['bytes_out']['total']}, {m['bytes_out']['mean']:.2f}"),
            ("Success", "[ratio]", f"{m['success'] * 100:.2f}%"),
            ("Status Codes", "[code:count]",
             "".join(f"{code}:{n}  " for code, n in sorted(m["status_codes"].items())))]
    # tabwriter(minwidth 0, tabwidth 8, padding 2, ' '): each column as wide as its widest cell
    # plus two spaces; the last cell of a line is not padded
    widths = [max(len(r[i]) for r in rows) + 2 for i in (0, 1)]
    lines = [r[0].ljust(widths[0]) + r[1].ljust(widths[1]) + r[2] for r in rows]
    return "\n".join(lines) + "\nError Set:\n" + "".join(e + "\n" for e in m["errors"])


def json_report(m: dict) -> str:
    old = {k: m[k] for k in METRICS_KEYS}
    old["latencies"] = {k: m["latencies"][k] for k in LATENCY_KEYS}
    return json.dumps(old, separators=(",", ":")) + "\n"


def main() -> None:
    metrics = json.loads(SOURCE.read_text())
    (HERE / "handmade-v12.5-report.txt").write_text(text_report(metrics), encoding="utf-8")
    (HERE / "handmade-v12.5-report.json").write_text(json_report(metrics), encoding="utf-8")


if __name__ == "__main__":
    main()
