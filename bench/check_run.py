"""Check a run that bench/run.sh measured: the analysis reads every cell, and counts agree.

For each cell of <run-dir>/run.yml: analysis.hlog.read_hlog reads the .hlog without warnings;
the number of interval histograms is the window length; the log's total count equals the
generator's count of completions in the window (<system>/<load>.counts.json); the counts file
balances (sent = completed + errors + timeouts + in flight at the end); and run.yml carries
the counts file's sent/errors/timeouts. Prints one line per check and closes with
'N passed, N failed'. Exit status 1 when any check failed.

usage: python bench/check_run.py RUN_DIR   (from the repository root, or with it on PYTHONPATH)
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from analysis.read.hdr.log import read_hlog  # noqa: E402  (the path is set just above)
from analysis.read.manifest import load_manifest  # noqa: E402


class Checks:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def check(self, name: str, ok: bool, detail: str = "") -> None:
        if ok:
            self.passed += 1
            print(f"ok   {name}")
        else:
            self.failed += 1
            print(f"FAIL {name}{': ' + detail if detail else ''}")


def check_run(run_dir: Path, checks: Checks) -> None:
    manifest = load_manifest(run_dir)
    durations = {lp.id: lp.duration_s for lp in manifest.load_points}
    checks.check(f"{run_dir.name}: run.yml loads, value_unit us", manifest.value_unit == "us",
                 f"value_unit {manifest.value_unit!r}")
    for cell in manifest.cells:
        name = f"{cell.system}/{cell.load}"
        counts = json.loads((run_dir / f"{name}.counts.json").read_text(encoding="utf-8"))
        window, total = counts["window"], counts["total"]
        log = read_hlog(run_dir / cell.hlog)
        merged = log.merged()
        checks.check(f"{name}: read_hlog reads it without warnings", not log.warnings,
                     "; ".join(log.warnings))
        checks.check(f"{name}: one interval per measured second",
                     len(log.intervals) == durations[cell.load] == counts["hlog_intervals"],
                     f"{len(log.intervals)} intervals, duration {durations[cell.load]} s")
        checks.check(f"{name}: log count = completions in the window",
                     merged.total_count == window["completed"],
                     f"log {merged.total_count}, counts file {window['completed']}")
        checks.check(f"{name}: sent = completed + errors + timeouts + in flight",
                     total["sent"] == total["completed"] + total["errors"] + total["timeouts"]
                     + total["in_flight_at_end"], json.dumps(total))
        checks.check(f"{name}: run.yml has the counts file's sent/errors/timeouts",
                     (cell.sent, cell.errors, cell.timeouts)
                     == (window["sent"], window["errors"], window["timeouts"]),
                     f"run.yml {(cell.sent, cell.errors, cell.timeouts)}, counts {window}")
        if merged.total_count:
            # Latency from the intended send time can never be below the service time.
            service_us = (manifest.service_time_ms or 0) * 1000
            checks.check(f"{name}: no latency below the service time",
                         merged.min >= service_us * 0.999, f"min {merged.min} us")
        system = next(s for s in manifest.systems if s.id == cell.system)
        if system.concurrency_limit and manifest.service_time_ms:
            # Little's law: N workers holding each request S seconds complete at most N/S per
            # second, plus the N already in progress when the window opened.
            n, s, d = system.concurrency_limit, manifest.service_time_ms / 1000, durations[cell.load]
            ceiling = n / s * d + n
            checks.check(f"{name}: completions within the pool's ceiling",
                         merged.total_count <= ceiling,
                         f"{merged.total_count} completions > {ceiling:g} possible")
        checks.check(f"{name}: JFR recording present",
                     cell.jfr is not None and (run_dir / cell.jfr).stat().st_size > 0)


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    checks = Checks()
    try:
        check_run(Path(argv[0]), checks)
    except Exception as exc:  # noqa: BLE001 - any failure to read is a failed check
        checks.check("the run can be read", False, f"{type(exc).__name__}: {exc}")
    print(f"{checks.passed} passed, {checks.failed} failed")
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
