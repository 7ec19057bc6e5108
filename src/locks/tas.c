/* Test-and-set lock: one exchange per attempt; waiters spin then yield. */
#include <errno.h>
#include "numalock/spinlocks.h"
#include "../internal.h"

static bool tas_busy(const void *l) { return atomic_load_explicit(&((const nl_tas_t *)l)->word, memory_order_relaxed) != 0; }

/* the inline fast path (spinlocks.h) found the word set */
void nl_tas_acquire_slow(nl_tas_t *l)
{
    nl_waiter_t w;
    /* saturated for the gate: while overloaded, arrivals at a taken word
     * wait passively in order, instead of racing for it whenever they run */
    nl_wait_begin(&w, l, tas_busy, true);
    do
        nl_wait_step(&w);
    while (atomic_exchange_explicit(&l->word, 1, memory_order_acquire));
    nl_wait_end(&w);
}

static void op_acquire(void *l) { nl_tas_acquire(l); }
static int op_try(void *l) { return nl_tas_try(l); }
static void op_release(void *l) { nl_tas_release(l); }
static int op_held(const void *l) { return tas_busy(l); }

NL_HIDDEN const nl_lock_ops_t nl_ops_tas = {
    .name = "tas",
    .description = "test-and-set spin lock",
    .paper = "classic (Anderson 1990)",
    .size = sizeof(nl_tas_t), .align = 4,
    .props = NL_PROP_ZERO_INIT | NL_PROP_ANY_UNLOCK | NL_PROP_FREE_RELEASE,
    .acquire = op_acquire, .try_acquire = op_try, .release = op_release,
    .held = op_held,
};
