#!/usr/bin/env bash
# The bench harness's tests (make test-bench): build with Maven and run the generator's JUnit
# tests (schedule, accounting on synthetic request streams), then measure a short run into a
# temporary folder - a pool of 2 threads (ceiling 10 req/s) and virtual threads at 5 and
# 200 req/s, 2 repetitions, 2 s timeout: pool2 at 200 req/s is saturated, none of its window
# requests answered in time - and check with the analysis's reader that it reads what the
# harness wrote and that the counts agree. About 2 minutes; closes with 'bench: N passed, N failed'.
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

passed=$((java_passed + py_passed))
failed=$((java_failed + java_errors + py_failed))
echo "== bench tests done in $(( $(date +%s) - started )) s"
echo "bench: $passed passed, $failed failed"
(( failed == 0 && check_status == 0 ))
