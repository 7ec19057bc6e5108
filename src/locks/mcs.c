/*
 * MCS queue lock (Mellor-Crummey & Scott, 1991; CNA paper section 3 recalls it).
 * The lock is one word: the tail of a queue of per-waiter nodes. Each waiter
 * spins on its own node, so a hand-over touches only the successor's line.
 *
 * Waiting (src/wait/wait.h): an arriving thread that finds the lock taken
 * passes the gate (a passive wait while the system is overloaded), then
 * queues; the successor's node holds a grant word it waits on (spins while it
 * has a CPU, parks when the wait is long), and the releaser wakes it only if
 * it parked. The releaser's wait for a successor that has swapped the tail
 * but not yet linked itself spins then yields (that successor may be
 * descheduled).
 */
#include <errno.h>
#include <stddef.h>
#include "numalock/spinlocks.h"
#include "../core/internal.h"

_Static_assert(sizeof(nl_mcs_node_t) <= NL_QNODE_BYTES, "MCS node fits a pool slot");

/* Queue behind the tail (the lock is taken: the fast path's CAS failed).
 * While the system is overloaded the gate makes us wait passively first, so
 * the queue holds running threads. A waiter that parked wakes its own
 * successor as soon as it is granted (the successor probably parked too):
 * it then has our critical section's time to get back on a CPU. */
void nl_mcs_lock_slow(nl_mcs_t *l, nl_mcs_node_t *me)
{
    nl_self_t *s = nl_self();
    nl_count_slow(s);
    nl_gate(l);
    /* the grant word needs resetting only when we wait; the predecessor can
     * grant only after it sees the link below (release orders the reset) */
    atomic_store_explicit(&me->granted, NL_GRANT_WAITING, memory_order_relaxed);
    nl_mcs_node_t *pred = atomic_exchange_explicit(&l->tail, me, memory_order_acq_rel);
    if (!pred)
        return;
    atomic_store_explicit(&pred->next, me, memory_order_release);
    nl_await32(&me->granted);
    if (nl_parked_last(s)) {
        nl_mcs_node_t *next = atomic_load_explicit(&me->next, memory_order_acquire);
        if (next)
            nl_nudge32(&next->granted);
    }
}

/* The fast paths are inline in include/numalock/spinlocks.h: nl_mcs_lock
 * CASes an empty tail (the paper swaps; a CAS lets the slow path decide
 * whether to queue at all), nl_mcs_unlock CASes the tail back to empty when
 * nobody is linked behind. */

int nl_mcs_trylock(nl_mcs_t *l, nl_mcs_node_t *me)
{
    nl_mcs_node_t *expect = NULL;
    atomic_store_explicit(&me->next, NULL, memory_order_relaxed);
    return atomic_compare_exchange_strong_explicit(&l->tail, &expect, me, memory_order_acq_rel,
                                                   memory_order_relaxed) ? 0 : EBUSY;
}

/* Release with a successor, or with one that has swapped the tail but not
 * linked itself yet (it may be descheduled: spin, then yield). */
void nl_mcs_unlock_slow(nl_mcs_t *l, nl_mcs_node_t *me)
{
    nl_mcs_node_t *next = atomic_load_explicit(&me->next, memory_order_acquire);
    if (!next) {
        nl_mcs_node_t *expect = me;
        if (atomic_compare_exchange_strong_explicit(&l->tail, &expect, NULL, memory_order_release,
                                                    memory_order_relaxed))
            return;
        nl_spinner_t sp = NL_SPINNER_INIT;
        while (!(next = atomic_load_explicit(&me->next, memory_order_acquire)))
            nl_spin_once(&sp);
    }
    nl_grant32(&next->granted, 1);
}

void nl_mcs_acquire(nl_mcs_t *l) { nl_mcs_lock(l, nl_qnode_get(l)); }

int nl_mcs_try(nl_mcs_t *l)
{
    nl_mcs_node_t *me = nl_qnode_get(l);
    if (nl_mcs_trylock(l, me) == 0)
        return 0;
    nl_qnode_put(me);
    return EBUSY;
}

void nl_mcs_release(nl_mcs_t *l)
{
    nl_self_t *s = nl_self();
    nl_mcs_node_t *me = nl_qnode_top(s, l);
    if (NL_LIKELY(me)) {
        nl_mcs_unlock(l, me);
        nl_qnode_pop(s);
        return;
    }
    me = nl_qnode_find(l);
    nl_mcs_unlock(l, me);
    nl_qnode_put(me);
}

static void op_acquire(void *l) { nl_mcs_acquire(l); }
static int op_try(void *l) { return nl_mcs_try(l); }
static void op_release(void *l) { nl_mcs_release(l); }

NL_HIDDEN const nl_lock_ops_t nl_ops_mcs = {
    .name = "mcs",
    .description = "MCS queue lock, one word, local spinning then parking",
    .paper = "Mellor-Crummey & Scott 1991; CNA paper sec. 3",
    .size = sizeof(nl_mcs_t), .align = 8,
    .props = NL_PROP_FAIR | NL_PROP_ZERO_INIT,
    .acquire = op_acquire, .try_acquire = op_try, .release = op_release,
};
