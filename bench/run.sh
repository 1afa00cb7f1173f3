#!/usr/bin/env bash
# Measures a run: for every repetition, scenario, system and offered rate (repetition-major, cells
# shuffled by a seed), check that the host is quiet, start the server under test with JFR (or, with
# --url, drive a server started by someone else), drive it with the open-loop generator (warm-up,
# measured window, drain), stop it; then write runs/<RUN_ID>/run.yml (bench/manifest.py), also on
# Ctrl-C from the cells measured so far. Called by `make bench RUN=<id>`.
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
  --warmup MODE       auto (default): after --warmup-s, keep sending at the offered rate until
                      the generator finds its last 5 s steady (requests in flight without a
                      trend, back near what Little's law gives, per-second p99 without a
                      trend), or --warmup-max-s runs out; the window starts on that whole
                      second. fixed: exactly --warmup-s, as runs before issue 32. Each counts
                      file records the warm-up used and whether it was steady (warmup:)
  --warmup-s S        whole seconds at the offered rate before the window (default 5; with
                      auto, the least)
  --warmup-max-s S    with auto, the most warm-up a cell gets (default 60)
  --duration-s S      measured seconds per cell (default 12); after it, the drain (same rate
                      until every window request resolved, at most the timeout)
  --timeout-s S       request timeout from the intended send time (default 15)
  --repetitions N     measure every cell N times (default 3)
  --seed S            seed of the cells' order within each repetition (default 1)
  --busy-threshold X  host check: busy share of all cores above which the host is busy (0.20)
  --busy-wait-s S     host check: wait up to S seconds for a busy host to calm (default 120)
  --on-busy ACTION    host check: warn (measure, record verdict busy) or refuse (stop)
                      (default warn)
  --max-in-flight N   generator cap on requests (connections) in flight, per generator process
                      (default: the open file limit, raised to its hard limit, minus 1000)
  --generators N      N generator processes per cell (default 1), each at rate/N, all sending
                      from the same instant (their --start-at, a few seconds ahead): the cell's
                      files are <load>.<rep>.g1.hlog .. gN (and .gI.counts.json), listed in
                      run.yml in that order. Their warm-up is fixed (--warmup-s): with auto,
                      each generator would choose its own window. Not with --find-knee; a
                      rerun with --only takes the same N (run.yml lists the N-file cells)
  --only SYS/LOAD     re-measure just this cell, every repetition (repeatable, e.g. --only
                      pool20/r800, or pool20/r800.2 for one repetition; with scenarios
                      SCENARIO/SYS/LOAD, e.g. sleep/jetty-pool/r1500); the other cells' files
                      stay, and run.yml is rewritten from all of them
  --out DIR           write here instead of runs/RUN_ID
  --title TEXT        run.yml title (default: made from the systems)
  --description TEXT  run.yml description (default: made from the systems)
  --tags LIST         run.yml tags (default jvm,virtual-threads,http)
  --short             a quick check: rates 50,200, fixed warm-up 1 s, 3 s windows, timeout
                      2 s, 2 repetitions
  --no-build          use the jars already built (bench/test.sh builds first)
  --jfr-repetitions N record JFR in repetitions 1..N only (default: all), to keep a large
                      run's size down; the others have jfr: null in run.yml

