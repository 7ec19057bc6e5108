/*
 * pthread_rwlock_t (56 bytes) on the registered futex-rwlock
 * (src/locks/futex_rwlock.c: one word at offset 0, reader-preferring as
 * glibc's default kind, writer-preferring for the kind
 * PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP at offset 48), or, with
 * NUMALOCK_RWLOCK, on a registered read-write algorithm in a block the rwlock
 * points to (offset 32; its timed waiters, the design of timed.c, count
 * themselves at 4 and sleep on 8). The write holder's tid at 24 (glibc's __cur_writer)
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
    _Atomic uint32_t twait; /* 4: NUMALOCK_RWLOCK: threads in a timed wait */
    _Atomic uint32_t tseq; /*  8: ... and the futex word they sleep on */
    uint32_t pad0[3];      /* 12 */
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


/* futex-rwlock's sleep with a deadline */
static int sleep_until(_Atomic uint32_t *word, uint32_t val, void *ctx)
{
    const nlp_deadline_t *d = ctx;
    return nl_futex_wait_until(word, val, d->abs, d->clk, 0) == ETIMEDOUT ? ETIMEDOUT : 0;
}

static int builtin_wait(nlp_rwlock_t *r, int write, clockid_t clk, const struct timespec *abs)
{
    if (!abs)
        return nl_frw_wait(&r->lock, write, prefers_writers(r), NULL, NULL);
    if (nlp_bad_time(abs))
        return EINVAL;
    nlp_deadline_t d = { clk, abs };
    return nl_frw_wait(&r->lock, write, prefers_writers(r), sleep_until, &d);
}

/* ---- NUMALOCK_RWLOCK: a registered read-write algorithm in a block -------- */
static inline void *rw_alg(nlp_rwlock_t *r)
{
    return nlp_block_get(&r->alg, nlp_g.rw_ops, nlp_g.rw_size, nlp_g.rw_align);
}

static int alg_try(void *l, int write)
{
    return write ? nlp_g.rw_ops->try_acquire(l) : nlp_g.rw_ops->read_try_acquire(l);
}

#define RSLEEP(r) (&(const nlp_sleep_t){ &(r)->twait, &(r)->tseq })

/* acquire with the algorithm: blocking, or the timed-wait design of timed.c
 * (the algorithm has no timed form) */
static int alg_lock(nlp_rwlock_t *r, void *l, int write, clockid_t clk, const struct timespec *abs)
{
    if (!abs) {
        write ? nlp_g.rw_ops->acquire(l) : nlp_g.rw_ops->read_acquire(l);
        return 0;
    }
    return nlp_timed_acquire(RSLEEP(r), alg_try, l, write, clk, abs);
}

/* glibc's rwlocks, counted when stats are on (nlp_profiled_call) */
struct rw_call {
    int write;
    nlp_deadline_t d; /* abs NULL: untimed */
};
static int g_tryrd(void *pr) { return nlp_real.rw_tryrdlock(pr); }
static int g_trywr(void *pr) { return nlp_real.rw_trywrlock(pr); }
static int g_lock(void *pr, const void *ctx)
{
    const struct rw_call *c = ctx;
    if (!c->d.abs)
        return c->write ? nlp_real.rw_wrlock(pr) : nlp_real.rw_rdlock(pr);
    if (c->write)
        return nlp_real.rw_clockwrlock ? nlp_real.rw_clockwrlock(pr, c->d.clk, c->d.abs)
                                       : nlp_real.rw_timedwrlock(pr, c->d.abs);
    return nlp_real.rw_clockrdlock ? nlp_real.rw_clockrdlock(pr, c->d.clk, c->d.abs)
                                   : nlp_real.rw_timedrdlock(pr, c->d.abs);
}

static int glibc_rw_lock(pthread_rwlock_t *pr, int write, int trylock, clockid_t clk, const struct timespec *abs,
                         void *ra)
{
    struct rw_call c = { write, { clk, abs } };
    int (*try_fn)(void *) = write ? g_trywr : g_tryrd;
    if (!nlp_g.stats && !trylock) /* no try first: the profile alone needs it */
        return g_lock(pr, &c);
    return nlp_profiled_call(pr, NLP_OBJ_RWLOCK, !write, ra, try_fn, trylock ? NULL : g_lock, &c);
}

/* the replaced rwlock: the algorithm's or the built-in futex-rwlock's try,
 * then its wait */
static int own_try(nlp_rwlock_t *r, int write)
{
    if (nlp_g.rw_ops)
        return alg_try(rw_alg(r), write) ? EBUSY : 0;
    return nl_frw_try(&r->lock, write, prefers_writers(r));
}
static int own_tryrd(void *r) { return own_try(r, 0); }
static int own_trywr(void *r) { return own_try(r, 1); }
static int own_wait(void *pr, const void *ctx)
{
    const struct rw_call *c = ctx;
    nlp_rwlock_t *r = pr;
    if (nlp_g.rw_ops)
        return alg_lock(r, rw_alg(r), c->write, c->d.clk, c->d.abs);
    return builtin_wait(r, c->write, c->d.clk, c->d.abs);
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
    struct rw_call c = { write, { clk, abs } };
    int (*try_fn)(void *) = write ? own_trywr : own_tryrd;
    int rc = nlp_profiled_call(r, NLP_OBJ_RWLOCK, !write, ra, try_fn, trylock ? NULL : own_wait, &c);
    if (rc)
        return rc;
    if (write)
        atomic_store_explicit(&r->writer, me, memory_order_relaxed);
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
        /* every timed sleeper: readers may all get in */
        nlp_timed_release(RSLEEP(r), write ? nlp_g.rw_ops->release : nlp_g.rw_ops->read_release, rw_alg(r),
                          INT32_MAX);
        return 0;
    }
    if (write) {
        nl_frw_write_unlock(&r->lock);
        return 0;
    }
    return nl_frw_read_unlock(&r->lock); /* EPERM: not held for reading (nor writing) by this thread */
}

NLP_TWO_VERSIONS(nlp_rwlock_init, pthread_rwlock_init, NLP_GLIBC_BASE, "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_destroy, pthread_rwlock_destroy, NLP_GLIBC_BASE, "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_rdlock, pthread_rwlock_rdlock, NLP_GLIBC_BASE, "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_tryrdlock, pthread_rwlock_tryrdlock, NLP_GLIBC_BASE, "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_timedrdlock, pthread_rwlock_timedrdlock, NLP_GLIBC_BASE, "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_clockrdlock, pthread_rwlock_clockrdlock, "GLIBC_2.30", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_wrlock, pthread_rwlock_wrlock, NLP_GLIBC_BASE, "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_trywrlock, pthread_rwlock_trywrlock, NLP_GLIBC_BASE, "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_timedwrlock, pthread_rwlock_timedwrlock, NLP_GLIBC_BASE, "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_clockwrlock, pthread_rwlock_clockwrlock, "GLIBC_2.30", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_unlock, pthread_rwlock_unlock, NLP_GLIBC_BASE, "GLIBC_2.34");

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
