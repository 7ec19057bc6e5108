/*
 * ShflLock (Kashyap, Calciu, Cheng, Min, Kim, "Scalable and Practical
 * Locking with Shuffling", SOSP 2019): a test-and-set lock byte decoupled
 * from an MCS-style queue of waiters; the waiters themselves (the
 * "shuffler", normally the queue head) move the waiters of their NUMA node
 * forward in the queue while they wait, so the holder's release stays one
 * store and the lock mostly passes within a node.
 *
 *  - nl_shfl_*:       spinning waiters (the library's waiting policy)
 *  - nl_shfl_block_*: waiters park; the queue head keeps the next waiters
 *                     awake, so the thread that gets the lock is running
 *
 * The lock is 4 bytes, all-zero is unlocked, the unlock is one store of the
 * lock byte and may be done by any thread (the holder keeps no queue node).
 * The time a batch of waiters of one node may be moved ahead of the others
 * is bounded by the CNA fairness rule (nl_cna_set_fairness, default
 * time:1ms). Do not mix the two families on one lock.
 */
#ifndef NUMALOCK_SHFL_H
#define NUMALOCK_SHFL_H

#include "numalock.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct { NL_ATOMIC(uint32_t) val; } nl_shfl_t;
#define NL_SHFL_INIT { 0 }

NL_API void nl_shfl_lock(nl_shfl_t *l);
NL_API int  nl_shfl_trylock(nl_shfl_t *l);        /* 0 or EBUSY */
NL_API void nl_shfl_unlock(nl_shfl_t *l);
NL_API void nl_shfl_block_lock(nl_shfl_t *l);
NL_API int  nl_shfl_block_trylock(nl_shfl_t *l);  /* 0 or EBUSY */
NL_API void nl_shfl_block_unlock(nl_shfl_t *l);
/* true when the lock byte is set (a snapshot) */
NL_API bool nl_shfl_is_locked(const nl_shfl_t *l);

#ifdef __cplusplus
}
#endif
#endif
