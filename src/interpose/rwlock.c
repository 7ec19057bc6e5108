/*
 * pthread_rwlock_t (56 bytes) on the registered futex-rwlock
 * (src/locks/futex_rwlock.c: one word at offset 0, reader-preferring as
 * glibc's default kind, writer-preferring for the kind
 * PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP at offset 48), or, with
 * NUMALOCK_RWLOCK, on a registered read-write algorithm in a block the rwlock
 * points to (offset 32). The write holder's tid at 24 (glibc's __cur_writer)
 * tells a write unlock from a read unlock and gives EDEADLK. Process-shared
 * rwlocks (glibc's __shared at offset 28) stay glibc's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "../locks/futex_rwlock.h"
#include "preload.h"

typedef struct nlp_rwlock {
    nl_frw_t lock;         /*  0: the futex-rwlock word */
    uint32_t pad0[5];      /*  4 */
    _Atomic int writer;    /* 24: tid of the write holder (glibc's __cur_writer) */
    int shared;            /* 28: glibc's __shared: non-zero leaves the lock to glibc */
    _Atomic(void *) alg;   /* 32: NUMALOCK_RWLOCK's lock, allocated at first use */
    unsigned char pad1[8]; /* 40 */
    uint32_t flags;        /* 48: glibc's __flags (kind) */
    uint32_t pad2;         /* 52 */
} nlp_rwlock_t;
_Static_assert(sizeof(nlp_rwlock_t) == sizeof(pthread_rwlock_t), "rwlock layout");
_Static_assert(offsetof(nlp_rwlock_t, shared) == offsetof(pthread_rwlock_t, __data.__shared), "shared");
_Static_assert(offsetof(nlp_rwlock_t, flags) == offsetof(pthread_rwlock_t, __data.__flags), "flags");

/* PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP: new readers wait for waiting
 * writers (the program promises no recursive read locks) */
static inline int prefers_writers(const nlp_rwlock_t *r)
{
    return r->flags == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP;
}

static inline int rw_is_glibc(const nlp_rwlock_t *r) { return nlp_g.mode == NLP_MODE_GLIBC || r->shared; }

struct deadline {
    clockid_t clk;
    const struct timespec *abs;
};

/* futex-rwlock's sleep with a deadline */
static int sleep_until(_Atomic uint32_t *word, uint32_t val, void *ctx)
{
    const struct deadline *d = ctx;
    return nl_futex_wait_until(word, val, d->abs, d->clk, 0) == ETIMEDOUT ? ETIMEDOUT : 0;
}

static int builtin_wait(nlp_rwlock_t *r, int write, clockid_t clk, const struct timespec *abs)
{
    if (!abs)
        return nl_frw_wait(&r->lock, write, prefers_writers(r), NULL, NULL);
    if (nlp_bad_time(abs))
        return EINVAL;
    struct deadline d = { clk, abs };
    return nl_frw_wait(&r->lock, write, prefers_writers(r), sleep_until, &d);
}

/* ---- NUMALOCK_RWLOCK: a registered read-write algorithm in a block -------- */
static inline void *rw_alg(nlp_rwlock_t *r)
{
    return nlp_block_get(&r->alg, nlp_g.rw_ops, nlp_g.rw_size, nlp_g.rw_align);
}

static inline int alg_try(void *l, int write)
{
    return write ? nlp_g.rw_ops->try_acquire(l) : nlp_g.rw_ops->read_try_acquire(l);
}

/* acquire with the algorithm: blocking, or polling with sleeps of at most
 * 1 ms until the deadline (the algorithm has no timed form) */
static int alg_lock(void *l, int write, clockid_t clk, const struct timespec *abs)
{
    if (!abs) {
        write ? nlp_g.rw_ops->acquire(l) : nlp_g.rw_ops->read_acquire(l);
        return 0;
    }
    if (nlp_bad_time(abs))
        return EINVAL;
    long ns = 1000;
    for (;;) {
        if (alg_try(l, write) == 0)
            return 0;
        int expired;
        struct timespec t = nlp_until_at_most(clk, abs, ns, &expired);
        if (expired)
            return alg_try(l, write) == 0 ? 0 : ETIMEDOUT;
        clock_nanosleep(clk, TIMER_ABSTIME, &t, NULL);
        if (ns < 1000000)
            ns *= 2;
    }
}

