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
 * Waiting (src/wait/wait.h): a thread that finds its local lock taken passes
 * the gate (passive while the system is overloaded); MCS waiters then wait on
 * their grant word (spin while they have a CPU, park when the wait is long,
 * wake their successor early if they parked); ticket and backoff waiters
 * pause, and yield while the system is overloaded (nl_spin_once).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "../core/internal.h"

#define CO_DEFAULT_PASSES 128u
#define CO_LINE 128

static uint32_t co_passes(const nl_attr_t *attr)
{
    return attr && attr->local_passes ? attr->local_passes : CO_DEFAULT_PASSES;
}

static inline uint32_t co_nodes(void)
{
    int n = nl_topology_nodes();
    return n < 1 ? 1u : (uint32_t)n;
}

/* ==== C-BO-MCS ============================================================ */
/* grant values of the local MCS lock: never 0 or 3 */
#define CB_ACQUIRE_GLOBAL 1u                 /* global released: take it yourself */
#define CB_PASSED(k) (((uint32_t)(k) << 2) | 2u) /* global passed, k-th local pass */

typedef struct cb_qnode {
    _Atomic(struct cb_qnode *) next;
    _Atomic uint32_t grant;
    uint32_t numa;    /* which local lock */
    uint32_t passes;  /* consecutive local passes including ours (holder only) */
} cb_qnode_t;

typedef struct cb_local {
    _Alignas(CO_LINE) _Atomic(cb_qnode_t *) tail;
} cb_local_t;

typedef struct {
    _Atomic uint32_t global;  /* BO test-and-set word */
    uint32_t nnodes;
    uint32_t passes;
    uint32_t pad_;
    cb_local_t *local;
} nl_cbomcs_t;

_Static_assert(sizeof(cb_qnode_t) <= 120, "fits a pool slot");

static void cb_global_acquire(_Atomic uint32_t *g)
{
    nl_spinner_t sp = NL_SPINNER_INIT;
    uint32_t delay = 1;
    for (;;) {
        if (!atomic_load_explicit(g, memory_order_relaxed) &&
            !atomic_exchange_explicit(g, 1, memory_order_acquire))
            return;
        for (uint32_t i = 0; i < delay; i++)
            nl_cpu_relax();
        if (delay < 1024)
            delay <<= 1;
        nl_spin_once(&sp);
    }
}

