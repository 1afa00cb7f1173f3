"""Summarise one JMH result file (-rf json, csv or text): score ± error per benchmark and params.

For every benchmark x mode x params: the score ± error as JMH reports it (the half-width of
its 99.9 % confidence interval; "n/a" when JMH could not compute one, e.g. from a single
iteration), the unit, and the forks' min / median / max of their per-fork means (from the
JSON's rawData; CSV and text results carry no per-fork data). Secondary metrics (-prof gc's
gc.alloc.rate.norm ...) and sample-mode percentiles follow their benchmark as ":name" rows,
as in JMH's own table. The first line says what ran: JMH and JDK versions, forks, warm-up and
measurement iterations.

--json prints the same as one JSON document (numbers unrounded; null where JMH wrote NaN).
Warnings go to standard error: each benchmark that threw, by name, params, iteration and
exception (JMH's console output shows them: "<failure>" and the stack trace; JMH leaves such a
benchmark out of its table, or keeps the iterations before the failure), and holes in a
parameter grid (the result formats only leave a failed benchmark out). Exit status: 0; 1 with
one `error:` line for a damaged file or one without results (every benchmark failed, or the
output stops before JMH's table, as with -foe true).
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

from analysis.read.jmh import read_jmh
from analysis.read.jmh.results import JmhError, JmhFile, fork_spread


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="a JMH result file (-rf json, csv or text)")
    parser.add_argument("--json", action="store_true",
                        help="print the results as JSON instead of a table")


def run(args) -> int:
    jmh = read_jmh(args.file)
    for warning in jmh.warnings:
        print(f"warning: {jmh.path}: {warning}", file=sys.stderr)
    if not jmh.results:
        raise JmhError(no_results_message(jmh), path=jmh.path)
    if args.json:
        json.dump(as_json(jmh), sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(as_table(jmh))
    sys.stdout.flush()
    return 0


def no_results_message(jmh: JmhFile) -> str:
    if jmh.failures:
        return (f"no benchmark results: every benchmark failed ({len(jmh.failures)}, each in a "
                "warning)")
    empty = "an empty array" if jmh.format == "json" else "no rows"
    return f"no benchmark results ({empty}: every benchmark failed, or none was selected)"


def as_json(jmh: JmhFile) -> dict:
    results = []
    for r in jmh.results:
        spread = fork_spread(r)
        p = r.primary
        results.append({
            "benchmark": r.benchmark, "mode": r.mode, "params": r.params,
            "score": r.score, "error": r.error,
            "confidence": list(p.confidence) if p.confidence else None,
            "unit": r.unit, "samples": p.samples, "approximate": p.approximate,
            "forks": {"means": r.forks,
                      "min": spread[0] if spread else None,
                      "median": spread[1] if spread else None,
                      "max": spread[2] if spread else None},
            "percentiles": p.percentiles,
            "secondary": {name: {"score": m.score, "error": m.error, "unit": m.unit,
                                 "confidence": list(m.confidence) if m.confidence else None}
                          for name, m in r.secondary_metrics.items()},
            "settings": asdict(r.settings),
            "source": r.source,
        })
    return {"file": jmh.path, "format": jmh.format, "results": results,
            "failures": [asdict(f) for f in jmh.failures], "warnings": jmh.warnings}


def number(value: float | None) -> str:
    """JMH's table has 3 decimals; tiny values keep 4 significant digits instead of "0.000"."""
    if value is None:
        return "n/a"
    if value == 0 or abs(value) >= 1:
        return f"{value:.3f}"
    return f"{value:.4g}"


def percentile_label(key: str) -> str:
    """JSON's percentile key "99.9" -> "p99.9", "50.0" -> "p50"."""
    return "p" + (key[:-2] if key.endswith(".0") else key)


def short_names(names: list[str]) -> dict[str, str]:
    """Drop the package prefix every benchmark shares, as JMH's table does."""
    parts = [n.split(".") for n in names]
    common = 0
    while (all(len(p) > common + 2 for p in parts)
           and len({p[common] for p in parts}) == 1):
        common += 1
    return {n: ".".join(p[common:]) for n, p in zip(names, parts)}


def _one(values) -> str:
    distinct = sorted({v for v in values if v is not None}, key=str)
    if not distinct:
        return "?"
    return str(distinct[0]) if len(distinct) == 1 else "varies"


def settings_line(jmh: JmhFile) -> str:
    s = [r.settings for r in jmh.results]
    parts = [f"{jmh.path}: JMH {jmh.format}, {len(jmh.results)} results"]
    if any(x.jmh_version for x in s):
        parts.append(f"JMH {_one(x.jmh_version for x in s)}")
    if any(x.jdk_version or x.vm_name for x in s):
        parts.append(f"JDK {_one(x.jdk_version for x in s)} "
                     f"({_one(x.vm_name for x in s)} {_one(x.vm_version for x in s)})")
    if any(x.forks is not None for x in s):
        parts.append(f"forks {_one(x.forks for x in s)}")
        if all(x.warmup_iterations == 0 for x in s):
            parts.append("no warm-up")
        else:
            parts.append(f"warm-up {_one(x.warmup_iterations for x in s)} x "
                         f"{_one(x.warmup_time for x in s)}")
        parts.append(f"measurement {_one(x.measurement_iterations for x in s)} x "
                     f"{_one(x.measurement_time for x in s)}")
    if any(x.threads is not None for x in s):
        parts.append(f"threads {_one(x.threads for x in s)}")
    if any(x.blackhole_mode for x in s):
        parts.append(f"blackhole {_one(x.blackhole_mode for x in s)}")
    jvm_args = {" ".join(x.jvm_args) for x in s if x.jvm_args}
    if jvm_args:
        parts.append("JVM args " + (jvm_args.pop() if len(jvm_args) == 1 else "varies"))
    return ", ".join(parts)


def as_table(jmh: JmhFile) -> str:
    names = short_names([r.benchmark for r in jmh.results])
    header = ["Benchmark", "Params", "Mode", "Score", "", "Error", "Units",
              "Forks", "Fork min", "median", "max"]
    rows = []
    for r in jmh.results:
        spread = fork_spread(r)
        fork_cells = [number(v) for v in spread] if spread else ["", "", ""]
        params = " ".join(f"{k}={v}" for k, v in r.params.items())
        score = ("≈ " if r.primary.approximate else "") + number(r.score)
        rows.append([names[r.benchmark], params, r.mode, score, "±", number(r.error),
                     r.unit or "", str(len(r.forks)) if r.forks else "", *fork_cells])
        # JMH computes percentiles of the iterations in every mode; only sample mode's are
        # percentiles of the operations' times.
        for key, value in (r.primary.percentiles.items() if r.mode == "sample" else ()):
            rows.append([f"  :{percentile_label(key)}", "", r.mode, number(value), "", "",
                         r.unit or "", "", "", "", ""])
        for name, m in r.secondary_metrics.items():
            rows.append([f"  :{name}", "", r.mode, number(m.score), "±", number(m.error),
                         m.unit or "", "", "", "", ""])
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    left = {0, 1, 2, 6}                     # text columns; numbers align right

    def line(row):
        cells = [c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in
                 enumerate(zip(row, widths))]
        return "  ".join(cells).rstrip()

    return "\n".join([settings_line(jmh), line(header), *map(line, rows)]) + "\n"
