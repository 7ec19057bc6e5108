/*
 * Lock cohorting (Dice, Marathe & Shavit, "Lock Cohorting: A General
 * Technique for Designing NUMA Locks", PPoPP 2012 / TOPC 2015), the
 * NUMA-aware baselines of the CNA paper (section 7):
 *
 *   c-bo-mcs   global: test-and-set with exponential backoff (BO)
 *              local:  one MCS lock per node
 *   c-tkt-tkt  global: ticket lock, local: one ticket lock per node
 *
 * A thread takes its node's local lock, then the global lock unless the
 * previous local owner passed the global lock along with the local one. At
 * release, if the local lock has a waiter (the cohort is not "alone") and
 * fewer than `local_passes` consecutive local passes happened, the local
 * lock is passed with the global lock still held; otherwise the global lock
 * is released first, then the local one. Both global locks are
 * thread-oblivious (any thread of the cohort may release them), both local
 * locks can tell whether a waiter exists (cohort detection).
 *
 * The per-node locks are allocated at init, sized by nl_topology_nodes();
 * a thread uses local lock (its node % nodes) and remembers which one in its
 * MCS node (c-bo-mcs) or in the lock (c-tkt-tkt, written by the holder).
 * Waiting (src/wait/wait.h): a thread that finds the lock taken begins a
 * saturated wait (passive at the gate while the process is overloaded); MCS
 * waiters then wait on their grant word (spin while they have a CPU, park
 * when the wait is long, wake their successor early if they parked); ticket
 * and backoff waiters take steps (pauses; yields while overloaded).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cohort_mcs.h"

/* ==== C-BO-MCS ============================================================ */
/* the composition of cohort_mcs.h with a backoff test-and-set global lock */
typedef struct {
    _Atomic uint32_t global;  /* BO test-and-set word */
    uint32_t nnodes;
    uint32_t passes;
    uint32_t pad_;
    co_local_t *local;
} nl_cbomcs_t;

static void cb_global_acquire(void *g, co_local_t *L, nl_waiter_t *waiter)
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
static bool cb_global_try(void *g, co_local_t *L)
{
    (void)L;
    _Atomic uint32_t *w = g;
    return !atomic_load_explicit(w, memory_order_relaxed) &&
           !atomic_exchange_explicit(w, 1, memory_order_acquire);
}
static void cb_global_release(void *g, co_local_t *L)
{
    (void)L;
    atomic_store_explicit((_Atomic uint32_t *)g, 0, memory_order_release);
}
static bool cb_global_busy(const void *g) { return atomic_load_explicit((_Atomic uint32_t *)g, memory_order_relaxed); }

static const co_global_t cb_global = {
    cb_global_acquire, cb_global_try, cb_global_release, cb_global_busy,
};

static int cb_init(void *p, const nl_attr_t *attr)
{
    nl_cbomcs_t *l = p;
    uint32_t n = co_nodes();
    co_local_t *loc = NULL;
    if (posix_memalign((void **)&loc, CO_LINE, n * sizeof *loc) || !loc)
        return ENOMEM;
    memset(loc, 0, n * sizeof *loc);
    atomic_init(&l->global, 0);
    l->nnodes = n;
    l->passes = co_passes(attr);
    l->local = loc;
    return 0;
}

static void cb_destroy(void *p)
{
    nl_cbomcs_t *l = p;
    free(l->local);
    l->local = NULL;
}

static bool cb_busy(const void *p)
{
    const nl_cbomcs_t *l = p;
    return co_busy(&l->global, &cb_global, l->local, l->nnodes);
}

static void cb_acquire(void *p)
{
    nl_cbomcs_t *l = p;
    co_acquire(l, &l->global, l->local, l->nnodes, &cb_global, cb_busy);
}

static int cb_try(void *p)
{
    nl_cbomcs_t *l = p;
    return co_try(l, &l->global, l->local, l->nnodes, &cb_global);
}

static void cb_release(void *p)
{
    nl_cbomcs_t *l = p;
    co_release(l, &l->global, l->local, l->passes, &cb_global);
}

static size_t cb_bytes_at(unsigned nodes) { return sizeof(nl_cbomcs_t) + nodes * sizeof(co_local_t); }
static size_t cb_footprint(const void *p) { return cb_bytes_at(((const nl_cbomcs_t *)p)->nnodes); }

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
typedef struct ct_local {
    _Alignas(CO_LINE) _Atomic uint32_t next;  /* next ticket to hand out */
    _Atomic uint32_t owner;                    /* ticket being served */
    uint32_t global_passed; /* holder-to-holder: the global lock comes along */
    uint32_t passes;        /* consecutive local passes (holder only) */
} ct_local_t;

