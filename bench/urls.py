"""Servers given by URL (bench/run.sh --url / --system): their system ids, whether they share
this host, and the generator's limit from its self-test.

run.sh measures a server it did not start exactly as it measures a bundled target; this module
holds what only a URL run needs, so run.sh, plan.py and manifest.py say it the same way.

    python bench/urls.py systems [--url URL ...] [--system ID=URL | ID=@URLS_FILE ...]
        one line per system, `ID TARGET` (TARGET a URL or @FILE); ids made from a URL are
        its host, port and path in [a-z0-9-] (http://127.0.0.1:8080/api -> 127-0-0-1-8080-api)
    python bench/urls.py self-test --cache FILE [--tries 3] [--enough RATE] -- JAVA ... --self-test
        runs the generator's self-test up to --tries times and keeps the best (the one with
        the highest max_rate) in FILE, with every try's max_rate under `tries`; stops early
        once a try allows --enough req/s. A busy host makes single tries far too low.
    python bench/urls.py override --max-rate R --file-limit N --out FILE
        the limit a person states instead of the self-test (run.sh --max-rate-override)
    python bench/urls.py limit --self-test FILE --rates LIST --max-in-flight N --file-limit N
            [--generators N]
        refuses (one `error:` line, status 2) a rate above the limit's max_rate (per generator:
        a cell's rate / --generators) or an in-flight cap above its max_in_flight or the
        open-file limit (each generator process has its own)

A bad value is one `error:` line and exit status 2.
"""
from __future__ import annotations

import argparse
import ipaddress
import json
import re
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from analysis import atomic  # noqa: E402  (the repository root is put on the path just above)


class UrlError(ValueError):
    """A --url, --system or urls-file value that cannot be measured; its message is the error."""


