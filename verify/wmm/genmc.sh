#!/bin/sh
# Build GenMC 0.9 (the model checker of verify/wmm; GNU GPL v3, a build
# tool, never linked into anything shipped) into a folder, once, and print
# the path of its binary.
#   verify/wmm/genmc.sh DIR [--deps]
# --deps: only install the packages the build needs (CI does it before it
# builds GenMC in the background beside other steps that may install too).
# Source: the archive named by GENMC_SRC (the v0.9 release of
# https://github.com/MPI-SWS/genmc, e.g. its GitHub tag archive), else that
# archive downloaded. Built with Debian's LLVM 15 (installed when missing);
# DIR is GenMC's install prefix: it finds its own headers there, so the
# folder stays where it was built.
set -e
out=${1:?usage: verify/wmm/genmc.sh DIR [--deps]}
case "${2:-}" in
''|--deps) ;;
*) echo "genmc: unknown option '$2': the only option is --deps" >&2; exit 2 ;;
esac
mkdir -p "$out"
out=$(cd "$out" && pwd)
# The build carries one fix of GenMC 0.9 (below); a build without it is
# made again.
if [ -x "$out/bin/genmc" ] && [ -f "$out/include/genmc/genmc.h" ] && [ -f "$out/sext-fix" ]; then
    echo "$out/bin/genmc"
    exit 0
fi
top=$(cd "$(dirname "$0")/../.." && pwd)
sh "$top/scripts/apt-missing.sh" "GenMC build" llvm-15-dev clang-15 autoconf automake make g++ \
    libffi-dev zlib1g-dev libedit-dev >&2
[ "${2:-}" = --deps ] && exit 0
url=https://github.com/MPI-SWS/genmc/archive/refs/tags/v0.9.tar.gz
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=${GENMC_SRC:-}
if [ -z "$src" ]; then
    src=$tmp/genmc-0.9.tar.gz
    echo "genmc: downloading $url" >&2
    if ! curl -fsSL --max-time 120 -o "$src" "$url" 2>/dev/null; then
        echo "genmc: cannot download $url; set GENMC_SRC to a copy of GenMC 0.9's source archive" >&2
        exit 1
    fi
elif [ ! -f "$src" ]; then
    echo "genmc: GENMC_SRC='$src' is not a file (GenMC 0.9's source archive)" >&2
    exit 1
fi
tar -xzf "$src" -C "$tmp"
dir=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d -name 'genmc*' | head -n 1)
[ -n "$dir" ] || { echo "genmc: $src holds no genmc source folder" >&2; exit 1; }
# GenMC 0.9 keeps a value narrower than 64 bits sign-extended where it comes
# from a location's initial value or an atomic add or subtract, and
# zero-extended where a store, an exchange or a compare-and-swap's operands
# give it, and compares the two: a compare-and-swap whose expected 32-bit
# value has bit 31 set fails against a word that holds that value, and the
# execution blocks (a lock word with a flag in bit 31 never checked). The
# fix: operands sign-extended too, so every value has one form.
python3 - "$dir/src/Execution.cpp" <<'PY'
import sys
p = sys.argv[1]
s = open(p).read()
old = "__result = val.IntVal.getLimitedValue();"
new = ("__result = val.IntVal.getBitWidth() <= 64 ? "
       "(uint64_t) val.IntVal.getSExtValue() : val.IntVal.getLimitedValue();")
if s.count(old) != 1:
    sys.exit("genmc: the source is not GenMC 0.9's (no single GV_TO_SVAL conversion to fix)")
open(p, "w").write(s.replace(old, new))
PY
echo "genmc: building into $out (a few minutes)" >&2
log=$out/build.log
if ! (cd "$dir" && export PATH=/usr/lib/llvm-15/bin:$PATH &&
      autoreconf --install && ./configure --prefix="$out" --with-llvm=/usr/lib/llvm-15 &&
      make -j"$(nproc)" && make install) >"$log" 2>&1; then
    tail -20 "$log" >&2
    echo "genmc: build failed, log in $log" >&2
    exit 1
fi
touch "$out/sext-fix"
echo "$out/bin/genmc"
