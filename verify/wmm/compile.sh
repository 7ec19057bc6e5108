#!/bin/sh
# The program GenMC reads, for run.sh and audit.py:
#   verify/wmm/compile.sh GENMC_INCLUDE SRCROOT CHECK.c OUT.bc [CFLAGS...]
# CHECK.c compiled against SRCROOT/include and SRCROOT/src as -O1 (its loops
# then have the shape GenMC's spin-assume recognises: a poll loop is only its
# loads, read as an await); -fno-builtin, so that no memset is made of
# adjacent stores; the min/max intrinsics the optimiser makes, which GenMC
# 0.9 does not interpret, turned back into a compare and a select. Errors on
# stderr; the exit status says whether OUT.bc was made.
set -e
inc=$1 root=$2 src=$3 out=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
llvm=${LLVM_BIN:-/usr/lib/llvm-15/bin}
"$llvm/clang" -S -emit-llvm -O1 -fno-builtin -w "$@" -D__CONFIG_GENMC_INODE_DATA_SIZE=64 \
    -I"$inc" -I"$root/include" -I"$root/src" "$src" -o "$out.raw.ll"
python3 "$here/lower_minmax.py" "$out.raw.ll" "$out.ll"
"$llvm/llvm-as" "$out.ll" -o "$out"
rm -f "$out.raw.ll" "$out.ll"