typedef struct {
    _Atomic uint32_t gnext, gowner;  /* global ticket lock */
    uint32_t nnodes;
    uint32_t passes;
    uint32_t owner_numa;             /* the holder's local lock (holder only) */
    uint32_t pad_;
    ct_local_t *local;
} nl_ctkttkt_t;

static int ct_init(void *p, const nl_attr_t *attr)
{
    nl_ctkttkt_t *l = p;
    uint32_t n = co_nodes();
    ct_local_t *loc = NULL;
    if (posix_memalign((void **)&loc, CO_LINE, n * sizeof *loc) || !loc)
        return ENOMEM;
    memset(loc, 0, n * sizeof *loc);
    atomic_init(&l->gnext, 0);
    atomic_init(&l->gowner, 0);
    l->nnodes = n;
    l->passes = co_passes(attr);
    l->owner_numa = 0;
    l->local = loc;
    return 0;
}

static void ct_destroy(void *p)
{
    nl_ctkttkt_t *l = p;
    free(l->local);
    l->local = NULL;
}

static void ct_wait_ticket(_Atomic uint32_t *owner, uint32_t t, nl_waiter_t *w)
{
    if (NL_LIKELY(atomic_load_explicit(owner, memory_order_acquire) == t))
        return;
    nl_waiter_lazy(w);
    while (atomic_load_explicit(owner, memory_order_acquire) != t)
        nl_wait_step(w);
}

/* taken: a global ticket out and not served (the gate's test) */
static bool ct_busy(const void *p)
{
    const nl_ctkttkt_t *l = p;
    return atomic_load_explicit(&l->gnext, memory_order_relaxed) !=
           atomic_load_explicit(&l->gowner, memory_order_relaxed);
}

static void ct_acquire(void *p)
{
    nl_ctkttkt_t *l = p;
    uint32_t n = (uint32_t)nl_self_node(nl_self()) % l->nnodes;
    ct_local_t *L = &l->local[n];
    nl_waiter_t w;
    if (atomic_load_explicit(&L->next, memory_order_relaxed) !=
            atomic_load_explicit(&L->owner, memory_order_relaxed) ||
        ct_busy(l))
        nl_wait_begin(&w, l, ct_busy, true); /* tickets: saturated once taken */
    else
        w.self = NULL; /* lazy: set up where it first waits */
    uint32_t t = atomic_fetch_add_explicit(&L->next, 1, memory_order_relaxed);
    ct_wait_ticket(&L->owner, t, &w);
    if (!L->global_passed) {
        L->passes = 0;
        uint32_t g = atomic_fetch_add_explicit(&l->gnext, 1, memory_order_relaxed);
        ct_wait_ticket(&l->gowner, g, &w);
    }
    nl_wait_end(&w);
    l->owner_numa = n;
}

static int ct_try(void *p)
{
    nl_ctkttkt_t *l = p;
    uint32_t n = (uint32_t)nl_self_node(nl_self()) % l->nnodes;
    ct_local_t *L = &l->local[n];
    /* acquire loads: the previous owners' release stores are on `owner` */
    uint32_t t = atomic_load_explicit(&L->owner, memory_order_acquire);
    if (!atomic_compare_exchange_strong_explicit(&L->next, &t, t + 1, memory_order_acquire,
                                                 memory_order_relaxed))
        return EBUSY;
    /* local lock free and unqueued: nobody passed the global lock to it */
    uint32_t g = atomic_load_explicit(&l->gowner, memory_order_acquire);
    if (atomic_compare_exchange_strong_explicit(&l->gnext, &g, g + 1, memory_order_acquire,
                                                memory_order_relaxed)) {
        L->passes = 0;
        L->global_passed = 0;
        l->owner_numa = n;
        return 0;
    }
    L->global_passed = 0;
    atomic_store_explicit(&L->owner, t + 1, memory_order_release);
    return EBUSY;
}

static void ct_release(void *p)
{
    nl_ctkttkt_t *l = p;
    ct_local_t *L = &l->local[l->owner_numa];
    uint32_t mine = atomic_load_explicit(&L->owner, memory_order_relaxed);
    bool alone = atomic_load_explicit(&L->next, memory_order_relaxed) == mine + 1;
    if (!alone && L->passes + 1 < l->passes) {
        L->passes++;
        L->global_passed = 1;
    } else {
        L->global_passed = 0;
        atomic_store_explicit(&l->gowner, atomic_load_explicit(&l->gowner, memory_order_relaxed) + 1,
                              memory_order_release);
    }
    atomic_store_explicit(&L->owner, mine + 1, memory_order_release);
}

static size_t ct_bytes_at(unsigned nodes) { return sizeof(nl_ctkttkt_t) + nodes * sizeof(ct_local_t); }
static size_t ct_footprint(const void *p) { return ct_bytes_at(((const nl_ctkttkt_t *)p)->nnodes); }

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
