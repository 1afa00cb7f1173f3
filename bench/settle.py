"""Wait until a server given by URL answers quickly again (bench/run.sh, before each cell).

A bundled target gets a fresh JVM per cell; a server given by URL keeps whatever queue the
previous cell left (a server that does not notice clients giving up, such as the JDK's
HttpServer or Python's http.server, works through a saturated cell's whole backlog). So before
each cell's warm-up (and each knee probe) run.sh waits here until the server has settled:

    settled when IN_A_ROW (3) sequential probes in a row each answer within the bound;
    the bound is --bound-ms, or (baseline) 2 x the median answer time of 5 probes made before the
    run's first cell + 50 ms; the wait ends after --max-s seconds either way (then: a warning,
    and the cell is measured, its first seconds perhaps still behind the old queue).

A probe is one request of the run's shape (method, headers, body) to the system's first URL on
a new connection; any HTTP answer counts, whatever its status: what matters is how long the
server took to get to it. A failed connection counts as a slow probe.

    python bench/settle.py check --target URL|@FILE [request options]
        one request: does the server answer, and is its certificate accepted (else --insecure)?
    python bench/settle.py baseline --target URL|@FILE --state FILE --system ID [--bound-ms X]
        [request options]
        measures the quiet answer time, keeps the bound in FILE (JSON, run.yml's method.settle);
        once per run folder: a system already in FILE keeps its bound
    python bench/settle.py wait --target URL|@FILE --state FILE --system ID --max-s 60
        [--cell NAME] [--unsettled measure|stop] [request options]
        waits; prints the generator's --host-check items settle=settled|unsettled,
        settle_waited_s=X,settle_bound_ms=X (into the cell's counts file). A cell is measured
        unsettled with a warning (measure); a knee probe is not made (stop: no warning, the
        knee search says why it stopped)

request options: --method M, --header 'Name: value' (repeatable), --body-file PATH, --insecure
"""
from __future__ import annotations

import argparse
import http.client
import json
import ssl
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from analysis import atomic  # noqa: E402  (the repository root is put on the path just above)

sys.path.insert(0, str(Path(__file__).resolve().parent))
import urls  # noqa: E402  (bench/, just above)

IN_A_ROW = 3
BASELINE_PROBES = 5
BOUND_FACTOR = 2
BOUND_MARGIN_MS = 50
PAUSE_S = 0.05   # between probes that were slow, so that probing adds no queue of its own


def rule_text(max_s: float, bound_ms: float | None) -> str:
    bound = (f"{bound_ms:g} ms (--settle-ms)" if bound_ms else
             f"{BOUND_FACTOR} x its median answer time over {BASELINE_PROBES} probes before the "
             f"first cell + {BOUND_MARGIN_MS} ms")
    return (f"before each cell's warm-up, until {IN_A_ROW} sequential requests in a row were each "
            f"answered within {bound}, for at most {max_s:g} s (a server given by URL keeps "
            f"the previous cell's queue)")


class SettleError(Exception):
    """A server that cannot be measured as given; the message is the error line."""


class Probe:
    """One request of the run's shape to URL, on a new connection each time."""

    def __init__(self, url: str, method: str, headers: list[str], body: bytes | None,
                 insecure: bool):
        self.parts = urlsplit(url)
        self.method, self.body = method, body
        self.headers = dict(h.split(":", 1) for h in headers)
        self.headers = {k.strip(): v.strip() for k, v in self.headers.items()}
        self.context = None
        if self.parts.scheme == "https":
            self.context = ssl.create_default_context()
            if insecure:
                self.context.check_hostname = False
                self.context.verify_mode = ssl.CERT_NONE

    def seconds(self, timeout_s: float) -> float | None:
        """How long the server took to answer (status line and whole body), or None."""
        path = (self.parts.path or "/") + (f"?{self.parts.query}" if self.parts.query else "")
        if self.context is not None:
            conn = http.client.HTTPSConnection(self.parts.hostname, self.parts.port,
                                               timeout=timeout_s, context=self.context)
        else:
            conn = http.client.HTTPConnection(self.parts.hostname, self.parts.port,
                                              timeout=timeout_s)
        started = time.monotonic()
        try:
            conn.request(self.method, path, body=self.body, headers=self.headers)
            conn.getresponse().read()
            return time.monotonic() - started
        except ssl.SSLCertVerificationError as e:
            raise SettleError(f"{self.parts.geturl()}: its certificate is not trusted "
                              f"({e.verify_message}); for a test server's self-signed "
                              f"certificate add --insecure (run.yml then says so)") from None
        except (OSError, http.client.HTTPException):
            return None
        finally:
            conn.close()


