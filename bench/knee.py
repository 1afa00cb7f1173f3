"""The knee search of bench/run.sh --find-knee: which rate to probe next, and the rates to measure.

Per system, short probes from --start req/s, doubling while the probe is good, until a probe is
saturated (the rule below) or the next rate would pass --ceiling (the generator's self-tested
limit); then --bisections probes halve the interval between the last good and the first
saturated rate. The knee is the last good rate K, the first saturated one S; the curve measured
in full afterwards is K/4, K/2, 3K/4, K, S and 3S/2 (whole req/s, at most the ceiling, each once).

A probe is saturated when, of the requests whose intended send time fell in its window:
  - timed out + errors > 1 % of those sent, or
  - the generator sent fewer than 99 % of the offered rate (or left any unsent), or
  - the server completed fewer than 95 % of the offered rate during the window (a queue grows
    before its requests time out), or
  - with --p99-ms, the p99 latency of those answered in time is above that bound.
A server that has not settled before a probe (bench/settle.py: not back to its quiet answer
time within --settle-max-s) is still working off the previous probe, and a rate that leaves it
so is not one it sustains: that probe counts as saturated and the search stops there, its knee
the highest good probe left (an error if there is none).

Each probe gets the host check a cell gets (bench/hostcheck.py, and the settle wait); the
counts file's host_check is kept with the probe.

The search is kept in STATE (JSON: the rule, and per system each probe's rate, verdict and why,
its warm-up, window, outcomes and p99, the knee and the chosen rates); bench/run.sh keeps it as
the run's knee.json (read by analysis/read/knee.py) and the probes' own files under knee/, and
run.yml gets it as method.knee_search (each probe's rate, verdict, why and host check). One
call per step:

    python bench/knee.py step --state FILE --system ID --start 10 --ceiling R [--bisections 2]
        [--p99-ms X] [--rate R --counts FILE --hlog FILE]   # the probe just measured, if any
        [--unsettled-before R --settle ITEMS]   # or: the server did not settle before probe R
    -> prints `probe RATE`, or `done RATE,RATE,...` (the curve)
    python bench/knee.py rates --state FILE   # the union of every system's curve
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from analysis import atomic  # noqa: E402  (the repository root is put on the path just above)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from settle import IN_A_ROW  # noqa: E402  (bench/, just above)

MAX_FAILED_SHARE = 0.01
MIN_SEND_SHARE = 0.99
MIN_COMPLETION_SHARE = 0.95
CURVE_FACTORS_OF_KNEE = (0.25, 0.5, 0.75, 1.0)
PAST_THE_KNEE_FACTORS = (1.0, 1.5)


def rule_text(p99_ms: float | None) -> str:
    text = (f"saturated when timed out + errors > {MAX_FAILED_SHARE:.0%} of the window's sent "
            f"requests, sent < {MIN_SEND_SHARE:.0%} of the offered rate (or any not sent), or "
            f"completed < {MIN_COMPLETION_SHARE:.0%} of the offered rate in the window")
    text += f", or p99 of the answered ones > {p99_ms:g} ms" if p99_ms else ""
    return text + ("; a probe after which the server did not settle again before the next one "
                   "is saturated too, and the search stops there")


def verdict(counts: dict, p99_ms: float | None, hlog: Path | None) -> tuple[str, str]:
    """('good' | 'saturated', why) for one probe's counts file (and .hlog for the p99 bound)."""
    w, offered = counts["window"], counts["offered_rate"]
    failed = w["timed_out"] + w["errors"]
    why = []
    if w["sent"] and failed > MAX_FAILED_SHARE * w["sent"]:
        why.append(f"{w['timed_out']} timed out + {w['errors']} errors of {w['sent']} sent")
    if counts["achieved_send_rate"] < MIN_SEND_SHARE * offered or w["not_sent"]:
        why.append(f"sent {counts['achieved_send_rate']:.1f}/s of {offered:g} offered, "
                   f"{w['not_sent']} not sent")
    if counts["achieved_completion_rate"] < MIN_COMPLETION_SHARE * offered:
        why.append(f"completed {counts['achieved_completion_rate']:.1f}/s of {offered:g} offered")
    p99 = None
    if p99_ms and hlog is not None and w["completed"]:
        from analysis.read.hdr.log import read_hlog  # only a p99 bound needs the analysis
        p99 = read_hlog(hlog).merged(None).value_at_percentile(99.0) / 1000
        if p99 > p99_ms:
            why.append(f"p99 {p99:.1f} ms > {p99_ms:g} ms")
    if why:
        return "saturated", "; ".join(why)
    return "good", (f"{failed} of {w['sent']} failed, sent {counts['achieved_send_rate']:.1f}/s, "
                    f"completed {counts['achieved_completion_rate']:.1f}/s"
                    + (f", p99 {p99:.1f} ms" if p99 is not None else ""))


def probe_figures(counts: dict, hlog: Path | None) -> dict:
    """What the run's knee.json keeps of one probe beside its verdict (issue 32: the methodology
    prints them as a table): the warm-up and window it had, its window's outcomes, and the p99
    of the answered ones (whether or not --p99-ms bounds it; null with none answered)."""
    w = counts["window"]
    p99 = None
    if hlog is not None and w["completed"]:
        from analysis.read.hdr.log import read_hlog  # only the probe's p99 needs the analysis
        p99 = read_hlog(hlog).merged(None).value_at_percentile(99.0) / 1000
    return {"warmup_s": counts["warmup_s"], "window_s": counts["duration_s"],
            **{k: w[k] for k in ("sent", "completed", "timed_out", "errors", "not_sent")},
            "p99_ms": p99}


