#!/bin/sh
# install_test.sh SRC BUILD: numalock as a user gets it.
#  1. install the build into a temporary prefix (what `make install PREFIX=..`
#     runs), once more with DESTDIR, then move the prefix elsewhere: nothing
#     may depend on where it was installed;
#  2. build examples/ (copied out of the checkout) against the moved prefix
#     with pkg-config (examples/Makefile) and with CMake find_package
#     (examples/CMakeLists.txt), and run both programs;
#  3. from a folder outside the checkout, with a clean environment, run the
#     installed `numalock list`, `numalock run` and `numalock report --suite
#     quick`, each under strace: no file of the source or build tree may be
#     opened, executed or stat'ed (the Python interpreter of SRC/.venv, with
#     matplotlib, is borrowed for the report's plots and allowed);
#  4. the strace check itself must flag the build tree's own command.
# Exit 77 (skipped) when the build lacks a part the install needs.
set -eu
SRC=$(cd "$1" && pwd -P)
BUILD=$(cd "$2" && pwd -P)
T=$(mktemp -d)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$T"' EXIT
fail() { echo "install_test: FAIL: $*" >&2; exit 1; }
step() { echo "install_test: $*"; }
[ -f "$BUILD/lib/libnumalock-preload.so" ] || { echo "install_test: no preload library in this build: skipped"; exit 77; }

# ---- 1. install, DESTDIR, move -------------------------------------------------
cmake --install "$BUILD" --prefix "$T/p" >/dev/null
DESTDIR="$T/destdir" cmake --install "$BUILD" --prefix /opt/numalock >/dev/null
for f in bin/numalock lib/libnumalock.so lib/libnumalock.a lib/libnumalock-preload.so \
         include/numalock/numalock.h include/numalock/numalock.hpp share/numalock/default-suite.txt \
         share/numalock/quick-suite.txt share/numalock/report.py lib/pkgconfig/numalock.pc \
         lib/cmake/numalock/numalockConfig.cmake; do
    [ -e "$T/p/$f" ] || fail "the install lacks $f"
    [ -e "$T/destdir/opt/numalock/$f" ] || fail "the DESTDIR install lacks /opt/numalock/$f"
done
mv "$T/p" "$T/moved"
P=$(realpath "$T/moved")
step "installed into a prefix, moved to $P"

# ---- 2. examples: pkg-config and CMake ------------------------------------------
cp -r "$SRC/examples" "$T/examples"
PKG_CONFIG_PATH=$P/lib/pkgconfig make -s -C "$T/examples" >/dev/null 2>"$T/make.err" ||
    { cat "$T/make.err" >&2; fail "the examples do not build with pkg-config"; }
case "$(PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --cflags numalock)" in
    *"$P/"*) ;; *) fail "pkg-config does not point into the moved prefix" ;;
esac
cmake -S "$T/examples" -B "$T/ex-cmake" -DCMAKE_PREFIX_PATH="$P" >"$T/cmake.log" 2>&1 &&
    cmake --build "$T/ex-cmake" >>"$T/cmake.log" 2>&1 ||
    { cat "$T/cmake.log" >&2; fail "the examples do not build with CMake find_package"; }
grep -q "^numalock_DIR:PATH=$P/lib/cmake/numalock\$" "$T/ex-cmake/CMakeCache.txt" ||
    fail "find_package(numalock) found $(grep numalock_DIR "$T/ex-cmake/CMakeCache.txt"), not the moved prefix"
step "examples built with pkg-config and with CMake"

