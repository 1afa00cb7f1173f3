"""The report's vocabulary, declared once: which statistics there are and what they are called,
their units and labels, how numbers are printed, and which fields the front matter, the data
file and the CSV files carry. aggregate, datafiles (YAML and CSV), charts, new-post and, through
the data file, the templates' table headers all read it from here; tests/test_vocabulary.py
ties docs/data-format.md to it.
"""
from __future__ import annotations

import math
from typing import Any

# --- statistics -----------------------------------------------------------------------------

# (name, percentile, label): the latency percentiles computed for every cell, in order
PERCENTILES: tuple[tuple[str, float, str], ...] = (
    ("p50", 50.0, "p50"), ("p90", 90.0, "p90"), ("p95", 95.0, "p95"), ("p99", 99.0, "p99"),
    ("p999", 99.9, "p99.9"))
PERCENTILE_NAMES = tuple(name for name, _, _ in PERCENTILES)
# Every latency statistic of a cell, as data keys (ms)
LATENCY_KEYS = tuple(f"{name}_ms" for name in PERCENTILE_NAMES) + ("max_ms", "mean_ms", "stddev_ms")
# The latency statistics the load-curve table shows, in its order (seed 000's table)
TABLE_LATENCY = ("p50", "p95", "p99", "p999", "max")
# Statistics taken per interval for the time series (and the series CSV)
SERIES_PERCENTILES = (("p50", 50.0), ("p99", 99.0))
# Statistics whose spread across repetitions is given (`spread: {<key>: [min, median, max]}`)
SPREAD_STATS = tuple(f"{name}_ms" for name in PERCENTILE_NAMES) + ("max_ms", "mean_ms")
# The statistics two runs can be compared on (`compare --metric`, comparisons/<id>.yml
# `metric:`); here so that the comparison reader needs no statistics module
COMPARED_METRICS = PERCENTILE_NAMES + ("max", "mean")

# Units: latencies are in ms in every output; rates in requests per second
LATENCY_UNIT = "ms"
RATE_UNIT = "req/s"
# recorded unit -> how it is written in prose
UNIT_TEXT = {"ns": "ns", "us": "µs", "ms": "ms"}

# --- labels ---------------------------------------------------------------------------------

# run.yml's environment / load_generator keys -> label in the methodology, in display order
ENVIRONMENT_LABELS = {
    "cpu": "CPU", "cores": "Cores", "smt": "SMT", "memory": "Memory", "os": "OS",
    "kernel": "Kernel", "jdk": "JDK", "jvm_flags": "JVM flags", "gc": "GC", "heap": "Heap",
    "shared_host": "Generator and server on one host",
}
LOAD_GENERATOR_LABELS = {
    "name": "Load generator", "model": "Load model", "timeout_s": "Timeout",
    "warmup_s": "Warm-up", "connections": "Connections", "drain": "Drain after the window",
    # a server given by URL (bench/run.sh --url): what the harness knows of it and of itself
    "target": "Target", "server_observed": "Server side observed", "request": "Request",
    "tls": "TLS", "generator_host": "Generator host", "generator_jdk": "Generator JDK",
    "generator_flags": "Generator JVM flags", "self_test": "Generator limit (self-test)",
}
# run.yml's method keys (schema 2) -> label in the methodology
METHOD_LABELS = {"repetitions": "Repetitions per cell", "order": "Order of the cells",
                 "order_seed": "Order seed", "drain": "Drain",
                 "pool_threads": "Threads of each pool target",
                 "jfr_repetitions": "Repetitions recorded with JFR"}
LOAD_MODEL_TEXT = {"open": "open loop (latency from intended send time)",
                   "closed": "closed loop (waits for each reply; hides stalls)"}
# chart kind -> the title its charts are captioned with ("<title> at <load>")
CHART_TITLES = {"spectrum": "Percentile spectrum", "latency_over_time": "Latency over time",
                "throughput_over_time": "Throughput over time"}

# JMH's benchmark modes (-bm) as the report names them
JMH_MODE_TEXT = {"thrpt": "throughput", "avgt": "average time", "sample": "sampling time",
                 "ss": "single shot"}


def jmh_params_key(params: dict[str, str], skip: tuple[str, ...] = ()) -> str:
    """{'messages': '1000', 'ringSize': '16'} -> 'messages=1000 ringSize=16' (sorted names):
    a JMH result's params as its row id and its CSV column."""
    return " ".join(f"{k}={v}" for k, v in sorted(params.items()) if k not in skip)


# --- files ----------------------------------------------------------------------------------

