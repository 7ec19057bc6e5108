/* Test-and-test-and-set lock with bounded exponential backoff; past the
 * backoff cap waiters yield the CPU instead of spinning longer. */
#include <errno.h>
#include "numalock/spinlocks.h"
#include "../core/internal.h"

#define BACKOFF_MIN 4u
#define BACKOFF_MAX 1024u

/* the inline fast path (spinlocks.h) found the word set */
void nl_ttas_acquire_slow(nl_ttas_t *l)
{
    nl_count_slow(nl_self());
    uint32_t backoff = BACKOFF_MIN;
    for (;;) {
        nl_spinner_t sp = NL_SPINNER_INIT;
        while (atomic_load_explicit(&l->word, memory_order_relaxed))
            nl_spin_once(&sp);
        if (!atomic_exchange_explicit(&l->word, 1, memory_order_acquire))
            return;
        if (backoff >= BACKOFF_MAX) {
            sched_yield();
            continue;
        }
        uint32_t n = 1 + (uint32_t)(nl_rand() % backoff);
        for (uint32_t i = 0; i < n; i++)
            nl_cpu_relax();
        backoff *= 2;
    }
}


static void op_acquire(void *l) { nl_ttas_acquire(l); }
static int op_try(void *l) { return nl_ttas_try(l); }
static void op_release(void *l) { nl_ttas_release(l); }
static int op_held(const void *l) { return atomic_load_explicit(&((nl_ttas_t *)l)->word, memory_order_relaxed) != 0; }

NL_HIDDEN const nl_lock_ops_t nl_ops_ttas = {
    .name = "ttas",
    .description = "test-and-test-and-set with exponential backoff",
    .paper = "Anderson 1990; Mellor-Crummey & Scott 1991",
    .size = sizeof(nl_ttas_t), .align = 4,
    .props = NL_PROP_ZERO_INIT | NL_PROP_ANY_UNLOCK | NL_PROP_FREE_RELEASE,
    .acquire = op_acquire, .try_acquire = op_try, .release = op_release,
    .held = op_held,
};
