/* Test-and-set lock: one exchange per attempt; waiters spin then yield. */
#include <errno.h>
#include "numalock/spinlocks.h"
#include "../internal.h"

/* the inline fast path (spinlocks.h) found the word set */
void nl_tas_acquire_slow(nl_tas_t *l)
{
    nl_count_slow(nl_self());
    nl_spinner_t sp = NL_SPINNER_INIT;
    do
        nl_spin_once(&sp);
    while (atomic_exchange_explicit(&l->word, 1, memory_order_acquire));
}

static void op_acquire(void *l) { nl_tas_acquire(l); }
static int op_try(void *l) { return nl_tas_try(l); }
static void op_release(void *l) { nl_tas_release(l); }
static int op_held(const void *l) { return atomic_load_explicit(&((nl_tas_t *)l)->word, memory_order_relaxed) != 0; }

NL_HIDDEN const nl_lock_ops_t nl_ops_tas = {
    .name = "tas",
    .description = "test-and-set spin lock",
    .paper = "classic (Anderson 1990)",
    .size = sizeof(nl_tas_t), .align = 4,
    .props = NL_PROP_ZERO_INIT | NL_PROP_ANY_UNLOCK | NL_PROP_FREE_RELEASE,
    .acquire = op_acquire, .try_acquire = op_try, .release = op_release,
    .held = op_held,
};
