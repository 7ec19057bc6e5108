/*
 * pthread_cond_t (48 bytes): a futex sequence word and a waiter count.
 * A waiter reads the sequence while it still holds the mutex, releases the
 * mutex, sleeps on the sequence word, then re-acquires the mutex; signal and
 * broadcast bump the sequence and wake one or all sleepers. Works with every
 * mutex, glibc-owned ones included (their own unlock/lock are called).
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include "preload.h"

typedef struct nlp_cond {
    _Atomic uint32_t seq;     /*  0: bumped by signal/broadcast; the futex word */
    _Atomic uint32_t waiters; /*  4: threads between registering and re-locking */
    uint32_t pad[7];          /*  8 */
    uint32_t flags;           /* 36: COND_SHARED, COND_MONOTONIC */
    uint32_t pad2[2];         /* 40 */
} nlp_cond_t;
_Static_assert(sizeof(nlp_cond_t) == sizeof(pthread_cond_t), "cond layout");
#define COND_SHARED 1u
#define COND_MONOTONIC 2u

EXPORT int pthread_cond_init(pthread_cond_t *pc, const pthread_condattr_t *attr)
{
    nlp_ensure_init();
    if (nlp_g.mode == NLP_MODE_GLIBC)
        return nlp_real.cond_init(pc, attr);
    nlp_cond_t *c = (nlp_cond_t *)pc;
    memset(c, 0, sizeof *c);
    if (attr) {
        int ps = PTHREAD_PROCESS_PRIVATE;
        clockid_t clk = CLOCK_REALTIME;
        pthread_condattr_getpshared(attr, &ps);
        pthread_condattr_getclock(attr, &clk);
        if (ps != PTHREAD_PROCESS_PRIVATE)
            c->flags |= COND_SHARED;
        if (clk == CLOCK_MONOTONIC)
            c->flags |= COND_MONOTONIC;
    }
    return 0;
}

EXPORT int pthread_cond_destroy(pthread_cond_t *pc)
{
    nlp_ensure_init();
    if (nlp_g.mode == NLP_MODE_GLIBC)
        return nlp_real.cond_destroy(pc);
    /* woken waiters may still be on their way out: let them leave first
     * (bounded: destroying a condition with blocked waiters is undefined) */
    nlp_cond_t *c = (nlp_cond_t *)pc;
    for (int i = 0; i < 100000 && atomic_load(&c->waiters); i++)
        sched_yield();
    return 0;
}

struct cond_cancel {
    nlp_cond_t *c;
    nlp_mutex_t *m;
    void *ra;
    int owned, me;
    uint32_t depth;
    int glibc_m;
    uint32_t seq;
    int shared;
    clockid_t clk;
    const struct timespec *abs;
    int rc;
};

static void wake(nlp_cond_t *c, int n);

static void cond_cancelled(void *p)
{
    struct cond_cancel *cc = p;
    /* a signal may have woken us (the sequence moved): a cancelled waiter
     * must not take it away from the others (POSIX), so one more is woken
     * (a spurious wake-up at worst) */
    if (atomic_load(&cc->c->seq) != cc->seq && atomic_load(&cc->c->waiters) > 1)
        wake(cc->c, 1);
    atomic_fetch_sub(&cc->c->waiters, 1);
    if (cc->glibc_m) {
        nlp_mutex_glibc_lock((pthread_mutex_t *)cc->m, cc->ra);
        return;
    }
    nlp_mutex_raw_acquire(cc->m, cc->ra);
    if (cc->owned) {
        atomic_store_explicit(&cc->m->owner, cc->me, memory_order_relaxed);
        cc->m->count = cc->depth;
    }
}

/* The sleep runs with asynchronous cancellation on (as glibc's own futex
 * waits do); a cancelled waiter passes on a signal it may have been woken
 * by, leaves the count and re-acquires the mutex (cond_cancelled) before the
 * program's cleanup handlers run. */
static void __attribute__((noinline)) cond_sleep(struct cond_cancel *cc)
{
    int oldtype;
    pthread_cleanup_push(cond_cancelled, cc);
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &oldtype);
    do {
        cc->rc = nl_futex_wait_until(&cc->c->seq, cc->seq, cc->abs, cc->clk, cc->shared);
    } while (cc->rc == EINTR && atomic_load(&cc->c->seq) == cc->seq);
    pthread_setcanceltype(oldtype, NULL);
    pthread_cleanup_pop(0);
}

