/*
 * pthread_mutex_t on a numalock lock.
 *
 * Layout (40 bytes): the lock in bytes 0..15 when it fits and is
 * zero-initialisable (PTHREAD_MUTEX_INITIALIZER is all zeros), else a pointer
 * there to a block allocated at first use; glibc's kind stays at offset 16 (so
 * static recursive/errorcheck initialisers keep working); 20: sleepers in
 * timedlock; 24: owner tid and 28: depth (recursive and error-checking types
 * only); 32: futex word for timedlock sleepers. Process-shared, robust and
 * priority-protocol mutexes stay glibc's.
 *
 * Misuse as glibc answers it (docs/PRELOAD.md, "Misuse"): an unlock of a free
 * normal mutex returns 0 and leaves it working (nlp_g.release skips it for
 * locks whose release is not harmless on a free lock); destroying a held
 * mutex returns EBUSY (the lock's held function).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "preload.h"

_Static_assert(sizeof(nlp_mutex_t) == sizeof(pthread_mutex_t), "mutex layout");
_Static_assert(offsetof(nlp_mutex_t, kind) == offsetof(pthread_mutex_t, __data.__kind), "kind offset");

static inline void *mstore(nlp_mutex_t *m)
{
    if (NL_LIKELY(nlp_g.mode == NLP_MODE_INPLACE))
        return m;
    return nlp_block_get(&m->u.ext, nlp_g.ops, nlp_g.ext_size, nlp_g.ext_align);
}

/* Release, waking a timedlock sleeper if there is one. Nothing of the mutex
 * is written after the lock's release: another thread may acquire, unlock and
 * free it at once (POSIX allows that), so the sequence word is bumped while
 * the lock is still held and only the futex wake (a system call on the
 * address, harmless if it is gone) follows the release. */
static inline void release_and_wake(nlp_mutex_t *m, void *l)
{
    if (NL_LIKELY(!atomic_load_explicit(&m->twait, memory_order_relaxed))) {
        nlp_g.release(l);
        return;
    }
    atomic_fetch_add_explicit(&m->tseq, 1, memory_order_relaxed);
    nlp_g.release(l);
    nl_futex_wake(&m->tseq, 1);
}

void nlp_mutex_raw_acquire(nlp_mutex_t *m, void *ra)
{
    void *l = mstore(m);
    if (NL_LIKELY(!nlp_g.stats))
        nlp_g.acquire(l);
    else
        nlp_profiled_acquire(m, NLP_OBJ_MUTEX, ra, nlp_g.acquire, l);
}

static inline int raw_try(nlp_mutex_t *m, void *ra)
{
    if (nlp_g.try_acquire(mstore(m)))
        return EBUSY;
    if (nlp_g.stats)
        nlp_profile_write(nlp_profile_get(m, NLP_OBJ_MUTEX, ra), 0, 0);
    return 0;
}

void nlp_mutex_raw_release(nlp_mutex_t *m) { release_and_wake(m, mstore(m)); }

/* acquire with a deadline: try, spin a little, then sleep on tseq in slices
 * of at most 1 ms (a release wakes a sleeper; the slice bounds the case where
 * a release read the sleeper count just before the sleeper registered). */
static int raw_timed(nlp_mutex_t *m, clockid_t clk, const struct timespec *abs, void *ra)
{
    void *l = mstore(m);
    if (nlp_g.try_acquire(l) == 0)
        goto got_uncontended;
    if (nlp_bad_time(abs))
        return EINVAL;
    uint64_t t0 = nlp_g.stats ? nl_clock_ns() : 0;
    for (int i = 0; i < 64; i++) {
        nl_cpu_relax();
        if (nlp_g.try_acquire(l) == 0)
            goto got;
    }
    for (;;) {
        int expired;
        atomic_fetch_add(&m->twait, 1);
        uint32_t seq = atomic_load(&m->tseq);
        if (nlp_g.try_acquire(l) == 0) {
            atomic_fetch_sub(&m->twait, 1);
            goto got;
        }
        struct timespec t = nlp_until_at_most(clk, abs, 1000000L, &expired);
        if (expired) {
            atomic_fetch_sub(&m->twait, 1);
            return ETIMEDOUT;
        }
        nl_futex_wait_until(&m->tseq, seq, &t, clk, 0);
        atomic_fetch_sub(&m->twait, 1);
        if (nlp_g.try_acquire(l) == 0)
            goto got;
    }
got:
    if (nlp_g.stats)
        nlp_profile_write(nlp_profile_get(m, NLP_OBJ_MUTEX, ra), 1, nl_clock_ns() - t0);
    return 0;
got_uncontended:
    if (nlp_g.stats)
        nlp_profile_write(nlp_profile_get(m, NLP_OBJ_MUTEX, ra), 0, 0);
    return 0;
}

