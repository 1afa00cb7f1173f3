#!/usr/bin/env bash
# Measures a run: for every repetition, scenario, system and offered rate (repetition-major, cells
# shuffled by a seed), check that the host is quiet, start the server under test with JFR, drive it with
# the open-loop generator (warm-up, measured window, drain), stop it; then write
# runs/<RUN_ID>/run.yml (bench/manifest.py). Called by `make bench RUN=<id>`.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: bench/run.sh RUN_ID [options]

Measures the load curve of each system at each offered rate, --repetitions times, into
runs/RUN_ID/ (<system>/<load>.<rep>.hlog, .jfr, .counts.json, and run.yml). Defaults measure
the demo run (pool20 vs virtual at 25..800 req/s, 200 ms per request, 3 repetitions; prints
its estimated time first, about 16 minutes).

  --targets LIST      comma-separated target ids, or all (bench/catalog.py): jdk-pool,
                      jdk-virtual, jetty-pool, jetty-virtual, helidon-virtual, vertx-eventloop,
                      netty-eventloop; also poolN (JDK HttpServer, fixed pool of N platform
                      threads) and virtual (default pool20,virtual)
  --systems LIST      the same as --targets
  --scenarios LIST    comma-separated ID or ID:RATE/RATE/..., or all: sleep, cpu, json,
                      fanout-futures, fanout-pekko (rates default to the scenario's own,
                      bench/catalog.py); files go to <scenario>/<system>/, and run.yml gets
                      scenarios:. Without it, one implicit scenario: /sleep?ms=--service-ms at
                      --rates, files in <system>/ (the first runs' form)
  --pool-threads N    pool size of jdk-pool and jetty-pool (default 100)
  --rates LIST        without --scenarios: offered rates in req/s, comma-separated (default
                      25,50,100,200,400,800)
  --service-ms MS     without --scenarios: time each request holds its worker, /sleep?ms=MS
                      (default 200)
  --warmup-s S        whole seconds at the offered rate before the window (default 5)
  --duration-s S      measured seconds per cell (default 12); after it, the drain (same rate
                      until every window request resolved, at most the timeout)
  --timeout-s S       request timeout from the intended send time (default 15)
  --repetitions N     measure every cell N times (default 3)
  --seed S            seed of the cells' order within each repetition (default 1)
  --busy-threshold X  host check: busy share of all cores above which the host is busy (0.20)
  --busy-wait-s S     host check: wait up to S seconds for a busy host to calm (default 120)
  --on-busy ACTION    host check: warn (measure, record verdict busy) or refuse (stop)
                      (default warn)
  --max-in-flight N   generator cap on requests (connections) in flight (default: the open
                      file limit, raised to its hard limit, minus 1000)
  --only SYS/LOAD     re-measure just this cell, every repetition (repeatable, e.g. --only
                      pool20/r800, or pool20/r800.2 for one repetition; with scenarios
                      SCENARIO/SYS/LOAD, e.g. sleep/jetty-pool/r1500); the other cells' files
                      stay, and run.yml is rewritten from all of them
  --out DIR           write here instead of runs/RUN_ID
  --title TEXT        run.yml title (default: made from the systems)
  --description TEXT  run.yml description (default: made from the systems)
  --tags LIST         run.yml tags (default jvm,virtual-threads,http)
  --short             a quick check: rates 50,200, warm-up 1 s, 3 s windows, timeout 2 s,
                      2 repetitions
  --no-build          use the jars already built (bench/test.sh builds first)
  --jfr-repetitions N record JFR in repetitions 1..N only (default: all), to keep a large
                      run's size down; the others have jfr: null in run.yml
  --smoke             measure nothing: start each target once (its own JVM, the run's flags)
                      and GET each scenario's endpoint once; every answer must be a 200
  -h, --help          this text
EOF
}

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
PY=${PY:-$ROOT/.venv/bin/python}
# shellcheck source=bench/jdk.sh
source "$HERE/jdk.sh"

[[ $# -ge 1 ]] || { usage >&2; exit 2; }
case $1 in -h|--help) usage; exit 0;; esac
RUN_ID=$1; shift
if [[ ! "$RUN_ID" =~ ^[a-z0-9_-]+$ ]]; then
    echo "error: run id '$RUN_ID' must be lowercase letters, digits, '-' and '_' only" >&2
    exit 2
fi

SYSTEMS=pool20,virtual
SCENARIOS=
POOL_THREADS=100
RATES=25,50,100,200,400,800
SERVICE_MS=200
WARMUP_S=5
DURATION_S=12
TIMEOUT_S=15
REPETITIONS=3
SEED=1
BUSY_THRESHOLD=0.20
BUSY_WAIT_S=120
ON_BUSY=warn
MAX_IN_FLIGHT=
ONLY=()
OUT=
TITLE=
DESCRIPTION=
TAGS=jvm,virtual-threads,http
BUILD=1
SMOKE=0
SMOKE_TMP=
JFR_REPETITIONS=
while [[ $# -gt 0 ]]; do
    case $1 in
        --systems|--targets) SYSTEMS=$2; shift 2;;
        --scenarios) SCENARIOS=$2; shift 2;;
        --pool-threads) POOL_THREADS=$2; shift 2;;
        --rates) RATES=$2; shift 2;;
        --service-ms) SERVICE_MS=$2; shift 2;;
        --warmup-s) WARMUP_S=$2; shift 2;;
        --duration-s) DURATION_S=$2; shift 2;;
        --timeout-s) TIMEOUT_S=$2; shift 2;;
        --max-in-flight) MAX_IN_FLIGHT=$2; shift 2;;
        --repetitions) REPETITIONS=$2; shift 2;;
        --seed) SEED=$2; shift 2;;
        --busy-threshold) BUSY_THRESHOLD=$2; shift 2;;
        --busy-wait-s) BUSY_WAIT_S=$2; shift 2;;
        --on-busy) ON_BUSY=$2; shift 2;;
        --only) ONLY+=("$2"); shift 2;;
        --out) OUT=$2; shift 2;;
        --title) TITLE=$2; shift 2;;
        --description) DESCRIPTION=$2; shift 2;;
        --tags) TAGS=$2; shift 2;;
        --short) RATES=50,200 WARMUP_S=1 DURATION_S=3 TIMEOUT_S=2 REPETITIONS=2; shift;;
        --no-build) BUILD=0; shift;;
        --smoke) SMOKE=1; shift;;
        --jfr-repetitions) JFR_REPETITIONS=$2; shift 2;;
        -h|--help) usage; exit 0;;
        *) echo "error: unknown option $1 (see bench/run.sh --help)" >&2; exit 2;;
    esac
