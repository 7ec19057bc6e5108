/* Opt-in per-lock statistics. Write-side counters are updated by the holder
 * only (plain load + store, no read-modify-write on the hot path); read-side
 * acquisitions are counted with an atomic add. */
#include <errno.h>
#include "internal.h"
#include "stats.h"

void nl_stats_init(nl_stats_t *s)
{
    atomic_init(&s->acquisitions, 0);
    atomic_init(&s->contended, 0);
    atomic_init(&s->handovers, 0);
    atomic_init(&s->remote_handovers, 0);
    atomic_init(&s->read_acquisitions, 0);
    for (int i = 0; i < NL_STATS_EXTRA; i++)
        atomic_init(&s->extra[i], 0);
    atomic_init(&s->parks, 0);
    atomic_init(&s->gate_waits, 0);
    atomic_init(&s->wakes, 0);
    atomic_init(&s->handovers_to_parked, 0);
    atomic_init(&s->woken, 0);
    for (int i = 0; i < NL_STATS_LEVELS; i++)
        atomic_init(&s->crossings[i], 0);
    atomic_init(&s->last_thread, -1);
    atomic_init(&s->last_node, -1);
    atomic_init(&s->last_leaf, -1);
}

_Static_assert(NL_STATS_LEVELS == NL_MAX_LEVELS, "a crossing counter per level");

#define BUMP(field) \
    atomic_store_explicit(&s->field, atomic_load_explicit(&s->field, memory_order_relaxed) + 1, \
                          memory_order_relaxed)

void nl_stats_on_acquire(nl_stats_t *s, bool contended)
{
    nl_self_t *self = nl_self();
    int64_t me = self->id >= 0 ? self->id : (int64_t)(uintptr_t)self;
    int node = nl_self_node(self), leaf = self->leaf;
    int64_t last = atomic_load_explicit(&s->last_thread, memory_order_relaxed);
    BUMP(acquisitions);
    if (contended)
        BUMP(contended);
    if (last >= 0 && last != me) {
        BUMP(handovers);
        if (atomic_load_explicit(&s->last_node, memory_order_relaxed) != node)
            BUMP(remote_handovers);
        /* the levels the hand-over crossed (ids of the topology the
         * thread's leaf is of) */
        int prev = atomic_load_explicit(&s->last_leaf, memory_order_relaxed);
        const nl_topology_t *t = self->topo;
        if (prev >= 0 && prev < t->ndomains[0] && prev != leaf)
            for (int l = 0; l < t->nlevels; l++)
                if (t->up[l][prev] != t->up[l][leaf])
                    BUMP(crossings[l]);
    }
    atomic_store_explicit(&s->last_thread, me, memory_order_relaxed);
    atomic_store_explicit(&s->last_node, node, memory_order_relaxed);
    atomic_store_explicit(&s->last_leaf, leaf, memory_order_relaxed);
}

/* What the calling thread's waiting counters moved by during one lock call
 * (`before` taken just before it): added atomically, since a release's part
 * is added after the lock is gone. */
void nl_stats_add_waiting(nl_stats_t *s, const nl_wait_counts_t *before)
{
    const nl_wait_counts_t *now = &nl_self()->wc;
#define ADD(field, count)                                                              \
    if (now->count != before->count)                                                   \
        atomic_fetch_add_explicit(&s->field, now->count - before->count, memory_order_relaxed)
    ADD(parks, parks);
    ADD(gate_waits, gate_parks);
    ADD(wakes, wakes);
    ADD(woken, woken);
    ADD(handovers_to_parked, to_parked);
    for (int i = 0; i < NL_STATS_EXTRA; i++)
        ADD(extra[i], extra[i]);
#undef ADD
}

void nl_stats_on_read_acquire(nl_stats_t *s)
{
    atomic_fetch_add_explicit(&s->read_acquisitions, 1, memory_order_relaxed);
}

void nl_stats_read(const nl_stats_t *s, nl_stats_snapshot_t *out)
{
    out->acquisitions = atomic_load_explicit(&s->acquisitions, memory_order_relaxed);
    out->contended = atomic_load_explicit(&s->contended, memory_order_relaxed);
    out->handovers = atomic_load_explicit(&s->handovers, memory_order_relaxed);
    out->remote_handovers = atomic_load_explicit(&s->remote_handovers, memory_order_relaxed);
    out->read_acquisitions = atomic_load_explicit(&s->read_acquisitions, memory_order_relaxed);
    for (int i = 0; i < NL_STATS_EXTRA; i++)
        out->extra[i] = atomic_load_explicit(&s->extra[i], memory_order_relaxed);
    out->parks = atomic_load_explicit(&s->parks, memory_order_relaxed);
    out->gate_waits = atomic_load_explicit(&s->gate_waits, memory_order_relaxed);
    out->wakes = atomic_load_explicit(&s->wakes, memory_order_relaxed);
    out->woken = atomic_load_explicit(&s->woken, memory_order_relaxed);
    for (int i = 0; i < NL_STATS_LEVELS; i++)
        out->crossings[i] = atomic_load_explicit(&s->crossings[i], memory_order_relaxed);
    out->handovers_to_parked = atomic_load_explicit(&s->handovers_to_parked, memory_order_relaxed);
}
