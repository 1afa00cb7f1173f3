# Sourced by bench/run.sh and bench/test.sh: find a JDK 21+ and build the harness with Maven.
# Defines: find_jdk (sets BENCH_JAVA_HOME, BENCH_JAVA, BENCH_JDK_FEATURE), build_bench, maven_bench.

# The feature release of a JDK home (25 for 25.0.3), or nothing if it is not a JDK.
jdk_feature() {
    local home=$1 version=
    [[ -x "$home/bin/java" && -x "$home/bin/javac" ]] || return 1
    if [[ -f "$home/release" ]]; then
        version=$(sed -n 's/^JAVA_VERSION="\([^"]*\)".*/\1/p' "$home/release")
    fi
    if [[ -z "$version" ]]; then
        version=$("$home/bin/java" -XshowSettings:properties -version 2>&1 \
            | sed -n 's/^ *java.specification.version = //p')
    fi
    version=${version#1.}
    [[ "${version%%[.+-]*}" =~ ^[0-9]+$ ]] || return 1
    echo "${version%%[.+-]*}"
}

# JAVA_HOME if it is a JDK 21+; else the Temurin 25 these machines carry; else the newest
# JDK 21+ under /usr/lib/jvm or on PATH. Fails with what to install.
find_jdk() {
    local candidates=() home feature best= best_feature=0
    if [[ -n "${JAVA_HOME:-}" ]]; then
        if feature=$(jdk_feature "$JAVA_HOME") && (( feature >= 21 )); then
            BENCH_JAVA_HOME=$JAVA_HOME BENCH_JDK_FEATURE=$feature BENCH_JAVA=$JAVA_HOME/bin/java
            return 0
        fi
        echo "note: JAVA_HOME=$JAVA_HOME is not a JDK 21 or newer; looking for one" >&2
    fi
    candidates+=(/usr/lib/jvm/temurin-25-jdk-amd64)
    for home in /usr/lib/jvm/*/ /opt/java/*/ /opt/*jdk*/; do
        [[ -d "$home" ]] && candidates+=("${home%/}")
    done
    if command -v javac >/dev/null 2>&1; then
        candidates+=("$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")")
    fi
    for home in "${candidates[@]}"; do
        feature=$(jdk_feature "$home") || continue
        if (( feature >= 21 )); then
            # The Temurin 25 listed first wins when present; otherwise the newest.
            if [[ "$home" == /usr/lib/jvm/temurin-25-jdk-amd64 ]]; then
                best=$home best_feature=$feature
                break
            fi
            if (( feature > best_feature )); then
                best=$home best_feature=$feature
            fi
        fi
    done
    if [[ -z "$best" ]]; then
        echo "error: bench/ needs a JDK 21 or newer (virtual threads) and found none" >&2
        echo "       (looked at JAVA_HOME, /usr/lib/jvm/*, /opt, and javac on PATH)." >&2
        echo "       Install one, e.g. 'apt-get install openjdk-21-jdk-headless' or a Temurin 21+ JDK," >&2
        echo "       or point JAVA_HOME at it." >&2
        return 1
    fi
    BENCH_JAVA_HOME=$best BENCH_JDK_FEATURE=$best_feature BENCH_JAVA=$best/bin/java
}

# Builds bench/ with Maven on the JDK found. Offline first (quiet, no network once the
# dependencies are in ~/.m2), online only when something is missing. Extra args go to Maven
# (e.g. -DskipTests). Maven's output is shown only when the build fails.
build_bench() {
    maven_bench package "$@"
}

# maven_bench GOAL BENCH_DIR [ARGS]: build_bench with another goal (test.sh runs the JUnit tests
# with surefire:test over the jars built before, leaving the jars as they are). A goal that ran
# tests and failed is not run again online: only a missing artifact is.
maven_bench() {
    local goal=$1 bench_dir=$2; shift 2
    if ! command -v mvn >/dev/null 2>&1 && [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
        echo "== installing Maven (apt-get install maven)"
        { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q maven; } >/dev/null 2>&1 || true
    fi
    if ! command -v mvn >/dev/null 2>&1; then
        echo "error: bench/ builds with Maven, which is not installed ('apt-get install maven')" >&2
        return 1
    fi
    local log maven_opts=${MAVEN_OPTS:-}
    # Maven's own libraries use sun.misc.Unsafe; JDK 24+ warns about it on every build.
    if (( BENCH_JDK_FEATURE >= 24 )); then
        maven_opts="$maven_opts --sun-misc-unsafe-memory-access=allow"
    fi
    log=$(mktemp "${TMPDIR:-/tmp}/loadcurve-mvn.XXXXXX")
    if JAVA_HOME=$BENCH_JAVA_HOME MAVEN_OPTS=$maven_opts mvn -B -o -Dstyle.color=never \
            -f "$bench_dir/pom.xml" "$goal" "$@" >"$log" 2>&1 \
        || { ! grep -qE '^\[(INFO|WARNING|ERROR)\] Tests run:' "$log" \
            && JAVA_HOME=$BENCH_JAVA_HOME MAVEN_OPTS=$maven_opts mvn -B -Dstyle.color=never \
                -f "$bench_dir/pom.xml" "$goal" "$@" >"$log" 2>&1; }; then
        BENCH_BUILD_LOG=$log
        return 0
    fi
    # An artifact Maven could not fetch (offline, no network, or a wrong pinned version): one
    # line naming it, rather than Maven's page of stack traces.
    local artifact
    artifact=$(grep -oE '(Could not (resolve|find|transfer) artifact|The following artifacts could not be resolved:) [^ ]+' "$log" \
        | head -n 1 | awk '{ print $NF }')
    if [[ -n "$artifact" ]]; then
        echo "error: Maven could not fetch ${artifact%,} (bench/ needs Maven Central once, for the pinned versions in bench/pom.xml; later builds run offline)" >&2
        rm -f "$log"
        return 1
    fi
    echo "error: the Maven build of bench/ failed; its output:" >&2
    tail -n 80 "$log" >&2
    rm -f "$log"
    return 1
}
