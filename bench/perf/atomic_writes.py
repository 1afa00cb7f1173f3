"""What writing an output costs (issue 25: a run writes ~130 files since the flame graphs): ms per
file for a plain write (not atomic: the floor), the way analysis/atomic.py wrote until issue 25
(mkdir, tempfile.mkstemp, chmod by path, rename) and atomic.write_bytes now, each into a new
folder tree laid out as a run's outputs, interleaved, median of --repeat.

    .venv/bin/python bench/perf/atomic_writes.py [--files 400] [--repeat 7]

The load average is printed beside the figures (the machine is shared).
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from analysis import atomic  # noqa: E402


def plain(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def until_issue_25(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


WAYS = {"plain write (not atomic)": plain, "mkstemp (until issue 25)": until_issue_25,
        "atomic.write_bytes": atomic.write_bytes}


def one_pass(write, root: Path, files: int) -> float:
    """ms per file for `files` new files, 8 to a folder, SVG-sized (20 KB)."""
    data = b"<svg>" + b"x" * 20_000 + b"</svg>"
    started = time.perf_counter()
    for i in range(files):
        write(root / f"cell{i // 8}" / f"flame-{i}.svg", data)
    return (time.perf_counter() - started) / files * 1e3


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=400)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    times: dict[str, list[float]] = {name: [] for name in WAYS}
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeat):
            for name, write in WAYS.items():   # interleaved: disturbance hits each alike
                root = Path(tmp) / f"{r}-{len(times[name])}-{name[:5]}"
                times[name].append(one_pass(write, root, args.files))
                shutil.rmtree(root)
    print(f"{args.files} new files of 20 KB, median of {args.repeat} "
          f"[load {load:.2f} -> {os.getloadavg()[0]:.2f}]")
    floor = statistics.median(times["plain write (not atomic)"])
    for name, values in times.items():
        median = statistics.median(values)
        print(f"  {name:<28} {median:6.3f} ms a file  ({median / floor:4.2f} x plain; "
              f"min {min(values):.3f}, max {max(values):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
