#!/bin/sh
# header_check.sh CC CXX INCLUDE_DIR: every public header compiles alone as
# strict C11 (CC -std=c11) and as C++17 (CXX -std=c++17), so C and C++
# programs can include any of them (atomic fields: NL_ATOMIC(T), numalock.h).
cc=$1 cxx=$2 inc=$3
failed=0 n=0
for h in "$inc"/numalock/*.h "$inc"/numalock/*.hpp; do
    [ -e "$h" ] || continue
    name=numalock/$(basename "$h")
    case "$h" in
    *.h) if ! printf '#include <%s>\n' "$name" | "$cc" -std=c11 -Wall -Wextra -Werror -I"$inc" -fsyntax-only -x c - ; then
             echo "header_check: $name does not compile as C11" >&2; failed=1
         fi ;;
    esac
    if ! printf '#include <%s>\n' "$name" | "$cxx" -std=c++17 -Wall -Wextra -Werror -I"$inc" -fsyntax-only -x c++ - ; then
        echo "header_check: $name does not compile as C++17" >&2; failed=1
    fi
    n=$((n + 1))
done
[ $n -gt 0 ] || { echo "header_check: no header in $inc/numalock" >&2; exit 1; }
[ $failed = 0 ] && echo "header_check: $n public headers compile as C11 and C++17"
exit $failed
