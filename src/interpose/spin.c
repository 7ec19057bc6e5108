/*
 * POSIX spin locks (pthread_spinlock_t, 4 bytes) on a numalock lock that fits
 * them in place: NUMALOCK_SPIN, by default the first usable of
 * NLP_DEFAULT_SPIN_CHOICES (include/numalock/interpose.h; docs/PRELOAD.md
 * has the measurement). Zero is unlocked, as glibc's.
 *
 * Process-shared spin locks stay glibc's: the 4 bytes have no room for a
 * mark, so pthread_spin_init records their addresses in a set (removed by
 * pthread_spin_destroy). Until the first one is recorded the fast path tests
 * one flag; afterwards every spin call of the process looks its lock up.
 *
 * As glibc: unlock of a free spin lock returns 0 and leaves it working;
 * destroy returns 0; no owner check (any thread may unlock).
 */
#include <errno.h>
#include "preload.h"

_Static_assert(sizeof(pthread_spinlock_t) == NLP_SPIN_BYTES, "pthread_spinlock_t size");

/* 1: spin locks run on nlp_g.spin_ops, statistics off, no process-shared
 * spin lock was ever initialised */
static _Atomic int spin_fast = -1; /* -1: not decided yet */

#define PS_SLOTS 16384u /* process-shared spin locks alive at once that can be told apart */
#define PS_GONE ((uintptr_t)1)
static _Atomic uintptr_t ps_set[PS_SLOTS];
static _Atomic int ps_any;

static inline size_t ps_hash(uintptr_t a) { return (size_t)(((uint64_t)(a >> 2) * 0x9E3779B97F4A7C15ull) >> 50); }

static int ps_contains(const volatile void *l)
{
    uintptr_t a = (uintptr_t)l;
    for (size_t i = 0, h = ps_hash(a); i < PS_SLOTS; i++) {
        uintptr_t k = atomic_load_explicit(&ps_set[(h + i) % PS_SLOTS], memory_order_acquire);
        if (k == a)
            return 1;
        if (k == 0)
            return 0;
    }
    return 0;
}

static void ps_add(const volatile void *l)
{
    uintptr_t a = (uintptr_t)l;
    atomic_store(&ps_any, 1);
    atomic_store(&spin_fast, 0);
    if (ps_contains(l))
        return;
    for (size_t i = 0, h = ps_hash(a); i < PS_SLOTS; i++) {
        _Atomic uintptr_t *e = &ps_set[(h + i) % PS_SLOTS];
        uintptr_t k = atomic_load(e);
        while (k == 0 || k == PS_GONE) {
            if (atomic_compare_exchange_weak(e, &k, a))
                return;
        }
        if (k == a)
            return;
    }
    /* full: this one runs on the replacing lock (docs/PRELOAD.md, Limits) */
}

static void ps_remove(const volatile void *l)
{
    uintptr_t a = (uintptr_t)l;
    for (size_t i = 0, h = ps_hash(a); i < PS_SLOTS; i++) {
        _Atomic uintptr_t *e = &ps_set[(h + i) % PS_SLOTS];
        uintptr_t k = atomic_load(e);
        if (k == 0)
            return;
        if (k == a && atomic_compare_exchange_strong(e, &k, PS_GONE))
            return;
    }
}

static int decide_fast(void)
{
    nlp_ensure_init();
    int f = nlp_g.spin_ops && !nlp_g.stats && !atomic_load(&ps_any);
    int expect = -1;
    atomic_compare_exchange_strong(&spin_fast, &expect, f);
    return atomic_load(&spin_fast);
}

/* the lock is glibc's: no replacing lock, or a process-shared one */
static inline int spin_is_glibc(const pthread_spinlock_t *l)
{
    return !nlp_g.spin_ops || (atomic_load_explicit(&ps_any, memory_order_relaxed) && ps_contains(l));
}

