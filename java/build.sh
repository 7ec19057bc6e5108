#!/usr/bin/env bash
# numalock Java build entry point.
#   java/build.sh test            run the JUnit 5 tests (mvn -q -B test) under JDK 25
#   java/build.sh bench OUTDIR    short JMH run of the paper's listing-3 benchmark;
#                                 writes OUTDIR/java.json (JMH JSON) and OUTDIR/java.md
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
        mvn -q -B -Dstyle.color=never test
        rc=$?
        set -e
        python3 - "$HERE" <<'PY' || true
import glob, sys, xml.etree.ElementTree as ET
t = f = e = s = 0
for p in glob.glob(sys.argv[1] + "/*/target/surefire-reports/TEST-*.xml"):
    r = ET.parse(p).getroot()
    t += int(r.get("tests", 0)); f += int(r.get("failures", 0))
    e += int(r.get("errors", 0)); s += int(r.get("skipped", 0))
print(f"[INFO] Tests run: {t}, Failures: {f}, Errors: {e}, Skipped: {s}")
PY
        exit $rc
        ;;
    bench)
        [ $# -eq 1 ] || usage
        out="$1"
        require_jdk25
        mkdir -p "$out"
        out="$(cd "$out" && pwd)"
        cd "$HERE"
        mvn -q -B -Dstyle.color=never -DskipTests package
        args="${BENCH_ARGS:--f 1 -wi 1 -w 500ms -i 2 -r 800ms}"
        # shellcheck disable=SC2086
        set -- "$JDK/bin/java" --enable-native-access=ALL-UNNAMED -jar bench/target/benchmarks.jar \
            --out "$out" $args
        echo "+ $*"
        exec "$@"
        ;;
    *)
        usage
        ;;
esac
