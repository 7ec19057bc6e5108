/*
 * The cohort locks that the CNA paper (section 7) measures as its NUMA-aware
 * baselines, as instances of the composition of cohort.h (Dice, Marathe &
 * Shavit, "Lock Cohorting: A General Technique for Designing NUMA Locks",
 * PPoPP 2012 / TOPC 2015):
 *
 *   c-bo-mcs   global: test-and-set with exponential backoff (BO)
 *              local:  one MCS lock per node
 *   c-tkt-tkt  global: ticket lock, local: one ticket lock per node
 *
 * Both global locks are thread-oblivious; both local locks tell whether a
 * waiter exists (MCS: a successor linked; ticket: another ticket out).
 * Waiting (src/wait/wait.h): one saturated wait for the whole lock (cohort.h);
 * MCS waiters wait on their grant word (spin while they have a CPU, park when
 * the wait is long, wake their successor early if they parked); ticket and
 * backoff waiters take steps (pauses; yields while overloaded).
 */
#include "cohort.h"

/* ==== C-BO-MCS ============================================================ */
typedef struct {
    _Atomic uint32_t global;  /* BO test-and-set word */
    uint32_t pad_;
    co_t co;
} nl_cbomcs_t;

CO_OP void cb_global_acquire(void *g, co_local_t *L, nl_waiter_t *waiter)
{
    (void)L;
    _Atomic uint32_t *w = g;
    if (NL_LIKELY(!atomic_exchange_explicit(w, 1, memory_order_acquire)))
        return;
    nl_waiter_lazy(waiter);
    nl_backoff_t b = NL_BACKOFF_INIT(1, waiter);
    while (atomic_load_explicit(w, memory_order_relaxed) ||
           atomic_exchange_explicit(w, 1, memory_order_acquire))
        nl_backoff(&b, 1024);
}
CO_OP bool cb_global_try(void *g, co_local_t *L)
{
    (void)L;
    _Atomic uint32_t *w = g;
    return !atomic_load_explicit(w, memory_order_relaxed) &&
           !atomic_exchange_explicit(w, 1, memory_order_acquire);
}
CO_OP void cb_global_release(void *g, co_local_t *L)
{
    (void)L;
    atomic_store_explicit((_Atomic uint32_t *)g, 0, memory_order_release);
}
CO_OP bool cb_global_busy(const void *g) { return atomic_load_explicit((_Atomic uint32_t *)g, memory_order_relaxed); }

static const co_global_t cb_global = {
    cb_global_acquire, cb_global_try, cb_global_release, cb_global_busy, false, NULL, NULL,
};

static int cb_init(void *p, const nl_attr_t *attr)
{
    nl_cbomcs_t *l = p;
    atomic_init(&l->global, 0);
    return co_init(&l->co, attr);
}

CO_INSTANCE(cb, nl_cbomcs_t, global, cb_global, co_local_mcs)
CO_STORAGE(cb, nl_cbomcs_t)

NL_HIDDEN const nl_lock_ops_t nl_ops_c_bo_mcs = {
    .name = "c-bo-mcs",
    .description = "cohort lock: backoff test-and-set global lock, MCS lock per node",
    .paper = "Dice, Marathe & Shavit 2012 (lock cohorting); CNA paper sec. 7",
    .size = sizeof(nl_cbomcs_t), .align = 8,
    .props = NL_PROP_NUMA_AWARE | NL_PROP_NEEDS_DESTROY,
    .init = cb_init, .destroy = cb_destroy,
    .acquire = cb_acquire, .try_acquire = cb_try, .release = cb_release,
    .footprint = cb_footprint, .bytes_at_nodes = cb_bytes_at,
};

/* ==== C-TKT-TKT =========================================================== */
typedef struct {
    nl_ticket_t global;
    co_t co;
} nl_ctkttkt_t;

CO_OP void ct_global_acquire(void *g, co_local_t *L, nl_waiter_t *w)
{
    (void)L;
    nl_ticket_await(g, nl_ticket_take(g), w);
}
CO_OP bool ct_global_try(void *g, co_local_t *L)
{
    (void)L;
    return nl_ticket_take_free(g);
}
CO_OP void ct_global_release(void *g, co_local_t *L)
{
    (void)L;
    nl_ticket_release(g);
}
CO_OP bool ct_global_busy(const void *g) { return nl_ticket_busy(g); }

static const co_global_t ct_global = {
    ct_global_acquire, ct_global_try, ct_global_release, ct_global_busy, false, NULL, NULL,
};

static int ct_init(void *p, const nl_attr_t *attr)
{
    nl_ctkttkt_t *l = p;
    atomic_init(&l->global.next, 0);
    atomic_init(&l->global.owner, 0);
    return co_init(&l->co, attr);
}

CO_INSTANCE(ct, nl_ctkttkt_t, global, ct_global, co_local_ticket)
CO_STORAGE(ct, nl_ctkttkt_t)

NL_HIDDEN const nl_lock_ops_t nl_ops_c_tkt_tkt = {
    .name = "c-tkt-tkt",
    .description = "cohort lock: ticket global lock, ticket lock per node",
    .paper = "Dice, Marathe & Shavit 2012 (lock cohorting); CNA paper sec. 7",
    .size = sizeof(nl_ctkttkt_t), .align = 8,
    .props = NL_PROP_FAIR | NL_PROP_NUMA_AWARE | NL_PROP_NEEDS_DESTROY,
    .init = ct_init, .destroy = ct_destroy,
    .acquire = ct_acquire, .try_acquire = ct_try, .release = ct_release,
    .footprint = ct_footprint, .bytes_at_nodes = ct_bytes_at,
};
