/*
 * Shared internals of the CST mutex and rw-semaphore (not installed).
 * See cst_mutex.c for the algorithm and docs/ALGORITHMS.md for invariants.
 */
#ifndef NL_CST_IMPL_H
#define NL_CST_IMPL_H

#include "numalock/cst.h"
#include "mcs_queue.h"

/* Waiter states of a local queue node (paper sec. 5.1): the waiting state of
 * MCS is split into spinning (UW) and parked (PW); L = the local lock was
 * passed to this waiter; R = re-queue (it was skipped while parked, taken out
 * of the queue, and woken: it must enqueue again). PW is 3 so that it is the
 * futex value a parked waiter sleeps on. */
#define CST_UW 0u
#define CST_L 1u
#define CST_R 2u
#define CST_PW 3u
/* User-space addition: the holder found this spinning waiter off its CPU
 * (its heartbeat is stale: preempted) and skipped it like a parked one; it
 * waits (spins, then parks as PW) for its R. */
#define CST_SKIP 4u

typedef struct cst_qnode {
    struct cst_qnode *_Atomic next;  /* successor in the snode's waiting list */
    _Atomic uint32_t status;         /* CST_UW / CST_PW / CST_L / CST_R       */
    uint32_t requeued;               /* woken with R at least once            */
    struct cst_snode *snode;         /* snode this waiter queued on           */
    struct cst_qnode *pnext;         /* parking list link (local lock holder) */
    _Atomic uint64_t beat;           /* last time seen spinning (nl_machine_ticks) */
    uint64_t since;                  /* first queued (nl_machine_ticks), for the starvation bound */
} cst_qnode_t;

/* Cheap clock for heartbeats (src/core/self.h). */

/* Per-node structure, two cache lines as in the paper (sec. 4.1): an
 * almost-read-only line for the snode list walk, and the lock line. Fields
 * marked (L) are touched only by the holder of this snode's local lock. */
typedef struct cst_snode {
    _Alignas(NL_CACHELINE) struct cst_snode *next; /* snode list, immutable once published */
    int32_t node;
    _Alignas(NL_CACHELINE) uint32_t passes; /* (L) acquisitions in this global tenure */
    cst_qnode_t *_Atomic tail;       /* local waiting list (K42/MCS style)     */
    cst_qnode_t *parked;             /* (L) skipped parked waiters, oldest first */
    _Atomic uint32_t inflight;       /* woken (R) waiters not yet re-queued    */
    uint32_t global_held;            /* (L) the global lock belongs to this snode */
    nl_mcs_node_t gq;                /* node in the global MCS queue (mcs_queue.h) */
    uint32_t nparked;                /* (L) length of `parked`                 */
    cst_qnode_t *parked_tail;        /* (L) newest of `parked`                 */
} cst_snode_t;

_Static_assert(sizeof(cst_snode_t) == 2 * NL_CACHELINE, "an snode is two cache lines");

/* rw-semaphore snode: the mutex snode plus a reader line */
typedef struct cst_rsnode {
    cst_snode_t m;
    _Alignas(NL_CACHELINE) _Atomic int32_t readers; /* entered here minus left here (sum = inside) */
    _Atomic uint32_t rparked;        /* readers parked (or about to) on rseq   */
    _Atomic uint32_t rseq;           /* futex word of this node's reader parking */
    _Atomic uint32_t rwake;          /* 1: a writer woke one reader, who wakes the rest */
} cst_rsnode_t;

/* The snode of `node`, allocated (size bytes) on first use. */
NL_HIDDEN cst_snode_t *nl_cst_snode_get(nl_cst_mutex_t *m, int node, size_t size);
NL_HIDDEN void nl_cst_lock_sz(nl_cst_mutex_t *m, size_t snode_size);
NL_HIDDEN int nl_cst_trylock_sz(nl_cst_mutex_t *m, size_t snode_size);
NL_HIDDEN size_t nl_cst_snode_count(const nl_cst_mutex_t *m);
/* Parked waiters woken at once: the CPUs of one node (at least 1). */
NL_HIDDEN uint32_t nl_cst_wake_batch(void);

#endif
