/*
 * Hierarchical backoff lock (Radovic & Hagersten, HPCA 2003), NUMA-aware in
 * one word: the word is 0 when free, else the holder's node + 1. A waiter
 * that sees a holder on its own node backs off briefly (it is likely to get
 * the line from a near cache); one that sees a remote holder backs off much
 * longer, so the lock tends to stay on one node. Unfair by design.
 *
 * Blocking (numalock addition, for over-subscription and long critical
 * sections): once its wait is due to park (src/wait/wait.h: the waiting
 * policy's spin budget) a waiter sets the PARKED bit and sleeps on a futex
 * on the word (the "three-state" futex mutex protocol). Release exchanges the word with 0 and wakes one sleeper only if
 * PARKED was set. A waiter that has parked once acquires with PARKED set, so
 * sleepers it may have left behind are woken at its release (no lost
 * wake-up: a sleeper always has the bit set in the word, or a wake-up on its
 * way). While the process is overloaded, an arrival at a taken word waits at
 * the gate first (src/wait/gate.c), as at tas: without it the word goes to
 * whichever waiter runs, and threads that get less CPU get the lock less.
 */
#include <errno.h>
#include "numalock/spinlocks.h"
#include "../internal.h"

#define LOCAL_MIN 8u
#define LOCAL_MAX 256u
#define REMOTE_MIN 64u
#define REMOTE_MAX 4096u
#define HBO_PARKED 0x80000000u

int nl_hbo_try(nl_hbo_t *l)
{
    uint32_t expect = 0;
    uint32_t me = (uint32_t)nl_current_node() + 1;
    return atomic_compare_exchange_strong_explicit(&l->word, &expect, me, memory_order_acquire,
                                                   memory_order_relaxed) ? 0 : EBUSY;
}

/* the gate's head enters when the word is free */
static bool hbo_busy(const void *l) { return atomic_load_explicit(&((const nl_hbo_t *)l)->word, memory_order_relaxed) != 0; }

/* the inline fast path (spinlocks.h) found the lock taken; me = node + 1 */
void nl_hbo_acquire_slow(nl_hbo_t *l, uint32_t me)
{
    uint32_t expect;
    nl_waiter_t w;
    nl_wait_begin(&w, l, hbo_busy, true); /* as tas: the word goes to whichever waiter runs */
    nl_backoff_t local = NL_BACKOFF_INIT(LOCAL_MIN, &w), remote = NL_BACKOFF_INIT(REMOTE_MIN, &w);
    uint32_t want = me; /* me | PARKED once this waiter has slept */
    for (;;) {
        uint32_t v = atomic_load_explicit(&l->word, memory_order_relaxed);
        if (v == 0) {
            expect = 0;
            if (atomic_compare_exchange_strong_explicit(&l->word, &expect, want,
                                                        memory_order_acquire,
                                                        memory_order_relaxed))
                break;
            v = expect;
        }
        if (v && nl_wait_due(&w)) {
            /* sleep until a release: announce it in the word first */
            if ((v & HBO_PARKED) ||
                atomic_compare_exchange_strong_explicit(&l->word, &v, v | HBO_PARKED,
                                                        memory_order_relaxed,
                                                        memory_order_relaxed)) {
                nl_wait_park(&w, &l->word, v | HBO_PARKED);
                want = me | HBO_PARKED;
                local.limit = LOCAL_MIN;
                remote.limit = REMOTE_MIN;
            }
            continue;
        }
        /* short backoff behind a holder of our node, long behind a remote
         * one; each step yields while the process is overloaded (the holder
         * may be descheduled) */
        if ((v & ~HBO_PARKED) == me)
            nl_backoff(&local, LOCAL_MAX);
        else
            nl_backoff(&remote, REMOTE_MAX);
    }
    nl_wait_end(&w);
}

/* the inline release (spinlocks.h) cleared a word with the parked bit */
void nl_hbo_release_slow(nl_hbo_t *l) { nl_wait_wake(&l->word, 1); }
_Static_assert(HBO_PARKED == 0x80000000u, "spinlocks.h tests this bit in nl_hbo_release");

static void op_acquire(void *l) { nl_hbo_acquire(l); }
static int op_try(void *l) { return nl_hbo_try(l); }
static void op_release(void *l) { nl_hbo_release(l); }
/* 0 only when free (a parked waiter sets its bit only beside a holder's node) */
static int op_held(const void *l) { return atomic_load_explicit(&((nl_hbo_t *)l)->word, memory_order_relaxed) != 0; }

NL_HIDDEN const nl_lock_ops_t nl_ops_hbo = {
    .name = "hbo",
    .description = "hierarchical backoff: short backoff behind a same-node holder, then park",
    .paper = "Radovic & Hagersten, HPCA 2003 (CNA paper sec. 2)",
    .size = sizeof(nl_hbo_t), .align = 4,
    .props = NL_PROP_NUMA_AWARE | NL_PROP_BLOCKING | NL_PROP_ZERO_INIT | NL_PROP_ANY_UNLOCK | NL_PROP_FREE_RELEASE,
    .acquire = op_acquire, .try_acquire = op_try, .release = op_release,
    .held = op_held,
};
