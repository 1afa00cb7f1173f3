#!/usr/bin/env bash
# Runs the JMH benchmarks of bench/jmh (issue 13): the actor ring and the stream pipeline
# variants, each with -prof gc, each into its own JMH JSON (-rf json) beside JMH's own text
# output. Prints the estimated wall time first. The full settings are for a quiet machine
# (the lead schedules them); --short is the CI mode bench/test.sh uses.
set -euo pipefail

usage() {
    cat <<'USAGE'
usage: bench/jmh/run.sh [options]

Runs loadcurve.jmh.RingBenchmark and loadcurve.jmh.PipelineBenchmark with JMH 1.37 and -prof gc.
Writes OUT/ring.json and OUT/pipeline.json (JMH's -rf json) and OUT/ring.txt, OUT/pipeline.txt
(JMH's console output), plus OUT/host-check.txt and OUT/run.yml (kind: jmh, from
bench/jmh/run.yml.in): OUT is then a run folder `make site` builds a report of.

  --out DIR     where to write (default runs/jmh-actors-streams)
  --short       CI mode: 1 fork, 1 warm-up iteration of 300 ms, 1 measured iteration of
                500 ms, ring size 16 and 1000 messages only (about 30 s in all); the numbers
                are a smoke test, not results
  --forks N     forks per benchmark (default 3; JMH's error bars need several)
  --only WHICH  ring or pipeline (default both)
  --no-build    use the jars already built
  --estimate    print the estimate and stop
  -h, --help    this text

Full settings: 3 forks x (3 warm-up iterations of 1 s + 5 measured iterations of 1 s) per
benchmark and parameter combination: 23 combinations, about 11 minutes.
USAGE
}

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BENCH=$(dirname "$HERE")
ROOT=$(dirname "$BENCH")
PY=${PY:-$ROOT/.venv/bin/python}
# shellcheck source=bench/jdk.sh
source "$BENCH/jdk.sh"

OUT=$ROOT/runs/jmh-actors-streams
SHORT=0
FORKS=3
ONLY=
BUILD=1
ESTIMATE_ONLY=0
while [[ $# -gt 0 ]]; do
    case $1 in
        --out) OUT=$2; shift 2;;
        --short) SHORT=1; shift;;
        --forks) FORKS=$2; shift 2;;
        --only) ONLY=$2; shift 2;;
        --no-build) BUILD=0; shift;;
        --estimate) ESTIMATE_ONLY=1; shift;;
        -h|--help) usage; exit 0;;
        *) echo "error: unknown option '$1' (see --help)" >&2; exit 2;;
    esac
done
[[ "$FORKS" =~ ^[1-9][0-9]*$ ]] || { echo "error: --forks must be a positive integer, not '$FORKS'" >&2; exit 2; }
case $ONLY in ''|ring|pipeline) ;; *) echo "error: --only takes ring or pipeline, not '$ONLY'" >&2; exit 2;; esac

find_jdk
if (( BUILD )); then
    echo "== building bench/jmh (Maven, JDK $BENCH_JDK_FEATURE)"
    build_bench "$BENCH" -pl jmh -am -DskipTests
    rm -f "$BENCH_BUILD_LOG"
fi

# JDK 24+ warns on every JVM that JMH's sun.misc.Unsafe use starts; the forks inherit the
# launcher's JVM flags (JMH's default -jvmArgs), so they get it too.
JVM_FLAGS=()
if (( BENCH_JDK_FEATURE >= 24 )); then
    JVM_FLAGS=(--sun-misc-unsafe-memory-access=allow)
fi
jmh() {
    "$BENCH_JAVA" "${JVM_FLAGS[@]}" -cp "$HERE/target/jmh.jar:$HERE/target/lib/*" \
        org.openjdk.jmh.Main "$@"
}

if (( SHORT )); then
    # Seconds per benchmark: enough to exercise every code path and the JSON, no more.
    SETTINGS=(-f 1 -wi 1 -w 300ms -i 1 -r 500ms -p ringSize=16 -p messages=1000)
    WARMUP_S=0.3 MEASURE_S=0.5 WI=1 I=1 FORKS=1
else
    SETTINGS=(-f "$FORKS" -wi 3 -w 1s -i 5 -r 1s)
    WARMUP_S=1 MEASURE_S=1 WI=3 I=5
fi

declare -A PATTERN=([ring]='loadcurve\.jmh\.RingBenchmark\.' [pipeline]='loadcurve\.jmh\.PipelineBenchmark\.')
SUITES=(ring pipeline)
[[ -n "$ONLY" ]] && SUITES=("$ONLY")

# The estimate: every benchmark x parameter combination (JMH's -lp, with our -p overrides)
# runs FORKS forks of WI + I iterations, plus about 2 s per fork to start the JVM and set up.
combinations=0
for suite in "${SUITES[@]}"; do
    n=$(jmh -lp "${SETTINGS[@]}" "${PATTERN[$suite]}" 2>/dev/null | awk '
        /^[^ ]/ && !/^Benchmarks:/ { if (c) total += c; c = 1 }
        /^  param / { n = split($0, parts, ","); c *= n }
        END { if (c) total += c; print total + 0 }')
    combinations=$((combinations + n))
done
estimate_s=$(awk -v c="$combinations" -v f="$FORKS" -v wi="$WI" -v w="$WARMUP_S" -v i="$I" -v m="$MEASURE_S" \
    'BEGIN { printf "%d", c * f * (wi * w + i * m + 2) + 0.5 }')
echo "== $combinations benchmark x parameter combinations, $FORKS fork(s) each:" \
     "estimated $((estimate_s / 60)) min $((estimate_s % 60)) s"
(( ESTIMATE_ONLY )) && exit 0

mkdir -p "$OUT"
if [[ -x "$PY" ]]; then
    # Recorded, not enforced: a busy host shows in the file next to the results.
    "$PY" "$BENCH/hostcheck.py" --busy-wait-s "$([[ $SHORT == 1 ]] && echo 0 || echo 120)" \
        --sample-s "$([[ $SHORT == 1 ]] && echo 0.2 || echo 2)" --cell "the JMH run" \
        >"$OUT/host-check.txt" || true
fi
started=$(date +%s)
for suite in "${SUITES[@]}"; do
    echo "== $suite -> $OUT/$suite.json"
    jmh "${PATTERN[$suite]}" "${SETTINGS[@]}" -prof gc -rf json -rff "$OUT/$suite.json" \
        -o "$OUT/$suite.txt"
done
echo "== done in $(( $(date +%s) - started )) s (estimated $estimate_s s)"

# The run's manifest (docs/data-format.md, kind: jmh), so OUT is a run folder as it stands.
if [[ -z "$ONLY" ]]; then
    python3 "$HERE/write_run_yml.py" "$OUT" "$BENCH_JAVA" "${SETTINGS[*]} -prof gc" "${JVM_FLAGS[*]:-}"
fi
