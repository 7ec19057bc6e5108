/*
 * The CNA family (Dice & Kogan, "Compact NUMA-aware Locks", EuroSys 2019)
 * and the hierarchical baselines it is compared with.
 *
 *  - nl_qspinlock_t, the Linux qspinlock with MCS or CNA queueing:
 *    numalock/qspinlock.h (included here, where it used to live).
 *  - nl_cna_t: CNA, one word (the main-queue tail). Paper form with an
 *    explicit node (nl_cna_lock/unlock) and a node-free form
 *    (nl_cna_acquire/release) whose node comes from a per-thread pool.
 *    nl_cna_opt_* adds the shuffle reduction of section 6.
 *
 * CNA long-term fairness (how long the lock may stay on one NUMA node) is a
 * process-wide setting, since the lock itself is one word:
 *    "time:DURATION"  the lock leaves a node after DURATION ("1ms", "500us",
 *                     "200000ns"; default time:1ms, as in Linux's final CNA)
 *    "random:N"       the paper's rule: each hand-over stays local unless a
 *                     pseudo-random draw hits 1 in N (N a power of two >= 2)
 * from NUMALOCK_CNA_FAIRNESS at first use, or nl_cna_set_fairness().
 */
#ifndef NUMALOCK_CNA_H
#define NUMALOCK_CNA_H

#include "numalock.h"
#include "qspinlock.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- CNA ---------------------------------------------------------------- */
typedef struct nl_cna_node {
    /* grant word: 0 waiting, 3 parked, 1 granted with an empty secondary
     * queue, otherwise the (8-aligned) head of the secondary queue */
    NL_ATOMIC(uint64_t) spin;
    NL_ATOMIC(struct nl_cna_node *) next;
    struct nl_cna_node *sec_tail;  /* valid in the secondary queue's head */
    uint64_t since;                /* when the lock arrived on the holder's node */
    int32_t numa;                  /* node of the waiter, -1 if it never waited */
    int32_t leaf;                  /* its domain of the topology's finest level */
} nl_cna_node_t;

typedef struct { NL_ATOMIC(nl_cna_node_t *) tail; } nl_cna_t;
#define NL_CNA_INIT { 0 }

/* paper form: the caller keeps `me` (any thread-private memory) until unlock */
/* Inline fast paths (NL_INLINE): lock = one CAS of an empty tail (numa and
 * since stay unset while spin is 0: the unlock ignores them), unlock = one
 * CAS of the tail back to empty when neither queue has a waiter. */
NL_API void nl_cna_lock_slow(nl_cna_t *l, nl_cna_node_t *me);
NL_API void nl_cna_unlock_slow(nl_cna_t *l, nl_cna_node_t *me);
NL_API void nl_cna_opt_unlock_slow(nl_cna_t *l, nl_cna_node_t *me);
NL_INLINE void nl_cna_lock(nl_cna_t *l, nl_cna_node_t *me)
{
    nl_cna_node_t *empty = NULL;
    NL_ATOMIC_STORE(&me->next, (nl_cna_node_t *)NULL, __ATOMIC_RELAXED);
    NL_ATOMIC_STORE(&me->spin, (uint64_t)0, __ATOMIC_RELAXED);
    /* release: the node's reset fields reach whoever queues behind it */
    if (__builtin_expect(NL_ATOMIC_CAS(&l->tail, &empty, me, __ATOMIC_ACQ_REL,
                                       __ATOMIC_RELAXED), 1))
        return;
    nl_cna_lock_slow(l, me);
}
/* both queues empty: spin holds 0 or 1 (not a secondary-queue head) */
#define NL_CNA_UNLOCK_FAST(l, me)                                                             \
    (!NL_ATOMIC_LOAD(&(me)->next, __ATOMIC_ACQUIRE) &&                                       \
     NL_ATOMIC_LOAD(&(me)->spin, __ATOMIC_RELAXED) <= 1 &&                                   \
     NL_ATOMIC_CAS(&(l)->tail, &(me), (nl_cna_node_t *)NULL, __ATOMIC_RELEASE, \
                                 __ATOMIC_RELAXED))
NL_INLINE void nl_cna_unlock(nl_cna_t *l, nl_cna_node_t *me)
{
    nl_cna_node_t *mine = me;
    if (__builtin_expect(NL_CNA_UNLOCK_FAST(l, mine), 1))
        return;
    nl_cna_unlock_slow(l, me);
}
NL_INLINE void nl_cna_opt_unlock(nl_cna_t *l, nl_cna_node_t *me)
{
    nl_cna_node_t *mine = me;
    if (__builtin_expect(NL_CNA_UNLOCK_FAST(l, mine), 1))
        return;
    nl_cna_opt_unlock_slow(l, me);
}
NL_API int  nl_cna_trylock(nl_cna_t *l, nl_cna_node_t *me);
/* node-free form */
NL_API void nl_cna_acquire(nl_cna_t *l);
NL_API int  nl_cna_try(nl_cna_t *l);
NL_API void nl_cna_release(nl_cna_t *l);
/* with the shuffle reduction (section 6): while the secondary queue is empty,
 * the holder scans the main queue on about 1 hand-over in 128 */
NL_API void nl_cna_opt_release(nl_cna_t *l);

/* Process-wide CNA fairness rule (see above). Returns 0 or EINVAL with one
 * sentence in err. Applies to cna, cna-opt and qspinlock-cna (qspinlock.h). */
NL_API int nl_cna_set_fairness(const char *spec, char *err, size_t errlen);
NL_API const char *nl_cna_fairness(void);

#ifdef __cplusplus
}
#endif
#endif
