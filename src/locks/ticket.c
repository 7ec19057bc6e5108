/* Ticket lock: FIFO by fetch-and-add on `next`; the holder advances `owner`.
 * The inline fast path takes a free lock with one CAS of `next` from `owner`;
 * a thread that finds it taken begins a wait (src/wait/wait.h: while the
 * process is overloaded it waits passively at the gate first, so that the
 * tickets in line belong to running threads) before it takes a ticket. */
#include <errno.h>
#include "ticket_impl.h"

static void ticket_wait(nl_ticket_t *l, nl_waiter_t *w, uint32_t me)
{
    nl_ticket_await(l, me, w);
    nl_wait_end(w);
}

static bool ticket_busy(const void *p) { return nl_ticket_busy(p); }

/* the inline fast path (spinlocks.h) found the lock taken */
void nl_ticket_lock_slow(nl_ticket_t *l)
{
    /* saturated as soon as it is taken: a ticket is served in turn and
     * nobody may take the lock ahead of it, so one taken by a thread that
     * then loses its CPU stalls the lock */
    nl_waiter_t w;
    nl_wait_begin(&w, l, ticket_busy, true);
    ticket_wait(l, &w, nl_ticket_take(l));
}

/* ticket `me` was taken by an inline path that takes the ticket itself (binary
 * compatibility), not yet served */
void nl_ticket_acquire_slow(nl_ticket_t *l, uint32_t me)
{
    nl_waiter_t w;
    nl_wait_begin(&w, l, NULL, false); /* already in line: no gate */
    ticket_wait(l, &w, me);
}

int nl_ticket_try(nl_ticket_t *l) { return nl_ticket_take_free(l) ? 0 : EBUSY; }

static void op_acquire(void *l) { nl_ticket_acquire(l); }
static int op_try(void *l) { return nl_ticket_try(l); }
static void op_release(void *l) { nl_ticket_release(l); }
/* held while a ticket is out that has not been served (a release of a free
 * ticket lock would move owner past next: no NL_PROP_FREE_RELEASE) */
static int op_held(const void *l) { return ticket_busy(l); }

NL_HIDDEN const nl_lock_ops_t nl_ops_ticket = {
    .name = "ticket",
    .description = "ticket lock (FIFO)",
    .paper = "Mellor-Crummey & Scott 1991",
    .size = sizeof(nl_ticket_t), .align = 8,
    .props = NL_PROP_FAIR | NL_PROP_ZERO_INIT | NL_PROP_ANY_UNLOCK,
    .acquire = op_acquire, .try_acquire = op_try, .release = op_release,
    .held = op_held,
};
