#!/usr/bin/env bash
# The bench harness's tests (make test-bench): build with Maven and run the generator's JUnit
# tests (schedule, accounting on synthetic request streams), then measure a short run into a
# temporary folder - a pool of 2 threads (ceiling 10 req/s) and virtual threads at 5 and
# 200 req/s, 2 repetitions, 2 s timeout: pool2 at 200 req/s is saturated, none of its window
# requests answered in time - and check with the analysis's reader that it reads what the
# harness wrote and that the counts agree; then the JMH benchmarks' short CI mode (about 30 s),
# read back by the analysis's JMH reader (bench/jmh/check.py). About 2.5 minutes; closes with
# 'bench: N passed, N failed'.
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

find_jdk
echo "== JUnit tests of the server and the load generator (Maven Surefire, JDK $BENCH_JDK_FEATURE)"
if ! build_bench "$HERE"; then
    echo "bench: 0 passed, 1 failed"
    exit 1
fi
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
    echo "bench: 0 passed, 1 failed"
    exit 1
fi
java_passed=$((java_run - java_failed - java_errors - java_skipped))

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
    test "$(plan --seed 1 | awk '$1 == 1 { print $2, $3 }')" != "$(plan --seed 1 | awk '$1 == 2 { print $2, $3 }')"

echo "== short run: bench/run.sh --short into $TMP (not runs/)"
# The host check only records here (no waiting): the test must not depend on a quiet machine.
bash "$HERE/run.sh" bench-test --short --systems pool2,virtual --rates 5,200 --busy-wait-s 0 \
    --no-build --out "$TMP/bench-test"

echo "== the analysis reads the short run"
set +e
check_output=$("$PY" "$HERE/check_run.py" "$TMP/bench-test" --saturated pool2/r200)
check_status=$?
set -e
echo "$check_output" | sed '$d'
read -r py_passed py_failed < <(tail -n 1 <<<"$check_output" \
    | sed -nE 's/^([0-9]+) passed, ([0-9]+) failed$/\1 \2/p')
if [[ -z "${py_passed:-}" ]]; then
    echo "$check_output" | tail -n 1
    py_passed=0 py_failed=1
fi

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

passed=$((java_passed + sh_passed + py_passed + jmh_passed))
failed=$((java_failed + java_errors + sh_failed + py_failed + jmh_failed))
echo "== bench tests done in $(( $(date +%s) - started )) s"
echo "bench: $passed passed, $failed failed"
(( failed == 0 && check_status == 0 ))
