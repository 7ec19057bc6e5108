/*
 * HMCS: hierarchical MCS lock (Chabbi, Fagan & Mellor-Crummey, "High
 * Performance Locks for Multi-level NUMA Systems", PPoPP 2015).
 *
 *   hmcs    two levels, the CNA paper's strongest NUMA-aware baseline
 *           (section 7): an MCS lock per node under a root MCS lock
 *   hmcs-n  the paper's N levels: an MCS lock per domain of every level of
 *           the topology's hierarchy (topology.h: cache domain, node,
 *           package), under a root MCS lock
 *
 * Each domain's lock is an MCS queue whose queue nodes belong to the domains
 * one level down (their gnode: used by whichever thread of that domain's
 * cohort acquires or releases, so every lock above the finest is
 * thread-oblivious); at the finest level the queue nodes are the threads'.
 * A thread enqueues at its finest domain. Its grant (the paper's status
 * word) says either "acquire the parent" or "the parent comes with this
 * lock, local pass number k"; the first of a cohort goes up a level with its
 * domain's gnode, up to the root. At release, level by level from the
 * finest: while a successor is linked and fewer than `local_passes`
 * consecutive passes happened at that level, pass it there (every lock
 * above stays held); otherwise release the level above (which may pass in
 * its turn), then leave this level with "acquire the parent".
 *
 * The finest level is the cohort composition of cohort.h (its local locks,
 * passes, the gate; shared with C-BO-MCS and C-TKT-TKT) whose global lock
 * is the rest of the tree: hmcs's is the root alone, hmcs-n's the domain
 * locks of the coarser levels and the root. Every queue is the MCS queue of
 * mcs_queue.h. Values: 1 = acquire the parent, (k << 2) | 2 = passed, k-th
 * pass.
 */
#include "cohort.h"

typedef struct {
    union {
        nl_mcsq_tail_t root;        /* an MCS root (hmcs, hmcs-n) */
        nl_ticket_t root_ticket;    /* a ticket root (c-tkt-n) */
    };
    co_t co;                        /* the finest level (hmcs: the nodes) */
    uint32_t nup;                   /* levels between the finest and the root (hmcs: 0) */
    uint32_t pad_;
    co_local_t *dom[NL_MAX_LEVELS]; /* dom[l - 1]: the domain locks of level l */
    int16_t *up;                    /* up[(l - 1) * leaves + leaf]: leaf's domain at level l
                                     * (NULL without levels above the finest) */
} nl_hmcs_t;

/* ---- hmcs: the root alone above the nodes (grant 1: the root is yours) ---- */
CO_OP void hm_root_acquire(void *g, co_local_t *L, nl_waiter_t *w) { nl_mcsq_join(g, &L->gnode, w); }
CO_OP bool hm_root_try(void *g, co_local_t *L) { return nl_mcsq_try(g, &L->gnode) == 0; }
CO_OP void hm_root_release(void *g, co_local_t *L) { nl_mcsq_leave(g, &L->gnode, 1); }

static const co_global_t hm_root = {
    hm_root_acquire, hm_root_try, hm_root_release, nl_mcsq_busy, false, NULL, NULL,
};

static int hm_init(void *p, const nl_attr_t *attr)
{
    nl_hmcs_t *l = p;
    memset(l, 0, sizeof *l);
    return co_init(&l->co, attr);
}

CO_INSTANCE(hm, nl_hmcs_t, root, hm_root, co_local_mcs)
CO_STORAGE(hm, nl_hmcs_t)

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

/* ---- N levels: a lock per domain of every level, then the root ------------ */
/* The global lock of the finest level's cohort is the tree above it: every
 * lock there an MCS queue (hmcs-n: queue nodes the gnodes of the domains one
 * level down) or a ticket lock (c-tkt-n: what a hand-over carries in the
 * domain's `grant`, as cohort.h's ticket locks); `g` is the whole lock, `L`
 * the finest domain's local lock. */
static inline co_local_t *hn_dom(const nl_hmcs_t *l, uint32_t lev, uint32_t leaf)
{
    return &l->dom[lev - 1][l->up[(lev - 1) * l->co.nnodes + leaf]];
}

