"""Re-record tests/golden/jmh/expected.json: what the JMH fixture run's report must say, taken
from JMH's JSON files themselves with the standard library only - no loadcurve code - so the
report's numbers are checked against an independent reading (tests/test_jmh_report.py).

Per result (table, method, mode, params): JMH's score, error, unit, confidence interval,
forks, the -prof gc scores and the sample-mode percentiles, copied; and its comparison with
the table's baseline recomputed here: the speed-up (thrpt: score / baseline; avgt, sample, ss:
baseline / score) and the relation - baseline; same when the 99.9 % intervals overlap; else
faster or slower (unknown intervals, JMH's NaN: faster or slower with ci_known false).

usage: python tests/golden/jmh/record.py     (make golden runs it through ./regen)
"""
import json
import math
from pathlib import Path

HERE = Path(__file__).resolve().parent
RUN = HERE.parents[1] / "fixtures" / "runs" / "jmh-short"
# table id -> (file, whether the baseline is compared per params (a column per method) or
# per mode (a row per variant), the baseline method) - as the fixture's run.yml says
TABLES = {"ring": ("ring.json", "params", "platformThreads"),
          "pipeline": ("pipeline.json", "mode", "javaStream"),
          "modes": ("modes.json", "mode", "javaStream")}
GC = ("gc.alloc.rate.norm", "gc.alloc.rate", "gc.count", "gc.time")
PERCENTILES = ("50.0", "90.0", "99.0", "99.9", "99.99", "100.0")


def num(x):
    if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x):
        return float(x)
    return None


def interval(e):
    ci = e["primaryMetric"].get("scoreConfidence") or []
    lo_hi = [num(v) for v in ci]
    if len(lo_hi) == 2 and None not in lo_hi:
        return lo_hi
    s, err = num(e["primaryMetric"].get("score")), num(e["primaryMetric"].get("scoreError"))
    return None if s is None or err is None else [s - err, s + err]


def main():
    out = []
    for table, (name, group, base_method) in TABLES.items():
        entries = json.loads((RUN / name).read_text())
        for e in entries:
            method = e["benchmark"].rsplit(".", 1)[1]
            params = " ".join(f"{k}={v}" for k, v in sorted((e.get("params") or {}).items()))
            pm = e["primaryMetric"]
            base = next(b for b in entries if b["benchmark"].rsplit(".", 1)[1] == base_method
                        and b["mode"] == e["mode"]
                        and (group == "mode" or b.get("params") == e.get("params")))
            s, bs = num(pm["score"]), num(base["primaryMetric"]["score"])
            ratio = s / bs if e["mode"] == "thrpt" else bs / s
            a, b = interval(e), interval(base)
            if e is base:
                relation = "baseline"
            elif a and b and a[0] <= b[1] and b[0] <= a[1]:
                relation = "same"
            else:
                relation = "faster" if ratio >= 1 else "slower"
            sec = {k.lstrip("\u00b7"): v for k, v in (e.get("secondaryMetrics") or {}).items()}
            out.append({
                "table": table, "benchmark": e["benchmark"], "method": method,
                "mode": e["mode"], "params": params, "score": s,
                "error": num(pm.get("scoreError")), "unit": pm["scoreUnit"],
                "forks": e.get("forks"), "interval": a,
                "gc": {k: num(sec[k]["score"]) for k in GC if k in sec},
                "percentiles": ({k: num(pm["scorePercentiles"][k]) for k in PERCENTILES}
                                if e["mode"] == "sample" else {}),
                "ratio": 1.0 if e is base else ratio, "relation": relation,
                "ci_known": bool(a and b)})
    (HERE / "expected.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"{len(out)} results -> {HERE / 'expected.json'}")


if __name__ == "__main__":
    main()
