/*
 * Flat combining (Hendler, Incze, Shavit, Tzafrir, SPAA 2010, sec. 3), as a
 * lock whose critical section is a function.
 *
 * A thread writes its request into its own publication record; if the record
 * is not in the publication list it pushes it at the head (CAS, the only
 * write clients share). Whoever takes the combiner lock (ll) becomes the
 * combiner: it walks the list FC_PASSES times running every pending request
 * and answering it; every FC_CLEAN_EVERY sessions it unlinks records that
 * have been idle for FC_AGE sessions (never the head, so pushes and unlinks do
 * not race). A waiting thread checks its answer, tries the combiner lock when
 * it looks free, and pushes its record again if a combiner unlinked it.
 *
 * Deviations: the combiner lock is the MCS lock (the paper uses a test-and-set
 * word), so that a waiter that has not been answered within FC_PATIENCE_NS
 * can queue on it and sleep instead of spinning (2 cores, 32 threads
 * here); with ll held, such a thread combines, and runs its own request itself
 * if its record had been unlinked. Plain acquire/release take ll as well, so an
 * in-place holder excludes the combiner.
 *
 * Invariants: a request runs only with ll held and its fn is cleared with ll
 * held by the thread that runs it (exactly once); records leave the list only
 * with ll held, and their owner sees `active` drop to 0 afterwards.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "numalock/delegation.h"
#include "../internal.h"
#include "deleg_ids.h"

/* walks per combining session (a model checker's run, verify/wmm/fc.c, may
 * take fewer) */
#ifndef FC_PASSES
#define FC_PASSES 3
#endif
/* clean-up every FC_CLEAN_EVERY sessions of records idle for FC_AGE; the
 * model checker's run of the unlink and re-push (verify/wmm/fc.c) sets 1, 0 */
#ifndef FC_CLEAN_EVERY
#define FC_CLEAN_EVERY 64
#endif
#ifndef FC_AGE
#define FC_AGE 256
#endif
#define FC_PATIENCE_NS 8000

struct nl_fc_rec {
    _Alignas(NL_CACHELINE) _Atomic(nl_deleg_fn) fn; /* non-NULL: pending */
    void *arg;
    void *result;
    _Atomic uint32_t done;                /* grant word: 1 answered */
    _Atomic uint32_t active;              /* in the publication list */
    _Atomic(struct nl_fc_rec *) next;
    uint64_t age;                         /* session of its last request (combiner) */
};

static nl_fc_rec_t *fc_rec(nl_fc_t *l, int id)
{
    unsigned c = (unsigned)id / NL_DELEG_CHUNK;
    nl_fc_rec_t *chunk = atomic_load_explicit(&l->chunks[c], memory_order_acquire);
    if (NL_UNLIKELY(!chunk) &&
        !(chunk = nl_deleg_chunk_alloc((void *_Atomic *)&l->chunks[c], sizeof *chunk)))
        return NULL;
    return &chunk[(unsigned)id % NL_DELEG_CHUNK];
}

static void fc_push(nl_fc_t *l, nl_fc_rec_t *r)
{
    atomic_store_explicit(&r->active, 1, memory_order_relaxed);
    nl_fc_rec_t *h = atomic_load_explicit(&l->head, memory_order_relaxed);
    do
        atomic_store_explicit(&r->next, h, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&l->head, &h, r, memory_order_release, memory_order_relaxed));
}

static inline void fc_count(_Atomic uint64_t *c)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}

/* ll held: FC_PASSES walks of the publication list, then the clean-up. */
static void fc_combine(nl_fc_t *l, nl_fc_rec_t *me)
{
    uint64_t session = ++l->pass;
    fc_count(&l->terms);
    for (int pass = 0; pass < FC_PASSES; pass++) {
        uint32_t n = 0;
        for (nl_fc_rec_t *r = atomic_load_explicit(&l->head, memory_order_acquire); r;
             r = atomic_load_explicit(&r->next, memory_order_acquire)) {
            nl_deleg_fn f = atomic_load_explicit(&r->fn, memory_order_acquire);
            if (!f)
                continue;
            r->result = f(r->arg);
            r->age = session;
            atomic_store_explicit(&r->fn, NULL, memory_order_relaxed);
            nl_grant32(&r->done, 1);
            fc_count(r == me ? &l->own : &l->served);
            n++;
        }
        if (!n)
            break;
    }
    if (session % FC_CLEAN_EVERY)
        return;
    nl_fc_rec_t *prev = atomic_load_explicit(&l->head, memory_order_acquire);
    if (!prev)
        return;
    nl_fc_rec_t *r = atomic_load_explicit(&prev->next, memory_order_acquire);
    while (r) {
        nl_fc_rec_t *next = atomic_load_explicit(&r->next, memory_order_acquire);
        if (r->age + FC_AGE < session && !atomic_load_explicit(&r->fn, memory_order_acquire)) {
            atomic_store_explicit(&prev->next, next, memory_order_relaxed);
            atomic_store_explicit(&r->active, 0, memory_order_release); /* owner may push it again */
        } else
            prev = r;
        r = next;
    }
}