/* glibc-owned mutexes (and every mutex in glibc mode), counted when stats are on */
int nlp_mutex_glibc_lock(pthread_mutex_t *pm, void *ra)
{
    if (!nlp_g.stats)
        return nlp_real.mutex_lock(pm);
    nlp_stat_t *s = nlp_profile_get(pm, NLP_OBJ_MUTEX, ra);
    int rc = nlp_real.mutex_trylock(pm);
    if (rc == 0 || rc == EOWNERDEAD) {
        nlp_profile_write(s, 0, 0);
        return rc;
    }
    if (rc != EBUSY)
        return rc;
    uint64_t t0 = nl_clock_ns();
    rc = nlp_real.mutex_lock(pm);
    if (rc == 0 || rc == EOWNERDEAD)
        nlp_profile_write(s, 1, nl_clock_ns() - t0);
    return rc;
}

static int glibc_try(pthread_mutex_t *pm, void *ra)
{
    int rc = nlp_real.mutex_trylock(pm);
    if (nlp_g.stats && (rc == 0 || rc == EOWNERDEAD))
        nlp_profile_write(nlp_profile_get(pm, NLP_OBJ_MUTEX, ra), 0, 0);
    return rc;
}

static int glibc_timed(pthread_mutex_t *pm, clockid_t clk, const struct timespec *abs, void *ra)
{
    int rc;
    if (nlp_g.stats && (rc = glibc_try(pm, ra)) != EBUSY)
        return rc;
    uint64_t t0 = nlp_g.stats ? nl_clock_ns() : 0;
    rc = nlp_real.mutex_clocklock ? nlp_real.mutex_clocklock(pm, clk, abs)
         : clk == CLOCK_REALTIME  ? nlp_real.mutex_timedlock(pm, abs)
                                  : EINVAL;
    if (nlp_g.stats && (rc == 0 || rc == EOWNERDEAD))
        nlp_profile_write(nlp_profile_get(pm, NLP_OBJ_MUTEX, ra), 1, nl_clock_ns() - t0);
    return rc;
}

EXPORT int pthread_mutex_init(pthread_mutex_t *pm, const pthread_mutexattr_t *attr)
{
    nlp_ensure_init();
    int type = PTHREAD_MUTEX_NORMAL, pshared = PTHREAD_PROCESS_PRIVATE, robust = PTHREAD_MUTEX_STALLED,
        proto = PTHREAD_PRIO_NONE;
    if (attr) {
        pthread_mutexattr_gettype(attr, &type);
        pthread_mutexattr_getpshared(attr, &pshared);
        pthread_mutexattr_getrobust(attr, &robust);
        pthread_mutexattr_getprotocol(attr, &proto);
    }
    if (nlp_g.mode == NLP_MODE_GLIBC || pshared != PTHREAD_PROCESS_PRIVATE || robust != PTHREAD_MUTEX_STALLED ||
        proto != PTHREAD_PRIO_NONE)
        return nlp_real.mutex_init(pm, attr);
    if (type < 0 || type > NLP_KIND_TYPE)
        return EINVAL;
    nlp_mutex_t *m = (nlp_mutex_t *)pm;
    memset(m, 0, sizeof *m);
    m->kind = type;
    return 0;
}

