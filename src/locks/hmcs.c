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
 * The cohort logic (passes, grants "acquire the parent" / "passed, k-th
 * pass", the gate) is the composition of cohort.h, shared with C-BO-MCS and
 * C-TKT-TKT; both levels are the MCS queue of mcs_queue.h.
 * Values: 1 = acquire the parent, (k << 2) | 2 = passed, k-th pass.
 */
#include "cohort.h"

/* the root is an MCS queue whose nodes are the leaves' gnodes (grant 1: the
 * root is yours); the leaves are cohort.h's MCS local locks */
typedef struct {
    nl_mcsq_tail_t root;
    co_t co;
} nl_hmcs_t;

CO_OP void hm_root_acquire(void *g, co_local_t *L, nl_waiter_t *w) { nl_mcsq_join(g, &L->gnode, w); }
CO_OP bool hm_root_try(void *g, co_local_t *L) { return nl_mcsq_try(g, &L->gnode) == 0; }
CO_OP void hm_root_release(void *g, co_local_t *L) { nl_mcsq_leave(g, &L->gnode, 1); }

static const co_global_t hm_root = {
    hm_root_acquire, hm_root_try, hm_root_release, nl_mcsq_busy,
};

static int hm_init(void *p, const nl_attr_t *attr)
{
    nl_hmcs_t *l = p;
    atomic_init(&l->root, NULL);
    return co_init(&l->co, attr);
}

CO_INSTANCE(hm, nl_hmcs_t, root, hm_root, co_local_mcs)

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