/* The steps of one lock of the tree, an MCS queue (queue node `me`) or a
 * ticket lock (`ticket` constant where these are inlined). */
CO_OP uint32_t hn_join(co_local_t *D, nl_mcs_node_t *me, nl_waiter_t *w, const bool ticket)
{
    if (ticket) {
        nl_ticket_await(&D->ticket, nl_ticket_take(&D->ticket), w);
        return D->grant;
    }
    return nl_mcsq_join(&D->tail, me, w);
}
CO_OP bool hn_take_free(co_local_t *D, nl_mcs_node_t *me, const bool ticket)
{
    return ticket ? nl_ticket_take_free(&D->ticket) : nl_mcsq_try(&D->tail, me) == 0;
}
/* with `pass` to a waiter if one waits (true), else nothing (false) */
CO_OP bool hn_pass(co_local_t *D, nl_mcs_node_t *me, uint32_t pass, const bool ticket)
{
    if (ticket) {
        if (!nl_ticket_waited(&D->ticket))
            return false;
        D->grant = pass;
        nl_ticket_release(&D->ticket);
        return true;
    }
    /* acquire, pairing with the successor's release of its link
     * (nl_mcsq_join): its reset of its grant word comes before our grant,
     * which it would otherwise overwrite (verify/wmm/hmcs_n.c: a lost
     * grant without it) */
    nl_mcs_node_t *next = atomic_load_explicit(&me->next, memory_order_acquire);
    if (!next)
        return false;
    nl_grant32n(&next->granted, pass);
    return true;
}
CO_OP void hn_leave(co_local_t *D, nl_mcs_node_t *me, const bool ticket)
{
    if (ticket) {
        D->grant = CO_ACQUIRE_GLOBAL;
        nl_ticket_release(&D->ticket);
    } else {
        nl_mcsq_leave(&D->tail, me, CO_ACQUIRE_GLOBAL);
    }
}
/* Take levels 1..nup and the root, from the finest domain `L` up: at each
 * level with the gnode of the domain below, until a grant says the levels
 * above came along. */
CO_OP void hn_climb(nl_hmcs_t *l, co_local_t *L, nl_waiter_t *w, const bool ticket)
{
    uint32_t leaf = (uint32_t)(L - l->co.local);
    nl_mcs_node_t *me = &L->gnode;
    for (uint32_t lev = 1; lev <= l->nup; lev++) {
        co_local_t *D = hn_dom(l, lev, leaf);
        uint32_t v = hn_join(D, me, w, ticket);
        if (CO_IS_PASSED(v)) {
            D->passes = v >> 2;
            return;
        }
        D->passes = 0;
        me = &D->gnode;
    }
    if (ticket)
        nl_ticket_await(&l->root_ticket, nl_ticket_take(&l->root_ticket), w);
    else
        nl_mcsq_join(&l->root, me, w);
}

/* All of levels 1..nup and the root if every one is free, else none. */
CO_OP bool hn_climb_free(nl_hmcs_t *l, co_local_t *L, const bool ticket)
{
    uint32_t leaf = (uint32_t)(L - l->co.local), lev;
    co_local_t *D[NL_MAX_LEVELS];
    nl_mcs_node_t *me[NL_MAX_LEVELS + 1];
    me[1] = &L->gnode;
    for (lev = 1; lev <= l->nup; lev++) {
        D[lev - 1] = hn_dom(l, lev, leaf);
        if (!hn_take_free(D[lev - 1], me[lev], ticket))
            goto undo;
        me[lev + 1] = &D[lev - 1]->gnode;
    }
    if (ticket ? nl_ticket_take_free(&l->root_ticket) : nl_mcsq_try(&l->root, me[lev]) == 0) {
        for (uint32_t i = 1; i <= l->nup; i++)
            D[i - 1]->passes = 0;
        return true;
    }
undo:
    while (--lev >= 1)
        hn_leave(D[lev - 1], me[lev], ticket);
    return false;
}

/* Hand on levels 1..nup and the root: at the lowest level where a waiter
 * queues and the bound allows, pass it (every lock above stays held with
 * it); release the root if there is none; then leave the levels below, the
 * higher first, each with "acquire the parent". */
