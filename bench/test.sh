#!/usr/bin/env bash
# The bench harness's tests (make test-bench): build with Maven and run the JUnit tests (the
# generator's schedule and accounting on synthetic request streams; the servers' handler
# contract, and every target answering every scenario over HTTP), then start every target in
# its own JVM as a run does and GET each scenario once (run.sh --smoke), then measure two short
# runs into a temporary folder - a pool of 2 threads (ceiling 10 req/s) and virtual threads at
# 5 and 200 req/s, 2 repetitions, 2 s timeout: pool2 at 200 req/s is saturated, none of its
# window requests answered in time; and Vert.x in 2 scenarios, JFR in repetition 1 only - and
# check with the analysis's reader that it reads what the harness wrote and that the counts
# agree; then the JMH benchmarks' short CI mode (about 30 s), read back by the analysis's JMH
# reader (bench/jmh/check.py). About 3.5 minutes; closes with 'bench: N passed, N failed'.
# `bench/test.sh --beside COMMAND...` (make test): builds the jars, then runs COMMAND while the
# checks run in the background, prints their output after COMMAND's, and fails if either did.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
PY=${PY:-$ROOT/.venv/bin/python}
# shellcheck source=bench/jdk.sh
source "$HERE/jdk.sh"

started=$(date +%s)
if [[ ! -x "$PY" ]]; then
    echo "== installing the Python environment (make .venv/.installed)"
    make -C "$ROOT" --no-print-directory .venv/.installed
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/loadcurve-bench-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

beside=()
if [[ ${1:-} == --beside ]]; then
    shift
    beside=("$@")
fi

find_jdk
echo "== the jars (Maven, JDK $BENCH_JDK_FEATURE; their JUnit tests run next, from the same build)"
if ! build_bench "$HERE" -DskipTests; then
    echo "bench: 0 passed, 1 failed"
    exit 1
fi
rm -f "$BENCH_BUILD_LOG"

