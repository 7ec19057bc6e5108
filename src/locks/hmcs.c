/*
 * HMCS: hierarchical MCS lock (Chabbi, Fagan & Mellor-Crummey, "High
 * Performance Locks for Multi-level NUMA Systems", PPoPP 2015), two levels,
 * the CNA paper's strongest NUMA-aware baseline (section 7).
 *
 * Each node has a leaf MCS lock; the root is an MCS lock whose queue nodes
 * belong to the leaves (one per leaf, used by whichever thread of that leaf's
 * cohort acquires or releases the root, so the root is thread-oblivious).
 * A thread enqueues at its leaf. Its grant (the paper's status word) says
 * either "acquire the parent" (the root was released) or "the root comes with
 * the leaf, this is local pass number k". The first thread of a cohort takes
 * the root with its leaf's root node. At release, while a leaf successor
 * exists and fewer than `local_passes` consecutive passes happened, the leaf
 * lock is passed with the root still held; otherwise the root is released,
 * then the leaf lock with "acquire the parent".
 *
 * Waiting (src/wait/wait.h): a thread that finds its leaf taken passes the
 * gate (passive while the system is overloaded); grant words (nl_await32 /
 * nl_grant32): spin while the waiter has a CPU, park when the wait is long,
 * wake the successor early after parking.
 * Values: 1 = acquire the parent, (k << 2) | 2 = passed, k-th pass.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "../core/internal.h"

#define HM_DEFAULT_PASSES 128u
#define HM_LINE 128
#define HM_ACQUIRE_PARENT 1u
#define HM_PASSED(k) (((uint32_t)(k) << 2) | 2u)

typedef struct hm_qnode {
    _Atomic(struct hm_qnode *) next;
    _Atomic uint32_t grant;
    uint32_t numa;    /* the leaf (pool nodes) */
    uint32_t passes;  /* consecutive local passes (holder only) */
} hm_qnode_t;

typedef struct hm_leaf {
    _Alignas(HM_LINE) _Atomic(hm_qnode_t *) tail;
    hm_qnode_t root_node;   /* this leaf's node in the root queue */
} hm_leaf_t;

typedef struct {
    _Atomic(hm_qnode_t *) root;   /* root MCS tail */
    uint32_t nnodes;
    uint32_t passes;
    hm_leaf_t *leaf;
} nl_hmcs_t;

_Static_assert(sizeof(hm_qnode_t) <= 120, "fits a pool slot");

static int hm_init(void *p, const nl_attr_t *attr)
{
    nl_hmcs_t *l = p;
    int nn = nl_topology_nodes();
    uint32_t n = nn < 1 ? 1u : (uint32_t)nn;
    hm_leaf_t *leaf = NULL;
    if (posix_memalign((void **)&leaf, HM_LINE, n * sizeof *leaf) || !leaf)
        return ENOMEM;
    memset(leaf, 0, n * sizeof *leaf);
    atomic_init(&l->root, NULL);
    l->nnodes = n;
    l->passes = attr && attr->local_passes ? attr->local_passes : HM_DEFAULT_PASSES;
    l->leaf = leaf;
    return 0;
}

static void hm_destroy(void *p)
{
    nl_hmcs_t *l = p;
    free(l->leaf);
    l->leaf = NULL;
}

/* MCS release on one level, passing `grant` to the successor */
static void hm_level_release(_Atomic(hm_qnode_t *) *tail, hm_qnode_t *q, hm_qnode_t *next,
                             uint32_t grant)
{
    if (!next) {
        hm_qnode_t *expect = q;
        if (atomic_compare_exchange_strong_explicit(tail, &expect, NULL, memory_order_release,
                                                    memory_order_relaxed))
            return;
        nl_spinner_t sp = NL_SPINNER_INIT;
        while (!(next = atomic_load_explicit(&q->next, memory_order_acquire)))
            nl_spin_once(&sp);
    }
    nl_grant32(&next->grant, grant);
}

static void hm_root_acquire(nl_hmcs_t *l, hm_leaf_t *L)
{
    hm_qnode_t *r = &L->root_node;
    atomic_store_explicit(&r->next, NULL, memory_order_relaxed);
    atomic_store_explicit(&r->grant, NL_GRANT_WAITING, memory_order_relaxed);
    hm_qnode_t *pred = atomic_exchange_explicit(&l->root, r, memory_order_acq_rel);
    if (pred) {
        atomic_store_explicit(&pred->next, r, memory_order_release);
        nl_await32(&r->grant);
    }
}