# Front matter of a generated report page and of a drafted post, in order
REPORT_FRONT_MATTER = ("layout", "title", "run", "date", "description", "tags", "systems_text",
                       "loads_text", "image",
                       "generated_by")
POST_FRONT_MATTER = ("layout", "title", "date", "description", "tags", "run", "image")
# Columns of assets/data/<run>/<system>-<load>.csv (one row per interval)
# (count and latencies of the completed requests; throughput_rps, timed_out and in_flight_mean
# from the counts file, schema 2)
SERIES_COLUMNS = ("repetition", "t_s", "length_s", "count", "throughput_rps", "p50_ms", "p99_ms",
                  "max_ms", "timed_out", "in_flight_mean")
# Columns of assets/data/<run>/load-curve.csv (one row per cell)
# (a censored statistic: its column empty, its bound in <name>_at_least_ms)
AT_LEAST_KEYS = tuple(f"{name}_at_least_ms" for name in PERCENTILE_NAMES) + (
    "max_at_least_ms", "mean_at_least_ms")
TABLE_CSV_COLUMNS = ("load", "offered_rate", "clients", "system", "count", "throughput_rps",
                     "goodput_rps", "saturated", "saturation", *LATENCY_KEYS,
                     *AT_LEAST_KEYS, "sent", "completed", "timed_out", "errors", "not_sent",
                     "drops", "in_flight", "host_busy", "repetitions", "source")


def table_csv_columns(closed: bool) -> tuple[str, ...]:
    """load-curve.csv's columns: a closed loop's (issue 23) add `connections` after `clients`."""
    if not closed:
        return TABLE_CSV_COLUMNS
    at = TABLE_CSV_COLUMNS.index("clients") + 1
    return TABLE_CSV_COLUMNS[:at] + ("connections",) + TABLE_CSV_COLUMNS[at:]


# Columns of assets/data/<run>/summary.csv (issue 11; one row per scenario and target at the
# scenario's summary load point; a censored statistic: empty, its bound in <name>_at_least_ms)
SUMMARY_CSV_COLUMNS = ("scenario", "load", "offered_rate", "system", "family", "model",
                       "throughput_rps", "p50_ms", "p99_ms", "max_ms", "p50_at_least_ms",
                       "p99_at_least_ms", "max_at_least_ms", "errors_timed_out", "saturated")
# Fields of a cell that also carry their printed text as `<field>_text` (what stat.html prints
# for field=<field>): data key -> text name
CELL_TEXT_FIELDS = {**{f"{name}_ms": name for name in PERCENTILE_NAMES},
                    "max_ms": "max", "mean_ms": "mean", "throughput_rps": "throughput",
                    "goodput_rps": "goodput",
                    "count": "count", "drops": "drops", "in_flight": "in_flight",
                    "in_flight_max": "in_flight_max", "littles_law": "littles_law",
                    "sent": "sent", "completed": "completed", "timed_out": "timed_out",
                    "not_sent": "not_sent",
                    "saturation": "saturation",
                    "in_flight_at_window_start": "in_flight_start",
                    "in_flight_at_window_end": "in_flight_end",
                    "time_split.mean.waiting_ms": "waiting",
                    "time_split.mean.waiting_pct": "waiting_pct",
                    "spread.p50_ms": "p50_range", "spread.p99_ms": "p99_range",
                    "host.machine_cpu": "machine_cpu", "host.server_cpu": "server_cpu",
                    "cpu_account.cpu_ms": "cpu", "cpu_account.handler_ms": "handler_cpu",
                    "cpu_account.coordination_ms": "coordination_cpu",
                    "cpu_account.gc_vm_ms": "gc_vm_cpu",
                    "cpu_account.p99.waiting_pct": "p99_waiting_pct",
                    # issue 32: the repetitions' steadiness classes, where the steady parts
                    # start, and the whole windows' figures beside steady-part ones
                    "steady_counts": "steadiness", "steady_from": "steady_from",
                    "whole_window.p50_ms": "whole_p50", "whole_window.p99_ms": "whole_p99"}

# --- number formats -------------------------------------------------------------------------


def r3(x: float | None) -> float | None:
    """Round to 3 decimals (ms -> microsecond resolution) for the data file."""
    if x is None:
        return None
    value = round(float(x), 3)
    return 0.0 if value == 0 else value  # no '-0.0'


def r1(x: float | None) -> float | None:
    return None if x is None else (round(float(x), 1) or 0.0)


def fmt_number(x: float) -> str:
    """25 -> '25', 2500 -> '2,500', 12.5 -> '12.5'."""
    if float(x).is_integer():
        return f"{int(x):,}"
    return f"{x:,.3f}".rstrip("0").rstrip(".")