checks() {  # every check below; prints its own output and closes with 'bench: N passed, N failed'
echo "== JUnit tests of the server and the load generator (Maven Surefire, JDK $BENCH_JDK_FEATURE)"
java_passed=0 java_failed=1 java_errors=0
if maven_bench surefire:test "$HERE"; then
    # Surefire's own summary lines; its per-module totals (no "-- in CLASS") add up to the run's.
    grep -E '^\[(INFO|WARNING|ERROR)\] Tests run:' "$BENCH_BUILD_LOG" | sed 's/^\[[A-Z]*\] /   /'
    read -r java_run java_failed java_errors java_skipped < <(
        grep -E '^\[(INFO|WARNING|ERROR)\] Tests run: [0-9]+, Failures: [0-9]+, Errors: [0-9]+, Skipped: [0-9]+$' \
            "$BENCH_BUILD_LOG" \
        | sed -E 's/.*Tests run: ([0-9]+), Failures: ([0-9]+), Errors: ([0-9]+), Skipped: ([0-9]+)/\1 \2 \3 \4/' \
        | awk '{ r += $1; f += $2; e += $3; s += $4 } END { print r + 0, f + 0, e + 0, s + 0 }')
    rm -f "$BENCH_BUILD_LOG"
    if (( java_run == 0 )); then
        echo "error: Maven ran no JUnit test" >&2
        java_failed=1
    fi
    java_passed=$((java_run - java_failed - java_errors - java_skipped))
fi

# The corpus's timing (README: the command that records it).
CORPUS_TIMING="--warmup-s 5 --duration-s 10 --timeout-s 5 --jfr-repetitions 1"
echo "== the host check and the cells' order"
sh_passed=0 sh_failed=0
expect() {  # expect NAME COMMAND...: the command must succeed
    local name=$1; shift
    if "$@" >/dev/null 2>&1; then sh_passed=$((sh_passed + 1)); echo "ok   $name"
    else sh_failed=$((sh_failed + 1)); echo "FAIL $name"; fi
}
refused=$("$PY" "$HERE/hostcheck.py" --threshold -1 --busy-wait-s 0 --on-busy refuse --sample-s 0.2 2>&1 >/dev/null; echo "status $?")
expect "hostcheck: --on-busy refuse on a busy host stops with one error line and status 3" \
    test "$(grep -c '^error: ' <<<"$refused")/$(wc -l <<<"$refused")/$(tail -n 1 <<<"$refused")" = "1/2/status 3"
expect "hostcheck: --on-busy warn measures and records verdict busy" \
    grep -q 'verdict=busy$' <<<"$("$PY" "$HERE/hostcheck.py" --threshold -1 --busy-wait-s 0 --sample-s 0.2 2>/dev/null)"
expect "hostcheck: under the threshold, verdict quiet" \
    grep -q 'waited_s=0,threshold=1.01,action=warn,verdict=quiet$' <<<"$("$PY" "$HERE/hostcheck.py" --threshold 1.01 --sample-s 0.2)"
plan() { "$PY" "$HERE/plan.py" --systems pool20,virtual --rates 25,50,100 --repetitions 3 "$@"; }
expect "plan: repetition-major, every cell once per repetition, shuffled" \
    test "$(plan --seed 1 | awk '{ print $1 }' | uniq -c | awk '{ print $1 "x" $2 }' | tr '\n' ' ')/$(plan --seed 1 | sort -u | wc -l)" = "6x1 6x2 6x3 /18"
expect "plan: the same seed gives the same order, another seed another one" \
    test "$(plan --seed 1 | md5sum)" = "$(plan --seed 1 | md5sum)" -a "$(plan --seed 1 | md5sum)" != "$(plan --seed 2 | md5sum)"
expect "plan: repetitions are shuffled independently" \
    test "$(plan --seed 1 | awk '$1 == 1 { print $3, $4 }')" != "$(plan --seed 1 | awk '$1 == 2 { print $3, $4 }')"
splan() { "$PY" "$HERE/plan.py" --repetitions 1 --seed 1 "$@"; }
expect "plan: scenarios: one cell per target x scenario rate, with its endpoint" \
    test "$(splan --systems jdk-pool,netty-eventloop --scenarios sleep:10/20,json | wc -l)/$(splan --systems jdk-pool,netty-eventloop --scenarios sleep:10/20,json | awk '$2 == "json" { print $5 }' | sort -u)" = "6//json"
bad_scenario=$(splan --systems all --scenarios sleep,bogus 2>&1; echo "status $?")
expect "plan: an unknown scenario is one error line and status 2" \
    test "$(grep -c '^error: unknown scenario' <<<"$bad_scenario")/$(wc -l <<<"$bad_scenario")/$(tail -n 1 <<<"$bad_scenario")" = "1/2/status 2"
expect "plan: the corpus (all targets x all scenarios, 3 repetitions) is estimated under 75 min" \
    test "$("$PY" "$HERE/plan.py" --systems all --scenarios all --repetitions 3 --seed 1 $CORPUS_TIMING --estimate \
        | sed -nE 's/.*about [0-9]+ min \(([0-9]+) s\).*/\1/p')" -le 4500

echo "== every target starts and answers every scenario (bench/run.sh --smoke)"
smoke_started=$(date +%s)
set +e
smoke_output=$(bash "$HERE/run.sh" bench-smoke --smoke --targets all --scenarios all --no-build \
    --out "$TMP/bench-smoke" 2>&1)
set -e
echo "$smoke_output"
smoke_passed=$(grep -c '^ok ' <<<"$smoke_output" || true)
smoke_failed=$(grep -c '^FAIL ' <<<"$smoke_output" || true)
# Every target x scenario must have answered: a target that did not start fails here too.
expected_smoke=$(( $("$PY" -c 'import sys; sys.path.insert(0, sys.argv[1]); import catalog; print(len(catalog.TARGETS) * len(catalog.SCENARIOS))' "$HERE") ))
(( smoke_passed == expected_smoke )) || smoke_failed=$(( smoke_failed + expected_smoke - smoke_passed ))
echo "   ($smoke_passed of $expected_smoke answers in $(( $(date +%s) - smoke_started )) s)"

# The host check only records here (no waiting): the test must not depend on a quiet machine.
echo "== short run: bench/run.sh --short into $TMP (not runs/)"
bash "$HERE/run.sh" bench-test --short --systems pool2,virtual --rates 5,200 --busy-wait-s 0 \
    --no-build --out "$TMP/bench-test"
echo "== short run with scenarios: an event loop x 2 scenarios, 2 repetitions, JFR in the first"
bash "$HERE/run.sh" bench-scenarios --short --targets vertx-eventloop \
    --scenarios sleep:20,fanout-pekko:50 --jfr-repetitions 1 --busy-wait-s 0 --no-build \
    --out "$TMP/bench-scenarios"

py_passed=0 py_failed=0 check_status=0
check() {  # check RUN_DIR [--saturated KEY]: the analysis reads a short run, counts agree
    local output status passed failed
    echo "== the analysis reads $(basename "$1")"
    set +e
    output=$("$PY" "$HERE/check_run.py" "$@")
    status=$?
    set -e
    echo "$output" | sed '$d'
    read -r passed failed < <(tail -n 1 <<<"$output" | sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\1 \2/p')
    if [[ -z "${passed:-}" ]]; then
        echo "$output" | tail -n 1
        passed=0 failed=1
    fi
    py_passed=$((py_passed + passed)) py_failed=$((py_failed + failed))
    (( status == 0 )) || check_status=$status
}
check "$TMP/bench-test" --saturated pool2/r200
check "$TMP/bench-scenarios"

echo "== JMH short CI mode: bench/jmh/run.sh --short into $TMP/jmh, read back by the JMH reader"
set +e
bash "$HERE/jmh/run.sh" --short --no-build --out "$TMP/jmh" >"$TMP/jmh.log" 2>&1 || tail -n 20 "$TMP/jmh.log"
jmh_output=$("$PY" "$HERE/jmh/check.py" "$TMP/jmh")
set -e
echo "$jmh_output" | sed '$d'
read -r jmh_passed jmh_failed < <(tail -n 1 <<<"$jmh_output" \
    | sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\1 \2/p')
if [[ -z "${jmh_passed:-}" ]]; then
    jmh_passed=0 jmh_failed=1
fi

passed=$((java_passed + sh_passed + smoke_passed + py_passed + jmh_passed))
failed=$((java_failed + java_errors + sh_failed + smoke_failed + py_failed + jmh_failed))
echo "== bench tests done in $(( $(date +%s) - started )) s"
echo "bench: $passed passed, $failed failed"
(( failed == 0 && check_status == 0 ))
}

if (( ${#beside[@]} == 0 )); then
    checks
    exit
fi
# make test: the checks above mostly wait on the clock (short runs at low rates, JVMs starting,
# JUnit's timed runs), so they run beside the given command (pytest) rather than before it;
# their output follows the command's.
echo "== ${beside[*]}, beside the checks below"
checks >"$TMP/checks.log" 2>&1 &
checks_pid=$!
set +e
"${beside[@]}"
beside_status=$?
wait "$checks_pid"
checks_status=$?
set -e
cat "$TMP/checks.log"
(( beside_status == 0 && checks_status == 0 ))
