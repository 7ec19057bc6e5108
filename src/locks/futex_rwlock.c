/*
 * futex-rwlock: the read-write lock of the preload library's pthread_rwlock_t,
 * in one word that is also the futex word (see futex_rwlock.h).
 *
 * Word: writer bit, sleeper bit, an 8-bit count of waiting writers (kept only
 * when writers are preferred), a 22-bit reader count.
 *  - Readers enter while no writer holds the lock (and, when writers are
 *    preferred, none waits); writers enter when there is neither a writer nor
 *    a reader. Reader-preferring by default, as glibc's default kind: a
 *    continuous stream of readers can starve a writer, and a reader may
 *    re-enter while a writer waits (programs rely on recursive read locks).
 *  - A waiter spins, yields a little, then sets the sleeper bit and sleeps on
 *    the word. The releasing atomic step (last reader out, or the writer out)
 *    clears the bit and only then wakes every sleeper, so nothing of the lock
 *    is written after its release (POSIX lets the next holder free it).
 *  - A preferred writer counts itself among the waiting writers before it
 *    waits and leaves the count in the same atomic step that takes the lock;
 *    one that gives up (timeout) leaves the count and wakes the readers it
 *    held back.
 * Any thread may release (a counter, no owner), so it is ANY_UNLOCK.
 * Orders: the compare-exchange that takes the lock acquires and the one that
 * leaves it releases (verify/wmm/futex_rwlock.c shows each needed); the rest
 * is relaxed: the sleeper bit and the wake-up carry no data. Each
 * compare-exchange loop loads the word afresh at every try: the model
 * checker reads such a loop as waiting for the word to change, and checks
 * that it ends (a retry that reuses the value a failed compare-exchange
 * read it takes for a wait on a word that never changes).
 */
#include <errno.h>
#include <limits.h>
#include "futex_rwlock.h"

/* Tries (each a step of the waiter) before a waiter sleeps on the word. The
 * model checker's build (verify/wmm/futex_rwlock.c) sets 0 or 2: every try
 * is a branch of its search, and the sleep is where the wake-up protocol
 * lives. */
#ifndef NL_FRW_TRIES
#define NL_FRW_TRIES 128
#endif

int nl_frw_try(nl_frw_t *l, int write, int prefer_writers)
{
    for (;;) {
        uint32_t s = atomic_load_explicit(&l->state, memory_order_relaxed), n;
        if (write) {
            if (s & (FRW_WRITER | FRW_READERS))
                return EBUSY;
            n = s | FRW_WRITER;
        } else {
            if ((s & FRW_WRITER) || ((s & FRW_WWAIT) && prefer_writers))
                return EBUSY;
            if ((s & FRW_READERS) == FRW_READERS)
                return EAGAIN;
            n = s + 1;
        }
        if (atomic_compare_exchange_weak_explicit(&l->state, &s, n, memory_order_acquire, memory_order_relaxed))
            return 0;
    }
}

/* as nl_frw_try; `registered`: the caller is counted among the waiting
 * writers, and taking the lock takes it out of the count in the same step */
static inline int try_reg(nl_frw_t *l, int write, int prefer_writers, int registered)
{
    if (!registered)
        return nl_frw_try(l, write, prefer_writers);
    for (;;) {
        uint32_t s = atomic_load_explicit(&l->state, memory_order_relaxed);
        if (s & (FRW_WRITER | FRW_READERS))
            return EBUSY;
        if (atomic_compare_exchange_weak_explicit(&l->state, &s, (s | FRW_WRITER) - FRW_WWAIT_ONE,
                                                  memory_order_acquire, memory_order_relaxed))
            return 0;
    }
}

/* a counted writer leaves without the lock: readers it held back may go */
static void unregister(nl_frw_t *l)
{
    uint32_t s;
    do
        s = atomic_load_explicit(&l->state, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&l->state, &s, (s - FRW_WWAIT_ONE) & ~FRW_SLEEPERS,
                                                  memory_order_relaxed, memory_order_relaxed));
    if (s & FRW_SLEEPERS)
        nl_wait_wake(&l->state, INT_MAX);
}

/* Wait for the lock (try_reg succeeds): a few steps, then sleep on the word
 * with the caller's sleep (a deadline) or untimed. */
