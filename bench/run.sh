#!/usr/bin/env bash
# Measures a run: for every system and offered rate, start the target server with JFR, drive it
# with the open-loop generator (warm-up, then the measured window), stop it; then write
# runs/<RUN_ID>/run.yml in the format of docs/data-format.md. Called by `make bench RUN=<id>`.
set -euo pipefail

usage() {
    cat <<'EOF'
usage: bench/run.sh RUN_ID [options]

Measures the load curve of each system at each offered rate into runs/RUN_ID/
(<system>/<load>.hlog, .jfr, .counts.json, and run.yml). Defaults measure the demo run
(pool20 vs virtual at 25..800 req/s, 200 ms per request; about 5 minutes).

  --systems LIST      comma-separated: poolN (fixed pool of N platform threads) or virtual
                      (default pool20,virtual)
  --rates LIST        offered rates in req/s, comma-separated (default 25,50,100,200,400,800)
  --service-ms MS     time each request holds its worker, /sleep?ms=MS (default 200)
  --warmup-s S        seconds at the offered rate before the measured window (default 5)
  --duration-s S      measured seconds per cell (default 12)
  --timeout-s S       request timeout from the intended send time (default 15)
  --max-in-flight N   generator cap on requests (connections) in flight (default 15000)
  --only SYS/LOAD     re-measure just this cell (repeatable, e.g. --only pool20/r800); the
                      other cells' files stay, and run.yml is rewritten from all of them
  --out DIR           write here instead of runs/RUN_ID
  --title TEXT        run.yml title (default: made from the systems)
  --description TEXT  run.yml description (default: made from the systems)
  --tags LIST         run.yml tags (default jvm,virtual-threads,http)
  --short             a quick check: rates 50,200, warm-up 1 s, 3 s windows, timeout 2 s
  --no-build          use the jars already built (bench/test.sh builds first)
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
RATES=25,50,100,200,400,800
SERVICE_MS=200
WARMUP_S=5
DURATION_S=12
TIMEOUT_S=15
MAX_IN_FLIGHT=15000
ONLY=()
OUT=
TITLE=
DESCRIPTION=
TAGS=jvm,virtual-threads,http
BUILD=1
while [[ $# -gt 0 ]]; do
    case $1 in
        --systems) SYSTEMS=$2; shift 2;;
        --rates) RATES=$2; shift 2;;
        --service-ms) SERVICE_MS=$2; shift 2;;
        --warmup-s) WARMUP_S=$2; shift 2;;
        --duration-s) DURATION_S=$2; shift 2;;
        --timeout-s) TIMEOUT_S=$2; shift 2;;
        --max-in-flight) MAX_IN_FLIGHT=$2; shift 2;;
        --only) ONLY+=("$2"); shift 2;;
        --out) OUT=$2; shift 2;;
        --title) TITLE=$2; shift 2;;
        --description) DESCRIPTION=$2; shift 2;;
        --tags) TAGS=$2; shift 2;;
        --short) RATES=50,200 WARMUP_S=1 DURATION_S=3 TIMEOUT_S=2; shift;;
        --no-build) BUILD=0; shift;;
        -h|--help) usage; exit 0;;
        *) echo "error: unknown option $1 (see bench/run.sh --help)" >&2; exit 2;;
    esac
done
OUT=${OUT:-$ROOT/runs/$RUN_ID}

IFS=, read -r -a SYSTEM_LIST <<<"$SYSTEMS"
IFS=, read -r -a RATE_LIST <<<"$RATES"
for s in "${SYSTEM_LIST[@]}"; do
    [[ "$s" =~ ^pool[1-9][0-9]*$ || "$s" == virtual ]] \
        || { echo "error: system '$s' must be poolN or virtual" >&2; exit 2; }
done
for r in "${RATE_LIST[@]}"; do
    [[ "$r" =~ ^[1-9][0-9]*$ ]] || { echo "error: rate '$r' must be a whole number of req/s" >&2; exit 2; }
done
for v in "$SERVICE_MS" "$DURATION_S" "$MAX_IN_FLIGHT"; do
    [[ "$v" =~ ^[1-9][0-9]*$ ]] || { echo "error: '$v' must be a positive whole number" >&2; exit 2; }
done
[[ -x "$PY" ]] || { echo "error: no Python at $PY (run 'make bench', which installs .venv, or set PY)" >&2; exit 2; }

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
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

