/*
 * CNA hand-over logic shared by cna.c (the paper's one-word lock) and
 * qspinlock.c (the CNA slow path of the 4-byte qspinlock).
 *
 * Dice & Kogan, "Compact NUMA-aware Locks", figures 4 and 5:
 *  - the node's spin field is a grant word (nl_wait_grant64/nl_grant64) carrying
 *    1 (granted, secondary queue empty) or the pointer to the secondary
 *    queue's head (8-aligned: never 0 or 3);
 *  - the secondary queue's tail is kept in its head node (sec_tail);
 *  - cna_find_successor() is figure 5's find_successor(): it moves the main
 *    queue's nodes between the holder and the first waiter on the holder's
 *    node to the end of the secondary queue, preferring one of the holder's
 *    own domain of the topology's finest level (its cache domain where the
 *    topology has one below the nodes; without one a leaf is a node and the
 *    rule is the paper's): one rule of nearness, under the same
 *    keep_lock_local bound;
 *  - cna_pass() is the second half of figure 4's cna_unlock() (lines 40-49);
 *  - cna_keep_local() is keep_lock_local(), with the paper's pseudo-random
 *    rule or a bound on the time the lock stays on one node (Linux's final
 *    CNA revisions), chosen process-wide (nl_cna_set_fairness).
 * Only the lock holder (for qspinlock: the queue head that has just taken the
 * locked byte) runs this code, so the nodes it moves are touched by no one
 * else: waiters only watch their own grant word.
 */
#ifndef NL_CNA_IMPL_H
#define NL_CNA_IMPL_H

#include "numalock/cna.h"
#include "queue.h"

enum { NL_CNA_MODE_UNSET = 0, NL_CNA_MODE_TIME = 1, NL_CNA_MODE_RANDOM = 2 };
NL_HIDDEN extern _Atomic int nl_cna_mode;
NL_HIDDEN extern _Atomic uint64_t nl_cna_limit_ns; /* time rule */
NL_HIDDEN extern _Atomic uint64_t nl_cna_mask;     /* random rule: stay local unless rand & mask == 0 */
NL_HIDDEN int nl_cna_fairness_init(void);

#define NL_CNA_GRANTED 1u

static inline nl_cna_node_t *cna_sec_head(nl_cna_node_t *me)
{
    uint64_t s = atomic_load_explicit(&me->spin, memory_order_relaxed);
    return s > NL_CNA_GRANTED ? (nl_cna_node_t *)(uintptr_t)s : NULL;
}

/* keep_lock_local(): true while the lock may stay on the holder's node.
 * *now gets the time read for the time rule (0 under the random rule). */
static inline bool cna_keep_local(nl_cna_node_t *me, uint64_t *now)
{
    int mode = atomic_load_explicit(&nl_cna_mode, memory_order_relaxed);
    if (NL_UNLIKELY(mode == NL_CNA_MODE_UNSET))
        mode = nl_cna_fairness_init();
    if (mode == NL_CNA_MODE_RANDOM) {
        *now = 0;
        return (nl_rand() & atomic_load_explicit(&nl_cna_mask, memory_order_relaxed)) != 0;
    }
    uint64_t t = nl_machine_ns();
    *now = t;
    if (!me->since) /* the lock came to us through an empty queue: the stay starts now */
        me->since = t;
    return t - me->since < atomic_load_explicit(&nl_cna_limit_ns, memory_order_relaxed);
}

/* How far past the first waiter of the holder's node the search for one of
 * its finer domain goes. */
#define NL_CNA_LEAF_SCAN 16

/* Figure 5, find_successor(): the first waiter in the main queue on node
 * `numa`, or the first of the holder's finest domain `leaf` if one queues
 * within NL_CNA_LEAF_SCAN waiters past that one (a leaf lies in one node:
 * without a level below the nodes the first of the node is of the leaf);
 * the waiters before it are appended to the secondary queue (whose head
 * travels in me->spin). NULL (queue unchanged) when there is none. */
static inline nl_cna_node_t *cna_find_successor(nl_cna_node_t *me, nl_cna_node_t *next, int numa, int leaf)
{
    if (next->numa == numa && next->leaf == leaf)
        return next;
    nl_cna_node_t *pick = next->numa == numa ? next : NULL, *pick_prev = NULL;
    nl_cna_node_t *prev = next, *cur = atomic_load_explicit(&next->next, memory_order_acquire);
    for (int past = 0; cur && !(pick && past >= NL_CNA_LEAF_SCAN); past += pick != NULL) {
        if (cur->numa == numa) {
            if (cur->leaf == leaf) {
                pick = cur;
                pick_prev = prev;
                break;
            }
            if (!pick) {
                pick = cur;
                pick_prev = prev;
            }
        }
        prev = cur;
        cur = atomic_load_explicit(&cur->next, memory_order_acquire);
    }
    if (!pick || pick == next)
        return pick;
    /* next .. pick_prev go to the end of the secondary queue */
    nl_cna_node_t *old = cna_sec_head(me);
    if (old) {
        atomic_store_explicit(&old->sec_tail->next, next, memory_order_relaxed);
    } else {
        atomic_store_explicit(&me->spin, (uint64_t)(uintptr_t)next, memory_order_relaxed);
        old = next;
    }
    /* pick_prev's successor (pick) has linked itself already: nobody else
     * writes pick_prev->next any more */
    atomic_store_explicit(&pick_prev->next, NULL, memory_order_relaxed);
    old->sec_tail = pick_prev;
    return pick;
}

/* Figure 4, lines 40-49: hand the lock (or, for qspinlock, the head of the
 * queue) from `me` to the next owner; `next` is me's main-queue successor.
 * With `reduce` (section 6's shuffle reduction) the main queue is scanned on
 * about 1 hand-over in 128 while the secondary queue is empty. */
static inline void cna_pass(nl_cna_node_t *me, nl_cna_node_t *next, bool reduce)
{
    /* spin == 0: we came through an empty queue (fast path), and the lock
     * fast path did not spend stores on numa and since: fill them in now */
    int numa, leaf;
    if (atomic_load_explicit(&me->spin, memory_order_relaxed) == NL_GRANT_WAITING) {
        nl_self_t *s = nl_self();
        numa = nl_self_node(s);
        leaf = s->leaf;
        me->since = 0;
    } else {
        numa = me->numa;
        leaf = me->leaf;
    }
    uint64_t now = 0;
    nl_cna_node_t *succ = NULL;
    if (reduce && !cna_sec_head(me) && (nl_rand() & 127) != 0) {
        next->since = next->numa == numa ? me->since : 0;
        nl_grant64(&next->spin, NL_CNA_GRANTED);
        return;
    }
    if (cna_keep_local(me, &now) && (succ = cna_find_successor(me, next, numa, leaf))) {
        uint64_t s = atomic_load_explicit(&me->spin, memory_order_relaxed);
        succ->since = me->since;
        nl_grant64(&succ->spin, s > NL_CNA_GRANTED ? s : NL_CNA_GRANTED);
        return;
    }
    nl_cna_node_t *sec = cna_sec_head(me);
    if (sec) {
        /* the secondary queue goes back before our successor; its head
         * (another node) gets the lock */
        atomic_store_explicit(&sec->sec_tail->next, next, memory_order_relaxed);
        sec->since = now;
        nl_grant64(&sec->spin, NL_CNA_GRANTED);
        return;
    }
    next->since = next->numa == numa ? me->since : now;
    nl_grant64(&next->spin, NL_CNA_GRANTED);
}

#endif
