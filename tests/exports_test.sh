#!/usr/bin/env bash
# The shared library exports nl_-prefixed symbols only (and at least the core API).
set -u
lib=${1:?usage: exports_test.sh libnumalock.so}
syms=$(nm -D --defined-only "$lib" | awk '{print $3}' | sed 's/@.*//')
bad=$(printf '%s\n' "$syms" | grep -v '^nl_' | grep -v '^$')
fail=0
if [ -n "$bad" ]; then echo "FAIL: exported symbols without the nl_ prefix:"; echo "$bad"; fail=1; fi
for s in nl_lock_create nl_lock_acquire nl_lock_release nl_lock_try nl_lock_destroy nl_lock_find \
         nl_topology_set nl_current_node nl_mcs_lock nl_mcs_acquire; do
  printf '%s\n' "$syms" | grep -qx "$s" || { echo "FAIL: $s is not exported"; fail=1; }
done
n=$(printf '%s\n' "$syms" | grep -c '^nl_')
echo "exports: $n nl_ symbols, $( [ $fail = 0 ] && echo ok || echo FAILED)"
exit $fail