wanted() {
    local cell=$1 o
    (( ${#ONLY[@]} == 0 )) && return 0
    for o in "${ONLY[@]}"; do [[ "$o" == "$cell" ]] && return 0; done
    return 1
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

# One cell: server up with JFR, generator (warm-up + window), server down, files into place.
measure_cell() {
    local system=$1 rate=$2 load=r$2 executor port_file server_log jfr_tmp port
    if [[ $system == virtual ]]; then executor=virtual; else executor=pool:${system#pool}; fi
    mkdir -p "$OUT/$system"
    port_file=$WORK/$system-$load.port
    server_log=$WORK/$system-$load.server.log
    jfr_tmp=$WORK/$system-$load.jfr
    rm -f "$port_file"
    "$BENCH_JAVA" "${SERVER_FLAGS[@]}" \
        "-XX:StartFlightRecording=filename=$jfr_tmp,settings=$HERE/loadcurve.jfc,dumponexit=true" \
        -jar "$SERVER_JAR" --executor "$executor" --port 0 --port-file "$port_file" \
        >"$server_log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 300); do
        [[ -s "$port_file" ]] && break
        kill -0 "$SERVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    if [[ ! -s "$port_file" ]]; then
        echo "error: the target server did not start within 30 s; its output:" >&2
        cat "$server_log" >&2
        exit 1
    fi
    port=$(<"$port_file")
    "${GENERATOR_NICE[@]}" "$BENCH_JAVA" "${GENERATOR_FLAGS[@]}" -jar "$LOADGEN_JAR" \
        --url "http://127.0.0.1:$port/sleep?ms=$SERVICE_MS" --rate "$rate" \
        --warmup-s "$WARMUP_S" --duration-s "$DURATION_S" --timeout-s "$TIMEOUT_S" \
        --max-in-flight "$MAX_IN_FLIGHT" \
        --hlog "$WORK/$load.hlog" --counts "$WORK/$load.counts.json" \
        >"$WORK/$load.loadgen.log" 2>&1 &
    GENERATOR_PID=$!
    if ! wait "$GENERATOR_PID"; then
        GENERATOR_PID=
        stop_server
        echo "error: the load generator failed; its output:" >&2
        cat "$WORK/$load.loadgen.log" >&2
        exit 1
    fi
    GENERATOR_PID=
    sed -n 's/^loadgen: window/   window/p' "$WORK/$load.loadgen.log"
    stop_server
    [[ -s "$jfr_tmp" ]] || { echo "error: no JFR recording from the server; its output:" >&2; cat "$server_log" >&2; exit 1; }
    # Same filesystem: each rename is atomic, so a cell's files are old or new, never half.
    mv -f "$jfr_tmp" "$OUT/$system/$load.jfr"
    mv -f "$WORK/$load.hlog" "$OUT/$system/$load.hlog"
    mv -f "$WORK/$load.counts.json" "$OUT/$system/$load.counts.json"
}

cells=0
for s in "${SYSTEM_LIST[@]}"; do for r in "${RATE_LIST[@]}"; do wanted "$s/r$r" && cells=$((cells + 1)); done; done
per_cell=$(awk -v w="$WARMUP_S" -v d="$DURATION_S" 'BEGIN { printf "%d", w + d + 3 }')
echo "== $RUN_ID: $cells cells of ${WARMUP_S} s warm-up + ${DURATION_S} s measured, about $((cells * per_cell)) s, into $OUT"
started=$(date +%s)
n=0
for system in "${SYSTEM_LIST[@]}"; do
    for rate in "${RATE_LIST[@]}"; do
        wanted "$system/r$rate" || continue
        n=$((n + 1))
        echo "-- [$n/$cells] $system at $rate req/s"
        measure_cell "$system" "$rate"
    done
done
echo "== measured in $(( $(date +%s) - started )) s"

manifest_args=(--run-dir "$OUT" --systems "$SYSTEMS" --rates "$RATES" --service-ms "$SERVICE_MS"
    --warmup-s "$WARMUP_S" --duration-s "$DURATION_S" --timeout-s "$TIMEOUT_S"
    --max-in-flight "$MAX_IN_FLIGHT" --java "$BENCH_JAVA"
    --server-flags "${SERVER_FLAGS[*]} -XX:StartFlightRecording=settings=bench/loadcurve.jfc"
    --generator-flags "${GENERATOR_NICE[*]:+${GENERATOR_NICE[*]} }${GENERATOR_FLAGS[*]}" --tags "$TAGS")
[[ -n "$TITLE" ]] && manifest_args+=(--title "$TITLE")
[[ -n "$DESCRIPTION" ]] && manifest_args+=(--description "$DESCRIPTION")
"$PY" "$HERE/manifest.py" "${manifest_args[@]}"
echo "== $(du -sh "$OUT" | cut -f1) in $OUT"