CO_OP void hn_descend(nl_hmcs_t *l, co_local_t *L, const bool ticket)
{
    uint32_t leaf = (uint32_t)(L - l->co.local), lev;
    co_local_t *D[NL_MAX_LEVELS];
    nl_mcs_node_t *me[NL_MAX_LEVELS + 1];
    me[1] = &L->gnode;
    for (lev = 1; lev <= l->nup; lev++) {
        D[lev - 1] = hn_dom(l, lev, leaf);
        uint32_t k = D[lev - 1]->passes + 1;
        if (k < l->co.max_passes && hn_pass(D[lev - 1], me[lev], CO_PASSED(k), ticket))
            goto below;
        me[lev + 1] = &D[lev - 1]->gnode;
    }
    if (ticket)
        nl_ticket_release(&l->root_ticket);
    else
        nl_mcsq_leave(&l->root, me[lev], 1);
below:
    while (--lev >= 1)
        hn_leave(D[lev - 1], me[lev], ticket);
}

/* the two trees as the global lock of the finest level's cohort (`g` is the
 * whole lock); the gate's test: the root is taken */
CO_OP void hn_acquire_mcs(void *g, co_local_t *L, nl_waiter_t *w) { hn_climb(g, L, w, false); }
CO_OP bool hn_try_mcs(void *g, co_local_t *L) { return hn_climb_free(g, L, false); }
CO_OP void hn_release_mcs(void *g, co_local_t *L) { hn_descend(g, L, false); }
CO_OP bool hn_busy_mcs(const void *g) { return nl_mcsq_busy(&((const nl_hmcs_t *)g)->root); }
CO_OP void hn_acquire_tkt(void *g, co_local_t *L, nl_waiter_t *w) { hn_climb(g, L, w, true); }
CO_OP bool hn_try_tkt(void *g, co_local_t *L) { return hn_climb_free(g, L, true); }
CO_OP void hn_release_tkt(void *g, co_local_t *L) { hn_descend(g, L, true); }
CO_OP bool hn_busy_tkt(const void *g) { return nl_ticket_busy(&((const nl_hmcs_t *)g)->root_ticket); }

/* The root alone, when it is free (AHMCS's fast path: Chabbi &
 * Mellor-Crummey, "Contention-conscious, locality-preserving locks", PPoPP
 * 2016): an arrival that finds the whole lock free takes the root and no
 * domain lock, one atomic step instead of one per level. An MCS root's queue
 * node is then the thread's own (its pool's, keyed by the lock: the thread
 * holds no finest-level lock meanwhile). */
CO_OP bool hn_alone_mcs(void *g, void *lock) { return co_mcs_take_free(lock, &((nl_hmcs_t *)g)->root); }
CO_OP void hn_unalone_mcs(void *g, void *lock)
{
    nl_mcs_node_t *q = nl_qnode_find(lock);
    nl_mcsq_leave(&((nl_hmcs_t *)g)->root, q, 1);
    nl_qnode_put(q);
}
CO_OP bool hn_alone_tkt(void *g, void *lock)
{
    (void)lock;
    return nl_ticket_take_free(&((nl_hmcs_t *)g)->root_ticket);
}
CO_OP void hn_unalone_tkt(void *g, void *lock)
{
    (void)lock;
    nl_ticket_release(&((nl_hmcs_t *)g)->root_ticket);
}

/* 0: every acquisition climbs the tree (verify/wmm/hmcs_n.c checks the
 * tree's passes so, and the root alone beside them with it 1) */
#ifndef NL_HN_ALONE
#define NL_HN_ALONE 1
#endif

static const co_global_t hn_tree_mcs = {
    hn_acquire_mcs, hn_try_mcs, hn_release_mcs, hn_busy_mcs, true,
    NL_HN_ALONE ? hn_alone_mcs : NULL, NL_HN_ALONE ? hn_unalone_mcs : NULL,
};
static const co_global_t hn_tree_tkt = {
    hn_acquire_tkt, hn_try_tkt, hn_release_tkt, hn_busy_tkt, true,
    NL_HN_ALONE ? hn_alone_tkt : NULL, NL_HN_ALONE ? hn_unalone_tkt : NULL,
};

