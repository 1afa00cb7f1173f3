#!/usr/bin/env bash
# Records a run with two load tools people already use, against one bundled server: vegeta
# (open loop: requests at a constant rate whatever the server does) and hey (closed loop: each
# worker waits for its reply before it sends again), at the same target rates. The files are
# the tools' own data: vegeta encode --to csv, and hey's report of each invocation printed
# through our template (bench/outside/hey-csv-and-summary.tmpl) as a CSV in `hey -o csv`'s
# columns and, beside it, the summary lines that count the failed requests the CSV leaves out.
# run.yml names them with `results:` and `summary:` (issue 23), so loadcurve reads them as a
# user's imported results.
set -euo pipefail

usage() {
    cat <<'USAGE'
usage: bench/outside/record.sh RUN_ID [options]

  --rates LIST      target rates in req/s (default 25,50,75,100,150,200)
  --duration-s S    each tool's run per rate (default 25; the first --skip-s are warm-up)
  --skip-s S        warm-up cut by run.yml's window (default 5)
  --service-ms MS   /sleep?ms=MS: time each request holds a worker (default 200)
  --pool N          the JDK HttpServer's fixed pool (default 20: ceiling N / S = 100 req/s)
  --workers N       hey's workers (-c; default 50); -q is rate / N per worker
  --timeout-s S     both tools' request timeout (default 15)
  --busy-wait-s S   how long the host check waits for a quiet machine (default 120)

Needs vegeta (go install github.com/tsenart/vegeta/v12@v12.12.0) and hey (Debian's hey),
a JDK 21+ and the bundled server (mvn -q -f bench/pom.xml package). One server JVM per cell,
started fresh; the machine is checked for quiet before each cell (bench/hostcheck.py). Only
127.0.0.1 is ever a target.
USAGE
}

[ $# -ge 1 ] || { usage >&2; exit 2; }
case "$1" in -h|--help) usage; exit 0 ;; esac
RUN_ID=$1; shift
RATES=25,50,75,100,150,200 DURATION_S=25 SKIP_S=5 SERVICE_MS=200 POOL=20 WORKERS=50 TIMEOUT_S=15
BUSY_WAIT_S=120
while [ $# -gt 0 ]; do
    case "$1" in
        --rates) RATES=$2; shift 2 ;;
        --duration-s) DURATION_S=$2; shift 2 ;;
        --skip-s) SKIP_S=$2; shift 2 ;;
        --service-ms) SERVICE_MS=$2; shift 2 ;;
        --pool) POOL=$2; shift 2 ;;
        --workers) WORKERS=$2; shift 2 ;;
        --timeout-s) TIMEOUT_S=$2; shift 2 ;;
        --busy-wait-s) BUSY_WAIT_S=$2; shift 2 ;;
        *) echo "error: unknown option $1" >&2; usage >&2; exit 2 ;;
    esac
done
[[ $RUN_ID =~ ^[a-z0-9_-]+$ ]] || { echo "error: run id must use a-z, 0-9, - and _" >&2; exit 2; }

cd "$(dirname "$0")/../.."
ROOT=$PWD
# shellcheck source=bench/jdk.sh
source bench/jdk.sh
find_jdk || exit 1
JAVA="$BENCH_JAVA_HOME/bin/java"
JAR=bench/server/target/server.jar
VEGETA=$(command -v vegeta || echo "$HOME/go/bin/vegeta")
for tool in "$VEGETA" hey; do
    command -v "$tool" >/dev/null || { echo "error: $tool not found (see --help)" >&2; exit 1; }
done
# (a `go install`ed vegeta prints no version; its module's is in the binary)
VEGETA_VERSION=$(go version -m "$VEGETA" 2>/dev/null | awk '$1 == "mod" {print $3}')
HEY_VERSION=$(dpkg-query -W -f '${Version}' hey 2>/dev/null || echo "unknown version")
[ -f "$JAR" ] || { echo "error: $JAR missing: mvn -q -f bench/pom.xml package" >&2; exit 1; }
HEY_TEMPLATE=$(cat bench/outside/hey-csv-and-summary.tmpl)

OUT=runs/$RUN_ID
[ ! -e "$OUT" ] || { echo "error: $OUT exists; remove it or choose another id" >&2; exit 1; }
WORK=$(mktemp -d)
SERVER_PID=
cleanup() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
mkdir -p "$WORK/run/vegeta" "$WORK/run/hey"
SERVER_FLAGS="-Xms1g -Xmx1g -XX:+UseG1GC"

start_server() {
    rm -f "$WORK/port"
    # shellcheck disable=SC2086
    "$JAVA" $SERVER_FLAGS -jar "$JAR" --executor "pool:$POOL" --port 0 --port-file "$WORK/port" \
        >"$WORK/server.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
    [ -s "$WORK/port" ] || { echo "error: the server did not start: $(tail -3 "$WORK/server.log")" >&2; exit 1; }
    URL="http://127.0.0.1:$(cat "$WORK/port")/sleep?ms=$SERVICE_MS"
}