/* glibc's spin lock, counted when stats are on (nlp_profiled_call) */
static int g_spin_try(void *l) { return nlp_real.spin_trylock(l); }
static int spin_try_busy(void *l) { return nlp_g.spin_try(l) ? EBUSY : 0; }
static int g_spin_lock(void *l, const void *ctx)
{
    (void)ctx;
    return nlp_real.spin_lock(l);
}

static int __attribute__((noinline)) spin_lock_slow(pthread_spinlock_t *l, void *ra)
{
    if (decide_fast() == 1) {
        nlp_g.spin_acquire((void *)l);
        return 0;
    }
    if (spin_is_glibc(l)) {
        if (!nlp_g.stats)
            return nlp_real.spin_lock(l);
        return nlp_profiled_call((void *)l, NLP_OBJ_SPIN, 0, ra, g_spin_try, g_spin_lock, NULL);
    }
    if (!nlp_g.stats)
        nlp_g.spin_acquire((void *)l);
    else
        nlp_profiled_acquire((void *)l, NLP_OBJ_SPIN, ra, nlp_g.spin_acquire, (void *)l);
    return 0;
}

EXPORT int nlp_spin_init(pthread_spinlock_t *l, int pshared)
{
    nlp_ensure_init();
    if (pshared != PTHREAD_PROCESS_PRIVATE && !nlp_g.spin_pshared_too) {
        int rc = nlp_real.spin_init(l, pshared);
        if (rc == 0 && nlp_g.spin_ops)
            ps_add(l);
        return rc;
    }
    if (!nlp_g.spin_ops)
        return nlp_real.spin_init(l, pshared);
    if (atomic_load(&ps_any))
        ps_remove(l); /* a private lock may now live where a shared one did */
    *(volatile int *)l = 0; /* every usable lock is zero when unlocked */
    return 0;
}

EXPORT int nlp_spin_destroy(pthread_spinlock_t *l)
{
    nlp_ensure_init();
    if (atomic_load(&ps_any))
        ps_remove(l);
    return 0; /* as glibc: nothing to free, no EBUSY */
}

EXPORT int nlp_spin_lock(pthread_spinlock_t *l)
{
    if (NL_LIKELY(atomic_load_explicit(&spin_fast, memory_order_relaxed) == 1)) {
        nlp_g.spin_acquire((void *)l);
        return 0;
    }
    return spin_lock_slow(l, __builtin_return_address(0));
}

EXPORT int nlp_spin_trylock(pthread_spinlock_t *l)
{
    if (NL_LIKELY(atomic_load_explicit(&spin_fast, memory_order_relaxed) == 1))
        return nlp_g.spin_try((void *)l) ? EBUSY : 0;
    decide_fast();
    int (*try_fn)(void *) = spin_is_glibc(l) ? g_spin_try : spin_try_busy;
    return nlp_profiled_call((void *)l, NLP_OBJ_SPIN, 0, __builtin_return_address(0), try_fn, NULL, NULL);
}

EXPORT int nlp_spin_unlock(pthread_spinlock_t *l)
{
    if (NL_LIKELY(atomic_load_explicit(&spin_fast, memory_order_relaxed) == 1)) {
        nlp_g.spin_release((void *)l);
        return 0;
    }
    decide_fast();
    if (spin_is_glibc(l))
        return nlp_real.spin_unlock(l);
    nlp_g.spin_release((void *)l);
    return 0;
}

NLP_TWO_VERSIONS(nlp_spin_init, pthread_spin_init, NLP_GLIBC_BASE, "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_spin_destroy, pthread_spin_destroy, NLP_GLIBC_BASE, "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_spin_lock, pthread_spin_lock, NLP_GLIBC_BASE, "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_spin_trylock, pthread_spin_trylock, NLP_GLIBC_BASE, "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_spin_unlock, pthread_spin_unlock, NLP_GLIBC_BASE, "GLIBC_2.34");
