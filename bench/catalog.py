"""The targets and scenarios bench/run.sh can measure, and the parsing of --targets/--scenarios.

One place for what run.sh, plan.py, manifest.py and check_run.py say about them. The Java side
(bench/server: Targets.IDS, Scenarios) serves exactly these ids and endpoints; ScenariosTest and
TargetsTest hold it to the contract, bench/test.sh starts each target from this list.

--targets LIST: comma-separated target ids, or `all`. Besides the ids below, the JDK HttpServer
of the first runs stays available as `poolN` (a pool of N threads) and `virtual`.
--scenarios LIST: comma-separated `ID` or `ID:RATE/RATE/...` (offered rates in req/s; default:
the scenario's own rates below), or `all`.
"""
from __future__ import annotations

import re

# id -> (label, family, model, description). The pool targets get concurrency_limit = the pool
# size (--pool-threads); the others have no limit of their own.
TARGETS = {
    "jdk-pool": ("JDK HttpServer, thread pool", "JDK HttpServer", "pool",
                 "com.sun.net.httpserver.HttpServer with Executors.newFixedThreadPool({threads}): "
                 "requests beyond {threads} wait in its unbounded queue."),
    "jdk-virtual": ("JDK HttpServer, virtual threads", "JDK HttpServer", "virtual",
                    "com.sun.net.httpserver.HttpServer with "
                    "Executors.newVirtualThreadPerTaskExecutor(): a virtual thread per request."),
    "jetty-pool": ("Jetty 12, thread pool", "Jetty 12", "pool",
                   "Jetty 12 core handler (blocking) on a QueuedThreadPool of at most {threads} "
                   "threads, which also run Jetty's acceptor and selectors."),
    "jetty-virtual": ("Jetty 12, virtual threads", "Jetty 12", "virtual",
                      "Jetty 12 core handler (blocking) run on virtual threads "
                      "(QueuedThreadPool.setVirtualThreadsExecutor)."),
    "helidon-virtual": ("Helidon 4 WebServer", "Helidon 4", "virtual",
                        "Helidon 4 SE WebServer (Nima): every request on its own virtual thread."),
    "vertx-eventloop": ("Vert.x 5", "Vert.x 5", "event-loop",
                        "Vert.x 5 HTTP server, one verticle per event loop (2 x cores): waits "
                        "are Vert.x timers and futures, cpu and json run on the loop."),
    "netty-eventloop": ("Netty 4.2", "Netty 4.2", "event-loop",
                        "Netty 4.2 HttpServerCodec on NIO event loops (2 x cores): waits are the "
                        "loop's scheduled tasks and futures, cpu and json run on the loop."),
}

# id -> (label, endpoint, service_time_ms, floor_ms, default rates, description). service_time_ms
# is the nominal time the server needs per request; floor_ms the least latency a correct answer
# can have (check_run.py checks it; cpu has none: its work is fixed, its time is the machine's).
SCENARIOS = {
    "sleep": ("Sleep 100 ms", "/sleep?ms=100", 100, 100, (250, 500, 1000, 1500),
              "Each request waits 100 ms (Thread.sleep on a thread-per-request target, the loop's "
              "timer on an event loop) and answers 3 bytes: the shape of a slow downstream call."),
    "cpu": ("CPU ~1 ms", "/cpu", 1, None, (500,),
            "Each request runs a fixed computation (600 rounds of a mixing loop, about 1 ms on the "
            "development machine) and answers its checksum: no wait, only work."),
    "json": ("JSON document", "/json", 0, None, (2000,),
             "Each request builds a small order document (10 items) with Jackson's tree model and "
             "serializes it (about 1 KB): allocation and serialization, no wait."),
    "fanout-futures": ("Fan-out, futures", "/fanout?impl=futures", 3, 1, (1000,),
                       "Each request makes 2 parallel calls to an in-process simulated dependency "
                       "(each answers after a uniform 1-4 ms on a timer thread) and combines them "
                       "with CompletableFuture.thenCombine; a thread-per-request target parks on "
                       "the result."),
    "fanout-pekko": ("Fan-out, Pekko Streams", "/fanout?impl=pekko", 3, 1, (1000,),
                     "The same 2 parallel dependency calls, orchestrated by a Pekko Streams graph "
                     "materialised per request (Source of 2 ids, mapAsyncUnordered(2), fold) on "
                     "one ActorSystem per JVM."),
}