static int glibc_rw_lock(pthread_rwlock_t *pr, int write, int trylock, clockid_t clk, const struct timespec *abs,
                         void *ra)
{
    int (*try_fn)(pthread_rwlock_t *) = write ? nlp_real.rw_trywrlock : nlp_real.rw_tryrdlock;
    int rc = try_fn(pr);
    if (rc != EBUSY || trylock) {
        if (rc == 0 && nlp_g.stats) {
            nlp_stat_t *s = nlp_profile_get(pr, NLP_OBJ_RWLOCK, ra);
            write ? nlp_profile_write(s, 0, 0) : nlp_profile_read(s, 0, 0);
        }
        return rc;
    }
    uint64_t t0 = nlp_g.stats ? nl_clock_ns() : 0;
    if (!abs)
        rc = write ? nlp_real.rw_wrlock(pr) : nlp_real.rw_rdlock(pr);
    else if (write)
        rc = nlp_real.rw_clockwrlock ? nlp_real.rw_clockwrlock(pr, clk, abs) : nlp_real.rw_timedwrlock(pr, abs);
    else
        rc = nlp_real.rw_clockrdlock ? nlp_real.rw_clockrdlock(pr, clk, abs) : nlp_real.rw_timedrdlock(pr, abs);
    if (rc == 0 && nlp_g.stats) {
        nlp_stat_t *s = nlp_profile_get(pr, NLP_OBJ_RWLOCK, ra);
        write ? nlp_profile_write(s, 1, nl_clock_ns() - t0) : nlp_profile_read(s, 1, nl_clock_ns() - t0);
    }
    return rc;
}

static int rw_lock_impl(pthread_rwlock_t *pr, int write, int trylock, clockid_t clk, const struct timespec *abs,
                        void *ra)
{
    nlp_ensure_init();
    nlp_rwlock_t *r = (nlp_rwlock_t *)pr;
    if (abs && nlp_bad_clock(clk))
        return EINVAL;
    if (rw_is_glibc(r))
        return glibc_rw_lock(pr, write, trylock, clk, abs, ra);
    int me = nlp_tid();
    if (atomic_load_explicit(&r->writer, memory_order_relaxed) == me)
        return trylock ? EBUSY : EDEADLK;
    void *alg = nlp_g.rw_ops ? rw_alg(r) : NULL;
    int rc = alg ? (alg_try(alg, write) ? EBUSY : 0) : nl_frw_try(&r->lock, write, prefers_writers(r));
    int contended = 0;
    uint64_t t0 = 0;
    if (rc == EBUSY && !trylock) {
        contended = 1;
        if (nlp_g.stats)
            t0 = nl_clock_ns();
        rc = alg ? alg_lock(alg, write, clk, abs) : builtin_wait(r, write, clk, abs);
    }
    if (rc)
        return rc;
    if (write)
        atomic_store_explicit(&r->writer, me, memory_order_relaxed);
    if (nlp_g.stats) {
        nlp_stat_t *s = nlp_profile_get(pr, NLP_OBJ_RWLOCK, ra);
        uint64_t dt = contended ? nl_clock_ns() - t0 : 0;
        write ? nlp_profile_write(s, contended, dt) : nlp_profile_read(s, contended, dt);
    }
    return 0;
}

EXPORT int nlp_rwlock_init(pthread_rwlock_t *pr, const pthread_rwlockattr_t *attr)
{
    nlp_ensure_init();
    int ps = PTHREAD_PROCESS_PRIVATE;
    if (attr)
        pthread_rwlockattr_getpshared(attr, &ps);
    if (nlp_g.mode == NLP_MODE_GLIBC || ps != PTHREAD_PROCESS_PRIVATE)
        return nlp_real.rw_init(pr, attr);
    nlp_rwlock_t *r = (nlp_rwlock_t *)pr;
    memset(r, 0, sizeof *r);
    if (attr) {
        int kind = 0;
        pthread_rwlockattr_getkind_np(attr, &kind);
        r->flags = (uint32_t)kind;
    }
    return 0;
}

EXPORT int nlp_rwlock_destroy(pthread_rwlock_t *pr)
{
    nlp_ensure_init();
    nlp_rwlock_t *r = (nlp_rwlock_t *)pr;
    if (rw_is_glibc(r))
        return nlp_real.rw_destroy(pr);
    void *p = atomic_exchange(&r->alg, NULL);
    if (p) {
        if (nlp_g.rw_ops && nlp_g.rw_ops->destroy)
            nlp_g.rw_ops->destroy(p);
        free(p);
    }
    return 0;
}

