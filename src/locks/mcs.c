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
#include "mcs_queue.h"

_Static_assert(sizeof(nl_mcs_node_t) <= NL_QNODE_BYTES, "MCS node fits a pool slot");

/* Queue behind the tail (the lock is taken: the fast path's CAS failed).
 * While the system is overloaded the gate makes us wait passively first, so
 * the queue holds running threads. A waiter that parked wakes its own
 * successor as soon as it is granted (the successor probably parked too):
 * it then has our critical section's time to get back on a CPU. */
void nl_mcs_lock_slow(nl_mcs_t *l, nl_mcs_node_t *me)
{
    nl_waiter_t w;
    /* saturated: the tail may be the holder's node or a waiter's */
    nl_wait_begin(&w, l, nl_mcsq_busy, true);
    nl_mcsq_join(&l->tail, me, &w);
    nl_wait_end(&w);
}

/* The fast paths are inline in include/numalock/spinlocks.h: nl_mcs_lock
 * CASes an empty tail (the paper swaps; a CAS lets the slow path decide
 * whether to queue at all), nl_mcs_unlock CASes the tail back to empty when
 * nobody is linked behind. */

int nl_mcs_trylock(nl_mcs_t *l, nl_mcs_node_t *me) { return nl_mcsq_try(&l->tail, me); }

/* Release with a successor, or with one that has swapped the tail but not
 * linked itself yet. */
void nl_mcs_unlock_slow(nl_mcs_t *l, nl_mcs_node_t *me) { nl_mcsq_leave(&l->tail, me, 1); }

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