LEGACY_SYSTEM = re.compile(r"^(pool[1-9][0-9]*|virtual)$")


class SpecError(ValueError):
    """A --targets or --scenarios value that does not parse; its message is the error line."""


def parse_targets(spec: str) -> list[str]:
    ids = list(TARGETS) if spec == "all" else [t for t in spec.split(",") if t]
    for t in ids:
        if t not in TARGETS and not LEGACY_SYSTEM.match(t):
            raise SpecError(f"unknown target '{t}' (one of {', '.join(TARGETS)}, poolN, virtual)")
    if not ids or len(set(ids)) != len(ids):
        raise SpecError(f"--targets '{spec}' must list distinct targets")
    return ids


def parse_scenarios(spec: str) -> list[tuple[str, list[int]]]:
    """[(scenario id, offered rates)] in the order given."""
    items = list(SCENARIOS) if spec == "all" else [s for s in spec.split(",") if s]
    out = []
    for item in items:
        sid, _, rates = item.partition(":")
        if sid not in SCENARIOS:
            raise SpecError(f"unknown scenario '{sid}' (one of {', '.join(SCENARIOS)})")
        if rates and not re.fullmatch(r"[1-9][0-9]*(/[1-9][0-9]*)*", rates):
            raise SpecError(f"scenario '{item}': rates must be whole req/s joined by '/', e.g. {sid}:100/200")
        out.append((sid, [int(r) for r in rates.split("/")] if rates else list(SCENARIOS[sid][4])))
    if not out or len({s for s, _ in out}) != len(out):
        raise SpecError(f"--scenarios '{spec}' must list distinct scenarios")
    return out


def concurrency_limit(target: str, pool_threads: int) -> int | None:
    if LEGACY_SYSTEM.match(target):
        return int(target[4:]) if target.startswith("pool") else None
    return pool_threads if TARGETS[target][2] == "pool" else None


def target_info(target: str, pool_threads: int) -> dict:
    """The run.yml `systems:` entry of a target (the legacy ids keep their schema-2 form)."""
    limit = concurrency_limit(target, pool_threads)
    if LEGACY_SYSTEM.match(target):
        if limit is None:
            return {"id": "virtual", "label": "Virtual threads",
                    "description": "Executors.newVirtualThreadPerTaskExecutor() as the HttpServer "
                                   "executor: one new virtual thread per request, no limit."}
        return {"id": target, "label": f"Fixed pool of {limit} platform threads",
                "concurrency_limit": limit,
                "description": f"Executors.newFixedThreadPool({limit}) as the HttpServer executor: "
                               f"requests beyond {limit} wait in its unbounded queue."}
    label, family, model, description = TARGETS[target]
    info = {"id": target, "label": label + (f" of {limit}" if limit else ""),
            "family": family, "model": model}
    if limit:
        info["concurrency_limit"] = limit
    info["description"] = description.format(threads=limit)
    return info


def scenario_info(sid: str, rates: list[int]) -> dict:
    """The run.yml `scenarios:` entry (load_points: ids into the run's load_points)."""
    label, endpoint, service_ms, _, _, description = SCENARIOS[sid]
    return {"id": sid, "label": label, "endpoint": endpoint, "service_time_ms": service_ms,
            "description": description, "load_points": [f"r{r}" for r in rates]}


def floor_ms(sid: str) -> float | None:
    return SCENARIOS[sid][3]