def answer_times(probe: Probe, target: str, count: int) -> list[float]:
    """COUNT sequential answer times in seconds, slowest last; SettleError if none answered."""
    answered = sorted(t for t in (probe.seconds(timeout_s=10) for _ in range(count))
                      if t is not None)
    if not answered:
        raise SettleError(f"{target} did not answer any of {count} requests within 10 s; is "
                          f"the server up?")
    return answered


def wait(probe: Probe, bound_s: float, max_s: float) -> tuple[bool, float]:
    """(settled, seconds waited): probes until IN_A_ROW in a row answer within BOUND_S, or
    MAX_S have passed."""
    started = time.monotonic()
    in_a_row = 0
    while True:
        left = max_s - (time.monotonic() - started)
        if left <= 0:
            return False, time.monotonic() - started
        took = probe.seconds(timeout_s=max(0.1, left))
        if took is not None and took <= bound_s:
            in_a_row += 1
            if in_a_row == IN_A_ROW:
                return True, time.monotonic() - started
        else:
            in_a_row = 0
            time.sleep(PAUSE_S)


def make_probe(args) -> Probe:
    body = args.body_file.read_bytes() if args.body_file else None
    return Probe(urls.target_urls(args.target)[0], args.method, args.header, body, args.insecure)


def load_state(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("command", choices=("check", "baseline", "wait"))
    p.add_argument("--target", required=True, help="the system's URL or @URLS_FILE")
    p.add_argument("--state", type=Path)
    p.add_argument("--system")
    p.add_argument("--max-s", type=float, default=60)
    p.add_argument("--bound-ms", type=float, help="the probes' bound (default: from the baseline)")
    p.add_argument("--cell", default="the next cell")
    p.add_argument("--unsettled", choices=("measure", "stop"), default="measure",
                   help="what the caller does when the server has not settled")
    p.add_argument("--method", default="GET")
    p.add_argument("--header", action="append", default=[])
    p.add_argument("--body-file", type=Path)
    p.add_argument("--insecure", action="store_true")
    p.add_argument("--success")   # the request options run.sh passes on; a probe takes any answer
    args = p.parse_args(argv)
    try:
        return run(args)
    except SettleError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


def run(args) -> int:
    probe = make_probe(args)
    if args.command == "check":
        answer_times(probe, args.target, 1)
        return 0
    state = load_state(args.state)
    if args.command == "baseline":
        known = state.get("systems", {}).get(args.system)
        if known and not args.bound_ms:
            # Measured before this run folder's first cell: later, a rerun (--only) may find
            # the server still busy with a queue, which would make a baseline too lenient.
            state.update(rule=rule_text(args.max_s, None), max_wait_s=args.max_s)
            atomic.write_text(args.state, json.dumps(state, indent=1) + "\n")
            print(f"   {args.system}: settle bound {known['bound_ms']:g} ms (kept in {args.state})")
            return 0
        median_ms = statistics.median(answer_times(probe, args.target, BASELINE_PROBES)) * 1000
        bound_ms = args.bound_ms or BOUND_FACTOR * median_ms + BOUND_MARGIN_MS
        state = {"rule": rule_text(args.max_s, args.bound_ms), "max_wait_s": args.max_s,
                 "systems": {**state.get("systems", {}), args.system: {
                     "quiet_answer_ms": round(median_ms, 1), "bound_ms": round(bound_ms, 1)}}}
        atomic.write_text(args.state, json.dumps(state, indent=1) + "\n")
        print(f"   {args.system}: answers in {median_ms:.1f} ms (median of {BASELINE_PROBES}); "
              f"settled before a cell when {IN_A_ROW} in a row take <= {bound_ms:.0f} ms")
        return 0
    bound_ms = state["systems"][args.system]["bound_ms"]
    settled, waited = wait(probe, bound_ms / 1000, args.max_s)
    if not settled and args.unsettled == "measure":
        print(f"warning: {args.system} did not settle in {args.max_s:g} s before {args.cell} "
              f"(never {IN_A_ROW} answers in a row within {bound_ms:g} ms); measuring anyway, its "
              f"first seconds may still see the previous cell's queue", file=sys.stderr)
    print(f"settle={'settled' if settled else 'unsettled'},settle_waited_s={waited:.1f},"
          f"settle_bound_ms={bound_ms:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
