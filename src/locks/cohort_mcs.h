/*
 * Lock cohorting with an MCS lock per node (Dice, Marathe & Shavit 2012, in
 * the spirit of ck_cohort): the one composition that C-BO-MCS (cohort.c:
 * global backoff test-and-set) and HMCS (hmcs.c: global MCS queue, Chabbi et
 * al. 2015) are made of. A lock is held by holding its node's local lock
 * and the global lock; the global lock is either acquired by the first of a
 * cohort, or passed with the local lock to a successor of the same node, at
 * most `passes` times in a row (then it is released so other nodes get it).
 *
 * Local grant values (never 0 or 3, src/wait/wait.h):
 *   CO_ACQUIRE_GLOBAL        the local lock only: take the global lock yourself
 *   CO_PASSED(k)             the global lock came along; k-th pass in a row
 *
 * Waiting: an arrival that finds the lock taken (the global lock busy, or
 * its node's queue) begins a wait that is saturated (as MCS) for the whole
 * lock, so that while the process is overloaded one running thread keeps
 * it rather than cohorts alternating; the local queue is the MCS queue of
 * mcs_queue.h.
 */
#ifndef NL_COHORT_MCS_H
#define NL_COHORT_MCS_H

#include <errno.h>
#include "mcs_queue.h"

#define CO_LINE 128
#define CO_DEFAULT_PASSES 128u
#define CO_ACQUIRE_GLOBAL 1u
#define CO_PASSED(k) (((uint32_t)(k) << 2) | 2u)

typedef struct co_qnode {
    nl_mcs_node_t q;  /* first: the local queue's node */
    uint32_t numa;    /* which local lock */
    uint32_t passes;  /* consecutive local passes including ours (holder only) */
} co_qnode_t;

typedef struct co_local {
    _Alignas(CO_LINE) nl_mcsq_tail_t tail;
    nl_mcs_node_t gnode; /* this node's node in a global MCS queue (HMCS) */
} co_local_t;

_Static_assert(sizeof(co_qnode_t) <= NL_QNODE_BYTES, "fits a pool slot");

/* The global lock of a composition: `g` is its state inside the lock, `L`
 * the local lock of the thread's node (whose gnode a global MCS queue uses). */
typedef struct co_global {
    void (*acquire)(void *g, co_local_t *L, nl_waiter_t *w);
    bool (*try_acquire)(void *g, co_local_t *L); /* true: taken */
    void (*release)(void *g, co_local_t *L);
    nl_busy_fn busy;
} co_global_t;

static inline uint32_t co_passes(const nl_attr_t *attr)
{
    return attr && attr->local_passes ? attr->local_passes : CO_DEFAULT_PASSES;
}

static inline uint32_t co_nodes(void)
{
    int n = nl_topology_nodes();
    return n < 1 ? 1u : (uint32_t)n;
}

static inline co_local_t *co_local_of(co_local_t *local, uint32_t nnodes, co_qnode_t *q)
{
    q->numa = (uint32_t)nl_self_node(nl_self()) % nnodes;
    return &local[q->numa];
}

/* Taken for the calling thread: the global lock, or its node's local queue
 * (the gate's test, run by the passive waiter: it enters when it would get
 * both at once, so that it does not queue behind a local holder that may
 * share its CPU). */
static inline bool co_busy(const void *g, const co_global_t *G, const co_local_t *local, uint32_t nnodes)
{
    uint32_t n = (uint32_t)nl_self_node(nl_self()) % nnodes;
    return G->busy(g) || atomic_load_explicit(&((co_local_t *)local)[n].tail, memory_order_relaxed);
}

static inline __attribute__((always_inline)) void co_acquire(void *lock, void *g, co_local_t *local,
                                                             uint32_t nnodes, const co_global_t *G,
                                                             nl_busy_fn lock_busy)
{
    co_qnode_t *q = nl_qnode_get(lock);
    co_local_t *L = co_local_of(local, nnodes, q);
    nl_waiter_t w;
    /* taken, or others wait passively for it and we are not the thread the
     * gate let in (its release and acquisition take several steps, so it is
     * often free between two sections of the running thread: a thread that
     * lost it at the gate must not take it back then) */
    if (G->busy(g) || atomic_load_explicit(&L->tail, memory_order_relaxed) || nl_gate_behind(lock))
        nl_wait_begin(&w, lock, lock_busy, true); /* as MCS: the tails do not tell */
    else
        w.self = NULL; /* lazy: set up where it first waits */
    uint32_t v = nl_mcsq_join(&L->tail, &q->q, &w);
    if (v && v != CO_ACQUIRE_GLOBAL) { /* the global lock came with the local one */
        q->passes = v >> 2;
    } else {
        q->passes = 0; /* first of a cohort */
        G->acquire(g, L, &w);
    }
    nl_wait_end(&w);
}

static inline __attribute__((always_inline)) int co_try(void *lock, void *g, co_local_t *local,
                                                        uint32_t nnodes, const co_global_t *G)
{
    co_qnode_t *q = nl_qnode_get(lock);
    co_local_t *L = co_local_of(local, nnodes, q);
    q->passes = 0;
    if (nl_mcsq_try(&L->tail, &q->q) == 0) {
        if (G->try_acquire(g, L))
            return 0;
        /* global busy: give the local lock back (a waiter that came meanwhile
         * takes the global lock itself) */
        nl_mcsq_leave(&L->tail, &q->q, CO_ACQUIRE_GLOBAL);
    }
    nl_qnode_put(q);
    return EBUSY;
}

static inline __attribute__((always_inline)) void co_release(void *lock, void *g, co_local_t *local,
                                                             uint32_t passes, const co_global_t *G)
{
    co_qnode_t *q = nl_qnode_find(lock);
    co_local_t *L = &local[q->numa];
    nl_mcs_node_t *next = atomic_load_explicit(&q->q.next, memory_order_acquire);
    if (next && q->passes + 1 < passes) {
        /* not alone: pass the local lock with the global lock */
        nl_grant32(&next->granted, CO_PASSED(q->passes + 1));
    } else {
        G->release(g, L);
        nl_mcsq_leave(&L->tail, &q->q, CO_ACQUIRE_GLOBAL);
    }
    nl_qnode_put(q);
}

#endif