def check_url(url: str, where: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UrlError(f"{where}: '{url}' is not an http:// or https:// URL with a host")
    return url


def system_id(url: str) -> str:
    """The host, port and path of URL as a run.yml system id (the query is left out)."""
    parts = urlsplit(url)
    raw = f"{parts.hostname}-{parts.port or ''}-{parts.path}".lower()
    return re.sub(r"[^a-z0-9]+", "-", raw).strip("-")[:60] or "server"


def urls_file_targets(path: Path) -> list[str]:
    """The URLs of a `[WEIGHT] URL` file (the generator's --urls-file), checked line by line."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise UrlError(f"{path}: cannot read the URLs file ({e})") from None
    urls = []
    for number, line in enumerate(lines, 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) > 2 or (len(fields) == 2 and not re.fullmatch(r"[1-9][0-9]*", fields[0])):
            raise UrlError(f"{path}:{number}: expected `[WEIGHT] URL` (WEIGHT a whole number), "
                           f"not '{line.strip()}'")
        urls.append(check_url(fields[-1], f"{path}:{number}"))
    if not urls:
        raise UrlError(f"{path}: no URL in the file (one `[WEIGHT] URL` a line)")
    return urls


def parse_systems(urls: list[str], systems: list[str]) -> list[tuple[str, str]]:
    """[(system id, URL or @FILE)] in the order given: --url values first, then --system."""
    out = [(system_id(check_url(u, "--url")), u) for u in urls]
    for spec in systems:
        sid, eq, target = spec.partition("=")
        if not eq or not re.fullmatch(r"[a-z0-9][a-z0-9_-]*", sid):
            raise UrlError(f"--system '{spec}' must be ID=URL or ID=@URLS_FILE, ID in [a-z0-9_-]")
        if target.startswith("@"):
            urls_file_targets(Path(target[1:]))
        else:
            check_url(target, f"--system {sid}")
        out.append((sid, target))
    ids = [sid for sid, _ in out]
    duplicates = sorted({sid for sid in ids if ids.count(sid) > 1})
    if duplicates:
        raise UrlError(f"two systems would be called {', '.join(duplicates)}: name them with "
                       f"--system ID=URL")
    return out


def target_urls(target: str) -> list[str]:
    return urls_file_targets(Path(target[1:])) if target.startswith("@") else [target]


def is_this_host(host: str) -> bool:
    """Whether HOST is this machine: a loopback address (127.0.0.0/8, ::1) or one of its
    interfaces' addresses (an address a socket can be bound to here is one of them)."""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except socket.gaierror:
        return False
    for family, _, _, _, sockaddr in infos:
        address = ipaddress.ip_address(sockaddr[0].split("%")[0])
        if address.is_loopback:
            continue
        with socket.socket(family, socket.SOCK_STREAM) as s:
            try:
                s.bind((sockaddr[0], 0))
            except OSError:
                return False
    return bool(infos)


def shared_host(targets: list[str]) -> bool:
    return all(is_this_host(urlsplit(u).hostname) for t in targets for u in target_urls(t))


# The margin run.sh keeps between the open-file limit and the generator's in-flight cap (the
# generator's SelfTest.FD_MARGIN).
FD_MARGIN = 1000


def limit_text(limit: dict) -> str:
    """How the run's limit was found, in words (the refusal and run.yml's self_test say it)."""
    figures = f"{limit['max_rate']:g} req/s, {limit['max_in_flight']} in flight"
    if limit.get("override"):
        return (f"{figures}, given by --max-rate-override: not measured, the generator's "
                f"--self-test was skipped")
    tries = limit.get("tries") or [limit["max_rate"]]
    return (f"{figures}, the best of {len(tries)} "
            f"{'try' if len(tries) == 1 else 'tries'} of the generator's --self-test against a "
            f"local null server ({', '.join(f'{t:g}' for t in tries)} req/s)")


def best_self_test(tries: list[dict]) -> dict:
    """The try with the highest max_rate, with every try's max_rate under `tries`: on a busy
    host a try's result is only a lower bound on what the generator can do."""
    best = max(tries, key=lambda t: t["max_rate"])
    return {**best, "tries": [t["max_rate"] for t in tries]}


def run_self_test(command: list[str], tries: int, enough: float | None) -> dict:
    """Up to TRIES runs of the generator's --self-test COMMAND; the best of them. Stops early
    once a try allows ENOUGH req/s (the run's highest rate)."""
    results = []
    for _ in range(tries):
        proc = subprocess.run(command, capture_output=True, text=True)
        lines = proc.stdout.strip().splitlines()
        try:
            result = json.loads(lines[-1])
            float(result["max_rate"]), int(result["max_in_flight"])
        except (IndexError, ValueError, KeyError, TypeError):
            raise UrlError(f"the generator's --self-test gave no result line (exit status "
                           f"{proc.returncode}): {(proc.stderr or proc.stdout).strip()[-500:]}")
        results.append(result)
        if enough is not None and result["max_rate"] >= enough:
            break
    best = best_self_test(results)
    if not best["max_rate"] > 0:
        raise UrlError(f"the generator's --self-test kept up with no rate (from "
                       f"{best['steps'][0]['rate']:g} req/s) in {tries} tries: this host is too "
                       f"busy to drive it; measure on a quieter host, or state a limit with "
                       f"--max-rate-override R")
    return best


def override_limit(max_rate: float, file_limit: int) -> dict:
    """The limit stated with --max-rate-override: that rate, and the in-flight cap the open-file
    limit allows (run.sh's margin below it)."""
    return {"max_rate": max_rate, "max_in_flight": max(1, file_limit - FD_MARGIN),
            "override": True}


def limit_error(self_test: dict, rates: list[int], max_in_flight: int, file_limit: int,
                generators: int = 1) -> str | None:
    """Why the run asks more than this host's generator can do, or None. The self-test measures
    one generator process, and each of a cell's GENERATORS sends rate / GENERATORS; the
    in-flight cap is each process's own (its own open files)."""
    how = limit_text(self_test)
    too_fast = [r for r in rates if r / generators > self_test["max_rate"]]
    if too_fast:
        worst = max(too_fast)
        asked = (f"rate {worst} req/s is {worst / generators:g} req/s for each of {generators} "
                 f"generators, above what one generator of this host" if generators > 1
                 else f"rate {worst} req/s is above what this host's generator")
        return (f"{asked} can send on time, {self_test['max_rate']:g} req/s ({how}); lower "
                f"--rates{' or raise --generators' if generators > 1 else ''}, or delete "
                f".self-test.json in the run folder to measure again on a quieter host")
    cap = min(self_test["max_in_flight"], file_limit)
    if max_in_flight > cap:
        return (f"--max-in-flight {max_in_flight} is above this host's limit {cap} (open-file "
                f"limit {file_limit}; {how})")
    return None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("systems")
    s.add_argument("--url", action="append", default=[])
    s.add_argument("--system", action="append", default=[])
    s.add_argument("--shared-host", action="store_true", help="print true/false instead")
    lim = sub.add_parser("limit")
    lim.add_argument("--self-test", required=True, type=Path)
    lim.add_argument("--rates", required=True)
    lim.add_argument("--max-in-flight", required=True, type=int)
    lim.add_argument("--file-limit", required=True, type=int)
    lim.add_argument("--generators", type=int, default=1, help="generator processes per cell")
    st = sub.add_parser("self-test")
    st.add_argument("--cache", required=True, type=Path)
    st.add_argument("--tries", type=int, default=3)
    st.add_argument("--enough", type=float, help="stop trying once a try allows this rate")
    st.add_argument("generator", nargs="+", help="the generator's --self-test command line")
    over = sub.add_parser("override")
    over.add_argument("--max-rate", required=True, type=float)
    over.add_argument("--file-limit", required=True, type=int)
    over.add_argument("--out", required=True, type=Path)
    args = p.parse_args(argv)
    try:
        if args.command == "self-test":
            best = run_self_test(args.generator, args.tries, args.enough)
            atomic.write_text(args.cache, json.dumps(best) + "\n")
            return 0
        if args.command == "override":
            if not args.max_rate > 0:
                raise UrlError(f"--max-rate-override {args.max_rate:g} must be above 0 req/s")
            atomic.write_text(args.out, json.dumps(override_limit(args.max_rate, args.file_limit)) + "\n")
            return 0
        if args.command == "systems":
            systems = parse_systems(args.url, args.system)
            if args.shared_host:
                print(str(shared_host([t for _, t in systems])).lower())
            for sid, target in [] if args.shared_host else systems:
                print(sid, target)
            return 0
        try:
            self_test = json.loads(args.self_test.read_text(encoding="utf-8"))
            float(self_test["max_rate"]), int(self_test["max_in_flight"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise UrlError(f"{args.self_test}: not the generator's --self-test line ({e}); "
                           f"delete it to measure again") from None
        problem = limit_error(self_test, [int(r) for r in args.rates.split(",") if r],
                              args.max_in_flight, args.file_limit, args.generators)
        if problem:
            raise UrlError(problem)
    except UrlError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