done
OUT=${OUT:-$ROOT/runs/$RUN_ID}
# A smoke test writes nothing under runs/.
if (( SMOKE )) && [[ $OUT == "$ROOT/runs/$RUN_ID" ]]; then
    OUT=$(mktemp -d "${TMPDIR:-/tmp}/loadcurve-smoke.XXXXXX")
    SMOKE_TMP=$OUT
fi

# Targets and scenarios are checked by plan.py below (bench/catalog.py knows them).
IFS=, read -r -a RATE_LIST <<<"$RATES"
for r in "${RATE_LIST[@]}"; do
    [[ "$r" =~ ^[1-9][0-9]*$ ]] || { echo "error: rate '$r' must be a whole number of req/s" >&2; exit 2; }
done
# Each request in flight holds a socket: raise the open-file limit as far as allowed, so a
# saturated cell (800 req/s for warm-up + window + drain) does not run into it.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
MAX_IN_FLIGHT=${MAX_IN_FLIGHT:-$(( $(ulimit -n) > 2000 ? $(ulimit -n) - 1000 : 1000 ))}
JFR_REPETITIONS=${JFR_REPETITIONS:-$REPETITIONS}
for v in "$SERVICE_MS" "$DURATION_S" "$MAX_IN_FLIGHT" "$REPETITIONS" "$SEED" "$POOL_THREADS" "$JFR_REPETITIONS"; do
    [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "error: '$v' must be a positive whole number" >&2; exit 2; }