# ---- 3. the installed files only ------------------------------------------------
mkdir "$T/elsewhere"
HAVE_STRACE=0
strace -f -o /dev/null true 2>/dev/null && HAVE_STRACE=1
[ $HAVE_STRACE = 1 ] || step "strace cannot trace here: the programs run, the no-checkout-path check is skipped"
PY_ALLOWED=$SRC/.venv
# run_clean NAME CMD...: CMD in $T/elsewhere with a clean environment, traced to $T/NAME.trace
run_clean() {
    name=$1; shift
    if [ $HAVE_STRACE = 1 ]; then
        (cd "$T/elsewhere" && env -i PATH=/usr/bin:/bin HOME="$T" LANG=C ${NUMALOCK_PYTHON:+NUMALOCK_PYTHON=$NUMALOCK_PYTHON} \
            strace -f -qq -e trace=%file -o "$T/$name.trace" "$@")
    else
        (cd "$T/elsewhere" && env -i PATH=/usr/bin:/bin HOME="$T" LANG=C ${NUMALOCK_PYTHON:+NUMALOCK_PYTHON=$NUMALOCK_PYTHON} "$@")
    fi
}
# checkout_paths NAME: the trace's paths inside SRC or BUILD (but the allowed Python)
checkout_paths() {
    [ $HAVE_STRACE = 1 ] || return 0
    grep -o "\"\\($SRC\\|$BUILD\\)/[^\"]*\"" "$T/$1.trace" | grep -v "^\"$PY_ALLOWED[\"/]" | sort -u || true
}
check_clean() {
    bad=$(checkout_paths "$1")
    [ -z "$bad" ] || fail "$1 touched the checkout: $(echo "$bad" | head -5 | tr '\n' ' ')"
}
# uses NAME FILE: the trace opened FILE successfully (by any path naming it)
uses() {
    [ $HAVE_STRACE = 1 ] || return 0
    for f in $(grep -v '= -1 ' "$T/$1.trace" | grep -o "\"[^\"]*$(basename "$2")\"" | tr -d '"' | sort -u); do
        [ "$(realpath -m -s "$f")" = "$2" ] && return 0
    done
    fail "$1 did not use $2"
}

for ex in "$T/examples/counter" "$T/examples/counter_cxx" "$T/ex-cmake/counter" "$T/ex-cmake/counter_cxx"; do
    n=example-$(basename "$(dirname "$ex")")-$(basename "$ex")
    run_clean "$n" "$ex" >"$T/$n.out" || { cat "$T/$n.out" >&2; fail "$ex failed"; }
    check_clean "$n"
    uses "$n" "$P/lib/libnumalock.so.0"
done
step "examples ran on the moved prefix's libnumalock.so: $(cat "$T/example-ex-cmake-counter_cxx.out")"

run_clean list "$P/bin/numalock" list >"$T/list.out" || fail "numalock list failed"
check_clean list
grep -q '^mcs ' "$T/list.out" || fail "numalock list printed no mcs"

run_clean run "$P/bin/numalock" run --lock hbo -- /bin/true || fail "numalock run failed"
check_clean run
uses run "$P/lib/libnumalock-preload.so"

if run_clean suites "$P/bin/numalock" report --suite no-such-suite 2>"$T/suites.err"; then
    fail "an unknown suite was accepted"
fi
grep -q "default, quick" "$T/suites.err" || fail "the installed suites are not default and quick: $(cat "$T/suites.err")"

render=--no-render
if [ -x "$SRC/.venv/bin/python3" ] && "$SRC/.venv/bin/python3" -c 'import matplotlib' 2>/dev/null; then
    NUMALOCK_PYTHON=$SRC/.venv/bin/python3; render=
elif python3 -c 'import matplotlib' 2>/dev/null; then
    render=
fi
run_clean report "$P/bin/numalock" report --suite quick --out r $render >"$T/report.out" 2>&1 ||
    { tail -20 "$T/report.out" >&2; fail "numalock report --suite quick failed"; }
check_clean report
uses report "$P/share/numalock/quick-suite.txt"
for f in latency.json kvmap-virtual2.json rwhash.json footprint.json; do
    [ -s "$T/elsewhere/r/$f" ] || fail "the report lacks $f"
done
if [ -z "$render" ]; then
    uses report "$P/share/numalock/report.py"
    [ -s "$T/elsewhere/r/report.md" ] || fail "the report has no report.md"
    step "numalock report --suite quick: report.md and $(ls "$T/elsewhere/r" | grep -c png) plots"
else
    step "numalock report --suite quick: JSON only (no python3 with matplotlib here)"
fi

# ---- 4. the check itself catches a command of the build tree --------------------
if [ $HAVE_STRACE = 1 ]; then
    run_clean selfcheck "$BUILD/bin/numalock" list >/dev/null
    [ -n "$(checkout_paths selfcheck)" ] || fail "the trace check did not flag the build tree's numalock"
    step "the check flags the build tree's own command, and no installed run touched $SRC or $BUILD"
fi
echo "install_test: ok"
