/*
 * Reciprocating locks (Dice & Kogan, "Reciprocating Locks", PPoPP 2025;
 * arXiv 2501.02380, listing 1) and the library's NUMA-aware variant.
 *
 *  - nl_recip_t: one word, the arrival stack: 0 free; 1 held with no
 *    arrival since the lock last turned its arrivals into a segment;
 *    otherwise the newest arrival's wait element. Arrival is one exchange
 *    on that word; a waiter spins (then parks) on its own wait element; the
 *    holder passes the lock to the waiter that arrived just before it in
 *    its segment, or, at the end of a segment, turns the whole arrival
 *    stack into the next segment with one exchange. Segments are served
 *    first in, first out; inside one, last in, first out, so a waiter is
 *    overtaken only by threads of its own segment that arrived after it.
 *    All-zero is unlocked.
 *  - Paper form: nl_recip_lock(l, e, ctx). The wait element `e` is in use
 *    only while the thread waits (afterwards its address is only compared),
 *    so one element per thread serves every lock it holds; `ctx` (two
 *    words) carries what the acquisition hands to its release, one per held
 *    lock (e.g. on the caller's stack). Node-free form:
 *    nl_recip_acquire(l), element and context from the thread's pool.
 *  - nl_recip_numa_t: reciprocating-numa, the library's own design (not
 *    from a paper): the same arrival stack, and when a holder turns the
 *    arrivals into a segment it admits the waiters of its own node first
 *    and defers the others, which travel with the lock (as CNA's secondary
 *    queue does) until the lock has stayed on the node for the CNA
 *    fairness rule's time (nl_cna_set_fairness, cna.h; default 1 ms) or no
 *    waiter of the node arrives. Node-free form only.
 *
 * The release needs the acquisition's context, so only the thread that
 * acquired may release (neither lock can replace a pthread mutex).
 */
#ifndef NUMALOCK_RECIPROCATING_H
#define NUMALOCK_RECIPROCATING_H

#include "numalock.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A thread's wait element: the word it waits on (0 waiting, 3 parked, else
 * the end-of-segment mark its predecessor passed). Keep it on a cache line
 * of its own for speed (the thread's pool slots are). */
typedef struct nl_recip_wait {
    NL_ATOMIC(uint64_t) gate;
} nl_recip_wait_t;

/* What an acquisition hands to its release: the next waiter of the
 * segment (NULL: none) and the segment's end mark. */
typedef struct nl_recip_ctx {
    nl_recip_wait_t *succ;
    uintptr_t eos;
} nl_recip_ctx_t;

typedef struct { NL_ATOMIC(uintptr_t) arrivals; } nl_recip_t;
#define NL_RECIP_INIT { 0 }

/* paper form */
NL_API void nl_recip_lock(nl_recip_t *l, nl_recip_wait_t *e, nl_recip_ctx_t *ctx);
NL_API int  nl_recip_trylock(nl_recip_t *l, nl_recip_wait_t *e, nl_recip_ctx_t *ctx); /* 0 or EBUSY */
NL_API void nl_recip_unlock(nl_recip_t *l, nl_recip_ctx_t *ctx);
/* node-free form */
NL_API void nl_recip_acquire(nl_recip_t *l);
NL_API int  nl_recip_try(nl_recip_t *l);
NL_API void nl_recip_release(nl_recip_t *l);
/* true while some thread holds the lock (a snapshot) */
NL_API bool nl_recip_is_locked(const nl_recip_t *l);

/* reciprocating-numa: do not mix with nl_recip_* on one lock */
typedef struct { NL_ATOMIC(uintptr_t) arrivals; } nl_recip_numa_t;
#define NL_RECIP_NUMA_INIT { 0 }
NL_API void nl_recip_numa_acquire(nl_recip_numa_t *l);
NL_API int  nl_recip_numa_try(nl_recip_numa_t *l);
NL_API void nl_recip_numa_release(nl_recip_numa_t *l);
NL_API bool nl_recip_numa_is_locked(const nl_recip_numa_t *l);

#ifdef __cplusplus
}
#endif
#endif
