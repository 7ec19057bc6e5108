/*
 * CLH queue lock (Craig, "Building FIFO and priority-queuing spin locks from
 * atomic swap", TR 93-02-02, 1993; Magnusson, Landin & Hagersten, "Queue
 * locks on cache coherent multiprocessors", IPPS 1994, the LH lock).
 *
 * An arriving thread swaps its node into the tail and waits on its
 * predecessor's node; the releaser marks its own node, which its successor
 * then takes as its next node: nodes pass from thread to thread, so the
 * library keeps them (heap nodes, a small cache per thread slot and a
 * shared spare list), and the calls take no node. The lock keeps its
 * holder's node (`head`, as Scott's "standard interface" form does), so any
 * thread may release it. All-zero is unlocked (no node stays in a free
 * lock: a release without a successor takes its node back), but a held lock
 * holds a node, which is why the preload library does not offer it for
 * pthread mutexes.
 */
#ifndef NUMALOCK_CLH_H
#define NUMALOCK_CLH_H

#include "numalock.h"

#ifdef __cplusplus
extern "C" {
#endif

struct nl_clh_node;
typedef struct {
    NL_ATOMIC(struct nl_clh_node *) tail; /* the newest arrival's node, NULL when free */
    NL_ATOMIC(struct nl_clh_node *) head; /* the holder's node (written by the holder) */
} nl_clh_t;
#define NL_CLH_INIT { 0, 0 }

NL_API void nl_clh_acquire(nl_clh_t *l);
NL_API int  nl_clh_try(nl_clh_t *l);      /* 0 or EBUSY */
NL_API void nl_clh_release(nl_clh_t *l);  /* by any thread, once per acquisition */
/* true while some thread holds the lock or waits for it (a snapshot) */
NL_API bool nl_clh_is_locked(const nl_clh_t *l);

#ifdef __cplusplus
}
#endif
#endif
