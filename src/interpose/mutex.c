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

#define MSLEEP(m) (&(const nlp_sleep_t){ &(m)->twait, &(m)->tseq })

/* Release, waking a timedlock sleeper if there is one (nlp_timed_release). */
static inline void release_and_wake(nlp_mutex_t *m, void *l) { nlp_timed_release(MSLEEP(m), nlp_g.release, l, 1); }

void nlp_mutex_raw_acquire(nlp_mutex_t *m, void *ra)
{
    void *l = mstore(m);
    if (NL_LIKELY(!nlp_g.stats))
        nlp_g.acquire(l);
    else
        nlp_profiled_acquire(m, NLP_OBJ_MUTEX, ra, nlp_g.acquire, l);
}

static int mutex_try_busy(void *m) { return nlp_g.try_acquire(mstore(m)) ? EBUSY : 0; }

static inline int raw_try(nlp_mutex_t *m, void *ra)
{
    return nlp_profiled_call(m, NLP_OBJ_MUTEX, 0, ra, mutex_try_busy, NULL, NULL);
}

void nlp_mutex_raw_release(nlp_mutex_t *m) { release_and_wake(m, mstore(m)); }

static int mutex_try(void *l, int unused)
{
    (void)unused;
    return nlp_g.try_acquire(l);
}

/* acquire with a deadline (the timed-wait design of timed.c) */
static int timed_wait(void *m, const void *ctx)
{
    const nlp_deadline_t *d = ctx;
    return nlp_timed_acquire(MSLEEP((nlp_mutex_t *)m), mutex_try, mstore(m), 0, d->clk, d->abs);
}

static int raw_timed(nlp_mutex_t *m, clockid_t clk, const struct timespec *abs, void *ra)
{
    nlp_deadline_t d = { clk, abs };
    return nlp_profiled_call(m, NLP_OBJ_MUTEX, 0, ra, mutex_try_busy, timed_wait, &d);
}

/* A recursive or errorcheck mutex locked again by its holder (`me`): the
 * result (0 after counting one more level; `again` for errorcheck: EDEADLK
 * to lock, EBUSY to try; EAGAIN at the count's limit), or -1 when the
 * caller does not hold it. */
static inline int relock(nlp_mutex_t *m, int type, int me, int again)
{
    if (atomic_load_explicit(&m->owner, memory_order_relaxed) != me)
        return -1;
    if (type == PTHREAD_MUTEX_ERRORCHECK)
        return again;
    if (m->count == UINT32_MAX)
        return EAGAIN;
    m->count++;
    return 0;
}

/* the holder of a recursive or errorcheck mutex, first level */
static inline void owned(nlp_mutex_t *m, int me)
{
    atomic_store_explicit(&m->owner, me, memory_order_relaxed);
    m->count = 1;
}

static inline int is_plain(int type) { return type == PTHREAD_MUTEX_NORMAL || type == PTHREAD_MUTEX_ADAPTIVE_NP; }

/* glibc-owned mutexes (and every mutex in glibc mode), counted when stats
 * are on (nlp_profiled_call: glibc's lock cannot say whether it waited) */
static int g_try(void *pm) { return nlp_real.mutex_trylock(pm); }
static int g_lock(void *pm, const void *ctx)
{
    (void)ctx;
    return nlp_real.mutex_lock(pm);
}
static int g_timed(void *pm, const void *ctx)
{
    const nlp_deadline_t *d = ctx;
    return nlp_real.mutex_clocklock ? nlp_real.mutex_clocklock(pm, d->clk, d->abs)
           : d->clk == CLOCK_REALTIME ? nlp_real.mutex_timedlock(pm, d->abs)
                                      : EINVAL;
}

int nlp_mutex_glibc_lock(pthread_mutex_t *pm, void *ra)
{
    if (!nlp_g.stats)
        return nlp_real.mutex_lock(pm);
    return nlp_profiled_call(pm, NLP_OBJ_MUTEX, 0, ra, g_try, g_lock, NULL);
}

static int glibc_try(pthread_mutex_t *pm, void *ra)
{
    return nlp_profiled_call(pm, NLP_OBJ_MUTEX, 0, ra, g_try, NULL, NULL);
}

static int glibc_timed(pthread_mutex_t *pm, clockid_t clk, const struct timespec *abs, void *ra)
{
    nlp_deadline_t d = { clk, abs };
    if (!nlp_g.stats)
        return g_timed(pm, &d);
    return nlp_profiled_call(pm, NLP_OBJ_MUTEX, 0, ra, g_try, g_timed, &d);
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
    if (is_plain(type)) {
        nlp_mutex_raw_acquire(m, ra);
        return 0;
    }
    int me = nlp_tid(), rc = relock(m, type, me, EDEADLK);
    if (rc >= 0)
        return rc;
    nlp_mutex_raw_acquire(m, ra);
    owned(m, me);
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
    if (is_plain(type)) {
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
    if (is_plain(type))
        return raw_try(m, ra);
    int me = nlp_tid(), rc = relock(m, type, me, EBUSY);
    if (rc >= 0)
        return rc;
    if (raw_try(m, ra))
        return EBUSY;
    owned(m, me);
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
    if (is_plain(type))
        return raw_timed(m, clk, abs, ra);
    int me = nlp_tid(), rc = relock(m, type, me, EDEADLK);
    if (rc >= 0)
        return rc;
    rc = raw_timed(m, clk, abs, ra);
    if (rc == 0)
        owned(m, me);
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
NLP_TWO_VERSIONS(nlp_mutex_trylock, pthread_mutex_trylock, NLP_GLIBC_BASE, "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_mutex_timedlock, pthread_mutex_timedlock, NLP_GLIBC_BASE, "GLIBC_2.34");
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