def warmup_text(counts: dict) -> str:
    """The probe's warm-up (counts `warmup:`, issue 32) as a few words for its why, so the
    methodology's probe table says whether a probe was measured warm; "" for older files."""
    w = counts.get("warmup")
    if not w:
        return ""
    return (f"; warm-up {w['used_s']} s ({w['mode']}, "
            f"{'steady' if w['reached'] else 'not steady'})")


def next_step(probes: list[dict], start: int, ceiling: int, bisections: int) -> int | None:
    """The next rate to probe, or None when the search is over."""
    if not probes:
        return start
    good = [p["rate"] for p in probes if p["verdict"] == "good"]
    saturated = [p["rate"] for p in probes if p["verdict"] == "saturated"]
    if not saturated:
        doubled = 2 * max(good)
        return doubled if doubled <= ceiling else None
    if not good:
        return None
    first = next(i for i, p in enumerate(probes) if p["verdict"] == "saturated")
    low, high = max(good), min(saturated)
    middle = (low + high) // 2
    if len(probes) - 1 - first >= bisections or middle in (low, high):
        return None
    return middle


def curve(probes: list[dict], ceiling: int) -> tuple[int | None, int | None, list[int]]:
    """(knee, first saturated rate, the rates to measure in full)."""
    good = [p["rate"] for p in probes if p["verdict"] == "good"]
    saturated = [p["rate"] for p in probes if p["verdict"] == "saturated"]
    knee = max(good) if good else None
    past = min(saturated) if saturated else None
    rates = {round(knee * f) for f in CURVE_FACTORS_OF_KNEE} if knee else set()
    rates |= {round(past * f) for f in PAST_THE_KNEE_FACTORS} if past else set()
    return knee, past, sorted(r for r in rates if 1 <= r <= ceiling)


def stop_unsettled(probes: list[dict], rate: int, settle_items: str) -> str:
    """The server had not settled before the probe at RATE (SETTLE_ITEMS: settle.py's
    settle=unsettled,settle_waited_s=X,settle_bound_ms=X): the probe before it, which left the
    server so, becomes saturated. Returns why the search stopped."""
    items = dict(item.split("=", 1) for item in settle_items.split(","))
    waited, bound = float(items["settle_waited_s"]), float(items["settle_bound_ms"])
    never = f"never {IN_A_ROW} answers in a row within {bound:g} ms"
    if not probes:
        return (f"the server had not settled before the first probe, at {rate} req/s, in "
                f"{waited:g} s ({never})")
    last = probes[-1]
    last["verdict"] = "saturated"
    last["why"] += f"; the server was not settled {waited:g} s later ({never})"
    return (f"the server was not settled {waited:g} s after the {last['rate']} req/s probe "
            f"({never}), so the {rate} req/s probe was not made")


def load(path: Path, p99_ms: float | None) -> dict:
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    return {"rule": rule_text(p99_ms), "systems": {}}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("step")
    s.add_argument("--state", required=True, type=Path)
    s.add_argument("--system", required=True)
    s.add_argument("--start", required=True, type=int)
    s.add_argument("--ceiling", required=True, type=int)
    s.add_argument("--bisections", type=int, default=2)
    s.add_argument("--p99-ms", type=float)
    s.add_argument("--rate", type=int)
    s.add_argument("--counts", type=Path)
    s.add_argument("--hlog", type=Path)
    s.add_argument("--unsettled-before", type=int, metavar="RATE",
                   help="the server did not settle before the probe at RATE: stop the search")
    s.add_argument("--settle", help="settle.py wait's items, with --unsettled-before")
    r = sub.add_parser("rates")
    r.add_argument("--state", required=True, type=Path)
    args = p.parse_args(argv)
    state = load(args.state, getattr(args, "p99_ms", None))
    if args.command == "rates":
        rates = sorted({r for s in state["systems"].values() for r in s["rates"]})
        print(",".join(map(str, rates)))
        return 0
    search = state["systems"].setdefault(args.system, {"probes": []})
    if args.rate is not None:
        counts = json.loads(args.counts.read_text(encoding="utf-8"))
        v, why = verdict(counts, args.p99_ms, args.hlog)
        why += warmup_text(counts)
        probe = {"rate": args.rate, "verdict": v, "why": why,
                 **probe_figures(counts, args.hlog)}
        if counts.get("host_check"):
            probe["host_check"] = counts["host_check"]
        search["probes"].append(probe)
        print(f"   probe {args.rate} req/s: {v} ({why})", file=sys.stderr)
    if args.unsettled_before is not None:
        search["stopped"] = stop_unsettled(search["probes"], args.unsettled_before, args.settle)
        print(f"   knee search stopped: {search['stopped']}", file=sys.stderr)
        rate = None
    else:
        rate = next_step(search["probes"], args.start, args.ceiling, args.bisections)
    status = 0
    if rate is None:
        knee, past, rates = curve(search["probes"], args.ceiling)
        search.update({"knee": knee, "first_saturated": past, "rates": rates})
        if knee is None:
            print(f"error: {no_knee(args.system, search, args.start)}", file=sys.stderr)
            status = 1
        else:
            print("done " + ",".join(map(str, rates)))
    else:
        print(f"probe {rate}")
    atomic.write_text(args.state, json.dumps(state, indent=1) + "\n")
    return status


def no_knee(system: str, search: dict, start: int) -> str:
    """Why a search found no good rate, and what to do."""
    if "stopped" in search:
        return (f"{system}: the knee search found no good rate before it stopped: "
                f"{search['stopped']}; let the server recover (or restart it), then start lower "
                f"with --knee-start or allow longer with --settle-max-s")
    return f"{system} is saturated already at {start} req/s; start lower with --knee-start"


if __name__ == "__main__":
    sys.exit(main())
