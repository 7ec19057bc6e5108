/*
 * In-place spin locks: tas, ttas (exponential backoff), ticket, mcs, hbo.
 * All are zero-initialisable. Waiting follows the process waiting policy
 * (nl_wait_set_policy; docs/ARCHITECTURE.md "Waiting").
 *
 * The uncontended paths are inline (NL_INLINE: one atomic to acquire, one
 * store or atomic to release); a contended acquire or a release that has a
 * successor calls the library (nl_*_slow).
 */
#ifndef NUMALOCK_SPINLOCKS_H
#define NUMALOCK_SPINLOCKS_H

#include <errno.h>
#include <stddef.h>
#include "numalock.h"
#include "topology.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct { NL_ATOMIC(uint32_t) word; } nl_tas_t;
NL_API void nl_tas_acquire_slow(nl_tas_t *l);
NL_INLINE void nl_tas_acquire(nl_tas_t *l)
{
    if (__builtin_expect(!NL_ATOMIC_XCHG(&l->word, 1, __ATOMIC_ACQUIRE), 1))
        return;
    nl_tas_acquire_slow(l);
}
NL_INLINE int nl_tas_try(nl_tas_t *l)
{
    return NL_ATOMIC_XCHG(&l->word, 1, __ATOMIC_ACQUIRE) ? EBUSY : 0;
}
NL_INLINE void nl_tas_release(nl_tas_t *l) { NL_ATOMIC_STORE(&l->word, 0, __ATOMIC_RELEASE); }

typedef struct { NL_ATOMIC(uint32_t) word; } nl_ttas_t;
NL_API void nl_ttas_acquire_slow(nl_ttas_t *l);
/* the first attempt is a plain test-and-set (the uncontended case needs no
 * test first); the slow path tests before it sets, with backoff */
NL_INLINE void nl_ttas_acquire(nl_ttas_t *l)
{
    if (__builtin_expect(!NL_ATOMIC_XCHG(&l->word, 1, __ATOMIC_ACQUIRE), 1))
        return;
    nl_ttas_acquire_slow(l);
}
NL_INLINE int nl_ttas_try(nl_ttas_t *l)
{
    if (NL_ATOMIC_LOAD(&l->word, __ATOMIC_RELAXED))
        return EBUSY;
    return NL_ATOMIC_XCHG(&l->word, 1, __ATOMIC_ACQUIRE) ? EBUSY : 0;
}
NL_INLINE void nl_ttas_release(nl_ttas_t *l) { NL_ATOMIC_STORE(&l->word, 0, __ATOMIC_RELEASE); }

typedef struct { NL_ATOMIC(uint32_t) next; NL_ATOMIC(uint32_t) owner; } nl_ticket_t;
/* the lock was taken: the library's gate while the machine is overloaded,
 * then a ticket, then the wait for it */
NL_API void nl_ticket_lock_slow(nl_ticket_t *l);
/* waits for ticket `me`, already taken (kept for binaries whose inline path
 * takes the ticket itself) */
NL_API void nl_ticket_acquire_slow(nl_ticket_t *l, uint32_t me);
NL_INLINE void nl_ticket_acquire(nl_ticket_t *l)
{
    /* free (owner == next): take the next ticket, which is served now */
    uint32_t n = NL_ATOMIC_LOAD(&l->owner, __ATOMIC_ACQUIRE);
    if (__builtin_expect(NL_ATOMIC_CAS(&l->next, &n, n + 1, __ATOMIC_RELAXED,
                                       __ATOMIC_RELAXED), 1))
        return;
    nl_ticket_lock_slow(l);
}
NL_API int  nl_ticket_try(nl_ticket_t *l);
NL_INLINE void nl_ticket_release(nl_ticket_t *l)
{
    NL_ATOMIC_STORE(&l->owner, NL_ATOMIC_LOAD(&l->owner, __ATOMIC_RELAXED) + 1, __ATOMIC_RELEASE);
}

/* MCS (Mellor-Crummey & Scott 1991). The lock is one word: the queue tail. */
typedef struct nl_mcs_node {
    NL_ATOMIC(struct nl_mcs_node *) next;
    NL_ATOMIC(uint32_t) granted;   /* grant word: 0 waiting, 3 parked, 1 granted */
    NL_ATOMIC(uint32_t) node;      /* the library's: a parked waiter's node, the
                                    * futex's second word (FUTEX2_NUMA) */
} nl_mcs_node_t;
typedef struct { NL_ATOMIC(nl_mcs_node_t *) tail; } nl_mcs_t;
/* paper form: the caller provides the queue node and keeps it until release;
 * the fast path CASes an empty tail (the slow path queues) */
NL_API void nl_mcs_lock_slow(nl_mcs_t *l, nl_mcs_node_t *me);
NL_API void nl_mcs_unlock_slow(nl_mcs_t *l, nl_mcs_node_t *me);
NL_INLINE void nl_mcs_lock(nl_mcs_t *l, nl_mcs_node_t *me)
{
    nl_mcs_node_t *empty = NULL;
    NL_ATOMIC_STORE(&me->next, (nl_mcs_node_t *)NULL, __ATOMIC_RELAXED);
    /* release: the node's reset fields reach whoever queues behind it */
    if (__builtin_expect(NL_ATOMIC_CAS(&l->tail, &empty, me, __ATOMIC_ACQ_REL,
                                       __ATOMIC_RELAXED), 1))
        return;
    nl_mcs_lock_slow(l, me);
}
NL_INLINE void nl_mcs_unlock(nl_mcs_t *l, nl_mcs_node_t *me)
{
    nl_mcs_node_t *mine = me;
    if (__builtin_expect(!NL_ATOMIC_LOAD(&me->next, __ATOMIC_ACQUIRE) &&
                         NL_ATOMIC_CAS(&l->tail, &mine, (nl_mcs_node_t *)NULL,
                                       __ATOMIC_RELEASE, __ATOMIC_RELAXED), 1))
        return;
    nl_mcs_unlock_slow(l, me);
}
NL_API int  nl_mcs_trylock(nl_mcs_t *l, nl_mcs_node_t *me);
/* node-free form: the node comes from the calling thread's small pool */
NL_API void nl_mcs_acquire(nl_mcs_t *l);
NL_API int  nl_mcs_try(nl_mcs_t *l);
NL_API void nl_mcs_release(nl_mcs_t *l);

/* HBO (Radovic & Hagersten 2003): one word holding 0 or holder's node + 1;
 * waiters back off briefly when the holder is on their node, long otherwise. */
typedef struct { NL_ATOMIC(uint32_t) word; } nl_hbo_t;
NL_API void nl_hbo_acquire_slow(nl_hbo_t *l, uint32_t me);
NL_INLINE void nl_hbo_acquire(nl_hbo_t *l)
{
    uint32_t me = (uint32_t)nl_current_node() + 1, expect = 0;
    if (__builtin_expect(NL_ATOMIC_CAS(&l->word, &expect, me, __ATOMIC_ACQUIRE,
                                       __ATOMIC_RELAXED), 1))
        return;
    nl_hbo_acquire_slow(l, me);
}
NL_API int  nl_hbo_try(nl_hbo_t *l);
NL_API void nl_hbo_release_slow(nl_hbo_t *l); /* wakes a parked waiter */
NL_INLINE void nl_hbo_release(nl_hbo_t *l)
{
    if (__builtin_expect(NL_ATOMIC_XCHG(&l->word, 0, __ATOMIC_RELEASE) & 0x80000000u, 0))
        nl_hbo_release_slow(l);
}

#ifdef __cplusplus
}
#endif
#endif