def fmt_ms(x: float | None) -> str:
    """About three significant figures, the way a table in a post prints latencies."""
    if x is None:
        return "–"
    ax = abs(x)
    if ax >= 100:
        return f"{x:,.0f}"
    if ax >= 10:
        return f"{x:.1f}"
    if ax >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def fmt_timeout(ms: float) -> str:
    """A timeout (or another bound) in the table's words: 15000 -> '15 s', 2500 -> '2.5 s',
    11093.342 -> '11.1 s', 800 -> '800 ms'."""
    if ms >= 1000:
        return f"{fmt_number(round(ms / 1000.0, 1))} s"
    return f"{fmt_ms(ms)} ms"


def fmt_censored(value_ms: float | None, at_least_ms: float | None, *, table: bool = False,
                 at_most: bool = False) -> str:
    """A statistic that may be only a bound: its number (fmt_ms), or '> 15,000' (ms, as
    stat.html prints it in prose) / '> 15 s' (table=True) when censored, or '≤ 9.34' when the
    number is only an upper bound (`at_most`: Percentile.upper_bound)."""
    if at_least_ms is not None:
        return f"> {fmt_timeout(at_least_ms)}" if table else f"> {fmt_ms(at_least_ms)}"
    if at_most and value_ms is not None:
        return f"≤ {fmt_ms(value_ms)}"
    return fmt_ms(value_ms)


def fmt_rate(x: float | None) -> str:
    """A rate or share with one decimal: 14.2857 -> '14.3' ('–' when unknown)."""
    return "–" if x is None else f"{x:,.1f}"


fmt_pct = fmt_rate


def fmt_count(n: int | None) -> str:
    return "–" if n is None else f"{n:,}"


def plain(value: Any) -> str:
    """A value as Liquid prints a data value: nil as '', booleans as true/false, floats as Ruby
    writes them (shortest round trip, '.0' kept, exponent form below 1e-4 and from 1e16)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return ""
        text = repr(value)          # Python's switch to exponents is at the same places
        if "e" in text:
            mantissa, exponent = text.split("e")
            return f"{mantissa if '.' in mantissa else mantissa + '.0'}e{exponent}"
        return repr(value)
    return str(value)


def load_label(offered_rate: float, clients: int | None) -> str:
    per_client = offered_rate / clients if clients else None
    if per_client is None:
        return f"{fmt_number(offered_rate)}/s"
    return f"{clients:,} × {fmt_number(round(per_client, 3))}/s"


# --- load points ------------------------------------------------------------------------------
# A load point is an offered rate (open loop) or, issue 23, a number of connections or users
# (closed loop: `LoadPoint.offered_rate` None). How one is named and ordered is said here only.

# the word run.yml used for a closed point -> (singular, plural)
CLOSED_LOAD_WORDS = {"connections": ("connection", "connections"), "users": ("user", "users")}


def load_order(lp: Any) -> float:
    """A load point's place among its run's: by offered rate, or by connections for a closed
    loop (a run's load points are all of one kind: read/manifest_checks.py refuses a mix)."""
    return lp.offered_rate if lp.offered_rate is not None else lp.connections


def closed_load_text(lp: Any) -> str:
    """'200 connections', '50 users', '1 connection'."""
    one, many = CLOSED_LOAD_WORDS[getattr(lp, "connections_key", None) or "connections"]
    return f"{lp.connections:,} {one if lp.connections == 1 else many}"


def load_point_text(lp: Any, rate: Any = fmt_number, unit: str = "req/s offered") -> str:
    """How a load point is named: '200 connections' for a closed loop; for an offered rate,
    `rate` of it and `unit` ('25 req/s offered'; each place keeps the number format its
    outputs always had: fmt_number, plain, or ',g')."""
    if lp.offered_rate is None:
        return closed_load_text(lp)
    return f"{rate(lp.offered_rate)} {unit}"


def has_closed_loads(load_points: Any) -> bool:
    """Whether these load points are a closed loop's (connections or users)."""
    return any(lp.offered_rate is None for lp in load_points)


def display_value(key: str, value: Any) -> str:
    """A manifest setting as the methodology prints it."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if key == "model":
        return LOAD_MODEL_TEXT.get(value, str(value))
    if key.endswith("_s") and isinstance(value, (int, float)):
        return f"{fmt_number(value)} s"
    return str(value)


def labelled(block: dict[str, Any], labels: dict[str, str]) -> list[dict[str, Any]]:
    return [{"key": key, "label": label, "value": display_value(key, block[key])}
            for key, label in labels.items() if key in block]