static int cb_init(void *p, const nl_attr_t *attr)
{
    nl_cbomcs_t *l = p;
    uint32_t n = co_nodes();
    cb_local_t *loc = NULL;
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

static void cb_local_unlock(cb_local_t *L, cb_qnode_t *q, cb_qnode_t *next)
{
    if (!next) {
        cb_qnode_t *expect = q;
        if (atomic_compare_exchange_strong_explicit(&L->tail, &expect, NULL, memory_order_release,
                                                    memory_order_relaxed))
            return;
        nl_spinner_t sp = NL_SPINNER_INIT;
        while (!(next = atomic_load_explicit(&q->next, memory_order_acquire)))
            nl_spin_once(&sp);
    }
    nl_grant32(&next->grant, CB_ACQUIRE_GLOBAL);
}

static void cb_acquire(void *p)
{
    nl_cbomcs_t *l = p;
    cb_qnode_t *q = nl_qnode_get(l);
    uint32_t n = (uint32_t)nl_self_node(nl_self()) % l->nnodes;
    cb_local_t *L = &l->local[n];
    q->numa = n;
    atomic_store_explicit(&q->next, NULL, memory_order_relaxed);
    atomic_store_explicit(&q->grant, NL_GRANT_WAITING, memory_order_relaxed);
    /* the lock is taken (global word set, or our node's queue busy): the
     * gate while the system is overloaded (src/wait), for the whole lock */
    if (atomic_load_explicit(&l->global, memory_order_relaxed) ||
        atomic_load_explicit(&L->tail, memory_order_relaxed)) {
        nl_count_slow(nl_self());
        nl_gate(l);
    }
    cb_qnode_t *pred = atomic_exchange_explicit(&L->tail, q, memory_order_acq_rel);
    if (pred) {
        atomic_store_explicit(&pred->next, q, memory_order_release);
        uint32_t g = nl_await32(&q->grant);
        if (nl_parked_last(nl_self())) { /* early wake of our successor */
            cb_qnode_t *next = atomic_load_explicit(&q->next, memory_order_acquire);
            if (next)
                nl_nudge32(&next->grant);
        }
        if (g != CB_ACQUIRE_GLOBAL) { /* the global lock came with the local one */
            q->passes = g >> 2;
            return;
        }
    }
    q->passes = 0;
    cb_global_acquire(&l->global);
}

static int cb_try(void *p)
{
    nl_cbomcs_t *l = p;
    cb_qnode_t *q = nl_qnode_get(l);
    uint32_t n = (uint32_t)nl_self_node(nl_self()) % l->nnodes;
    cb_local_t *L = &l->local[n];
    q->numa = n;
    q->passes = 0;
    atomic_store_explicit(&q->next, NULL, memory_order_relaxed);
    atomic_store_explicit(&q->grant, NL_GRANT_WAITING, memory_order_relaxed);
    cb_qnode_t *expect = NULL;
    if (atomic_compare_exchange_strong_explicit(&L->tail, &expect, q, memory_order_acq_rel,
                                                memory_order_relaxed)) {
        if (!atomic_load_explicit(&l->global, memory_order_relaxed) &&
            !atomic_exchange_explicit(&l->global, 1, memory_order_acquire))
            return 0;
        /* global busy: give the local lock back (a waiter that came
         * meanwhile takes the global lock itself) */
        cb_local_unlock(L, q, atomic_load_explicit(&q->next, memory_order_acquire));
    }
    nl_qnode_put(q);
    return EBUSY;
}

static void cb_release(void *p)
{
    nl_cbomcs_t *l = p;
    cb_qnode_t *q = nl_qnode_find(l);
    cb_local_t *L = &l->local[q->numa];
    cb_qnode_t *next = atomic_load_explicit(&q->next, memory_order_acquire);
    if (next && q->passes + 1 < l->passes) {
        /* not alone: pass the local lock with the global lock */
        nl_grant32(&next->grant, CB_PASSED(q->passes + 1));
    } else {
        atomic_store_explicit(&l->global, 0, memory_order_release);
        cb_local_unlock(L, q, next);
    }
    nl_qnode_put(q);
}

static size_t cb_bytes_at(unsigned nodes) { return sizeof(nl_cbomcs_t) + nodes * sizeof(cb_local_t); }
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

static void ct_wait_ticket(_Atomic uint32_t *owner, uint32_t t)
{
    nl_spinner_t sp = NL_SPINNER_INIT;
    while (atomic_load_explicit(owner, memory_order_acquire) != t)
        nl_spin_once(&sp);
}

static void ct_acquire(void *p)
{
    nl_ctkttkt_t *l = p;
    uint32_t n = (uint32_t)nl_self_node(nl_self()) % l->nnodes;
    ct_local_t *L = &l->local[n];
    if (atomic_load_explicit(&L->next, memory_order_relaxed) !=
            atomic_load_explicit(&L->owner, memory_order_relaxed) ||
        atomic_load_explicit(&l->gnext, memory_order_relaxed) !=
            atomic_load_explicit(&l->gowner, memory_order_relaxed)) {
        /* the lock is taken: the gate while overloaded (src/wait) */
        nl_count_slow(nl_self());
        nl_gate(l);
    }
    uint32_t t = atomic_fetch_add_explicit(&L->next, 1, memory_order_relaxed);
    ct_wait_ticket(&L->owner, t);
    if (!L->global_passed) {
        L->passes = 0;
        uint32_t g = atomic_fetch_add_explicit(&l->gnext, 1, memory_order_relaxed);
        ct_wait_ticket(&l->gowner, g);
    }
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
