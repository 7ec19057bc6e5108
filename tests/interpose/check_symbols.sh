#!/bin/sh
# The preload library exports every replaced pthread function under each
# version a program may bind to, and nothing but nl_*, pthread and C11 mtx_/cnd_ names.
#   check_symbols.sh libnumalock-preload.so
set -u
lib=$1; fail=0
syms=$(objdump -T "$lib" | awk '$2 == "g" || $2 == "w" { v = $(NF-1); gsub(/[()]/, "", v); print $NF "@" v }')
for want in \
    pthread_mutex_init@GLIBC_2.2.5 pthread_mutex_destroy@GLIBC_2.2.5 pthread_mutex_lock@GLIBC_2.2.5 \
    pthread_mutex_unlock@GLIBC_2.2.5 pthread_mutex_trylock@GLIBC_2.2.5 pthread_mutex_trylock@GLIBC_2.34 \
    pthread_mutex_timedlock@GLIBC_2.2.5 pthread_mutex_timedlock@GLIBC_2.34 \
    pthread_mutex_clocklock@GLIBC_2.30 pthread_mutex_clocklock@GLIBC_2.34 \
    pthread_cond_init@GLIBC_2.3.2 pthread_cond_destroy@GLIBC_2.3.2 pthread_cond_wait@GLIBC_2.3.2 \
    pthread_cond_timedwait@GLIBC_2.3.2 pthread_cond_signal@GLIBC_2.3.2 pthread_cond_broadcast@GLIBC_2.3.2 \
    pthread_cond_clockwait@GLIBC_2.30 pthread_cond_clockwait@GLIBC_2.34 \
    pthread_rwlock_init@GLIBC_2.34 pthread_rwlock_destroy@GLIBC_2.34 pthread_rwlock_rdlock@GLIBC_2.34 \
    pthread_rwlock_tryrdlock@GLIBC_2.34 pthread_rwlock_timedrdlock@GLIBC_2.34 pthread_rwlock_clockrdlock@GLIBC_2.34 \
    pthread_rwlock_wrlock@GLIBC_2.34 pthread_rwlock_trywrlock@GLIBC_2.34 pthread_rwlock_timedwrlock@GLIBC_2.34 \
    pthread_rwlock_clockwrlock@GLIBC_2.34 pthread_rwlock_unlock@GLIBC_2.34 \
    pthread_rwlock_rdlock@GLIBC_2.2.5 pthread_rwlock_wrlock@GLIBC_2.2.5 pthread_rwlock_unlock@GLIBC_2.2.5 \
    pthread_rwlock_clockrdlock@GLIBC_2.30 pthread_rwlock_clockwrlock@GLIBC_2.30 \
    pthread_spin_init@GLIBC_2.2.5 pthread_spin_init@GLIBC_2.34 pthread_spin_lock@GLIBC_2.2.5 \
    pthread_spin_lock@GLIBC_2.34 pthread_spin_trylock@GLIBC_2.34 pthread_spin_unlock@GLIBC_2.34 \
    pthread_spin_destroy@GLIBC_2.34 pthread_spin_unlock@GLIBC_2.2.5 \
    mtx_lock@GLIBC_2.28 mtx_lock@GLIBC_2.34 mtx_timedlock@GLIBC_2.34 cnd_wait@GLIBC_2.28 cnd_timedwait@GLIBC_2.34 \
    nl_lock_find@NUMALOCK_0.1; do
    echo "$syms" | grep -qx "$want" || { echo "missing export: $want"; fail=1; }
done
# the versions must match glibc's defaults (@@): a program built here binds to those
for want in pthread_mutex_trylock:GLIBC_2.34 pthread_cond_wait:GLIBC_2.3.2 pthread_rwlock_rdlock:GLIBC_2.34 \
    pthread_cond_clockwait:GLIBC_2.34 pthread_mutex_lock:GLIBC_2.2.5 pthread_spin_lock:GLIBC_2.34; do
    n=${want%%:*}; v=${want#*:}
    objdump -T "$lib" | grep -E " $v +$n\$" | grep -vq "($v)" || { echo "$n is not exported with default version $v"; fail=1; }
done
bad=$(nm -D --defined-only "$lib" | awk '$2 != "A" { print $3 }' | grep -v -E '^(nl_|pthread_|__pthread_|mtx_|cnd_)' || true)
if [ -n "$bad" ]; then echo "unexpected exports: $bad"; fail=1; fi
# thread-locals use the initial-exec model (no dynamic TLS relocations)
if readelf -rW "$lib" | grep -q -E "DTPMOD64|TLSDESC"; then echo "dynamic TLS relocations: thread-locals must be initial-exec"; fail=1; fi
[ $fail -eq 0 ] && echo "exports ok: $(echo "$syms" | grep -c pthread) versioned pthread symbols"
exit $fail
