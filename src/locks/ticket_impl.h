/*
 * The ticket lock's steps (include/numalock/spinlocks.h has the type and the
 * inline fast paths), shared by the ticket lock (ticket.c) and the ticket
 * locks of the cohort composition (cohort.h). Not installed.
 *
 * Invariants: `next` - `owner` is the number of tickets out (the holder's
 * and its waiters'); only the holder advances `owner`, by one, with a
 * release store, and ticket t is served when `owner` == t.
 */
#ifndef NL_TICKET_IMPL_H
#define NL_TICKET_IMPL_H

#include "numalock/spinlocks.h"
#include "../internal.h"

/* Take the next ticket (the caller's place in line). */
static inline uint32_t nl_ticket_take(nl_ticket_t *l)
{
    return atomic_fetch_add_explicit(&l->next, 1, memory_order_relaxed);
}

/* Take the lock if nobody holds or waits for it (next == owner): true. */
static inline bool nl_ticket_take_free(nl_ticket_t *l)
{
    uint32_t owner = atomic_load_explicit(&l->owner, memory_order_acquire);
    return atomic_compare_exchange_strong_explicit(&l->next, &owner, owner + 1, memory_order_acquire,
                                                   memory_order_relaxed);
}

/* Wait until ticket `me` is served (acquire: the previous holder's section
 * and what it wrote before its release are visible); a lazy waiter is set up
 * where it first waits. */
static inline void nl_ticket_await(nl_ticket_t *l, uint32_t me, nl_waiter_t *w)
{
    if (NL_LIKELY(atomic_load_explicit(&l->owner, memory_order_acquire) == me))
        return;
    nl_waiter_lazy(w);
    while (atomic_load_explicit(&l->owner, memory_order_acquire) != me)
        nl_wait_step(w);
}

/* Taken: a ticket is out that has not been served (the gate's test). */
static inline bool nl_ticket_busy(const nl_ticket_t *l)
{
    return atomic_load_explicit(&l->next, memory_order_relaxed) !=
           atomic_load_explicit(&l->owner, memory_order_relaxed);
}

/* Called by the holder: another ticket than its own is out (a waiter that
 * will be served next; none can be taken back). */
static inline bool nl_ticket_waited(const nl_ticket_t *l)
{
    return atomic_load_explicit(&l->next, memory_order_relaxed) !=
           atomic_load_explicit(&l->owner, memory_order_relaxed) + 1;
}

#endif
