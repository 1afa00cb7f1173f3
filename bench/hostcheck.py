"""Check that the machine is quiet before a cell: bench/run.sh calls this before each one.

Measures the busy share of all cores over about 2 s from /proc/stat (busy = all but idle and
iowait). Above --threshold, measures again every 2 s until it calms down or --busy-wait-s have
passed; then, still busy: --on-busy warn prints a warning and records verdict busy, --on-busy
refuse prints one `error:` line and exits with status 3. Prints on stdout the generator's
--host-check value, which goes into the cell's counts.json as `host_check`:

    busy_share_before=0.071,loadavg_1m_before=0.42,waited_s=0,threshold=0.2,action=warn,verdict=quiet

Standard library only. usage: python bench/hostcheck.py [--threshold 0.2] [--busy-wait-s 120]
                                  [--on-busy warn|refuse] [--sample-s 2] [--cell NAME]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def cpu_jiffies() -> tuple[int, int]:
    """(busy, total) jiffies of all cores since boot, from /proc/stat's first line."""
    fields = Path("/proc/stat").read_text(encoding="ascii").splitlines()[0].split()
    values = [int(v) for v in fields[1:9]]  # user nice system idle iowait irq softirq steal
    total = sum(values)
    return total - values[3] - values[4], total


def busy_share(sample_s: float) -> float:
    busy0, total0 = cpu_jiffies()
    time.sleep(sample_s)
    busy1, total1 = cpu_jiffies()
    return (busy1 - busy0) / (total1 - total0) if total1 > total0 else 0.0


def loadavg_1m() -> float:
    return float(Path("/proc/loadavg").read_text(encoding="ascii").split()[0])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--threshold", type=float, default=0.20, help="busy share of all cores (0.20)")
    p.add_argument("--busy-wait-s", type=float, default=120, help="how long to wait for calm (120)")
    p.add_argument("--on-busy", choices=("warn", "refuse"), default="warn")
    p.add_argument("--sample-s", type=float, default=2.0, help="length of one measurement (2)")
    p.add_argument("--cell", default="the next cell", help="name for the messages")
    args = p.parse_args(argv)
    started = time.monotonic()
    share = busy_share(args.sample_s)
    while share > args.threshold and time.monotonic() - started < args.busy_wait_s:
        share = busy_share(args.sample_s)
    waited = time.monotonic() - started - args.sample_s
    verdict = "busy" if share > args.threshold else "quiet"
    if verdict == "busy":
        what = (f"the machine is {share:.0%} busy (threshold {args.threshold:.0%}) after waiting "
                f"{waited:.0f} s for it to calm, before {args.cell}")
        if args.on_busy == "refuse":
            print(f"error: {what}; refusing to measure (--on-busy refuse)", file=sys.stderr)
            return 3
        print(f"warning: {what}; measuring anyway, recorded as host_check verdict busy",
              file=sys.stderr)
    print(f"busy_share_before={share:.3f},loadavg_1m_before={loadavg_1m():.2f},"
          f"waited_s={max(0.0, waited):.0f},threshold={args.threshold:g},action={args.on_busy},"
          f"verdict={verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
