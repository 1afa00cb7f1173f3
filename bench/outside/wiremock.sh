#!/usr/bin/env bash
# Starts a server that is none of the bundled targets, so that a run can measure a server given
# only by its URL (issue 24): WireMock's standalone jar from Maven Central, on 127.0.0.1, with one
# mapping (GET /api/item answers a small JSON body after a fixed delay). It stays running; the
# script prints `pid=N port=P` for `--url http://127.0.0.1:P/api/item --jfr-pid N`.
# `--stop` stops the one it started.
set -euo pipefail

VERSION=3.13.2
JAR_URL=https://repo1.maven.org/maven2/org/wiremock/wiremock-standalone/$VERSION/wiremock-standalone-$VERSION.jar

usage() {
    cat <<'USAGE'
usage: bench/outside/wiremock.sh [--delay-ms 20] [--port P] [--container-threads N]
       bench/outside/wiremock.sh --stop

  --delay-ms MS         the mapping's fixed delay before it answers (default 20)
  --port P              the port on 127.0.0.1 (default: a free one)
  --container-threads N WireMock's Jetty request threads (default: WireMock's own)
  --stop                stop the WireMock this script started (its pid file in .cache/wiremock/)

Downloads org.wiremock:wiremock-standalone:3.13.2 from Maven Central into .cache/wiremock/ once
(checked against Maven Central's .sha1), starts it with -Xms512m -Xmx512m and no request journal
(it would grow with every request of a run), async responses so the delay holds no thread,
waits until GET /api/item answers, and prints `pid=N port=P`. Needs a JDK 21+ (bench/jdk.sh
finds it), curl and sha1sum. Only 127.0.0.1 is bound.
USAGE
}

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$(dirname "$HERE")")
CACHE=$ROOT/.cache/wiremock
PIDFILE=$CACHE/wiremock.pid

DELAY_MS=20 PORT= THREADS= STOP=0
while [ $# -gt 0 ]; do
    case "$1" in
        -h|--help) usage; exit 0 ;;
        --delay-ms) DELAY_MS=${2:?--delay-ms needs a value}; shift 2 ;;
        --port) PORT=${2:?--port needs a value}; shift 2 ;;
        --container-threads) THREADS=${2:?--container-threads needs a value}; shift 2 ;;
        --stop) STOP=1; shift ;;
        *) echo "error: unknown option $1 (--help lists them)" >&2; exit 2 ;;
    esac
done

if (( STOP )); then
    if [[ ! -f "$PIDFILE" ]]; then
        echo "error: no WireMock started by this script ($PIDFILE is missing)" >&2
        exit 1
    fi
    pid=$(cat "$PIDFILE")
    # Only the process this script started, and only if it is still that WireMock.
    if [[ -r /proc/$pid/cmdline ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "wiremock-standalone-$VERSION.jar"; then
        kill "$pid"
        for _ in $(seq 50); do [[ -d /proc/$pid ]] || break; sleep 0.1; done
        echo "stopped pid=$pid"
    else
        echo "pid $pid is no longer the WireMock this script started; nothing stopped"
    fi
    rm -f "$PIDFILE"
    exit 0
fi

[[ "$DELAY_MS" =~ ^[0-9]+$ ]] || { echo "error: --delay-ms takes whole milliseconds, not $DELAY_MS" >&2; exit 2; }
[[ -z "$PORT" || "$PORT" =~ ^[0-9]+$ ]] || { echo "error: --port takes a number, not $PORT" >&2; exit 2; }
[[ -z "$THREADS" || "$THREADS" =~ ^[0-9]+$ ]] || { echo "error: --container-threads takes a number, not $THREADS" >&2; exit 2; }
if [[ -f "$PIDFILE" && -d /proc/$(cat "$PIDFILE") ]]; then
    echo "error: a WireMock started by this script is running (pid $(cat "$PIDFILE")); stop it with --stop" >&2
    exit 1
fi

# shellcheck source=bench/jdk.sh
source "$ROOT/bench/jdk.sh"
find_jdk

mkdir -p "$CACHE"
JAR=$CACHE/wiremock-standalone-$VERSION.jar
if [[ ! -f "$JAR" ]]; then
    echo "== downloading wiremock-standalone $VERSION from Maven Central" >&2
    curl -fsSL -o "$JAR.part" "$JAR_URL" || { rm -f "$JAR.part"; echo "error: could not download $JAR_URL" >&2; exit 1; }
    expected=$(curl -fsSL "$JAR_URL.sha1" | cut -c1-40) || { rm -f "$JAR.part"; echo "error: could not download $JAR_URL.sha1" >&2; exit 1; }
    actual=$(sha1sum "$JAR.part" | cut -c1-40)
    if [[ "$expected" != "$actual" ]]; then
        rm -f "$JAR.part"
        echo "error: $JAR_URL has SHA-1 $actual, Maven Central says $expected; not used" >&2
        exit 1
    fi
    mv "$JAR.part" "$JAR"
fi

if [[ -z "$PORT" ]]; then
    PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fi

# The mapping: a fixed delay, then a small JSON body (WireMock's own JSON, so it is well formed).
SITE=$CACHE/root-$DELAY_MS
mkdir -p "$SITE/mappings" "$SITE/__files"
cat >"$SITE/mappings/item.json" <<JSON
{
  "request": {"method": "GET", "url": "/api/item"},
  "response": {
    "status": 200,
    "fixedDelayMilliseconds": $DELAY_MS,
    "headers": {"Content-Type": "application/json"},
    "jsonBody": {"id": 7, "name": "item seven", "price": 12.5, "tags": ["a", "b"]}
  }
}
JSON

args=(--bind-address 127.0.0.1 --port "$PORT" --root-dir "$SITE" --disable-banner
      --no-request-journal --async-response-enabled true)
[[ -n "$THREADS" ]] && args+=(--container-threads "$THREADS")
LOG=$CACHE/wiremock-$PORT.log
nohup "$BENCH_JAVA" -Xms512m -Xmx512m -jar "$JAR" "${args[@]}" >"$LOG" 2>&1 &
pid=$!
echo "$pid" >"$PIDFILE"
for _ in $(seq 300); do
    if curl -fs -o /dev/null "http://127.0.0.1:$PORT/api/item"; then
        echo "pid=$pid port=$PORT"
        exit 0
    fi
    if [[ ! -d /proc/$pid ]]; then
        break
    fi
    sleep 0.1
done
echo "error: WireMock did not answer GET http://127.0.0.1:$PORT/api/item within 30 s; its log ($LOG):" >&2
tail -n 20 "$LOG" >&2
kill "$pid" 2>/dev/null || true
rm -f "$PIDFILE"
exit 1