static void hm_acquire(void *p)
{
    nl_hmcs_t *l = p;
    hm_qnode_t *q = nl_qnode_get(l);
    uint32_t n = (uint32_t)nl_self_node(nl_self()) % l->nnodes;
    hm_leaf_t *L = &l->leaf[n];
    q->numa = n;
    atomic_store_explicit(&q->next, NULL, memory_order_relaxed);
    atomic_store_explicit(&q->grant, NL_GRANT_WAITING, memory_order_relaxed);
    /* the lock is taken (some cohort holds the root): the gate while the
     * system is overloaded (src/wait); the whole lock, not only our leaf,
     * so that one running thread can keep it instead of cohorts alternating */
    if (atomic_load_explicit(&l->root, memory_order_relaxed) ||
        atomic_load_explicit(&L->tail, memory_order_relaxed)) {
        nl_count_slow(nl_self());
        nl_gate(l);
    }
    hm_qnode_t *pred = atomic_exchange_explicit(&L->tail, q, memory_order_acq_rel);
    if (pred) {
        atomic_store_explicit(&pred->next, q, memory_order_release);
        uint32_t g = nl_await32(&q->grant);
        if (nl_parked_last(nl_self())) { /* early wake of our successor */
            hm_qnode_t *next = atomic_load_explicit(&q->next, memory_order_acquire);
            if (next)
                nl_nudge32(&next->grant);
        }
        if (g != HM_ACQUIRE_PARENT) { /* the root came with the leaf */
            q->passes = g >> 2;
            return;
        }
    }
    q->passes = 0;  /* first of a cohort */
    hm_root_acquire(l, L);
}

static int hm_try(void *p)
{
    nl_hmcs_t *l = p;
    hm_qnode_t *q = nl_qnode_get(l);
    uint32_t n = (uint32_t)nl_self_node(nl_self()) % l->nnodes;
    hm_leaf_t *L = &l->leaf[n];
    q->numa = n;
    q->passes = 0;
    atomic_store_explicit(&q->next, NULL, memory_order_relaxed);
    atomic_store_explicit(&q->grant, NL_GRANT_WAITING, memory_order_relaxed);
    hm_qnode_t *expect = NULL;
    if (atomic_compare_exchange_strong_explicit(&L->tail, &expect, q, memory_order_acq_rel,
                                                memory_order_relaxed)) {
        /* we hold the leaf and are first of a cohort: try the root */
        hm_qnode_t *r = &L->root_node, *rexpect = NULL;
        atomic_store_explicit(&r->next, NULL, memory_order_relaxed);
        atomic_store_explicit(&r->grant, NL_GRANT_WAITING, memory_order_relaxed);
        if (atomic_compare_exchange_strong_explicit(&l->root, &rexpect, r, memory_order_acq_rel,
                                                    memory_order_relaxed))
            return 0;
        /* root busy: give the leaf back; a leaf waiter takes the root itself */
        hm_level_release(&L->tail, q, atomic_load_explicit(&q->next, memory_order_acquire),
                         HM_ACQUIRE_PARENT);
    }
    nl_qnode_put(q);
    return EBUSY;
}

static void hm_release(void *p)
{
    nl_hmcs_t *l = p;
    hm_qnode_t *q = nl_qnode_find(l);
    hm_leaf_t *L = &l->leaf[q->numa];
    hm_qnode_t *next = atomic_load_explicit(&q->next, memory_order_acquire);
    if (next && q->passes + 1 < l->passes) {
        nl_grant32(&next->grant, HM_PASSED(q->passes + 1));
    } else {
        hm_qnode_t *r = &L->root_node;
        hm_level_release(&l->root, r, atomic_load_explicit(&r->next, memory_order_acquire), 1);
        hm_level_release(&L->tail, q, next, HM_ACQUIRE_PARENT);
    }
    nl_qnode_put(q);
}

static size_t hm_bytes_at(unsigned nodes) { return sizeof(nl_hmcs_t) + nodes * sizeof(hm_leaf_t); }
static size_t hm_footprint(const void *p) { return hm_bytes_at(((const nl_hmcs_t *)p)->nnodes); }

NL_HIDDEN const nl_lock_ops_t nl_ops_hmcs = {
    .name = "hmcs",
    .description = "hierarchical MCS, two levels: MCS lock per node under a root MCS lock",
    .paper = "Chabbi, Fagan & Mellor-Crummey 2015 (HMCS); CNA paper sec. 7",
    .size = sizeof(nl_hmcs_t), .align = 8,
    .props = NL_PROP_FAIR | NL_PROP_NUMA_AWARE | NL_PROP_NEEDS_DESTROY,
    .init = hm_init, .destroy = hm_destroy,
    .acquire = hm_acquire, .try_acquire = hm_try, .release = hm_release,
    .footprint = hm_footprint, .bytes_at_nodes = hm_bytes_at,
};