void *nl_fc_execute(nl_fc_t *l, nl_deleg_fn fn, void *arg)
{
    int id = nl_deleg_slot();
    nl_fc_rec_t *me = id >= 0 ? fc_rec(l, id) : NULL;
    if (NL_UNLIKELY(!me)) {
        nl_mcs_acquire(&l->ll);
        void *r = fn(arg);
        fc_count(&l->own);
        nl_mcs_release(&l->ll);
        return r;
    }
    me->arg = arg;
    atomic_store_explicit(&me->done, NL_GRANT_WAITING, memory_order_relaxed);
    atomic_store_explicit(&me->fn, fn, memory_order_release);
    if (!atomic_load_explicit(&me->active, memory_order_acquire))
        fc_push(l, me);
    nl_waiter_t w;
    nl_waiter_init(&w);
    uint64_t t0 = nl_machine_ticks(), patience = nl_ns_to_ticks(FC_PATIENCE_NS);
    for (;;) {
        if (atomic_load_explicit(&me->done, memory_order_acquire) == 1)
            return me->result;
        if (atomic_load_explicit(&l->ll.tail, memory_order_relaxed) == NULL && nl_mcs_try(&l->ll) == 0)
            break;
        if (!atomic_load_explicit(&me->active, memory_order_acquire))
            fc_push(l, me);
        if (nl_machine_ticks() - t0 > patience) {
            nl_mcs_acquire(&l->ll);
            break;
        }
        nl_wait_step(&w);
    }
    /* combiner */
    if (atomic_load_explicit(&me->fn, memory_order_relaxed) && !atomic_load_explicit(&me->active, memory_order_acquire)) {
        /* unlinked before it was pushed again: run it here */
        atomic_store_explicit(&me->fn, NULL, memory_order_relaxed);
        me->result = fn(arg);
        fc_count(&l->own);
        nl_grant32(&me->done, 1);
    }
    fc_combine(l, me);
    nl_mcs_release(&l->ll);
    return me->result;
}

int nl_fc_init(nl_fc_t *l)
{
    memset(l, 0, sizeof *l);
    return 0;
}

void nl_fc_destroy(nl_fc_t *l)
{
    for (size_t c = 0; c < NL_DELEG_MAX_SLOTS / NL_DELEG_CHUNK; c++) {
        free(atomic_load_explicit(&l->chunks[c], memory_order_relaxed));
        atomic_store_explicit(&l->chunks[c], NULL, memory_order_relaxed);
    }
    atomic_store_explicit(&l->head, NULL, memory_order_relaxed);
}

void nl_fc_acquire(nl_fc_t *l) { nl_mcs_acquire(&l->ll); }
int nl_fc_try(nl_fc_t *l) { return nl_mcs_try(&l->ll); }
void nl_fc_release(nl_fc_t *l) { nl_mcs_release(&l->ll); }

void nl_fc_stats(const nl_fc_t *l, nl_fc_stats_t *out)
{
    out->served = atomic_load_explicit(&l->served, memory_order_relaxed);
    out->own = atomic_load_explicit(&l->own, memory_order_relaxed);
    out->terms = atomic_load_explicit(&l->terms, memory_order_relaxed);
}

static size_t fc_footprint(const void *p)
{
    const nl_fc_t *l = p;
    size_t n = sizeof *l;
    for (size_t c = 0; c < NL_DELEG_MAX_SLOTS / NL_DELEG_CHUNK; c++)
        if (atomic_load_explicit(&l->chunks[c], memory_order_relaxed))
            n += NL_DELEG_CHUNK * sizeof(nl_fc_rec_t);
    return n;
}

static int op_init(void *l, const nl_attr_t *attr) { (void)attr; return nl_fc_init(l); }
static void op_destroy(void *l) { nl_fc_destroy(l); }
static void op_acquire(void *l) { nl_fc_acquire(l); }
static int op_try(void *l) { return nl_fc_try(l); }
static void op_release(void *l) { nl_fc_release(l); }
static void *op_execute(void *l, void *(*fn)(void *), void *arg) { return nl_fc_execute(l, fn, arg); }

NL_HIDDEN const nl_lock_ops_t nl_ops_fc = {
    .name = "fc",
    .description = "flat combining: publication list, one combiner at a time (execute; not interposable)",
    .paper = "Hendler et al., SPAA 2010, sec. 3",
    .size = sizeof(nl_fc_t), .align = NL_CACHELINE,
    .props = NL_PROP_DELEGATE | NL_PROP_BLOCKING | NL_PROP_NEEDS_DESTROY,
    .init = op_init, .destroy = op_destroy,
    .acquire = op_acquire, .try_acquire = op_try, .release = op_release,
    .execute = op_execute, .footprint = fc_footprint,
};