A server you started yourself, measured by URL (no server is started; --targets and
--scenarios do not apply; the cells are <system>/r<rate>.<rep>.*, as above):
  --url URL           GET this URL (repeatable: each is a system, its id made from host, port
                      and path, e.g. http://127.0.0.1:8080/api -> 127-0-0-1-8080-api)
  --system ID=URL     a system with your id; ID=@FILE rotates over a weighted URL list, one
                      `[WEIGHT] URL` a line (repeatable, with or without --url)
  --method M, --header 'NAME: value' (repeatable), --body-file PATH, --success 200-399,
  --insecure          the request's shape, passed to the generator (--insecure: HTTPS without
                      checking the certificate, stated in the run's methodology)
  --find-knee         instead of --rates: per system, warm-up + --knee-probe-s probes from
                      --knee-start req/s (10), doubling until one is saturated (bench/knee.py:
                      timed out + errors > 1 % of the window's requests, sent < 99 % or
                      completed < 95 % of the offered rate, or p99 > --knee-p99-ms), then
                      --knee-bisections (2) probes between the last good rate K and the first
                      saturated S; then measures K/4, K/2, 3K/4, K, S, 3S/2 in full. Each probe
                      gets a cell's host check; a server not settled before a probe stops the
                      search (the last probe counts as saturated; with no good probe left, an
                      error). The search goes to OUT/knee.json (each probe's warm-up, window,
                      outcomes, p99, verdict; its files in OUT/knee/) and run.yml (a rerun, e.g.
                      with --only, reuses it)
  --knee-start R, --knee-probe-s S (3), --knee-bisections N (2), --knee-p99-ms MS
  --knee-warmup-max-s S  a probe's warm-up: with --warmup auto, until steady (5 s at least)
                      or S seconds (default 20); with --warmup fixed, 1 s
  --server-pid PID    the server's process: its CPU per window goes into each counts file, and
                      if it is a JVM, its JDK, GC, heap and -X/-XX flags (only those: a command
                      line can hold secrets) into run.yml's environment (bench/serverjvm.py)
  --jfr-pid PID       a local JVM server: per cell, `jcmd PID JFR.start` (bench/loadcurve.jfc)
                      before the warm-up, JFR.dump + JFR.stop after the drain (implies
                      --server-pid PID). Without either, run.yml and the report say the server
                      side was not observed
  Before measuring, the generator's --self-test (a local null server; the best of up to
  --self-test-tries (3) tries of 1 s probes, stopping at the first that allows the highest rate;
  cached in OUT/.self-test.json) gives this host's limit: rates above it, or a --max-in-flight
  above it or the open-file limit, are refused with one error: line.
  --max-rate-override R  skip the self-test and take R req/s as the limit (a busy CI host);
                      run.yml's load_generator.self_test says it was given, not measured
  --settle-max-s S    before each cell's warm-up (and each knee probe), wait until the server
                      answers again: 3 sequential probes of the first URL in a row, each within
                      --settle-ms (default: 2 x its median answer over 5 probes before the
                      first cell, + 50 ms), for at most S seconds (default 60; 0: no settling).
                      The wait goes into each counts file's host_check (settle_waited_s);
                      a cell whose server never settles is measured anyway, with a warning
  --settle-ms MS      the settle probes' bound instead of the measured one
  Bounds: a cell lasts at most settle + warm-up (auto: --warmup-max-s) + window + timeout and
  sends at most rate x that many requests; a knee search probes at most log2(limit/start) + 1 +
  bisections rates per system. Ctrl-C stops the cell under way and writes run.yml from the cells
  already measured.
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
WARMUP_MODE=auto
WARMUP_GIVEN=
WARMUP_S=5
WARMUP_MAX_S=60
KNEE_WARMUP_MAX_S=20
DURATION_S=12
TIMEOUT_S=15
REPETITIONS=3
SEED=1
BUSY_THRESHOLD=0.20
BUSY_WAIT_S=120
ON_BUSY=warn
MAX_IN_FLIGHT=
GENERATORS=1
# How far ahead of now a cell's generators are told to start (--start-at): time for N JVMs to
# start and get ready on a busy host; a generator that is not ready by then refuses to send.
START_AHEAD_MS=4000
ONLY=()
OUT=
TITLE=
DESCRIPTION=
TAGS=jvm,virtual-threads,http
BUILD=1
SMOKE=0
SMOKE_TMP=
JFR_REPETITIONS=
URLS=()
URL_SYSTEMS=()
REQUEST_ARGS=()
# The request options as run.yml states them: a header by its name only (its value may be a
# credential, and run.yml is published with the report).
REQUEST_SHOWN=()
FIND_KNEE=0
KNEE_START=10
KNEE_PROBE_S=3
KNEE_BISECTIONS=2
KNEE_P99_MS=
OBSERVED_PID=
JFR_PID=
INSECURE=0
MAX_RATE_OVERRIDE=
SELF_TEST_TRIES=3
SETTLE_MAX_S=60
SETTLE_MS=
SETTLED=
LIMIT_FILE=
while [[ $# -gt 0 ]]; do
    case $1 in
        --systems|--targets) SYSTEMS=$2; shift 2;;
        --scenarios) SCENARIOS=$2; shift 2;;
        --pool-threads) POOL_THREADS=$2; shift 2;;
        --rates) RATES=$2; shift 2;;
        --service-ms) SERVICE_MS=$2; shift 2;;
        --warmup) WARMUP_MODE=$2; WARMUP_GIVEN=$2; shift 2;;
        --warmup-s) WARMUP_S=$2; shift 2;;
        --warmup-max-s) WARMUP_MAX_S=$2; shift 2;;
        --knee-warmup-max-s) KNEE_WARMUP_MAX_S=$2; shift 2;;
        --duration-s) DURATION_S=$2; shift 2;;
        --timeout-s) TIMEOUT_S=$2; shift 2;;
        --max-in-flight) MAX_IN_FLIGHT=$2; shift 2;;
        --generators) GENERATORS=$2; shift 2;;
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
        --short) RATES=50,200 WARMUP_MODE=fixed WARMUP_S=1 DURATION_S=3 TIMEOUT_S=2 REPETITIONS=2; shift;;
        --no-build) BUILD=0; shift;;
        --smoke) SMOKE=1; shift;;
        --jfr-repetitions) JFR_REPETITIONS=$2; shift 2;;
        --url) URLS+=(--url "$2"); shift 2;;
        --system) URL_SYSTEMS+=(--system "$2"); shift 2;;
        --method|--body-file|--success) REQUEST_ARGS+=("$1" "$2"); REQUEST_SHOWN+=("$1" "$2"); shift 2;;
        --header) REQUEST_ARGS+=("$1" "$2"); REQUEST_SHOWN+=("$1" "${2%%:*}"); shift 2;;
        --insecure) REQUEST_ARGS+=(--insecure); REQUEST_SHOWN+=(--insecure); INSECURE=1; shift;;
        --find-knee) FIND_KNEE=1; shift;;
        --knee-start) KNEE_START=$2; shift 2;;
        --knee-probe-s) KNEE_PROBE_S=$2; shift 2;;
        --knee-bisections) KNEE_BISECTIONS=$2; shift 2;;
        --knee-p99-ms) KNEE_P99_MS=$2; shift 2;;
        --server-pid) OBSERVED_PID=$2; shift 2;;
        --jfr-pid) JFR_PID=$2; OBSERVED_PID=$2; shift 2;;
        --max-rate-override) MAX_RATE_OVERRIDE=$2; shift 2;;
        --self-test-tries) SELF_TEST_TRIES=$2; shift 2;;
        --settle-max-s) SETTLE_MAX_S=$2; shift 2;;
        --settle-ms) SETTLE_MS=$2; shift 2;;
        -h|--help) usage; exit 0;;
        *) echo "error: unknown option $1 (see bench/run.sh --help)" >&2; exit 2;;
    esac