EXPORT int nlp_rwlock_rdlock(pthread_rwlock_t *pr)
{
    return rw_lock_impl(pr, 0, 0, CLOCK_REALTIME, NULL, __builtin_return_address(0));
}
EXPORT int nlp_rwlock_tryrdlock(pthread_rwlock_t *pr)
{
    return rw_lock_impl(pr, 0, 1, CLOCK_REALTIME, NULL, __builtin_return_address(0));
}
EXPORT int nlp_rwlock_timedrdlock(pthread_rwlock_t *pr, const struct timespec *abs)
{
    return rw_lock_impl(pr, 0, 0, CLOCK_REALTIME, abs, __builtin_return_address(0));
}
EXPORT int nlp_rwlock_clockrdlock(pthread_rwlock_t *pr, clockid_t clk, const struct timespec *abs)
{
    return rw_lock_impl(pr, 0, 0, clk, abs, __builtin_return_address(0));
}
EXPORT int nlp_rwlock_wrlock(pthread_rwlock_t *pr)
{
    return rw_lock_impl(pr, 1, 0, CLOCK_REALTIME, NULL, __builtin_return_address(0));
}
EXPORT int nlp_rwlock_trywrlock(pthread_rwlock_t *pr)
{
    return rw_lock_impl(pr, 1, 1, CLOCK_REALTIME, NULL, __builtin_return_address(0));
}
EXPORT int nlp_rwlock_timedwrlock(pthread_rwlock_t *pr, const struct timespec *abs)
{
    return rw_lock_impl(pr, 1, 0, CLOCK_REALTIME, abs, __builtin_return_address(0));
}
EXPORT int nlp_rwlock_clockwrlock(pthread_rwlock_t *pr, clockid_t clk, const struct timespec *abs)
{
    return rw_lock_impl(pr, 1, 0, clk, abs, __builtin_return_address(0));
}

EXPORT int nlp_rwlock_unlock(pthread_rwlock_t *pr)
{
    nlp_ensure_init();
    nlp_rwlock_t *r = (nlp_rwlock_t *)pr;
    if (rw_is_glibc(r))
        return nlp_real.rw_unlock(pr);
    int write = atomic_load_explicit(&r->writer, memory_order_relaxed) == nlp_tid();
    if (write)
        atomic_store_explicit(&r->writer, 0, memory_order_relaxed);
    if (nlp_g.rw_ops) {
        void *alg = rw_alg(r);
        write ? nlp_g.rw_ops->release(alg) : nlp_g.rw_ops->read_release(alg);
        return 0;
    }
    if (write) {
        nl_frw_write_unlock(&r->lock);
        return 0;
    }
    return nl_frw_read_unlock(&r->lock); /* EPERM: not held for reading (nor writing) by this thread */
}

NLP_TWO_VERSIONS(nlp_rwlock_init, pthread_rwlock_init, "GLIBC_2.2.5", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_destroy, pthread_rwlock_destroy, "GLIBC_2.2.5", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_rdlock, pthread_rwlock_rdlock, "GLIBC_2.2.5", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_tryrdlock, pthread_rwlock_tryrdlock, "GLIBC_2.2.5", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_timedrdlock, pthread_rwlock_timedrdlock, "GLIBC_2.2.5", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_clockrdlock, pthread_rwlock_clockrdlock, "GLIBC_2.30", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_wrlock, pthread_rwlock_wrlock, "GLIBC_2.2.5", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_trywrlock, pthread_rwlock_trywrlock, "GLIBC_2.2.5", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_timedwrlock, pthread_rwlock_timedwrlock, "GLIBC_2.2.5", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_clockwrlock, pthread_rwlock_clockwrlock, "GLIBC_2.30", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_unlock, pthread_rwlock_unlock, "GLIBC_2.2.5", "GLIBC_2.34");

/* glibc's own double-underscore rwlock names (GLIBC_2.2.5) */
EXPORT int __pthread_rwlock_init(pthread_rwlock_t *pr, const pthread_rwlockattr_t *a)
{
    return nlp_rwlock_init(pr, a);
}
EXPORT int __pthread_rwlock_destroy(pthread_rwlock_t *pr) { return nlp_rwlock_destroy(pr); }
EXPORT int __pthread_rwlock_rdlock(pthread_rwlock_t *pr)
{
    return rw_lock_impl(pr, 0, 0, CLOCK_REALTIME, NULL, __builtin_return_address(0));
}
EXPORT int __pthread_rwlock_tryrdlock(pthread_rwlock_t *pr)
{
    return rw_lock_impl(pr, 0, 1, CLOCK_REALTIME, NULL, __builtin_return_address(0));
}
EXPORT int __pthread_rwlock_wrlock(pthread_rwlock_t *pr)
{
    return rw_lock_impl(pr, 1, 0, CLOCK_REALTIME, NULL, __builtin_return_address(0));
}
EXPORT int __pthread_rwlock_trywrlock(pthread_rwlock_t *pr)
{
    return rw_lock_impl(pr, 1, 1, CLOCK_REALTIME, NULL, __builtin_return_address(0));
}
EXPORT int __pthread_rwlock_unlock(pthread_rwlock_t *pr) { return nlp_rwlock_unlock(pr); }
