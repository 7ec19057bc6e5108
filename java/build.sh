#!/usr/bin/env bash
# numalock Java build entry point.
#   java/build.sh test            run the JUnit 5 tests (mvn -q -B test) under JDK 25
#   java/build.sh bench OUTDIR    short JMH run of the paper's listing-3 benchmark;
#                                 writes OUTDIR/java.json (JMH JSON), OUTDIR/java.md and
#                                 OUTDIR/jmh.log (its output; VERBOSE=1 shows it too)
# Environment: JDK25_HOME overrides the JDK location (default /usr/lib/jvm/temurin-25-jdk-amd64);
#              BENCH_ARGS replaces the default short JMH options of `bench`.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
JDK="${JDK25_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"

usage() {
    echo "usage: $0 test | bench OUTDIR" >&2
    exit 2
}

require_jdk25() {
    local v
    if [ ! -x "$JDK/bin/java" ] || [ ! -x "$JDK/bin/javac" ]; then
        echo "error: JDK 25 is missing: no java/javac in $JDK (install Temurin 25 there or set JDK25_HOME to a JDK 25)." >&2
        exit 1
    fi
    v="$("$JDK/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')"
    if [ "${v%%.*}" != "25" ]; then
        echo "error: JDK 25 is missing: $JDK is Java '${v:-unknown}', not 25 (set JDK25_HOME to a JDK 25)." >&2
        exit 1
    fi
    if ! command -v mvn >/dev/null 2>&1; then
        echo "error: Maven (mvn) is missing from PATH; install Maven 3.8+." >&2
        exit 1
    fi
    export JAVA_HOME="$JDK"
    export PATH="$JDK/bin:$PATH"
    # Maven 3.8's bundled Guava uses sun.misc.Unsafe, which JDK 24+ warns about on every run.
    export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow"
}

# The JMH run into OUTDIR (absolute). Its output (Maven's, JMH's: about 1,800
# lines) goes to OUTDIR/jmh.log and one summary line to the screen; VERBOSE=1
# shows it as it comes. The JVM and JMH's forks of it (which inherit its
# options) allow sun.misc.Unsafe, which JMH uses and JDK 24+ warns about.
bench() {
    local out="$1" log="$1/jmh.log" start rc args
    start=$(date +%s)
    args="${BENCH_ARGS:--f 1 -wi 1 -w 500ms -i 2 -r 800ms}"
    # shellcheck disable=SC2086
    set -- "$JDK/bin/java" --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow \
        -jar bench/target/benchmarks.jar --out "$out" $args
    cd "$HERE"
    set +e
    if [ -n "${VERBOSE:-}" ]; then
        { mvn -q -B -Dstyle.color=never -DskipTests package 2>&1 && echo "+ $*" && "$@" 2>&1; } |
            sed -u 's/\x1b\[[0-9;]*m//g' | tee "$log"
    else
        echo "java: building and running the JMH benchmarks (a few minutes); output in $(basename "$out")/jmh.log, VERBOSE=1 shows it"
        { mvn -q -B -Dstyle.color=never -DskipTests package 2>&1 && echo "+ $*" && "$@" 2>&1; } |
            sed -u 's/\x1b\[[0-9;]*m//g' >"$log"
    fi
    rc=$?
    set -e
    if [ "$rc" -ne 0 ]; then
        echo "java: the benchmarks failed (status $rc); the end of $(basename "$out")/jmh.log:" >&2
        tail -n 15 "$log" >&2
        return "$rc"
    fi
    echo "java: $(grep -c '"benchmark"' "$out/java.json") JMH results in $(($(date +%s) - start)) s:" \
        "$(basename "$out")/java.md, java.json, jmh.log"
}

[ $# -ge 1 ] || usage
cmd="$1"; shift
case "$cmd" in
    test)
        [ $# -eq 0 ] || usage
        require_jdk25
        cd "$HERE"
        # -q hides Maven's INFO lines; Surefire's "Tests run: N, Failures: ..." summary is
        # printed explicitly below from the XML reports so that it is always visible.
        rm -rf ./*/target/surefire-reports
        set +e
        # Maven 3.8 prints bare ANSI reset sequences even in batch mode: strip them (pipefail
        # keeps Maven's exit status).
        mvn -q -B -Dstyle.color=never test 2>&1 | sed -u 's/\x1b\[[0-9;]*m//g'
        rc=$?
        set -e
        # sum the counts of all Surefire XML reports (attributes of each <testsuite ...> element)
        cat ./*/target/surefire-reports/TEST-*.xml 2>/dev/null | awk '
            /<testsuite / {
                for (k = 1; k <= 4; k++) {
                    name = (k == 1 ? "tests" : k == 2 ? "failures" : k == 3 ? "errors" : "skipped")
                    if (match($0, name "=\"[0-9]+\"")) {
                        v = substr($0, RSTART + length(name) + 2, RLENGTH - length(name) - 3)
                        sum[name] += v
                    }
                }
            }
            END {
                printf "[INFO] Tests run: %d, Failures: %d, Errors: %d, Skipped: %d\n",
                    sum["tests"], sum["failures"], sum["errors"], sum["skipped"]
            }' || true
        exit $rc
        ;;
    bench)
        [ $# -eq 1 ] || usage
        out="$1"
        require_jdk25
        mkdir -p "$out"
        out="$(cd "$out" && pwd)"
        bench "$out"
        ;;
    *)
        usage
        ;;
esac
