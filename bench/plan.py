"""The order bench/run.sh measures a run's cells in, and how long that should take.

Repetition-major: every cell once, then every cell again, and so on, so slow drift of the
machine spreads over all systems, scenarios and loads instead of landing on one. Within a
repetition the (scenario, load, system) cells come in an order shuffled by --seed
(random.Random(seed), one shuffle per repetition in turn), recorded in run.yml as
method.order_seed.

Two forms. With --scenarios (bench/catalog.py: ids, rates, endpoints), a cell is (scenario,
target, rate); without, the first runs' form: one implicit scenario, /sleep?ms=--service-ms at
--rates. Prints one line per cell, `REPETITION SCENARIO SYSTEM RATE ENDPOINT` (SCENARIO `-`
without scenarios); with --estimate, one line with the expected wall time instead. A bad
--targets/--scenarios/--only is one `error:` line, exit status 2.

usage: python bench/plan.py --systems LIST [--url-systems] (--rates LIST --service-ms MS | --scenarios LIST)
  --repetitions 3 --seed 1 [--warmup-s 5 [--warmup-max-s 60] --duration-s 12 --timeout-s 15 --pool-threads 100]
  [--only [SCENARIO/]SYSTEM/LOAD[.REP] ...] [--generators N] [--estimate]
"""
from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import catalog  # noqa: E402  (bench/ is put on the path just above)

# Per cell beyond warm-up, window and drain: the host check (about 2 s), the server JVM's
# start, the generator JVM's start, and the server's stop with its JFR dump (measured with
# bench/run.sh on the 2-core development machine, fully busy: 2.8-4 s per cell).
OVERHEAD_S = 5.0
# The size a cell repetition adds to the run folder (measured on short runs of every target:
# a JFR recording with bench/loadcurve.jfc is 220-360 KB, most of it the constant pools and
# metadata that every recording carries; .hlog and counts file 10-30 KB together).
JFR_KB = 450
LOGS_KB = 30
# With several generators per cell, they are told to start this far ahead (bench/run.sh's
# START_AHEAD_MS), so that every JVM is ready by then.
START_AHEAD_S = 4.0
# A pool offered more than its ceiling (threads / service time) builds a queue its window
# requests wait in up to the timeout, so its drain is estimated at the timeout; at or below the
# ceiling, at one service time (measured: pool20 at 100 req/s drained in 0.4 s, at 800 in 15 s).


def scenario_list(args) -> list[tuple[str, list[int], str, float]]:
    """[(scenario id or '-', rates, endpoint, service ms)]"""
    if args.scenarios:
        return [(sid, rates, catalog.SCENARIOS[sid][1], catalog.SCENARIOS[sid][2])
                for sid, rates in catalog.parse_scenarios(args.scenarios)]
    rates = [int(r) for r in args.rates.split(",") if r]
    return [("-", rates, f"/sleep?ms={args.service_ms}", args.service_ms)]


def cells(scenarios, systems: list[str], repetitions: int, seed: int, only: list[str]):
    """[(rep, scenario, system, rate, endpoint, service_ms)] in measuring order."""
    rng = random.Random(seed)
    order = []
    for rep in range(1, repetitions + 1):
        grid = [(sid, system, rate, endpoint, service)
                for sid, rates, endpoint, service in scenarios for rate in rates for system in systems]
        rng.shuffle(grid)
        for sid, system, rate, endpoint, service in grid:
            name = f"{system}/r{rate}" if sid == "-" else f"{sid}/{system}/r{rate}"
            if not only or name in only or f"{name}.{rep}" in only:
                order.append((rep, sid, system, rate, endpoint, service))
    return order


# The generator's steadiness rule judges this many seconds (Steadiness.SECONDS in bench/loadgen).
STEADY_SECONDS = 5


def warmup_s(args, saturated: bool) -> float:
    """A cell's expected warm-up. Fixed: --warmup-s. Auto (--warmup-max-s): a cell below its
    ceiling is steady at the rule's first look; a saturated one once its queue stops growing,
    which is when requests start timing out (the timeout) and the rule has seen that long."""
    if args.warmup_max_s is None:
        return args.warmup_s
    first_look = max(args.warmup_s, STEADY_SECONDS)
    expected = args.timeout_s + STEADY_SECONDS if saturated else first_look
    return min(args.warmup_max_s, max(first_look, expected))


def drain_s(system: str, rate: int, service_ms: float, timeout_s: float, pool_threads: int) -> float:
    """The expected drain: the timeout for a saturated pool, else one service time."""
    if system not in catalog.TARGETS and not catalog.LEGACY_SYSTEM.match(system):
        return service_ms / 1000  # a server given by URL: its limit is not known
    limit = catalog.concurrency_limit(system, pool_threads)
    if limit and service_ms and rate > limit / (service_ms / 1000):
        return timeout_s
    return service_ms / 1000


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--systems", required=True)
    p.add_argument("--url-systems", action="store_true",
                   help="--systems are servers given by URL (bench/urls.py), not catalog targets")
    p.add_argument("--rates")
    p.add_argument("--scenarios")
    p.add_argument("--repetitions", type=int, required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--warmup-s", type=float, default=5)
    p.add_argument("--warmup-max-s", type=float,
                   help="the generator's --warmup auto: a cell warms from --warmup-s up to this")
    p.add_argument("--duration-s", type=float, default=12)
    p.add_argument("--timeout-s", type=float, default=15)
    p.add_argument("--service-ms", type=int, default=200)
    p.add_argument("--pool-threads", type=int, default=100)
    p.add_argument("--jfr-repetitions", type=int, help="JFR in repetitions 1..N only (default all)")
    p.add_argument("--only", action="append", default=[])
    p.add_argument("--generators", type=int, default=1, help="generator processes per cell")
    p.add_argument("--estimate", action="store_true")
    args = p.parse_args(argv)
    try:
        systems = (args.systems.split(",") if args.url_systems
                   else catalog.parse_targets(args.systems))
        scenarios = scenario_list(args)
    except catalog.SpecError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    order = cells(scenarios, systems, args.repetitions, args.seed, args.only)
    if args.estimate:
        drains = [drain_s(s, r, ms, args.timeout_s, args.pool_threads) for _, _, s, r, _, ms in order]
        warmups = [warmup_s(args, d == args.timeout_s) for d in drains]
        overhead = OVERHEAD_S + (START_AHEAD_S if args.generators > 1 else 0)
        total = sum(overhead + w + args.duration_s + d for w, d in zip(warmups, drains))
        saturated = sum(1 for d in drains if d == args.timeout_s)
        jfr_reps = args.repetitions if args.jfr_repetitions is None else args.jfr_repetitions
        size_mb = sum(LOGS_KB * args.generators + (JFR_KB if rep <= jfr_reps else 0)
                      for rep, *_ in order) / 1024
        longest = ""
        if args.warmup_max_s is not None:
            most = total + sum(args.warmup_max_s - w for w in warmups)
            longest = f", at most {most / 60:.0f} min if no warm-up is steady before its maximum"
        print(f"{len(order)} cell runs ({saturated} saturated, drained up to {args.timeout_s:g} s), "
              f"about {total / 60:.0f} min ({total:.0f} s) plus any wait for a quiet host"
              f"{longest}, up to about {size_mb:.0f} MB")
        return 0
    for rep, sid, system, rate, endpoint, _ in order:
        print(rep, sid, system, rate, endpoint)
    return 0


if __name__ == "__main__":
    sys.exit(main())