done
[[ "$WARMUP_S" =~ ^[0-9]+$ ]] || { echo "error: --warmup-s '$WARMUP_S' must be whole seconds" >&2; exit 2; }
[[ "$ON_BUSY" == warn || "$ON_BUSY" == refuse ]] \
    || { echo "error: --on-busy must be warn or refuse, not '$ON_BUSY'" >&2; exit 2; }
[[ -x "$PY" ]] || { echo "error: no Python at $PY (run 'make bench', which installs .venv, or set PY)" >&2; exit 2; }

# The cells' order (plan.py also checks --targets, --scenarios and --only, before any build).
plan_args=(--systems "$SYSTEMS" --repetitions "$REPETITIONS" --seed "$SEED" --pool-threads "$POOL_THREADS"
    --jfr-repetitions "$JFR_REPETITIONS"
    --warmup-s "$WARMUP_S" --duration-s "$DURATION_S" --timeout-s "$TIMEOUT_S")
if [[ -n "$SCENARIOS" ]]; then
    plan_args+=(--scenarios "$SCENARIOS")
else
    plan_args+=(--rates "$RATES" --service-ms "$SERVICE_MS")
fi
for o in "${ONLY[@]}"; do plan_args+=(--only "$o"); done
PLAN_TEXT=$("$PY" "$HERE/plan.py" "${plan_args[@]}") || exit 2
mapfile -t PLAN <<<"$PLAN_TEXT"
[[ -n "$PLAN_TEXT" ]] || { echo "error: no cell to measure (check --only)" >&2; exit 2; }

find_jdk
if (( BUILD )); then
    echo "== building bench/ with Maven on JDK $BENCH_JDK_FEATURE ($BENCH_JAVA_HOME)"
    build_bench "$HERE" -DskipTests
    rm -f "$BENCH_BUILD_LOG"
fi
SERVER_JAR=$HERE/server/target/server.jar
LOADGEN_JAR=$HERE/loadgen/target/loadgen.jar
for jar in "$SERVER_JAR" "$LOADGEN_JAR"; do
    [[ -f "$jar" ]] || { echo "error: $jar is missing (run without --no-build)" >&2; exit 2; }
done

# The server's flags are recorded in run.yml; JFR's option is added per cell.
SERVER_FLAGS=(-Xms1g -Xmx1g -XX:+UseG1GC)
GENERATOR_FLAGS=(-Xms256m -Xmx256m -XX:+UseG1GC)
# The generator runs at a higher priority than the server when the OS allows it, so that on a
# shared machine it keeps its schedule (it must not be the bottleneck).
GENERATOR_NICE=()
if nice -n -10 true 2>/dev/null; then
    GENERATOR_NICE=(nice -n -10)
fi

mkdir -p "$OUT"
WORK=$(mktemp -d "$OUT/.work.XXXXXX")
SERVER_PID=
GENERATOR_PID=
cleanup() {
    local pid
    for pid in "$GENERATOR_PID" "$SERVER_PID"; do
        if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null || true
            for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -KILL "$pid" 2>/dev/null || true
        fi
    done
    rm -rf "$WORK" ${SMOKE_TMP:+"$SMOKE_TMP"}
}
trap cleanup EXIT
trap 'exit 130' INT TERM

stop_server() {
    local pid=$SERVER_PID
    [[ -n "$pid" ]] || return 0
    kill -TERM "$pid" 2>/dev/null || true
    # JFR writes the recording while the JVM shuts down: allow it up to 30 s.
    for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
        echo "warning: server $pid did not stop in 30 s; killed (its JFR file may be missing)" >&2
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
    SERVER_PID=
}

