/*
 * lockref: a reference count and the spin lock that protects it in one
 * 8-byte word (Linux lib/lockref.c; "Linux locking: cache-line contention on
 * large NUMA systems", the lockref slides). While the lock is free (its whole
 * 4-byte word is zero) the count is updated with one compare-and-swap of the
 * 8-byte word, without taking the lock; otherwise the update takes the lock.
 *
 * Layout (little-endian): bytes 0-3 an nl_qspinlock_t (include/numalock/qspinlock.h),
 * bytes 4-7 a signed 32-bit count. All-zero is an unlocked lockref with count 0.
 * Functions return 1 for "done" and 0 for "not done" as Linux does.
 */
#ifndef NUMALOCK_LOCKREF_H
#define NUMALOCK_LOCKREF_H

#include "cna.h"
#include "numalock.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nl_lockref {
    NL_ALIGNAS(8) NL_ATOMIC(uint64_t) lock_count; /* low half: qspinlock, high half: count */
} nl_lockref_t;

#define NL_LOCKREF_INIT(count) { (uint64_t)(uint32_t)(count) << 32 }
#define NL_LOCKREF_DEAD (-128)

NL_API void nl_lockref_init(nl_lockref_t *lr, int32_t count);
/* the lock inside the word (take it to update the count together with other
 * fields, as dput() does; count updates while holding it use nl_lockref_*_locked) */
NL_API nl_qspinlock_t *nl_lockref_lock(nl_lockref_t *lr);
NL_API int32_t nl_lockref_count(const nl_lockref_t *lr);         /* a snapshot */

NL_API void nl_lockref_get(nl_lockref_t *lr);                    /* count++ */
NL_API int nl_lockref_get_not_zero(nl_lockref_t *lr);            /* count++ unless <= 0 */
NL_API int nl_lockref_get_not_dead(nl_lockref_t *lr);            /* count++ unless dead */
NL_API int nl_lockref_put_not_zero(nl_lockref_t *lr);            /* count-- unless it would reach 0 */
/* count-- without the lock: the new count, or -1 when it was <= 0 or the lock
 * was held (nothing done) */
NL_API int nl_lockref_put_return(nl_lockref_t *lr);
/* count-- unless the count is <= 1: then returns 0 WITH THE LOCK HELD and the
 * count unchanged (the caller tears the object down, then unlocks) */
NL_API int nl_lockref_put_or_lock(nl_lockref_t *lr);
/* with the lock held: */
NL_API void nl_lockref_mark_dead(nl_lockref_t *lr);              /* count = NL_LOCKREF_DEAD */
NL_API void nl_lockref_set_locked(nl_lockref_t *lr, int32_t count);
NL_API void nl_lockref_unlock(nl_lockref_t *lr);

/* Process-wide counts of count updates done without the lock (one CAS) and
 * with it (fallback), since start or the last reset. Approximate beyond 64
 * threads updating at once (per-thread-slot counters, no shared hot line). */
typedef struct nl_lockref_stats {
    uint64_t lockless;
    uint64_t locked;
} nl_lockref_stats_t;
NL_API void nl_lockref_stats(nl_lockref_stats_t *out);
NL_API void nl_lockref_stats_reset(void);

#ifdef __cplusplus
}
#endif
#endif
