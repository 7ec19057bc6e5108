/*
 * The MCS queue (Mellor-Crummey & Scott 1991), the one copy that the MCS
 * lock, the cohort lock's per-node locks and both levels of HMCS use. A
 * queue is a tail word; its nodes begin with an nl_mcs_node_t (next + grant
 * word, include/numalock/spinlocks.h).
 *
 * Invariants: the node named by the tail is the last one; a node's `next`
 * is written once, by its successor, after the successor swapped itself into
 * the tail; only the holder (the node at the head) grants, and it grants its
 * own successor only, once it sees the link. Grant values are never 0
 * (waiting) or 3 (parked): src/wait/wait.h.
 */
#ifndef NL_MCS_QUEUE_H
#define NL_MCS_QUEUE_H

#include "numalock/spinlocks.h"
#include "queue.h"

typedef _Atomic(nl_mcs_node_t *) nl_mcsq_tail_t;

/* the grant word and its node half: a two-word futex (src/wait/wait.h) */
_Static_assert(offsetof(nl_mcs_node_t, granted) % 8 == 0 &&
                   offsetof(nl_mcs_node_t, node) == offsetof(nl_mcs_node_t, granted) + 4,
               "an MCS node's grant word is 8-byte aligned, its node half beside it");

/* Join the queue: 0 when it was empty (the caller holds it now), else the
 * grant its predecessor passed; `w` is the caller's wait (set up here if it
 * is a lazy one that has not waited yet). A waiter that
 * parked wakes its own successor as soon as it is granted, so that one is
 * back on a CPU when its turn comes (early wake, src/wait/wait.h). */
static inline uint32_t nl_mcsq_join(nl_mcsq_tail_t *tail, nl_mcs_node_t *me, nl_waiter_t *w)
{
    atomic_store_explicit(&me->next, NULL, memory_order_relaxed);
    /* the predecessor grants only after it sees the link below (release
     * orders this reset before it) */
    atomic_store_explicit(&me->granted, NL_GRANT_WAITING, memory_order_relaxed);
    nl_mcs_node_t *pred = atomic_exchange_explicit(tail, me, memory_order_acq_rel);
    if (!pred)
        return 0;
    atomic_store_explicit(&pred->next, me, memory_order_release);
    nl_waiter_lazy(w);
    return NL_QUEUE_AWAIT(w, me, granted);
}

/* The holder's successor; NULL after emptying the queue when it has none.
 * A successor that has swapped the tail but not linked itself yet is waited
 * for (it may be off its CPU: the spinner yields while overloaded). */
static inline nl_mcs_node_t *nl_mcsq_next_or_empty(nl_mcsq_tail_t *tail, nl_mcs_node_t *me)
{
    nl_mcs_node_t *next = atomic_load_explicit(&me->next, memory_order_acquire);
    if (next)
        return next;
    nl_mcs_node_t *expect = me;
    if (atomic_compare_exchange_strong_explicit(tail, &expect, NULL, memory_order_release,
                                                memory_order_relaxed))
        return NULL;
    nl_waiter_t w;
    nl_waiter_init(&w);
    return NL_QUEUE_NEXT(&w, me);
}

/* Leave: pass `grant` to the successor, or empty the queue. */
static inline void nl_mcsq_leave(nl_mcsq_tail_t *tail, nl_mcs_node_t *me, uint32_t grant)
{
    nl_mcs_node_t *next = nl_mcsq_next_or_empty(tail, me);
    if (next)
        nl_grant32n(&next->granted, grant);
}

/* Taken: somebody holds the queue or waits in it (the gate's test). */
static inline bool nl_mcsq_busy(const void *tail)
{
    return atomic_load_explicit((nl_mcsq_tail_t *)tail, memory_order_relaxed) != NULL;
}

/* Try to take an empty queue (one CAS); 0 or EBUSY. */
static inline int nl_mcsq_try(nl_mcsq_tail_t *tail, nl_mcs_node_t *me)
{
    return NL_QUEUE_TRY(tail, me, granted);
}

#endif
