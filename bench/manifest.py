"""Write runs/<run-id>/run.yml for a run measured by bench/run.sh, and check the generator.

Reads the per-cell counts files the load generator wrote (<system>/<load>.<rep>.counts.json, or
<scenario>/<system>/... with --scenarios; counts schema 2: bench/README.md), captures the machine's environment, and writes run.yml
(schema_version 2) with PyYAML from a built dict, atomically (temporary name, then rename).
Prints one line per cell repetition with the generator's achieved send rate against the offered
one and the window's outcomes, and warns about cells the generator may have distorted or that
were measured on a busy host (re-measure with `bench/run.sh RUN_ID --only SYSTEM/LOAD`).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import yaml  # noqa: E402

from analysis import atomic  # noqa: E402  (the repository root is put on the path just above)

sys.path.insert(0, str(Path(__file__).resolve().parent))
import catalog  # noqa: E402  (bench/, just above)
import urls  # noqa: E402

# A cell whose generator sent less than this share of the offered rate, or whose sends were
# this late at p99, is reported as possibly distorted by the generator.
MIN_SEND_SHARE = 0.99
MAX_SEND_LAG_P99_MS = 20.0

# No `connections:` in run.yml: the generator has no fixed number; it opens one per request in
# flight (up to --max-in-flight), which the name says.
GENERATOR_NAME = ("loadcurve bench/loadgen (Java NIO, HTTP/1.1 keep-alive, one connection "
                  "per request in flight, at most {max_in_flight:,})")
GENERATORS_NAME = ("; {generators} processes per cell, each at 1/{generators} of the offered rate "
                   "and with its own cap, all sending from one instant (--start-at)")

# Where the server's JFR execution samples go in the report's "where the time went" table: each
# sample counts once, under the first frame from the leaf whose pkg.Class.method fully matches a
# pattern (patterns tried in this order, so virtual-thread scheduling, which lives partly in
# java.util.concurrent.ForkJoin*, comes before the executor machinery); no match: "other".
# jdk.internal.vm only as Continuation: its ThreadContainer also books platform threads' starts.
JFR_ATTRIBUTION = (
    (r"loadcurve\.server\..*", "request handler"),
    (r"java\.lang\.VirtualThread\..*|jdk\.internal\.vm\.Continuation.*"
     r"|java\.util\.concurrent\.ForkJoin.*", "virtual-thread scheduling"),
    (r"java\.util\.concurrent\..*", "executor and queues"),
    (r"sun\.net\.httpserver\..*|com\.sun\.net\.httpserver\..*", "JDK HTTP server"),
    (r"sun\.nio\..*|java\.nio\..*", "NIO and sockets"),
)
# With scenarios (the servers of bench/catalog.py), before NIO: the libraries' own frames.
JFR_ATTRIBUTION_TARGETS = (
    (r"org\.eclipse\.jetty\..*|io\.helidon\..*|io\.vertx\..*|io\.netty\..*", "HTTP server library"),
    (r"org\.apache\.pekko\..*|scala\..*", "Pekko Streams"),
    (r"com\.fasterxml\.jackson\..*", "Jackson"),
)


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("--run-dir", required=True, type=Path)
    p.add_argument("--systems", required=True, help="comma-separated target ids (bench/catalog.py)")
    p.add_argument("--rates", required=True, help="comma-separated offered rates (req/s)")
    p.add_argument("--scenarios", help="bench/catalog.py's form; without: one implicit scenario")
    p.add_argument("--pool-threads", type=int, default=100)
    p.add_argument("--jfr-repetitions", type=int)
    p.add_argument("--service-ms", required=True, type=int)
    p.add_argument("--warmup-s", required=True, type=float)
    p.add_argument("--warmup", choices=("auto", "fixed"),
                   help="the generator's --warmup (issue 32); recorded with each cell's warm-up")
    p.add_argument("--warmup-max-s", type=float, help="with --warmup auto: the most warm-up")
    p.add_argument("--duration-s", required=True, type=int)
    p.add_argument("--timeout-s", required=True, type=float)
    p.add_argument("--max-in-flight", required=True, type=int)
    p.add_argument("--repetitions", required=True, type=int)
    p.add_argument("--generators", type=int, default=1,
                   help="generator processes per cell: files <load>.<rep>.gI.hlog/.counts.json")
    p.add_argument("--seed", required=True, type=int)
    p.add_argument("--busy-threshold", required=True, type=float)
    p.add_argument("--busy-wait-s", required=True, type=float)
    p.add_argument("--on-busy", required=True, choices=("warn", "refuse"))
    p.add_argument("--java", required=True, help="the java executable the run used")
    p.add_argument("--server-flags", required=True)
    p.add_argument("--generator-flags", required=True)
    p.add_argument("--title")
    p.add_argument("--description")
    p.add_argument("--tags", default="")
    p.add_argument("--date", help="YYYY-MM-DD (default: today, UTC)")
    p.add_argument("--url-system", action="append", default=[], metavar="ID=URL|ID=@FILE",
                   help="a server given by URL (bench/urls.py); replaces --systems' catalog")
    p.add_argument("--request", default="", help="the request options given to the generator")
    p.add_argument("--server-pid", type=int, help="the observed server process (--url runs)")
    p.add_argument("--jfr-pid", type=int, help="the observed JVM recorded per cell (--url runs)")
    p.add_argument("--self-test", type=Path,
                   help="the run's limit (JSON): the generator's best --self-test, or the override")
    p.add_argument("--knee", type=Path, help="bench/knee.py's search state (--find-knee)")
    p.add_argument("--settle", type=Path, help="bench/settle.py's bounds (--url runs)")
    p.add_argument("--server-jvm", type=Path,
                   help="bench/serverjvm.py's facts of the observed server JVM (--url runs)")
    return p.parse_args(argv)


def default_title(systems: list[dict], service_ms: int, scenarios: list[dict]) -> str:
    labels = [s["label"] for s in systems]
    if scenarios:
        return (f"{len(systems)} JVM HTTP servers in {len(scenarios)} scenarios: "
                + "; ".join(s["label"] for s in scenarios))
    pools = [s for s in systems if "concurrency_limit" in s]
    if len(systems) == 2 and len(pools) == 1 and any(s["id"] == "virtual" for s in systems):
        return (f"Fixed pool of {pools[0]['concurrency_limit']} platform threads vs virtual "
                f"threads at {service_ms} ms per request")
    return f"{' vs '.join(labels)} at {service_ms} ms per request"


def _sentence_case(label: str) -> str:
    """A label inside a sentence: "Fixed pool" -> "fixed pool", an acronym ("JDK ...") kept."""
    return label if label[1:2].isupper() else label[:1].lower() + label[1:]


def default_description(systems: list[dict], service_ms: int, scenarios: list[dict]) -> str:
    if scenarios:
        return ("Open-loop load against " + "; ".join(s["label"] for s in systems)
                + ", each in its own JVM with the same heap and GC, serving one handler contract "
                "(" + ", ".join(s["id"] for s in scenarios) + "): thread pools, virtual threads "
                "and event loops side by side.")
    names = " and ".join(s["label"].lower() if s["id"] == "virtual" else
                         f"a {_sentence_case(s['label'])}" for s in systems)
    return (f"Open-loop load at rising offered rates against the JDK's built-in HTTP server, "
            f"which holds each request for {service_ms} ms, run by {names}: where a pool's "
            f"throughput stops and its queue takes over.")


def read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def java_description(java: str) -> str:
    props = subprocess.run([java, "-XshowSettings:properties", "-version"],
                           capture_output=True, text=True, timeout=60).stderr
    prop = dict(re.findall(r"^\s+([\w.]+) = (.*)$", props, re.M))
    return " ".join(x for x in (prop.get("java.vm.vendor") if not prop.get("java.vendor.version")
                                else None, prop.get("java.vendor.version"),
                                f"({prop.get('java.runtime.version')})"
                                if prop.get("java.runtime.version") else None) if x)


def environment(java: str, server_flags: str, url_targets: list[str] | None = None) -> dict:
    """The machine (the generator's); for bundled targets also the server's JVM. A server given
    by URL runs a JVM (if any) the harness knows only through --server-pid (with_server_jvm):
    here no jdk/jvm_flags/gc/heap, and shared_host from its address."""
    cpuinfo = read("/proc/cpuinfo")
    model = re.search(r"^model name\s*:\s*(.+)$", cpuinfo, re.M)
    cores = os.cpu_count()
    siblings = re.search(r"^siblings\s*:\s*(\d+)$", cpuinfo, re.M)
    cpu_cores = re.search(r"^cpu cores\s*:\s*(\d+)$", cpuinfo, re.M)
    smt = None
    if siblings and cpu_cores:
        smt = int(siblings.group(1)) > int(cpu_cores.group(1))
    meminfo = re.search(r"^MemTotal:\s*(\d+) kB", read("/proc/meminfo"), re.M)
    os_release = re.search(r'^PRETTY_NAME="?([^"\n]+)"?', read("/etc/os-release"), re.M)
    jdk = java_description(java)
    heap = re.search(r"-Xmx(\d+)([gGmM])", server_flags)
    gc = re.search(r"-XX:\+Use(\w+)GC", server_flags)
    env = {
        "cpu": model.group(1).strip() if model else platform.processor() or None,
        "cores": cores,
        "smt": smt,
        "memory": f"{int(meminfo.group(1)) / 1024 / 1024:.0f} GiB" if meminfo else None,
        "os": os_release.group(1) if os_release else platform.system(),
        "kernel": platform.release(),
        "jdk": jdk or None,
        "jvm_flags": server_flags,
        "gc": gc.group(1) if gc else None,
        "heap": f"{heap.group(1)} {'GiB' if heap.group(2) in 'gG' else 'MiB'}" if heap else None,
        "shared_host": True,
    }
    if url_targets is not None:
        for key in ("jdk", "jvm_flags", "gc", "heap"):
            env.pop(key)
        env["shared_host"] = urls.shared_host(url_targets)
    return {k: v for k, v in env.items() if v is not None}


def url_system_info(sid: str, target: str, request: str) -> dict:
    """The run.yml `systems:` entry of a server given by URL (what it is, only the URL says)."""
    method = re.search(r"--method (\S+)", request)
    what = (f"the weighted URLs of {target[1:]}" if target.startswith("@") else target)
    return {"id": sid, "label": sid,
            "description": f"Given by URL, not started by the harness: "
                           f"{method.group(1) if method else 'GET'} {what}."}


def url_run_facts(args, targets: list[str]) -> dict:
    """load_generator keys of a --url run: the target, what observed the server, the generator."""
    if args.jfr_pid:
        observed = (f"yes: CPU per window and a JFR recording per cell (JVM {args.jfr_pid}, "
                    f"--jfr-pid)")
    elif args.server_pid:
        observed = f"CPU per window only (process {args.server_pid}, --server-pid); no JFR"
    else:
        observed = ("no: the server was given by URL without --server-pid or --jfr-pid, so "
                    "there are no server CPU or JVM figures")
    jvm = server_jvm(args)
    if jvm:
        observed += (f"; its JVM's JDK, GC, heap and flags (the environment) read with "
                     f"{jvm['read_with']}")
    facts = {"target": "given by URL (bench/run.sh --url); the harness started no server",
             "server_observed": observed,
             "request": " ".join(args.request.split()) or "GET, success 2xx/3xx"}
    if any(u.startswith("https:") for t in targets for u in urls.target_urls(t)):
        facts["tls"] = ("HTTPS without checking the certificate (--insecure)"
                        if "--insecure" in args.request.split() else "HTTPS, certificate checked")
    facts["generator_host"] = platform.node() or None
    facts["generator_jdk"] = java_description(args.java)
    facts["generator_flags"] = " ".join(args.generator_flags.split())
    if args.self_test:
        test = json.loads(args.self_test.read_text(encoding="utf-8"))
        facts["self_test"] = urls.limit_text(test)
    return {k: v for k, v in facts.items() if v}


def server_jvm(args) -> dict | None:
    """bench/serverjvm.py's file for the observed server (issue 32), or None: no --server-pid,
    or not a JVM."""
    if not args.server_jvm or not args.server_jvm.is_file():
        return None
    return json.loads(args.server_jvm.read_text(encoding="utf-8"))


def with_server_jvm(env: dict, jvm: dict | None) -> dict:
    """The environment with the observed server JVM's jdk, jvm_flags, gc and heap, in the order
    the bundled targets' runs give them (before shared_host)."""
    if not jvm:
        return env
    shared = {k: env[k] for k in ("shared_host",) if k in env}
    return {**{k: v for k, v in env.items() if k != "shared_host"}, **jvm["environment"],
            **shared}


def per_system(path: Path) -> dict:
    """A state file of knee.py or settle.py for run.yml: its `systems` map as a list."""
    state = json.loads(path.read_text(encoding="utf-8"))
    return {**state, "systems": [{"system": sid, **entry} for sid, entry in state["systems"].items()]}


# What run.yml's method.knee_search keeps of a probe; its figures (warm-up, window, outcomes,
# p99) stay in the run's knee.json, which the analysis reads for the probe table.
RUN_YML_PROBE_KEYS = ("rate", "verdict", "why", "host_check")


def knee_search(path: Path) -> dict:
    search = per_system(path)
    for entry in search["systems"]:
        entry["probes"] = [{k: probe[k] for k in RUN_YML_PROBE_KEYS if k in probe}
                           for probe in entry["probes"]]
    return search


HEADER = """\
# Measured by bench/run.sh; regenerate with it rather than by hand.
# Latencies are from each request's intended send time (open loop, the wrk2 method).
# A cell is the requests whose intended send time falls in its window; per cell repetition,
# <system>/<load>.<rep>.counts.json holds their outcomes, in-flight counts and CPU use, and
# the .hlog their latencies (untagged: answered in time; tag timeout; tag outside: context).
"""

WARMUP_RULE = ("auto: after the least warm-up, the generator keeps sending at the offered rate "
               "until its own per-second figures of the last seconds are steady (requests in "
               "flight without a trend, back near the level Little's law gives from the latency, "
               "per-second p99 without a trend; bench/README.md, \"Warm-up until steady\"), or "
               "the most warm-up runs out; the window starts on that whole second. fixed: the "
               "least warm-up, and reached says whether its last seconds were steady by the same "
               "rule")
# With several generators per cell the warm-up is fixed: each generator would judge its own
# seconds, so each would start its own window, and a copy on another machine cannot be told
# another's choice in time. The same fixed warm-up gives all of them one window.
GENERATORS_WARMUP_RULE = ("; with {generators} generators per cell the warm-up is fixed: under "
                          "auto each generator would judge its own share and start its own "
                          "window, so their logs would not cover the same seconds; reached is "
                          "true when every generator's last seconds were steady")


def warmup_block(args, entries: list[dict]) -> dict | None:
    """method.warmup (issue 32): the run's warm-up setting, and per cell repetition the warm-up
    its counts file says it used and whether it was steady. A cell measured with other settings
    (a rerun with --only) carries its own mode, min_s and max_s. None when no counts file has a
    warm-up block (cells measured before issue 32)."""
    if not entries:
        return None
    mode = args.warmup or "fixed"
    least = number(args.warmup_s)
    most = number(args.warmup_max_s) if mode == "auto" and args.warmup_max_s is not None else least
    cells = []
    for e in entries:
        cell = {"cell": e["cell"]}
        if (e["mode"], e["min_s"], e["max_s"]) != (mode, least, most):
            cell.update({"mode": e["mode"], "min_s": e["min_s"], "max_s": e["max_s"]})
        cell.update({"used_s": e["used_s"], "reached": e["reached"]})
        cells.append(cell)
    rule = WARMUP_RULE + (GENERATORS_WARMUP_RULE.format(generators=args.generators)
                          if args.generators > 1 else "")
    return {"mode": mode, "min_s": least, "max_s": most, "rule": rule, "cells": cells}


DRAIN = ("after the window, the same offered rate until every window request is answered, "
         "errored or timed out (at most timeout_s); requests still in flight then are abandoned")


def build(args, systems, load_points, env, cells, title, description, date, tags,
          scenarios, warmups=()) -> dict:
    """run.yml as a dict, in the order it is written. With scenarios, each scenario has its own
    service time and load points, and there is no run-wide service_time_ms."""
    run = {"schema_version": 2, "title": title, "date": date, "description": description}
    if tags:
        run["tags"] = tags
    run["value_unit"] = "us"
    if scenarios:
        run["scenarios"] = scenarios
    elif args.url_system:
        pass  # a server given by URL: its service time is not known
    else:
        run["service_time_ms"] = args.service_ms
    run.update({
        "systems": systems,
        "load_points": load_points,
        "environment": env,
        "load_generator": {
            "name": GENERATOR_NAME.format(max_in_flight=args.max_in_flight)
            + (GENERATORS_NAME.format(generators=args.generators) if args.generators > 1 else ""),
            "model": "open",
            "timeout_s": number(args.timeout_s),
            "warmup_s": number(args.warmup_s),
            "drain": True,
            **(url_run_facts(args, [t.partition("=")[2] for t in args.url_system])
               if args.url_system else {}),
        },
        "method": {
            "repetitions": args.repetitions,
            "order": "repetition-major, shuffled by seed",
            "order_seed": args.seed,
            "drain": DRAIN,
            "host_check": {"threshold": args.busy_threshold, "action": args.on_busy,
                           "busy_wait_s": number(args.busy_wait_s)},
        },
    })
    if scenarios:
        run["method"]["pool_threads"] = args.pool_threads
    if args.jfr_repetitions is not None and args.jfr_repetitions < args.repetitions:
        run["method"]["jfr_repetitions"] = args.jfr_repetitions
    if args.knee:
        run["method"]["knee_search"] = knee_search(args.knee)
    if args.settle:
        run["method"]["settle"] = per_system(args.settle)
    if (warmup := warmup_block(args, list(warmups))) is not None:
        run["method"]["warmup"] = warmup
    if any(c["jfr"] is not None for c in cells):
        patterns = JFR_ATTRIBUTION
        if scenarios:
            patterns = patterns[:-1] + JFR_ATTRIBUTION_TARGETS + patterns[-1:]
        run["jfr_attribution"] = [{"pattern": pattern, "label": label}
                                  for pattern, label in patterns]
    run["cells"] = cells
    return run


def number(value: float):
    return int(value) if float(value).is_integer() else value


def render(run: dict, generator_flags: str) -> str:
    # The generator's JVM flags are provenance, not data the report reads: a comment, as in
    # schema 1 (whitespace collapsed, so the comment stays one line).
    header = HEADER if "scenarios" not in run else HEADER.replace(
        "# <system>/<load>", "# <scenario>/<system>/<load>")
    if any(isinstance(c.get("counts"), list) for c in run.get("cells", [])):
        # several generators per cell: each writes its own pair of files, gI the generator's
        header = header.replace("<rep>.counts.json", "<rep>.gI.counts.json").replace(
            "# the .hlog their", "# the .gI.hlog their")
    return (header + f"# Generator JVM: {' '.join(generator_flags.split())}\n"
            + yaml.safe_dump(run, sort_keys=False, allow_unicode=True, width=100,
                             default_flow_style=False))


def cell_files(rel: str, generators: int) -> list[str]:
    """A cell repetition's files without their suffix: one generator's, or each of N's."""
    return [rel] if generators == 1 else [f"{rel}.g{i}" for i in range(1, generators + 1)]


def generators_apart(rel: str, generated: list[dict]) -> list[str]:
    """Why a cell's generators' files do not make one cell (files gathered by hand from other
    machines: another --start-at, another --generator), or nothing."""
    n = len(generated)
    if n == 1:
        return []
    problems = [f"{rel}.g{i}.counts.json says generator {c.get('generator_index')} of "
                f"{c.get('generators')}, not {i} of {n} (its --generator)"
                for i, c in enumerate(generated, 1)
                if (c.get("generator_index"), c.get("generators")) != (i, n)]
    starts = sorted({c["start_epoch_ms"] for c in generated})
    if len(starts) > 1:
        problems.append(f"{rel}: its generators started at {', '.join(map(str, starts))} "
                        f"(start_epoch_ms), not one instant: give every copy the same --start-at")
    return problems


def main(argv=None) -> int:
    args = parse_args(argv)
    run_dir: Path = args.run_dir
    try:
        systems = ([url_system_info(*spec.split("=", 1), args.request) for spec in args.url_system]
                   or [catalog.target_info(s, args.pool_threads)
                       for s in catalog.parse_targets(args.systems)])
        parsed = catalog.parse_scenarios(args.scenarios) if args.scenarios else []
    except catalog.SpecError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    scenarios = [catalog.scenario_info(sid, rates) for sid, rates in parsed]
    # (scenario id or None, its rates): the implicit scenario takes --rates.
    plan = [(sid, rates) for sid, rates in parsed] or [(None, [int(r) for r in args.rates.split(",") if r])]
    rates = sorted({r for _, rs in plan for r in rs})
    load_points = [{"id": f"r{r}", "offered_rate": r, "duration_s": args.duration_s}
                   for r in rates]
    cells, missing, distorted, busy, warmups, unsteady, apart = [], [], [], [], [], [], []
    width = 18 if not scenarios else 40
    print(f"{'cell':<{width}} {'offered':>7} {'sent/s':>7} {'lag p99':>9} {'sent':>6} {'done':>6} "
          f"{'timed out':>9} {'errors':>6} {'not sent':>8} {'drain':>6} {'host':>5}")
    grid = [(sid, lp, s, rep) for sid, srates in plan for lp in load_points
            if lp["offered_rate"] in srates for s in systems for rep in range(1, args.repetitions + 1)]
    for sid, lp, s, rep in grid:
        rel = f"{s['id']}/{lp['id']}.{rep}" if sid is None else f"{sid}/{s['id']}/{lp['id']}.{rep}"
        names = cell_files(rel, args.generators)
        if not all((run_dir / f"{name}.hlog").is_file() and (run_dir / f"{name}.counts.json").is_file()
                   for name in names):
            missing.append(rel)
            continue
        share = lp["offered_rate"] / args.generators
        generated = []
        for name in names:
            counts = json.loads((run_dir / f"{name}.counts.json").read_text(encoding="utf-8"))
            generated.append(counts)
            window = counts["window"]
            lag_p99_ms = counts["send_lag_us_window"]["p99"] / 1000
            send_rate = counts["achieved_send_rate"]
            verdict = (counts.get("host_check") or {}).get("verdict", "?")
            print(f"{name:<{width}} {share:>7g} {send_rate:>7.1f} {lag_p99_ms:>7.2f}ms "
                  f"{window['sent']:>6} {window['completed']:>6} {window['timed_out']:>9} "
                  f"{window['errors']:>6} {window['not_sent']:>8} {counts['drain_s']:>5.1f}s "
                  f"{verdict:>5}")
            if (send_rate < MIN_SEND_SHARE * share
                    or lag_p99_ms > MAX_SEND_LAG_P99_MS or window["not_sent"]):
                distorted.append((name, rel))
        if any((c.get("host_check") or {}).get("verdict") == "busy" for c in generated):
            busy.append(rel)
        apart.extend(generators_apart(rel, generated))
        if generated[0].get("warmup"):
            w = generated[0]["warmup"]
            reached = all(c["warmup"]["reached"] for c in generated)
            warmups.append({"cell": rel, "mode": w["mode"], "min_s": w["min_s"],
                            "max_s": w["max_s"], "used_s": w["used_s"], "reached": reached})
            if w["mode"] == "auto" and not reached:
                unsteady.append(f"{rel}: the warm-up was not steady within its {w['max_s']} s; "
                                f"its window may hold a transient")
        jfr = f"{rel}.jfr" if (run_dir / f"{rel}.jfr").is_file() else None
        cell = {"scenario": sid} if sid is not None else {}
        hlog = [f"{name}.hlog" for name in names]
        counts_files = [f"{name}.counts.json" for name in names]
        cell.update({"system": s["id"], "load": lp["id"], "repetition": rep,
                     "hlog": hlog if args.generators > 1 else hlog[0], "jfr": jfr,
                     "counts": counts_files if args.generators > 1 else counts_files[0]})
        cells.append(cell)
    for name, rel in distorted:
        cell = rel.rsplit(".", 1)[0]
        print(f"warning: {name}: the generator fell behind the offered rate (sent < "
              f"{MIN_SEND_SHARE:.0%} of it, send lag p99 > {MAX_SEND_LAG_P99_MS:g} ms, or window "
              f"requests not sent); re-measure it with: bench/run.sh {run_dir.name} --only {cell}",
              file=sys.stderr)
    for text in apart:
        print(f"warning: {text}", file=sys.stderr)
    for rel in busy:
        print(f"warning: {rel}: measured on a busy host (host_check verdict busy)", file=sys.stderr)
    for text in unsteady:
        print(f"warning: {text}", file=sys.stderr)
    for rel in missing:
        print(f"warning: {rel}: no .hlog/.counts.json; the cell is left out of run.yml",
              file=sys.stderr)
    if not cells:
        print(f"error: no measured cells in {run_dir}", file=sys.stderr)
        return 1
    if args.url_system:
        title = args.title or f"Load curve of {', '.join(s['id'] for s in systems)}, given by URL"
        description = args.description or (
            "Open-loop load at rising offered rates against " + "; ".join(
                s["description"][0].lower() + s["description"][1:-1] for s in systems) + ".")
    else:
        title = args.title or default_title(systems, args.service_ms, scenarios)
        description = args.description or default_description(systems, args.service_ms, scenarios)
    # A date object, so that YAML writes an unquoted date as before.
    date = (dt.date.fromisoformat(args.date) if args.date
            else dt.datetime.now(dt.timezone.utc).date())
    tags = [t for t in args.tags.split(",") if t]
    url_targets = [spec.partition("=")[2] for spec in args.url_system] or None
    env = with_server_jvm(environment(args.java, args.server_flags, url_targets), server_jvm(args))
    run = build(args, systems, load_points, env, cells, title, description, date, tags, scenarios,
                warmups)
    atomic.write_text(run_dir / "run.yml", render(run, args.generator_flags))
    print(f"wrote {run_dir / 'run.yml'} ({len(cells)} cell repetitions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