int nlp_cond_wait_impl(pthread_cond_t *pc, pthread_mutex_t *pm, clockid_t clk, const struct timespec *abs, void *ra)
{
    nlp_cond_t *c = (nlp_cond_t *)pc;
    nlp_mutex_t *m = (nlp_mutex_t *)pm;
    if (abs && nlp_bad_time(abs))
        return EINVAL;
    int glibc_m = (m->kind & NLP_KIND_GLIBC) != 0;
    int type = m->kind & NLP_KIND_TYPE;
    int owned = !glibc_m && (type == PTHREAD_MUTEX_RECURSIVE || type == PTHREAD_MUTEX_ERRORCHECK);
    int me = 0;
    uint32_t depth = 0;
    if (owned) {
        me = nlp_tid();
        if (atomic_load_explicit(&m->owner, memory_order_relaxed) != me)
            return EPERM;
    }
    int shared = (c->flags & COND_SHARED) != 0;
    atomic_fetch_add(&c->waiters, 1);
    uint32_t seq = atomic_load(&c->seq);
    if (glibc_m) {
        int rc = nlp_real.mutex_unlock(pm);
        if (rc) {
            atomic_fetch_sub(&c->waiters, 1);
            return rc;
        }
    } else {
        if (owned) {
            depth = m->count; /* a recursive mutex is released whole while waiting */
            m->count = 0;
            atomic_store_explicit(&m->owner, 0, memory_order_relaxed);
        }
        nlp_mutex_raw_release(m);
    }
    /* pthread_cond_wait is a cancellation point: see cond_sleep */
    struct cond_cancel cc = { c, m, ra, owned, me, depth, glibc_m, seq, shared, clk, abs, 0 };
    cond_sleep(&cc);
    int rc = cc.rc;
    atomic_fetch_sub(&c->waiters, 1);
    if (glibc_m) {
        int r2 = nlp_mutex_glibc_lock(pm, ra);
        if (r2)
            return r2;
    } else {
        nlp_mutex_raw_acquire(m, ra);
        if (owned) {
            atomic_store_explicit(&m->owner, me, memory_order_relaxed);
            m->count = depth;
        }
    }
    return rc == ETIMEDOUT ? ETIMEDOUT : 0;
}

EXPORT int pthread_cond_wait(pthread_cond_t *pc, pthread_mutex_t *pm)
{
    nlp_ensure_init();
    if (nlp_g.mode == NLP_MODE_GLIBC)
        return nlp_real.cond_wait(pc, pm);
    return nlp_cond_wait_impl(pc, pm, CLOCK_REALTIME, NULL, __builtin_return_address(0));
}

EXPORT int pthread_cond_timedwait(pthread_cond_t *pc, pthread_mutex_t *pm, const struct timespec *abs)
{
    nlp_ensure_init();
    if (nlp_g.mode == NLP_MODE_GLIBC)
        return nlp_real.cond_timedwait(pc, pm, abs);
    clockid_t clk = (((nlp_cond_t *)pc)->flags & COND_MONOTONIC) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
    return nlp_cond_wait_impl(pc, pm, clk, abs, __builtin_return_address(0));
}

int nlp_cond_clockwait(pthread_cond_t *pc, pthread_mutex_t *pm, clockid_t clk, const struct timespec *abs);
EXPORT int nlp_cond_clockwait(pthread_cond_t *pc, pthread_mutex_t *pm, clockid_t clk, const struct timespec *abs)
{
    nlp_ensure_init();
    if (nlp_g.mode == NLP_MODE_GLIBC)
        return nlp_real.cond_clockwait(pc, pm, clk, abs);
    if (nlp_bad_clock(clk))
        return EINVAL;
    return nlp_cond_wait_impl(pc, pm, clk, abs, __builtin_return_address(0));
}
NLP_TWO_VERSIONS(nlp_cond_clockwait, pthread_cond_clockwait, "GLIBC_2.30", "GLIBC_2.34");

static void wake(nlp_cond_t *c, int n)
{
    if (c->flags & COND_SHARED)
        nl_futex_wake_shared(&c->seq, n);
    else
        nl_futex_wake(&c->seq, n);
}

EXPORT int pthread_cond_signal(pthread_cond_t *pc)
{
    nlp_ensure_init();
    if (nlp_g.mode == NLP_MODE_GLIBC)
        return nlp_real.cond_signal(pc);
    nlp_cond_t *c = (nlp_cond_t *)pc;
    if (atomic_load(&c->waiters) == 0)
        return 0;
    atomic_fetch_add(&c->seq, 1);
    wake(c, 1);
    return 0;
}

EXPORT int pthread_cond_broadcast(pthread_cond_t *pc)
{
    nlp_ensure_init();
    if (nlp_g.mode == NLP_MODE_GLIBC)
        return nlp_real.cond_broadcast(pc);
    nlp_cond_t *c = (nlp_cond_t *)pc;
    if (atomic_load(&c->waiters) == 0)
        return 0;
    atomic_fetch_add(&c->seq, 1);
    wake(c, INT_MAX);
    return 0;
}
