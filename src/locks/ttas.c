/* Test-and-test-and-set lock with bounded exponential backoff; past the
 * backoff cap waiters yield the CPU instead of spinning longer. */
#include <errno.h>
#include "numalock/spinlocks.h"
#include "../core/internal.h"

#define BACKOFF_MIN 4u
#define BACKOFF_MAX 1024u

int nl_ttas_try(nl_ttas_t *l)
{
    if (atomic_load_explicit(&l->word, memory_order_relaxed))
        return EBUSY;
    return atomic_exchange_explicit(&l->word, 1, memory_order_acquire) ? EBUSY : 0;
}

void nl_ttas_acquire(nl_ttas_t *l)
{
    if (NL_LIKELY(!atomic_load_explicit(&l->word, memory_order_relaxed) &&
                  !atomic_exchange_explicit(&l->word, 1, memory_order_acquire)))
        return;
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

void nl_ttas_release(nl_ttas_t *l) { atomic_store_explicit(&l->word, 0, memory_order_release); }

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