EXPORT int pthread_mutex_destroy(pthread_mutex_t *pm)
{
    nlp_ensure_init();
    nlp_mutex_t *m = (nlp_mutex_t *)pm;
    if (nlp_mutex_is_glibc(m))
        return nlp_real.mutex_destroy(pm);
    int type = m->kind & NLP_KIND_TYPE;
    if ((type == PTHREAD_MUTEX_RECURSIVE || type == PTHREAD_MUTEX_ERRORCHECK) &&
        atomic_load_explicit(&m->owner, memory_order_relaxed))
        return EBUSY; /* as glibc: a held mutex of any type */
    if (nlp_g.mode == NLP_MODE_INPLACE) {
        if (nlp_g.held(m))
            return EBUSY;
        return 0;
    }
    void *p = atomic_load_explicit(&m->u.ext, memory_order_acquire);
    if (p && nlp_g.held(p))
        return EBUSY;
    p = atomic_exchange(&m->u.ext, NULL);
    if (p) {
        if (nlp_g.ops->destroy)
            nlp_g.ops->destroy(p);
        free(p);
    }
    return 0;
}

int __attribute__((noinline)) nlp_mutex_lock_slow(nlp_mutex_t *m, void *ra)
{
    nlp_ensure_init();
    if (nlp_mutex_is_glibc(m))
        return nlp_mutex_glibc_lock((pthread_mutex_t *)m, ra);
    int type = m->kind & NLP_KIND_TYPE;
    if (type == PTHREAD_MUTEX_NORMAL || type == PTHREAD_MUTEX_ADAPTIVE_NP) {
        nlp_mutex_raw_acquire(m, ra);
        return 0;
    }
    int me = nlp_tid();
    if (atomic_load_explicit(&m->owner, memory_order_relaxed) == me) {
        if (type == PTHREAD_MUTEX_ERRORCHECK)
            return EDEADLK;
        if (m->count == UINT32_MAX)
            return EAGAIN;
        m->count++;
        return 0;
    }
    nlp_mutex_raw_acquire(m, ra);
    atomic_store_explicit(&m->owner, me, memory_order_relaxed);
    m->count = 1;
    return 0;
}

EXPORT int pthread_mutex_lock(pthread_mutex_t *pm)
{
    nlp_mutex_t *m = (nlp_mutex_t *)pm;
    if (NL_LIKELY(atomic_load_explicit(&nlp_fast, memory_order_acquire))) {
        int k = m->kind;
        if (NL_LIKELY(k == PTHREAD_MUTEX_NORMAL || k == PTHREAD_MUTEX_ADAPTIVE_NP)) {
            nlp_g.acquire(m);
            return 0;
        }
    }
    return nlp_mutex_lock_slow(m, __builtin_return_address(0));
}

int __attribute__((noinline)) nlp_mutex_unlock_slow(nlp_mutex_t *m)
{
    nlp_ensure_init();
    if (nlp_mutex_is_glibc(m))
        return nlp_real.mutex_unlock((pthread_mutex_t *)m);
    int type = m->kind & NLP_KIND_TYPE;
    if (type == PTHREAD_MUTEX_NORMAL || type == PTHREAD_MUTEX_ADAPTIVE_NP) {
        nlp_mutex_raw_release(m);
        return 0;
    }
    if (atomic_load_explicit(&m->owner, memory_order_relaxed) != nlp_tid())
        return EPERM;
    if (type == PTHREAD_MUTEX_RECURSIVE && --m->count)
        return 0;
    m->count = 0;
    atomic_store_explicit(&m->owner, 0, memory_order_relaxed);
    nlp_mutex_raw_release(m);
    return 0;
}

EXPORT int pthread_mutex_unlock(pthread_mutex_t *pm)
{
    nlp_mutex_t *m = (nlp_mutex_t *)pm;
    if (NL_LIKELY(atomic_load_explicit(&nlp_fast, memory_order_acquire))) {
        int k = m->kind;
        if (NL_LIKELY(k == PTHREAD_MUTEX_NORMAL || k == PTHREAD_MUTEX_ADAPTIVE_NP)) {
            release_and_wake(m, m);
            return 0;
        }
    }
    return nlp_mutex_unlock_slow(m);
}