done
OUT=${OUT:-$ROOT/runs/$RUN_ID}
# Absolute: a server's JVM resolves jcmd's JFR.dump filename in its own working directory.
OUT=$(realpath -m "$OUT")
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
# A server given by URL (bench/urls.py names the systems): none is started, and its service
# time is not known (0: no latency floor, no drain estimate).
URL_MODE=$(( ${#URLS[@]} + ${#URL_SYSTEMS[@]} > 0 ))
PLAN_SERVICE_MS=$SERVICE_MS
declare -A TARGET_OF=()
if (( URL_MODE )); then
    [[ -z "$SCENARIOS" ]] || { echo "error: --scenarios is for the bundled targets; a server given by --url has no scenarios" >&2; exit 2; }
    (( ! SMOKE )) || { echo "error: --smoke starts the bundled targets; it does not apply to --url" >&2; exit 2; }
    URL_SYSTEM_LINES=$("$PY" "$HERE/urls.py" systems "${URLS[@]}" "${URL_SYSTEMS[@]}") || exit 2
    while read -r sid target; do TARGET_OF[$sid]=$target; done <<<"$URL_SYSTEM_LINES"
    SYSTEMS=$(awk '{ print $1 }' <<<"$URL_SYSTEM_LINES" | paste -sd, -)
    PLAN_SERVICE_MS=0
    for v in "$KNEE_START" "$KNEE_PROBE_S"; do
        [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "error: '$v' must be a positive whole number" >&2; exit 2; }
    done
    [[ "$KNEE_BISECTIONS" =~ ^[0-9]+$ ]] || { echo "error: --knee-bisections '$KNEE_BISECTIONS' must be a whole number" >&2; exit 2; }
    [[ "$SELF_TEST_TRIES" =~ ^[1-9][0-9]*$ ]] || { echo "error: --self-test-tries '$SELF_TEST_TRIES' must be a positive whole number" >&2; exit 2; }
    [[ "$SETTLE_MAX_S" =~ ^[0-9]+$ ]] || { echo "error: --settle-max-s '$SETTLE_MAX_S' must be whole seconds" >&2; exit 2; }
    [[ -z "$SETTLE_MS$MAX_RATE_OVERRIDE" || "$SETTLE_MS$MAX_RATE_OVERRIDE" =~ ^[0-9]+$ ]] \
        || { echo "error: --settle-ms and --max-rate-override take whole numbers" >&2; exit 2; }
    if [[ -n "$OBSERVED_PID" ]] && { [[ ! "$OBSERVED_PID" =~ ^[1-9][0-9]*$ ]] || ! kill -0 "$OBSERVED_PID" 2>/dev/null; }; then
        echo "error: --server-pid/--jfr-pid $OBSERVED_PID is not a running process of this user" >&2
        exit 2
    fi
elif (( FIND_KNEE )) || [[ "$OBSERVED_PID$INSECURE$MAX_RATE_OVERRIDE$SETTLE_MS" != 0 ]] || (( ${#REQUEST_ARGS[@]} )); then
    echo "error: --find-knee, --server-pid, --jfr-pid, --max-rate-override, --settle-ms and the request options are for a server given by --url" >&2
    exit 2
fi
for v in "$SERVICE_MS" "$DURATION_S" "$MAX_IN_FLIGHT" "$REPETITIONS" "$SEED" "$POOL_THREADS" "$JFR_REPETITIONS" "$GENERATORS"; do
    [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "error: '$v' must be a positive whole number" >&2; exit 2; }
done
# A server given by URL is recorded only through --jfr-pid.
if (( URL_MODE )) && [[ -z "$JFR_PID" ]]; then JFR_REPETITIONS=0; fi
[[ "$WARMUP_S" =~ ^[0-9]+$ ]] || { echo "error: --warmup-s '$WARMUP_S' must be whole seconds" >&2; exit 2; }
if (( GENERATORS > 1 )); then
    (( GENERATORS <= 64 )) || { echo "error: --generators $GENERATORS: at most 64 per cell" >&2; exit 2; }
    (( ! FIND_KNEE )) || { echo "error: --find-knee probes with one generator; it does not take --generators (find the knee first, then measure its rates with --rates and --generators)" >&2; exit 2; }
    # Each generator judging its own warm-up would start its own window: the logs would not
    # cover the same seconds. A fixed warm-up gives every generator the same window.
    if [[ $WARMUP_GIVEN == auto ]]; then
        echo "error: --warmup auto lets each generator choose its own window; with --generators the warm-up is fixed (--warmup fixed --warmup-s S)" >&2
        exit 2
    fi
    WARMUP_MODE=fixed
fi
[[ "$WARMUP_MODE" == auto || "$WARMUP_MODE" == fixed ]] \
    || { echo "error: --warmup must be auto or fixed, not '$WARMUP_MODE'" >&2; exit 2; }
for v in "$WARMUP_MAX_S" "$KNEE_WARMUP_MAX_S"; do
    [[ "$v" =~ ^[0-9]+$ ]] && (( v <= 600 )) || { echo "error: --warmup-max-s and --knee-warmup-max-s take whole seconds up to 600, not '$v'" >&2; exit 2; }
done
if [[ $WARMUP_MODE == auto ]] && (( WARMUP_MAX_S < WARMUP_S )); then
    echo "error: --warmup-max-s $WARMUP_MAX_S is below --warmup-s $WARMUP_S" >&2
    exit 2
fi
# The generator's warm-up options for a cell (WARMUP_ARGS) and for a knee probe (KNEE_WARMUP_ARGS).
if [[ $WARMUP_MODE == auto ]]; then
    WARMUP_ARGS=(--warmup auto --warmup-s "$WARMUP_S" --warmup-max-s "$WARMUP_MAX_S")
    KNEE_WARMUP_ARGS=(--warmup auto --warmup-s 1 --warmup-max-s "$(( KNEE_WARMUP_MAX_S > 1 ? KNEE_WARMUP_MAX_S : 1 ))")
    WARMUP_TEXT="warm-up until steady (${WARMUP_S}-${WARMUP_MAX_S} s)"
    KNEE_WARMUP_TEXT="a warm-up until steady (at most $KNEE_WARMUP_MAX_S s)"
else
    WARMUP_ARGS=(--warmup fixed --warmup-s "$WARMUP_S")
    KNEE_WARMUP_ARGS=(--warmup fixed --warmup-s 1)
    WARMUP_TEXT="${WARMUP_S} s warm-up"
    (( GENERATORS == 1 )) || WARMUP_TEXT+=" (fixed: $GENERATORS generators per cell, each at rate/$GENERATORS, from one --start-at)"
    KNEE_WARMUP_TEXT="1 s warm-up"
fi
[[ "$ON_BUSY" == warn || "$ON_BUSY" == refuse ]] \
    || { echo "error: --on-busy must be warn or refuse, not '$ON_BUSY'" >&2; exit 2; }
[[ -x "$PY" ]] || { echo "error: no Python at $PY (run 'make bench', which installs .venv, or set PY)" >&2; exit 2; }

# The cells' order (plan.py also checks --targets, --scenarios and --only, before any build;
# with --find-knee, the rates are known only after the search).
make_plan() {
    plan_args=(--systems "$SYSTEMS" --repetitions "$REPETITIONS" --seed "$SEED" --pool-threads "$POOL_THREADS"
        --jfr-repetitions "$JFR_REPETITIONS"
        --warmup-s "$WARMUP_S" --duration-s "$DURATION_S" --timeout-s "$TIMEOUT_S" --generators "$GENERATORS")
    [[ $WARMUP_MODE == auto ]] && plan_args+=(--warmup-max-s "$WARMUP_MAX_S")
    if [[ -n "$SCENARIOS" ]]; then
        plan_args+=(--scenarios "$SCENARIOS")
    else
        plan_args+=(--rates "$RATES" --service-ms "$PLAN_SERVICE_MS")
    fi
    (( URL_MODE )) && plan_args+=(--url-systems)
    for o in "${ONLY[@]}"; do plan_args+=(--only "$o"); done
    PLAN_TEXT=$("$PY" "$HERE/plan.py" "${plan_args[@]}") || exit 2
    mapfile -t PLAN <<<"$PLAN_TEXT"
    [[ -n "$PLAN_TEXT" ]] || { echo "error: no cell to measure (check --only)" >&2; exit 2; }
}
(( FIND_KNEE )) || make_plan

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
GENERATOR_PIDS=()
JCMD=$BENCH_JAVA_HOME/bin/jcmd
JFR_NAME=loadcurve-$RUN_ID
JFR_ACTIVE=0
cleanup() {
    local pid
    # A recording left running would go on filling the observed server's disk.
    if (( JFR_ACTIVE )); then "$JCMD" "$JFR_PID" JFR.stop name="$JFR_NAME" >/dev/null 2>&1 || true; fi
    for pid in "${GENERATOR_PIDS[@]}" "$SERVER_PID"; do
        if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null || true
            for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -KILL "$pid" 2>/dev/null || true
        fi
    done
    rm -rf "$WORK" ${SMOKE_TMP:+"$SMOKE_TMP"}
}
trap cleanup EXIT
MEASURING=0
# Ctrl-C: the cell under way is dropped (its files never left WORK); run.yml is written from the
# cells already in place.
interrupted() {
    trap - INT TERM
    echo "== interrupted; writing run.yml from the cells measured so far" >&2
    stop_generators
    if (( MEASURING )); then write_manifest || true; fi
    exit 130
}
trap interrupted INT TERM

# Stops the cell's generators still running (their files are left in WORK, never used).
stop_generators() {
    local pid
    for pid in "${GENERATOR_PIDS[@]}"; do
        if [[ -n "$pid" ]]; then kill -TERM "$pid" 2>/dev/null || true; fi
    done
}

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
    local rep=$1 scenario=$2 system=$3 rate=$4 endpoint=$5 load=r$4 server_log jfr_tmp port
    local dir=$system
    [[ $scenario == - ]] || dir=$scenario/$system
    # Under $WORK/<dir>/ the files have their final names (the counts file names its log).
    local name=$dir/$load.$rep
    mkdir -p "$OUT/$dir" "$WORK/$dir"
    server_log=$WORK/$name.server.log
    jfr_tmp=$WORK/$name.jfr
    # A server given by URL first works off the previous cell's queue (which also keeps the host busy).
    SETTLED=
    if (( URL_MODE )); then settle "$system" "$name" measure; fi
    check_machine "$name"
    local jfr_flags=() target_args observed=$OBSERVED_PID recorded=0
    if (( rep <= JFR_REPETITIONS )) && { (( ! URL_MODE )) || [[ -n "$JFR_PID" ]]; }; then
        recorded=1
    fi
    if (( URL_MODE )); then
        url_target_args "$system"
        target_args=("${URL_TARGET_ARGS[@]}")
        if (( recorded )); then jfr_start "$name"; fi
    else
        if (( recorded )); then jfr_flags=("-XX:StartFlightRecording=filename=$jfr_tmp,settings=$HERE/loadcurve.jfc,dumponexit=true"); fi
        start_server "$system" "$WORK/$name.port" "$server_log" "${jfr_flags[@]}"
        port=$SERVER_PORT
        target_args=(--url "http://127.0.0.1:$port$endpoint")
        observed=$SERVER_PID
    fi
    run_generators "$name" "$rate" "$DURATION_S" "$observed" "$GENERATORS" --host-check "$HOST_CHECK" \
        "${WARMUP_ARGS[@]}" "${target_args[@]}"
    if (( URL_MODE )); then
        if (( recorded )); then jfr_finish "$jfr_tmp"; fi
    else
        stop_server
    fi
    if (( recorded )); then
        [[ -s "$jfr_tmp" ]] || { echo "error: no JFR recording from the server; its output:" >&2; cat "$server_log" "$WORK/jcmd.log" >&2 2>/dev/null; exit 1; }
        mv -f "$jfr_tmp" "$OUT/$name.jfr"
    else
        # Re-measured without a recording: an older one would not belong to these logs.
        rm -f "$OUT/$name.jfr"
    fi
    # Same filesystem: each rename is atomic, so a cell's files are old or new, never half.
    # The cell's files of a measurement with another --generators would not belong to these.
    local i
    if (( GENERATORS == 1 )); then
        rm -f "$OUT/$name".g[0-9]*.hlog "$OUT/$name".g[0-9]*.counts.json
        mv -f "$WORK/$name.hlog" "$OUT/$name.hlog"
        mv -f "$WORK/$name.counts.json" "$OUT/$name.counts.json"
    else
        rm -f "$OUT/$name.hlog" "$OUT/$name.counts.json" "$OUT/$name".g[0-9]*.hlog "$OUT/$name".g[0-9]*.counts.json
        for (( i = 1; i <= GENERATORS; i++ )); do
            mv -f "$WORK/$name.g$i.hlog" "$OUT/$name.g$i.hlog"
            mv -f "$WORK/$name.g$i.counts.json" "$OUT/$name.g$i.counts.json"
        done
    fi
}

# Sets HOST_CHECK, the generator's --host-check value before NAME (a cell or a knee probe): the
# machine's quiet check (bench/hostcheck.py; exits 3 on a busy host with --on-busy refuse) and
# the settle wait just made (SETTLED), if any.
check_machine() {
    HOST_CHECK=$("$PY" "$HERE/hostcheck.py" --threshold "$BUSY_THRESHOLD" --busy-wait-s "$BUSY_WAIT_S" \
        --on-busy "$ON_BUSY" --cell "$1") || exit 3
    HOST_CHECK+=${SETTLED:+,$SETTLED}
    echo "   host check: $HOST_CHECK"
}

# Runs N generators: N = 1, one into WORK/NAME.{hlog,counts.json,loadgen.log}; N > 1, generator
# I of N at RATE/N into WORK/NAME.gI.*, all with the same --start-at (START_AHEAD_MS from now).
# Arguments: NAME RATE DURATION_S SERVER_PID (or empty) N, then the generators' other arguments
# (the warm-up, the target, --host-check). Prints each one's warm-up and window lines; exits on
# any failure. No time limit of its own: a generator stops by itself at the latest --timeout-s +
# 5 s after the latest window end its warm-up allows.
run_generators() {
    local name=$1 rate=$2 duration=$3 pid=$4 n=$5; shift 5
    local observe=() start_at share i out failed=
    [[ -n "$pid" ]] && observe=(--server-pid "$pid")
    GENERATOR_PIDS=()
    if (( n > 1 )); then
        start_at=$(( $(date +%s%3N) + START_AHEAD_MS ))
        share=$(awk -v r="$rate" -v n="$n" 'BEGIN { printf "%.10g", r / n }')
    fi
    for (( i = 1; i <= n; i++ )); do
        out=$WORK/$name
        local each=(--rate "$rate")
        if (( n > 1 )); then
            out=$WORK/$name.g$i
            each=(--rate "$share" --start-at "$start_at" --generator "$i/$n")
        fi
        "${GENERATOR_NICE[@]}" "$BENCH_JAVA" "${GENERATOR_FLAGS[@]}" -jar "$LOADGEN_JAR" "$@" \
            "${each[@]}" --duration-s "$duration" --timeout-s "$TIMEOUT_S" \
            --max-in-flight "$MAX_IN_FLIGHT" "${observe[@]}" \
            --hlog "$out.hlog" --counts "$out.counts.json" \
            >"$out.loadgen.log" 2>&1 &
        GENERATOR_PIDS+=($!)
    done
    # The first to fail stops the others: without it, the cell's rate is not what they send.
    local left=$n status running label
    while (( left > 0 )); do
        for (( i = 1; i <= n; i++ )); do
            running=${GENERATOR_PIDS[i - 1]}
            [[ -n "$running" ]] && ! kill -0 "$running" 2>/dev/null || continue
            if wait "$running"; then status=0; else status=$?; fi
            GENERATOR_PIDS[i - 1]=
            left=$((left - 1))
            if (( status != 0 )) && [[ -z "$failed" ]]; then
                failed=$i
                stop_generators
            fi
        done
        (( left == 0 )) || sleep 0.1
    done
    GENERATOR_PIDS=()
    for (( i = 1; i <= n; i++ )); do
        out=$WORK/$name label=
        if (( n > 1 )); then out=$WORK/$name.g$i label="g$i "; fi
        if [[ "$failed" == "$i" ]]; then
            stop_server
            echo "error: the load generator${label:+ $i of $n} failed; its output:" >&2
            cat "$out.loadgen.log" >&2
            exit 1
        fi
        sed -n -e "s/^loadgen: warm-up/   ${label}warm-up/p" -e "s/^loadgen: window/   ${label}window/p" \
            "$out.loadgen.log"
    done
}

# Sets URL_TARGET_ARGS: the generator's target and request shape for system SYSTEM (--url run).
url_target_args() {
    local target=${TARGET_OF[$1]}
    if [[ $target == @* ]]; then
        URL_TARGET_ARGS=(--urls-file "${target#@}")
    else
        URL_TARGET_ARGS=(--url "$target")
    fi
    URL_TARGET_ARGS+=("${REQUEST_ARGS[@]}")
}

# The quiet answer time of each system given by URL, before its first cell (bench/settle.py);
# the settle bound is kept in OUT/.settle.json (run.yml's method.settle), measured once per run
# folder: a rerun may find the server still busy.
# Without settling, one request per system still checks that it answers (and that its
# certificate is accepted, or --insecure given) before anything is measured.
settle_baselines() {
    local system
    if (( SETTLE_MAX_S == 0 )); then
        for system in ${SYSTEMS//,/ }; do
            "$PY" "$HERE/settle.py" check --target "${TARGET_OF[$system]}" "${REQUEST_ARGS[@]}" || exit 1
        done
        return 0
    fi
    echo "== settle rule: each cell waits until the server answers quickly again (up to $SETTLE_MAX_S s)"
    for system in ${SYSTEMS//,/ }; do
        "$PY" "$HERE/settle.py" baseline --target "${TARGET_OF[$system]}" --state "$OUT/.settle.json" \
            --system "$system" --max-s "$SETTLE_MAX_S" ${SETTLE_MS:+--bound-ms "$SETTLE_MS"} \
            "${REQUEST_ARGS[@]}" || exit 1
    done
}

# Sets SETTLED to the --host-check items of the wait until SYSTEM answers quickly again, before
# NAME (a cell or knee probe); empty without settling. UNSETTLED: what the caller does with a
# server that did not settle: measure (the cell, with a warning) or stop (the knee search).
settle() {
    SETTLED=
    (( SETTLE_MAX_S > 0 )) || return 0
    SETTLED=$("$PY" "$HERE/settle.py" wait --target "${TARGET_OF[$1]}" --state "$OUT/.settle.json" \
        --system "$1" --max-s "$SETTLE_MAX_S" --cell "$2" --unsettled "$3" "${REQUEST_ARGS[@]}") || exit 1
    echo "   settle: $SETTLED"
}

# A recording per cell on the observed JVM (--jfr-pid): started before the warm-up, dumped
# after the drain, so that it covers the cell's window (what the analysis cuts it to).
jfr_start() {
    if ! "$JCMD" "$JFR_PID" JFR.start name="$JFR_NAME" settings="$HERE/loadcurve.jfc" >"$WORK/jcmd.log" 2>&1; then
        echo "error: jcmd $JFR_PID JFR.start failed before $1; its output:" >&2
        cat "$WORK/jcmd.log" >&2
        exit 1
    fi
    JFR_ACTIVE=1
}

jfr_finish() {
    "$JCMD" "$JFR_PID" JFR.dump name="$JFR_NAME" filename="$1" >"$WORK/jcmd.log" 2>&1 || true
    "$JCMD" "$JFR_PID" JFR.stop name="$JFR_NAME" >>"$WORK/jcmd.log" 2>&1 || true
    JFR_ACTIVE=0
}

# This host's limit (LIMIT_FILE): the generator's self-test, the best of a few tries (once per
# run folder, cached), or --max-rate-override; the rates of RATES and --max-in-flight must be
# within it, per generator process (a cell's rate / --generators, each its own file limit).
# ENOUGH: the highest rate the run needs (empty: find the limit, for --find-knee).
check_limit() {
    local rates=$1 enough=$2 cache=$OUT/.self-test.json
    [[ -z "$enough" ]] || enough=$(( (enough + GENERATORS - 1) / GENERATORS ))
    if [[ -n "$MAX_RATE_OVERRIDE" ]]; then
        LIMIT_FILE=$WORK/limit-override.json
        "$PY" "$HERE/urls.py" override --max-rate "$MAX_RATE_OVERRIDE" --file-limit "$(ulimit -n)" \
            --out "$LIMIT_FILE" || exit 2
        echo "== this host's generator limit: --max-rate-override $MAX_RATE_OVERRIDE req/s (no self-test)"
    else
        LIMIT_FILE=$cache
        if [[ ! -s "$cache" ]]; then
            echo "== generator self-test against a local null server (up to $SELF_TEST_TRIES tries; cached in $cache)"
            "$PY" "$HERE/urls.py" self-test --cache "$cache" --tries "$SELF_TEST_TRIES" ${enough:+--enough "$enough"} -- \
                "$BENCH_JAVA" "${GENERATOR_FLAGS[@]}" -jar "$LOADGEN_JAR" --self-test --self-test-s 1 || exit 2
        fi
        echo "== this host's generator limit (self-test): $("$PY" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["max_rate"], "req/s, tries", d.get("tries"))' "$cache")"
    fi
    "$PY" "$HERE/urls.py" limit --self-test "$LIMIT_FILE" --rates "$rates" --max-in-flight "$MAX_IN_FLIGHT" \
        --file-limit "$(ulimit -n)" --generators "$GENERATORS" || exit 2
}

# The knee search (--find-knee, bench/knee.py), per system; sets RATES to the union of the
# curves. Its state is OUT/knee.json, reused as it is when present.
find_knee() {
    local state=$OUT/knee.json ceiling system step rate args
    ceiling=$("$PY" -c 'import json, sys; print(int(json.load(open(sys.argv[1]))["max_rate"]))' \
        "$LIMIT_FILE")
    if [[ -s "$state" ]]; then
        echo "== knee search: reusing $state (delete it to search again)"
    else
        for system in ${SYSTEMS//,/ }; do
            echo "-- knee search, $system: probes of $KNEE_WARMUP_TEXT + $KNEE_PROBE_S s from $KNEE_START req/s"
            url_target_args "$system"
            mkdir -p "$WORK/knee/$system"
            args=(--state "$WORK/knee.json" --system "$system" --start "$KNEE_START" --ceiling "$ceiling"
                --bisections "$KNEE_BISECTIONS" ${KNEE_P99_MS:+--p99-ms "$KNEE_P99_MS"})
            step=$("$PY" "$HERE/knee.py" step "${args[@]}") || exit 1
            while [[ $step == probe* ]]; do
                rate=${step#probe }
                settle "$system" "knee probe $system/r$rate" stop
                if [[ $SETTLED == settle=unsettled* ]]; then
                    # Still working off the last probe: probing on would measure that backlog.
                    step=$("$PY" "$HERE/knee.py" step "${args[@]}" --unsettled-before "$rate" \
                        --settle "$SETTLED") || exit 1
                    break
                fi
                check_machine "knee probe $system/r$rate"
                run_generators "knee/$system/r$rate" "$rate" "$KNEE_PROBE_S" "$OBSERVED_PID" 1 \
                    --host-check "$HOST_CHECK" "${KNEE_WARMUP_ARGS[@]}" "${URL_TARGET_ARGS[@]}"
                step=$("$PY" "$HERE/knee.py" step "${args[@]}" --rate "$rate" \
                    --counts "$WORK/knee/$system/r$rate.counts.json" --hlog "$WORK/knee/$system/r$rate.hlog") || exit 1
            done
            echo "   $system: curve at ${step#done } req/s"
        done
        mv -f "$WORK/knee.json" "$state"
        keep_knee_probes
    fi
    RATES=$("$PY" "$HERE/knee.py" rates --state "$state")
}

# The observed server's JVM, once per run (issue 32): its JDK, GC, heap and -X/-XX flags, for
# run.yml's environment (bench/serverjvm.py: nothing else of its command line; no file when
# the process is not a JVM).
record_server_jvm() {
    [[ -n "$OBSERVED_PID" ]] || return 0
    "$PY" "$HERE/serverjvm.py" --pid "$OBSERVED_PID" --jcmd "$JCMD" --out "$OUT/.server-jvm.json" || exit 1
}

# The probes' own files beside knee.json (OUT/knee/<system>/r<rate>.hlog, .counts.json), so
# the figures of the methodology's probe table rest on files published with the run.
keep_knee_probes() {
    rm -rf "$OUT/knee"
    [[ -d "$WORK/knee" ]] || return 0
    find "$WORK/knee" -name '*.loadgen.log' -delete
    mv "$WORK/knee" "$OUT/knee"
}

write_manifest() {
    local manifest_args=(--run-dir "$OUT" --systems "$SYSTEMS" --rates "$RATES" --service-ms "$PLAN_SERVICE_MS"
        --warmup-s "$WARMUP_S" --warmup "$WARMUP_MODE" --warmup-max-s "$WARMUP_MAX_S"
        --duration-s "$DURATION_S" --timeout-s "$TIMEOUT_S"
        --max-in-flight "$MAX_IN_FLIGHT" --repetitions "$REPETITIONS" --seed "$SEED"
        --generators "$GENERATORS" --busy-threshold "$BUSY_THRESHOLD" --busy-wait-s "$BUSY_WAIT_S" --on-busy "$ON_BUSY" --java "$BENCH_JAVA"
        --pool-threads "$POOL_THREADS" --jfr-repetitions "$JFR_REPETITIONS"
        --server-flags "${SERVER_FLAGS[*]} -XX:StartFlightRecording=settings=bench/loadcurve.jfc"
        --generator-flags "${GENERATOR_NICE[*]:+${GENERATOR_NICE[*]} }${GENERATOR_FLAGS[*]}" --tags "$TAGS")
    [[ -n "$SCENARIOS" ]] && manifest_args+=(--scenarios "$SCENARIOS")
    [[ -n "$TITLE" ]] && manifest_args+=(--title "$TITLE")
    [[ -n "$DESCRIPTION" ]] && manifest_args+=(--description "$DESCRIPTION")
    if (( URL_MODE )); then
        local sid
        for sid in ${SYSTEMS//,/ }; do manifest_args+=(--url-system "$sid=${TARGET_OF[$sid]}"); done
        # --request=: the value itself starts with "--"
        manifest_args+=("--request=${REQUEST_SHOWN[*]}" ${OBSERVED_PID:+--server-pid "$OBSERVED_PID"}
            ${JFR_PID:+--jfr-pid "$JFR_PID"})
        [[ -s "${LIMIT_FILE:-}" ]] && manifest_args+=(--self-test "$LIMIT_FILE")
        [[ -s "$OUT/knee.json" ]] && manifest_args+=(--knee "$OUT/knee.json")
        [[ -s "$OUT/.settle.json" ]] && manifest_args+=(--settle "$OUT/.settle.json")
        [[ -s "$OUT/.server-jvm.json" ]] && manifest_args+=(--server-jvm "$OUT/.server-jvm.json")
    fi
    "$PY" "$HERE/manifest.py" "${manifest_args[@]}"
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
MEASURING=1
if (( URL_MODE )); then
    echo "== systems given by URL (no server is started):"
    for sid in ${SYSTEMS//,/ }; do echo "   $sid: ${TARGET_OF[$sid]}"; done
    [[ -n "$OBSERVED_PID" ]] || echo "== no --server-pid/--jfr-pid: the server side is not observed"
    record_server_jvm
    settle_baselines
    if (( FIND_KNEE )); then
        check_limit "$KNEE_START" ""
        find_knee
        make_plan
    else
        check_limit "$RATES" "$(tr , '\n' <<<"$RATES" | sort -n | tail -n 1)"
    fi
fi
echo "== $RUN_ID: $WARMUP_TEXT + ${DURATION_S} s window + drain per cell, into $OUT"
echo "== estimate: $("$PY" "$HERE/plan.py" "${plan_args[@]}" --estimate)"
if (( URL_MODE )); then
    echo "== generator: ${GENERATOR_FLAGS[*]}"
else
    echo "== server JVM, every target: ${SERVER_FLAGS[*]} + JFR (bench/loadcurve.jfc); generator: ${GENERATOR_FLAGS[*]}"
fi
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

write_manifest
echo "== $(du -sh "$OUT" | cut -f1) in $OUT"