static int frw_wait(nl_frw_t *l, int write, int prefer_writers, nl_frw_sleep_fn sleep, void *ctx,
                    int reg, nl_waiter_t *w)
{
    int rc;
    for (int i = 0; i < NL_FRW_TRIES; i++) {
        if ((rc = try_reg(l, write, prefer_writers, reg)) != EBUSY)
            return rc;
        nl_wait_step(w);
    }
    for (;;) {
        if ((rc = try_reg(l, write, prefer_writers, reg)) != EBUSY)
            return rc;
        uint32_t s = atomic_load_explicit(&l->state, memory_order_relaxed);
        int busy = write ? (s & (FRW_WRITER | FRW_READERS)) != 0
                         : (s & FRW_WRITER) || ((s & FRW_WWAIT) && prefer_writers);
        if (!busy)
            continue;
        if (!(s & FRW_SLEEPERS) &&
            !atomic_compare_exchange_strong_explicit(&l->state, &s, s | FRW_SLEEPERS, memory_order_relaxed,
                                                     memory_order_relaxed))
            continue;
        if (!sleep) {
            nl_wait_park(w, &l->state, s | FRW_SLEEPERS);
            continue;
        }
        nl_wait_note_park(w);
        if (sleep(&l->state, s | FRW_SLEEPERS, ctx) == ETIMEDOUT) {
            if (try_reg(l, write, prefer_writers, reg) == 0)
                return 0;
            if (reg)
                unregister(l);
            return ETIMEDOUT;
        }
    }
}

int nl_frw_wait(nl_frw_t *l, int write, int prefer_writers, nl_frw_sleep_fn sleep, void *ctx)
{
    int reg = 0;
    if (write && prefer_writers) { /* count this writer: new readers hold back */
        for (;;) {
            uint32_t s = atomic_load_explicit(&l->state, memory_order_relaxed);
            if ((s & FRW_WWAIT) == FRW_WWAIT)
                break;
            if (atomic_compare_exchange_weak_explicit(&l->state, &s, s + FRW_WWAIT_ONE, memory_order_relaxed,
                                                      memory_order_relaxed)) {
                reg = 1;
                break;
            }
        }
    }
    nl_waiter_t w;
    nl_wait_begin(&w, l, NULL, false); /* readers share it: no gate */
    int rc = frw_wait(l, write, prefer_writers, sleep, ctx, reg, &w);
    nl_wait_end(&w);
    return rc;
}

void nl_frw_write_unlock(nl_frw_t *l)
{
    /* clear the writer and sleeper bits in one step; keep waiting writers */
    uint32_t s;
    do
        s = atomic_load_explicit(&l->state, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&l->state, &s, s & FRW_WWAIT, memory_order_release,
                                                  memory_order_relaxed));
    if (s & FRW_SLEEPERS)
        nl_wait_wake(&l->state, INT_MAX);
}

int nl_frw_read_unlock(nl_frw_t *l)
{
    uint32_t s;
    for (;;) {
        s = atomic_load_explicit(&l->state, memory_order_relaxed);
        if ((s & FRW_WRITER) || !(s & FRW_READERS))
            return EPERM;
        /* the last reader out clears the sleeper bit; others leave it to it */
        uint32_t n = (s & FRW_READERS) == 1 ? (s & FRW_WWAIT) : s - 1;
        if (atomic_compare_exchange_weak_explicit(&l->state, &s, n, memory_order_release, memory_order_relaxed))
            break;
    }
    if ((s & FRW_READERS) == 1 && (s & FRW_SLEEPERS))
        nl_wait_wake(&l->state, INT_MAX);
    return 0;
}

/* ---- registry entry: the reader-preferring form, untimed ---------------- */
static void op_acquire(void *l)
{
    if (nl_frw_try(l, 1, 0))
        nl_frw_wait(l, 1, 0, NULL, NULL);
}
static int op_try(void *l) { return nl_frw_try(l, 1, 0) ? EBUSY : 0; }
static void op_release(void *l) { nl_frw_write_unlock(l); }
static void op_read_acquire(void *l)
{
    /* EAGAIN (2^22 - 1 readers inside) cannot happen with NL_MAX_THREADS threads */
    if (nl_frw_try(l, 0, 0))
        nl_frw_wait(l, 0, 0, NULL, NULL);
}
static int op_read_try(void *l) { return nl_frw_try(l, 0, 0) ? EBUSY : 0; }
static void op_read_release(void *l) { nl_frw_read_unlock(l); }
static int op_held(const void *l) { return nl_frw_held(l); }

NL_HIDDEN const nl_lock_ops_t nl_ops_futex_rwlock = {
    .name = "futex-rwlock",
    .description = "reader-preferring read-write lock in one futex word (the preload's pthread rwlock)",
    .paper = "- (futex rwlock in the style of glibc's default kind)",
    .size = sizeof(nl_frw_t), .align = 4,
    .props = NL_PROP_BLOCKING | NL_PROP_ZERO_INIT | NL_PROP_ANY_UNLOCK | NL_PROP_RW | NL_PROP_FREE_RELEASE,
    .acquire = op_acquire, .try_acquire = op_try, .release = op_release,
    .read_acquire = op_read_acquire, .read_try_acquire = op_read_try, .read_release = op_read_release,
    .held = op_held,
};