# Starts target SYSTEM (one JVM, SERVER_FLAGS plus EXTRA_FLAGS...) on an ephemeral loopback
# port; sets SERVER_PID and SERVER_PORT. The server's output goes to LOG.
start_server() {
    local system=$1 port_file=$2 log=$3 target_args; shift 3
    case $system in
        virtual) target_args=(--executor virtual);;
        pool*) target_args=(--executor "pool:${system#pool}");;
        *) target_args=(--target "$system" --threads "$POOL_THREADS");;
    esac
    rm -f "$port_file"
    "$BENCH_JAVA" "${SERVER_FLAGS[@]}" "$@" \
        -jar "$SERVER_JAR" "${target_args[@]}" --port 0 --port-file "$port_file" >"$log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 300); do
        [[ -s "$port_file" ]] && break
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    if [[ ! -s "$port_file" ]]; then
        echo "error: the target server $system did not start within 30 s; its output:" >&2
        cat "$log" >&2
        exit 1
    fi
    SERVER_PORT=$(<"$port_file")
}

# One cell repetition: host check, server up with JFR, generator (warm-up, window, drain),
# server down, files into place. SCENARIO is - for the implicit scenario of a run without any.
measure_cell() {
    local rep=$1 scenario=$2 system=$3 rate=$4 endpoint=$5 load=r$4 server_log jfr_tmp port host_check
    local dir=$system
    [[ $scenario == - ]] || dir=$scenario/$system
    # Under $WORK/<dir>/ the files have their final names (the counts file names its log).
    local name=$dir/$load.$rep
    mkdir -p "$OUT/$dir" "$WORK/$dir"
    server_log=$WORK/$name.server.log
    jfr_tmp=$WORK/$name.jfr
    host_check=$("$PY" "$HERE/hostcheck.py" --threshold "$BUSY_THRESHOLD" --busy-wait-s "$BUSY_WAIT_S" \
        --on-busy "$ON_BUSY" --cell "$name") || exit 3
    echo "   host check: $host_check"
    local jfr_flags=()
    if (( rep <= JFR_REPETITIONS )); then
        jfr_flags=("-XX:StartFlightRecording=filename=$jfr_tmp,settings=$HERE/loadcurve.jfc,dumponexit=true")
    fi
    start_server "$system" "$WORK/$name.port" "$server_log" "${jfr_flags[@]}"
    port=$SERVER_PORT
    "${GENERATOR_NICE[@]}" "$BENCH_JAVA" "${GENERATOR_FLAGS[@]}" -jar "$LOADGEN_JAR" \
        --url "http://127.0.0.1:$port$endpoint" --rate "$rate" \
        --warmup-s "$WARMUP_S" --duration-s "$DURATION_S" --timeout-s "$TIMEOUT_S" \
        --max-in-flight "$MAX_IN_FLIGHT" --server-pid "$SERVER_PID" --host-check "$host_check" \
        --hlog "$WORK/$name.hlog" --counts "$WORK/$name.counts.json" \
        >"$WORK/$name.loadgen.log" 2>&1 &
    GENERATOR_PID=$!
    if ! wait "$GENERATOR_PID"; then
        GENERATOR_PID=
        stop_server
        echo "error: the load generator failed; its output:" >&2
        cat "$WORK/$name.loadgen.log" >&2
        exit 1
    fi
    GENERATOR_PID=
    sed -n 's/^loadgen: window/   window/p' "$WORK/$name.loadgen.log"
    stop_server
    if (( rep <= JFR_REPETITIONS )); then
        [[ -s "$jfr_tmp" ]] || { echo "error: no JFR recording from the server; its output:" >&2; cat "$server_log" >&2; exit 1; }
        mv -f "$jfr_tmp" "$OUT/$name.jfr"
    else
        # Re-measured without a recording: an older one would not belong to these logs.
        rm -f "$OUT/$name.jfr"
    fi
    # Same filesystem: each rename is atomic, so a cell's files are old or new, never half.
    mv -f "$WORK/$name.hlog" "$OUT/$name.hlog"
    mv -f "$WORK/$name.counts.json" "$OUT/$name.counts.json"
}