int nlp_mutex_trylock_impl(pthread_mutex_t *pm, void *ra)
{
    nlp_ensure_init();
    nlp_mutex_t *m = (nlp_mutex_t *)pm;
    if (nlp_mutex_is_glibc(m))
        return glibc_try(pm, ra);
    int type = m->kind & NLP_KIND_TYPE;
    if (type == PTHREAD_MUTEX_NORMAL || type == PTHREAD_MUTEX_ADAPTIVE_NP)
        return raw_try(m, ra);
    int me = nlp_tid();
    if (atomic_load_explicit(&m->owner, memory_order_relaxed) == me) {
        if (type == PTHREAD_MUTEX_ERRORCHECK)
            return EBUSY;
        if (m->count == UINT32_MAX)
            return EAGAIN;
        m->count++;
        return 0;
    }
    if (raw_try(m, ra))
        return EBUSY;
    atomic_store_explicit(&m->owner, me, memory_order_relaxed);
    m->count = 1;
    return 0;
}

int nlp_mutex_clocklock_impl(pthread_mutex_t *pm, clockid_t clk, const struct timespec *abs, void *ra)
{
    nlp_ensure_init();
    nlp_mutex_t *m = (nlp_mutex_t *)pm;
    if (nlp_bad_clock(clk))
        return EINVAL;
    if (nlp_mutex_is_glibc(m))
        return glibc_timed(pm, clk, abs, ra);
    int type = m->kind & NLP_KIND_TYPE;
    int me = 0;
    if (type == PTHREAD_MUTEX_RECURSIVE || type == PTHREAD_MUTEX_ERRORCHECK) {
        me = nlp_tid();
        if (atomic_load_explicit(&m->owner, memory_order_relaxed) == me) {
            if (type == PTHREAD_MUTEX_ERRORCHECK)
                return EDEADLK;
            if (m->count == UINT32_MAX)
                return EAGAIN;
            m->count++;
            return 0;
        }
    }
    int rc = raw_timed(m, clk, abs, ra);
    if (rc == 0 && me) {
        atomic_store_explicit(&m->owner, me, memory_order_relaxed);
        m->count = 1;
    }
    return rc;
}

int nlp_mutex_trylock(pthread_mutex_t *pm);
int nlp_mutex_timedlock(pthread_mutex_t *pm, const struct timespec *abs);
int nlp_mutex_clocklock(pthread_mutex_t *pm, clockid_t clk, const struct timespec *abs);

EXPORT int nlp_mutex_trylock(pthread_mutex_t *pm) { return nlp_mutex_trylock_impl(pm, __builtin_return_address(0)); }
EXPORT int nlp_mutex_timedlock(pthread_mutex_t *pm, const struct timespec *abs)
{
    return nlp_mutex_clocklock_impl(pm, CLOCK_REALTIME, abs, __builtin_return_address(0));
}
EXPORT int nlp_mutex_clocklock(pthread_mutex_t *pm, clockid_t clk, const struct timespec *abs)
{
    return nlp_mutex_clocklock_impl(pm, clk, abs, __builtin_return_address(0));
}
NLP_TWO_VERSIONS(nlp_mutex_trylock, pthread_mutex_trylock, "GLIBC_2.2.5", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_mutex_timedlock, pthread_mutex_timedlock, "GLIBC_2.2.5", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_mutex_clocklock, pthread_mutex_clocklock, "GLIBC_2.30", "GLIBC_2.34");

/* the double-underscore names glibc also exports at GLIBC_2.2.5 */
EXPORT int __pthread_mutex_init(pthread_mutex_t *pm, const pthread_mutexattr_t *a) { return pthread_mutex_init(pm, a); }
EXPORT int __pthread_mutex_destroy(pthread_mutex_t *pm) { return pthread_mutex_destroy(pm); }
EXPORT int __pthread_mutex_lock(pthread_mutex_t *pm)
{
    return nlp_mutex_lock_slow((nlp_mutex_t *)pm, __builtin_return_address(0));
}
EXPORT int __pthread_mutex_trylock(pthread_mutex_t *pm)
{
    return nlp_mutex_trylock_impl(pm, __builtin_return_address(0));
}
EXPORT int __pthread_mutex_unlock(pthread_mutex_t *pm) { return nlp_mutex_unlock_slow((nlp_mutex_t *)pm); }
