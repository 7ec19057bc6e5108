/*
 * CST locks (Kashyap, Min, Kim: "Scalable NUMA-aware Blocking Synchronization
 * Primitives", USENIX ATC 2017, sections 4-5), user-space versions:
 *
 *  - nl_cst_mutex_t: two-level NUMA-aware blocking mutex. A global MCS-style
 *    queue of per-node structures (snodes), each with its own queue of
 *    waiters; snodes are allocated by the first thread of a node that uses the
 *    lock and kept until nl_cst_mutex_destroy(). A waiter spins for a budget
 *    that depends on the system load, then parks; the holder passes the lock
 *    to the nearest waiter of its node that still spins, skipping parked ones.
 *  - nl_cst_rwsem_t: writer-preferred read-write semaphore built on the mutex,
 *    with per-node active-reader counts and per-node reader parking.
 *
 * Zero-filled storage is an unlocked lock (no snode yet). destroy() must be
 * called to free the snodes. Neither lock is recursive.
 */
#ifndef NUMALOCK_CST_H
#define NUMALOCK_CST_H

#include "numalock.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nl_cst_mutex {
    NL_ATOMIC(void *) gtail;     /* global queue: tail snode, NULL when free   */
    NL_ATOMIC(void *) snodes;    /* list of allocated snodes (newest first)    */
    NL_ATOMIC(uint64_t) present; /* bit n: node n has (or is allocating) one   */
    uint32_t local_passes;       /* acquisitions per global tenure; 0: default */
    uint32_t reserved;
} nl_cst_mutex_t;

typedef struct nl_cst_rwsem {
    nl_cst_mutex_t wlock;        /* writers serialise on a CST mutex           */
    /* the readers' line, apart from the mutex's global queue word */
    NL_ALIGNAS(64) NL_ATOMIC(uint32_t) writers; /* a writer is in or draining readers */
    uint32_t reserved;
    NL_ATOMIC(void *) rhead;     /* readers' copy of the snode list head       */
} nl_cst_rwsem_t;

#define NL_CST_MUTEX_INITIALIZER { 0 }
#define NL_CST_RWSEM_INITIALIZER { { 0 }, 0, 0, 0 }

/* attr->local_passes bounds the acquisitions on one node before the global
 * lock moves on (when another node waits); 0 or NULL: the default (4096). */
NL_API int nl_cst_mutex_init(nl_cst_mutex_t *m, const nl_attr_t *attr);
NL_API void nl_cst_mutex_destroy(nl_cst_mutex_t *m);
NL_API void nl_cst_mutex_lock(nl_cst_mutex_t *m);
NL_API int nl_cst_mutex_trylock(nl_cst_mutex_t *m); /* 0 or EBUSY */
NL_API void nl_cst_mutex_unlock(nl_cst_mutex_t *m);
/* bytes in use: the lock plus its snodes */
NL_API size_t nl_cst_mutex_footprint(const nl_cst_mutex_t *m);

NL_API int nl_cst_rwsem_init(nl_cst_rwsem_t *s, const nl_attr_t *attr);
NL_API void nl_cst_rwsem_destroy(nl_cst_rwsem_t *s);
NL_API void nl_cst_rwsem_down_read(nl_cst_rwsem_t *s);
NL_API int nl_cst_rwsem_down_read_trylock(nl_cst_rwsem_t *s); /* 0 or EBUSY */
NL_API void nl_cst_rwsem_up_read(nl_cst_rwsem_t *s);
NL_API void nl_cst_rwsem_down_write(nl_cst_rwsem_t *s);
NL_API int nl_cst_rwsem_down_write_trylock(nl_cst_rwsem_t *s); /* 0 or EBUSY */
NL_API void nl_cst_rwsem_up_write(nl_cst_rwsem_t *s);
NL_API size_t nl_cst_rwsem_footprint(const nl_cst_rwsem_t *s);

#ifdef __cplusplus
}
#endif
#endif