stop_server() { kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; SERVER_PID=; }

IFS=, read -r -a rate_list <<<"$RATES"
checks=()
for rate in "${rate_list[@]}"; do
    for tool in vegeta hey; do
        cell="$tool/r$rate"
        check=$(python3 bench/hostcheck.py --cell "$cell" --busy-wait-s "$BUSY_WAIT_S")
        checks+=("$cell $check")
        start_server
        echo "== $cell: $URL for ${DURATION_S}s ($check)" >&2
        if [ "$tool" = vegeta ]; then
            echo "GET $URL" | "$VEGETA" attack -rate="$rate/1s" -duration="${DURATION_S}s" \
                -timeout="${TIMEOUT_S}s" -output="$WORK/r.bin"
            "$VEGETA" encode --to csv "$WORK/r.bin" > "$WORK/run/vegeta/r$rate.csv"
            "$VEGETA" report "$WORK/r.bin" >&2
        else
            per_worker=$(python3 -c "print(round($rate / $WORKERS, 6))")
            # One run, one report, two files: the CSV has only the answered requests; the
            # summary beside it counts the failed ones of the same requests (hey_split.py).
            hey -z "${DURATION_S}s" -c "$WORKERS" -q "$per_worker" -t "$TIMEOUT_S" -o "$HEY_TEMPLATE" "$URL" \
                | python3 bench/outside/hey_split.py "$WORK/run/hey/r$rate.csv" "$WORK/run/hey/r$rate.txt"
        fi
        stop_server
    done
done

python3 - "$WORK/run/run.yml" "$RATES" "$DURATION_S" "$SKIP_S" "$SERVICE_MS" "$POOL" "$WORKERS" \
    "$TIMEOUT_S" "$JAVA" "$SERVER_FLAGS" "$VEGETA_VERSION" "$HEY_VERSION" "${checks[@]}" <<'PY'
import sys
from datetime import date
sys.path.insert(0, "bench")
import yaml
from manifest import environment
(out, rates, duration, skip, service, pool, workers, timeout, java, flags, vegeta_version,
 hey_version, *checks) = sys.argv[1:]
rates = [int(r) for r in rates.split(",")]
measured = int(duration) - int(skip)
env = environment(java, flags)
run = {
    "title": f"What a closed loop hides at the knee: vegeta and hey against a pool of {pool} threads",
    "date": date.today().isoformat(),
    "description": (f"The JDK HttpServer with a fixed pool of {pool} threads, each request holding "
                    f"a thread for {service} ms (a ceiling of {int(pool) * 1000 // int(service)} req/s), "
                    f"driven at the same target rates by vegeta (open loop) and hey with "
                    f"{workers} workers (closed loop), read from the tools' own files."),
    "tags": ["jvm", "load-tools", "coordinated-omission"],
    "service_time_ms": int(service),
    "systems": [
        {"id": "vegeta", "label": "vegeta (open loop)", "concurrency_limit": int(pool),
         "description": f"vegeta attack -rate=R/1s -duration={duration}s -timeout={timeout}s; "
                        f"vegeta encode --to csv"},
        {"id": "hey", "label": f"hey, {workers} workers (closed loop)",
         "concurrency_limit": int(pool),
         "description": f"hey -z {duration}s -c {workers} -q R/{workers} -t {timeout}, its "
                        f"report of one run as a CSV and a summary (-o with "
                        f"bench/outside/hey-csv-and-summary.tmpl): each worker sends at most "
                        f"R/{workers} req/s and waits for each reply"},
    ],
    "load_points": [{"id": f"r{r}", "offered_rate": r, "duration_s": measured} for r in rates],
    "environment": env,
    "load_generator": {"name": f"vegeta {vegeta_version} and hey {hey_version}, on the "
                               f"server's machine",
                       "timeout_s": int(timeout), "warmup_s": int(skip)},
    "window": {"skip_s": int(skip), "duration_s": measured},
    "cells": [{"system": tool, "load": f"r{r}", "results": f"{tool}/r{r}.csv",
               **({"summary": f"hey/r{r}.txt"} if tool == "hey" else {})}
              for r in rates for tool in ("vegeta", "hey")],
}
header = ("# Recorded by bench/outside/record.sh; regenerate with it rather than by hand.\n"
          "# Host check before each cell (bench/hostcheck.py):\n"
          + "".join(f"#   {c}\n" for c in checks))
with open(out, "w", encoding="utf-8") as f:
    f.write(header + yaml.safe_dump(run, sort_keys=False, allow_unicode=True, width=100))
PY
mkdir -p runs
mv "$WORK/run" "$OUT"
echo "wrote $OUT: make site, then /reports/$RUN_ID/" >&2
