/* Ticket lock: FIFO by fetch-and-add on `next`; the holder advances `owner`.
 * Waiters spin briefly, then yield (the ticket in line may be descheduled). */
#include <errno.h>
#include "numalock/spinlocks.h"
#include "../internal.h"

/* the inline fast path (spinlocks.h) took ticket `me`, not yet served */
void nl_ticket_acquire_slow(nl_ticket_t *l, uint32_t me)
{
    nl_count_slow(nl_self());
    nl_spinner_t sp = NL_SPINNER_INIT;
    while (atomic_load_explicit(&l->owner, memory_order_acquire) != me)
        nl_spin_once(&sp);
}

int nl_ticket_try(nl_ticket_t *l)
{
    uint32_t owner = atomic_load_explicit(&l->owner, memory_order_acquire);
    uint32_t expect = owner;
    /* succeed only if nobody holds or waits: next == owner */
    if (atomic_compare_exchange_strong_explicit(&l->next, &expect, owner + 1,
                                                memory_order_acquire, memory_order_relaxed))
        return 0;
    return EBUSY;
}


static void op_acquire(void *l) { nl_ticket_acquire(l); }
static int op_try(void *l) { return nl_ticket_try(l); }
static void op_release(void *l) { nl_ticket_release(l); }
/* held while a ticket is out that has not been served (a release of a free
 * ticket lock would move owner past next: no NL_PROP_FREE_RELEASE) */
static int op_held(const void *l)
{
    nl_ticket_t *t = (nl_ticket_t *)l;
    return atomic_load_explicit(&t->next, memory_order_relaxed) != atomic_load_explicit(&t->owner, memory_order_relaxed);
}

NL_HIDDEN const nl_lock_ops_t nl_ops_ticket = {
    .name = "ticket",
    .description = "ticket lock (FIFO)",
    .paper = "Mellor-Crummey & Scott 1991",
    .size = sizeof(nl_ticket_t), .align = 8,
    .props = NL_PROP_FAIR | NL_PROP_ZERO_INIT | NL_PROP_ANY_UNLOCK,
    .acquire = op_acquire, .try_acquire = op_try, .release = op_release,
    .held = op_held,
};