static void hn_free(nl_hmcs_t *l)
{
    for (uint32_t i = 0; i < l->nup; i++)
        free(l->dom[i]);
    free(l->up);
    co_destroy(&l->co);
}

static int hn_init(void *p, const nl_attr_t *attr)
{
    nl_hmcs_t *l = p;
    memset(l, 0, sizeof *l);
    const nl_topology_t *t = nl_topology_current();
    int rc = co_init_at(&l->co, attr, true);
    if (rc)
        return rc;
    uint32_t leaves = l->co.nnodes;
    l->nup = (uint32_t)t->nlevels - 1;
    if (l->nup && !(l->up = calloc((size_t)l->nup * leaves, sizeof *l->up))) {
        hn_free(l);
        return ENOMEM;
    }
    for (uint32_t lev = 1; lev <= l->nup; lev++) {
        size_t n = (size_t)t->ndomains[lev];
        if (posix_memalign((void **)&l->dom[lev - 1], CO_LINE, n * sizeof(co_local_t)) || !l->dom[lev - 1]) {
            l->dom[lev - 1] = NULL;
            hn_free(l);
            return ENOMEM;
        }
        memset(l->dom[lev - 1], 0, n * sizeof(co_local_t));
        for (uint32_t d = 0; d < leaves; d++)
            l->up[(lev - 1) * leaves + d] = t->up[lev][d];
    }
    return 0;
}

static void hn_destroy(void *p) { hn_free(p); }

/* the lock, its finest level's locks, the domain locks above (a level's
 * count is its largest domain id in the map, plus one) and the map; from
 * the lock alone, whatever the topology is now */
static size_t hn_footprint(const void *p)
{
    const nl_hmcs_t *l = p;
    uint32_t leaves = l->co.nnodes;
    size_t n = co_bytes(sizeof *l, &l->co) + (size_t)l->nup * leaves * sizeof *l->up;
    for (uint32_t lev = 1; lev <= l->nup; lev++) {
        int16_t top = 0;
        for (uint32_t d = 0; d < leaves; d++)
            if (l->up[(lev - 1) * leaves + d] > top)
                top = l->up[(lev - 1) * leaves + d];
        n += ((size_t)top + 1) * sizeof(co_local_t);
    }
    return n;
}
/* on a topology of `nodes` nodes and no other level: the finest level's
 * locks only */
static size_t hn_bytes_at(unsigned nodes) { return sizeof(nl_hmcs_t) + nodes * sizeof(co_local_t); }

CO_INSTANCE(hn, nl_hmcs_t, root, hn_tree_mcs, co_local_mcs)

NL_HIDDEN const nl_lock_ops_t nl_ops_hmcs_n = {
    .name = "hmcs-n",
    .description = "hierarchical MCS, every level of the topology (cache domain, node, package) under a root",
    .paper = "Chabbi, Fagan & Mellor-Crummey 2015 (HMCS, N levels)",
    .size = sizeof(nl_hmcs_t), .align = 8,
    .props = NL_PROP_FAIR | NL_PROP_NUMA_AWARE | NL_PROP_NEEDS_DESTROY,
    .init = hn_init, .destroy = hn_destroy,
    .acquire = hn_acquire, .try_acquire = hn_try, .release = hn_release,
    .footprint = hn_footprint, .bytes_at_nodes = hn_bytes_at,
};

CO_INSTANCE(tn, nl_hmcs_t, root, hn_tree_tkt, co_local_ticket)

NL_HIDDEN const nl_lock_ops_t nl_ops_c_tkt_n = {
    .name = "c-tkt-n",
    .description = "cohort of ticket locks, one per domain of every level of the topology, under a ticket root",
    .paper = "Dice, Marathe & Shavit 2012 (lock cohorting); CLoF, Chehab et al., SOSP 2021 (levels)",
    .size = sizeof(nl_hmcs_t), .align = 8,
    .props = NL_PROP_FAIR | NL_PROP_NUMA_AWARE | NL_PROP_NEEDS_DESTROY,
    .init = hn_init, .destroy = hn_destroy,
    .acquire = tn_acquire, .try_acquire = tn_try, .release = tn_release,
    .footprint = hn_footprint, .bytes_at_nodes = hn_bytes_at,
};
