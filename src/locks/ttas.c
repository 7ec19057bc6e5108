/* Test-and-test-and-set lock with bounded randomised exponential backoff
 * (nl_backoff, src/wait/wait.h: past the cap a waiter pauses, and yields
 * while the system is overloaded). */
#include <errno.h>
#include "numalock/spinlocks.h"
#include "../internal.h"

#define BACKOFF_MIN 4u
#define BACKOFF_MAX 1024u

static bool ttas_busy(const void *l) { return atomic_load_explicit(&((const nl_ttas_t *)l)->word, memory_order_relaxed) != 0; }

/* the inline fast path (spinlocks.h) found the word set */
void nl_ttas_acquire_slow(nl_ttas_t *l)
{
    nl_waiter_t w;
    /* saturated for the gate: while overloaded, arrivals at a taken word
     * wait passively in order, instead of racing for it whenever they run */
    nl_wait_begin(&w, l, ttas_busy, true);
    nl_backoff_t b = NL_BACKOFF_INIT(BACKOFF_MIN, &w);
    for (;;) {
        while (atomic_load_explicit(&l->word, memory_order_relaxed))
            nl_wait_step(&w);
        if (!atomic_exchange_explicit(&l->word, 1, memory_order_acquire))
            break;
        nl_backoff(&b, BACKOFF_MAX);
    }
    nl_wait_end(&w);
}


static void op_acquire(void *l) { nl_ttas_acquire(l); }
static int op_try(void *l) { return nl_ttas_try(l); }
static void op_release(void *l) { nl_ttas_release(l); }
static int op_held(const void *l) { return ttas_busy(l); }

NL_HIDDEN const nl_lock_ops_t nl_ops_ttas = {
    .name = "ttas",
    .description = "test-and-test-and-set with exponential backoff",
    .paper = "Anderson 1990; Mellor-Crummey & Scott 1991",
    .size = sizeof(nl_ttas_t), .align = 4,
    .props = NL_PROP_ZERO_INIT | NL_PROP_ANY_UNLOCK | NL_PROP_FREE_RELEASE,
    .acquire = op_acquire, .try_acquire = op_try, .release = op_release,
    .held = op_held,
};
