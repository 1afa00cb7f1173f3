"""Servers given by URL (bench/run.sh --url / --system): their system ids, whether they share
this host, and the generator's limit from its self-test.

run.sh measures a server it did not start exactly as it measures a bundled target; this module
holds what only a URL run needs, so run.sh, plan.py and manifest.py say it the same way.

    python bench/urls.py systems [--url URL ...] [--system ID=URL | ID=@URLS_FILE ...]
        one line per system, `ID TARGET` (TARGET a URL or @FILE); ids made from a URL are
        its host, port and path in [a-z0-9-] (http://127.0.0.1:8080/api -> 127-0-0-1-8080-api)
    python bench/urls.py limit --self-test FILE --rates LIST --max-in-flight N --file-limit N
        refuses (one `error:` line, status 2) a rate above the self-test's max_rate or an
        in-flight cap above its max_in_flight or the open-file limit

A bad value is one `error:` line and exit status 2.
"""
from __future__ import annotations

import argparse
import ipaddress
import json
import re
import socket
import sys
from pathlib import Path
from urllib.parse import urlsplit


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


def limit_error(self_test: dict, rates: list[int], max_in_flight: int, file_limit: int) -> str | None:
    """Why the run asks more than this host's generator can do, or None."""
    how = (f"measured by the generator's --self-test against a local null server: "
           f"{self_test['max_rate']:g} req/s, {self_test['max_in_flight']} in flight")
    too_fast = [r for r in rates if r > self_test["max_rate"]]
    if too_fast:
        return (f"rate {max(too_fast)} req/s is above what this host's generator can send on "
                f"time, {self_test['max_rate']:g} req/s ({how}); lower --rates")
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
    args = p.parse_args(argv)
    try:
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
                              args.max_in_flight, args.file_limit)
        if problem:
            raise UrlError(problem)
    except UrlError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