if (( SMOKE )); then
    # Every target once, in its own JVM with the run's flags (no JFR): one GET per scenario
    # endpoint, which must answer 200. Nothing is written to OUT.
    mapfile -t SMOKE_CELLS < <(printf '%s\n' "${PLAN[@]}" | awk '$1 == 1 { print $3, $5 }' | sort -u)
    smoke_failed=0
    for system in $(printf '%s\n' "${SMOKE_CELLS[@]}" | awk '{ print $1 }' | uniq); do
        t0=$(date +%s%N)
        start_server "$system" "$WORK/$system.port" "$WORK/$system.server.log"
        startup_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
        for endpoint in $(printf '%s\n' "${SMOKE_CELLS[@]}" | awk -v s="$system" '$1 == s { print $2 }'); do
            if answer=$("$PY" -c 'import sys, time, urllib.request as u
t = time.monotonic(); r = u.urlopen(sys.argv[1], timeout=10); body = r.read()
print(r.status, len(body), "bytes", f"{(time.monotonic() - t) * 1000:.0f} ms")' \
                    "http://127.0.0.1:$SERVER_PORT$endpoint" 2>&1) && [[ $answer == "200 "* ]]; then
                echo "ok   $system $endpoint: $answer (started in $startup_ms ms)"
            else
                echo "FAIL $system $endpoint: $(tail -n 1 <<<"$answer")"
                smoke_failed=$((smoke_failed + 1))
            fi
        done
        stop_server
    done
    echo "== smoke: $(printf '%s\n' "${SMOKE_CELLS[@]}" | wc -l) target x scenario answers, $smoke_failed failed"
    exit $(( smoke_failed > 0 ))
fi
echo "== $RUN_ID: ${WARMUP_S} s warm-up + ${DURATION_S} s window + drain per cell, into $OUT"
echo "== estimate: $("$PY" "$HERE/plan.py" "${plan_args[@]}" --estimate)"
echo "== server JVM, every target: ${SERVER_FLAGS[*]} + JFR (bench/loadcurve.jfc); generator: ${GENERATOR_FLAGS[*]}"
started=$(date +%s)
n=0
for line in "${PLAN[@]}"; do
    read -r rep scenario system rate endpoint <<<"$line"
    n=$((n + 1))
    what="$scenario $system"
    [[ $scenario == - ]] && what=$system
    echo "-- [$n/${#PLAN[@]}] repetition $rep: $what at $rate req/s ($(( $(date +%s) - started )) s in)"
    measure_cell "$rep" "$scenario" "$system" "$rate" "$endpoint"
done
echo "== measured in $(( $(date +%s) - started )) s"

manifest_args=(--run-dir "$OUT" --systems "$SYSTEMS" --rates "$RATES" --service-ms "$SERVICE_MS"
    --warmup-s "$WARMUP_S" --duration-s "$DURATION_S" --timeout-s "$TIMEOUT_S"
    --max-in-flight "$MAX_IN_FLIGHT" --repetitions "$REPETITIONS" --seed "$SEED"
    --busy-threshold "$BUSY_THRESHOLD" --busy-wait-s "$BUSY_WAIT_S" --on-busy "$ON_BUSY" --java "$BENCH_JAVA"
    --pool-threads "$POOL_THREADS" --jfr-repetitions "$JFR_REPETITIONS"
    --server-flags "${SERVER_FLAGS[*]} -XX:StartFlightRecording=settings=bench/loadcurve.jfc"
    --generator-flags "${GENERATOR_NICE[*]:+${GENERATOR_NICE[*]} }${GENERATOR_FLAGS[*]}" --tags "$TAGS")
[[ -n "$SCENARIOS" ]] && manifest_args+=(--scenarios "$SCENARIOS")
[[ -n "$TITLE" ]] && manifest_args+=(--title "$TITLE")
[[ -n "$DESCRIPTION" ]] && manifest_args+=(--description "$DESCRIPTION")
"$PY" "$HERE/manifest.py" "${manifest_args[@]}"
echo "== $(du -sh "$OUT" | cut -f1) in $OUT"
