"""The order bench/run.sh measures a run's cells in, and how long that should take.

Repetition-major: every cell once, then every cell again, and so on, so slow drift of the
machine spreads over all systems and loads instead of landing on one. Within a repetition the
(load, system) cells come in an order shuffled by --seed (random.Random(seed), one shuffle per
repetition in turn), recorded in run.yml as method.order_seed.

Prints one line per cell, `REPETITION SYSTEM RATE`; with --estimate, one line with the expected
wall time instead. usage: python bench/plan.py --systems pool20,virtual --rates 25,50
  --repetitions 3 --seed 1 [--warmup-s 5 --duration-s 12 --timeout-s 15 --service-ms 200]
  [--only SYSTEM/LOAD ...] [--estimate]
"""
from __future__ import annotations

import argparse
import random
import sys

# Per cell beyond warm-up, window and drain: the host check (about 2 s), the server JVM's
# start, the generator JVM's start, and the server's stop with its JFR dump (measured with
# bench/run.sh on the 2-core development machine, fully busy: 2.8-4 s per cell).
OVERHEAD_S = 5.0
# A pool offered more than its ceiling (threads / service time) builds a queue its window
# requests wait in up to the timeout, so its drain is estimated at the timeout; at or below the
# ceiling, at one service time (measured: pool20 at 100 req/s drained in 0.4 s, at 800 in 15 s).


def cells(systems: list[str], rates: list[int], repetitions: int, seed: int,
          only: list[str]) -> list[tuple[int, str, int]]:
    rng = random.Random(seed)
    order = []
    for rep in range(1, repetitions + 1):
        grid = [(system, rate) for rate in rates for system in systems]
        rng.shuffle(grid)
        order += [(rep, s, r) for s, r in grid
                  if not only or f"{s}/r{r}" in only or f"{s}/r{r}.{rep}" in only]
    return order


def drain_s(system: str, rate: int, service_ms: int, timeout_s: float) -> float:
    """The expected drain: the timeout for a saturated pool, else one service time."""
    if system.startswith("pool"):
        ceiling = int(system[len("pool"):]) / (service_ms / 1000)
        if rate > ceiling:
            return timeout_s
    return service_ms / 1000


def estimate_s(order, warmup_s: float, duration_s: float, timeout_s: float, service_ms: int) -> float:
    return sum(OVERHEAD_S + warmup_s + duration_s + drain_s(s, r, service_ms, timeout_s)
               for _, s, r in order)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--systems", required=True)
    p.add_argument("--rates", required=True)
    p.add_argument("--repetitions", type=int, required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--warmup-s", type=float, default=5)
    p.add_argument("--duration-s", type=float, default=12)
    p.add_argument("--timeout-s", type=float, default=15)
    p.add_argument("--service-ms", type=int, default=200)
    p.add_argument("--only", action="append", default=[])
    p.add_argument("--estimate", action="store_true")
    args = p.parse_args(argv)
    order = cells([s for s in args.systems.split(",") if s],
                  [int(r) for r in args.rates.split(",") if r], args.repetitions, args.seed, args.only)
    if args.estimate:
        total = estimate_s(order, args.warmup_s, args.duration_s, args.timeout_s, args.service_ms)
        saturated = sum(1 for _, s, r in order
                        if drain_s(s, r, args.service_ms, args.timeout_s) == args.timeout_s)
        print(f"{len(order)} cell runs ({saturated} saturated, drained up to {args.timeout_s:g} s), "
              f"about {total / 60:.0f} min ({total:.0f} s) plus any wait for a quiet host")
        return 0
    for rep, system, rate in order:
        print(rep, system, rate)
    return 0


if __name__ == "__main__":
    sys.exit(main())
