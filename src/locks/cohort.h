/*
 * Lock cohorting (Dice, Marathe & Shavit, "Lock Cohorting: A General
 * Technique for Designing NUMA Locks", PPoPP 2012 / TOPC 2015), the one
 * composition that C-BO-MCS, C-TKT-TKT (cohort.c) and HMCS (hmcs.c: Chabbi,
 * Fagan & Mellor-Crummey 2015) are instances of, in the spirit of ck_cohort:
 * a global lock and one local lock per node, each given as a small table of
 * operations over the basic locks (the MCS queue of mcs_queue.h, the ticket
 * lock of ticket.h, a backoff test-and-set).
 *
 * A lock is held by holding its node's local lock and the global lock, or,
 * where the instance allows it (try_alone), the global lock alone. The
 * first of a cohort acquires the global lock; a holder whose local lock has a
 * waiter (cohort detection: the local lock can tell) passes the local lock
 * with the global lock still held, at most `max_passes` times in a row, then
 * releases the global lock before the local one so that other nodes get it.
 * Both global locks must be thread-oblivious: any member of the cohort
 * releases what the first one acquired.
 *
 * What a local hand-over carries (never 3, src/wait/wait.h):
 *   0, CO_ACQUIRE_GLOBAL the local lock only (0: its first acquisition, or
 *                        an MCS queue found empty): take the global lock
 *   CO_PASSED(k)         the global lock came along; k-th pass in a row
 *
 * Invariants: co->holder_numa and each local's `passes` are written by the
 * holder only (after it acquired, read by it at release); a local lock's
 * hand-over orders them. A local lock is released with CO_ACQUIRE_GLOBAL
 * only after the global lock was released.
 *
 * Waiting: an arrival that finds the lock taken (the global lock busy, its
 * node's local lock taken, or others waiting passively at the gate) begins
 * one wait, saturated for the whole lock (as MCS), so that while the process
 * is overloaded one running thread keeps it rather than cohorts alternating.
 */
#ifndef NL_COHORT_H
#define NL_COHORT_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "mcs_queue.h"
#include "ticket_impl.h"

#define CO_LINE 128
#define CO_DEFAULT_PASSES 128u
#define CO_ACQUIRE_GLOBAL 1u
#define CO_PASSED(k) (((uint32_t)(k) << 2) | 2u)
#define CO_IS_PASSED(v) (((v) & 2u) != 0)
/* holder_numa of a holder that took the global lock alone */
#define CO_ALONE UINT32_MAX
/* the operations of an instance: inlined where the composition calls them */
#define CO_OP static inline __attribute__((always_inline))

/* One node's local lock (one cache line each) and its cohort state. */
typedef struct co_local {
    _Alignas(CO_LINE) union {
        nl_mcsq_tail_t tail;  /* MCS local lock */
        nl_ticket_t ticket;   /* ticket local lock */
    };
    uint32_t grant;          /* ticket: what its last releaser passed, written
                                before the release of `owner` */
    uint32_t passes;         /* holder only: consecutive passes including its own */
    nl_mcs_node_t gnode;     /* this node's node in a global MCS queue (HMCS) */
} co_local_t;

/* The cohort state every instance embeds in its lock. */
typedef struct co {
    uint32_t nnodes;         /* local locks: one per node, or per leaf domain */
    uint32_t max_passes;
    uint32_t holder_numa;    /* holder only: the local lock it holds, or CO_ALONE */
    uint32_t pad_;
    co_local_t *local;
} co_t;

/* The global lock: `g` is its state inside the lock, `L` the local lock of
 * the caller's domain (whose gnode a global MCS queue uses). by_leaf: the
 * local locks are one per domain of the topology's finest level (the global
 * lock is the rest of a hierarchy), else one per node. */
typedef struct co_global {
    void (*acquire)(void *g, co_local_t *L, nl_waiter_t *w);
    bool (*try_acquire)(void *g, co_local_t *L); /* true: taken */
    void (*release)(void *g, co_local_t *L);
    nl_busy_fn busy;
    bool by_leaf;
    /* Optional (NULL: none): the top of the global lock taken alone, only
     * when it is free, and given back. Held alone it is the whole lock: every
     * holder holds it, and a pass below it keeps it held. Arrivals that find
     * the lock free take one lock instead of one per level. */
    bool (*try_alone)(void *g, void *lock); /* true: taken */
    void (*release_alone)(void *g, void *lock);
} co_global_t;

/* The local lock; `lock` is the whole lock (the key of per-thread queue
 * nodes). */
typedef struct co_local_ops {
    /* 0 or CO_ACQUIRE_GLOBAL (take the global lock), or CO_PASSED(k) */
    uint32_t (*acquire)(void *lock, co_local_t *L, nl_waiter_t *w);
    bool (*try_acquire)(void *lock, co_local_t *L); /* true: taken */
    /* hand the local lock on: with `pass` to a waiter if `pass` is not 0 and
     * one waits; otherwise release the global lock `g` (none if G is NULL),
     * then the local lock with CO_ACQUIRE_GLOBAL */
    void (*release)(void *lock, co_local_t *L, uint32_t pass, const struct co_global *G, void *g);
    bool (*busy)(const co_local_t *L);
} co_local_ops_t;

/* A local lock per node (by_leaf 0) or per domain of the topology's finest
 * level (by_leaf 1). */
static inline int co_init_at(co_t *c, const nl_attr_t *attr, bool by_leaf)
{
    const nl_topology_t *t = nl_topology_current();
    int n = by_leaf ? t->ndomains[0] : t->nnodes;
    c->nnodes = n < 1 ? 1u : (uint32_t)n;
    c->max_passes = attr && attr->local_passes ? attr->local_passes : CO_DEFAULT_PASSES;
    c->holder_numa = 0;
    c->local = NULL;
    if (posix_memalign((void **)&c->local, CO_LINE, c->nnodes * sizeof *c->local) || !c->local)
        return ENOMEM;
    memset(c->local, 0, c->nnodes * sizeof *c->local);
    return 0;
}

static inline int co_init(co_t *c, const nl_attr_t *attr) { return co_init_at(c, attr, false); }

static inline void co_destroy(co_t *c)
{
    free(c->local);
    c->local = NULL;
}

static inline size_t co_bytes(size_t lock_size, const co_t *c)
{
    return lock_size + c->nnodes * sizeof(co_local_t);
}

static inline co_local_t *co_mine(const co_t *c, const co_global_t *G, uint32_t *n)
{
    nl_self_t *s = nl_self();
    *n = (uint32_t)(G->by_leaf ? nl_self_leaf(s) : nl_self_node(s)) % c->nnodes;
    return &c->local[*n];
}

/* Taken for the calling thread: the global lock, or its node's local lock
 * (the gate's test, run by the passive waiter: it enters when it would get
 * both at once, so that it does not queue behind a local holder that may
 * share its CPU). */
static inline bool co_busy(const void *g, const co_global_t *G, const co_t *c, const co_local_ops_t *LO)
{
    uint32_t n;
    return G->busy(g) || LO->busy(co_mine(c, G, &n));
}

/* The holder's bookkeeping once it holds both locks; `passes` as granted. */
CO_OP void co_held(co_t *c, co_local_t *L, uint32_t n, uint32_t passes)
{
    L->passes = passes;
    if (c->holder_numa != n) /* the lock's line is read by every arrival */
        c->holder_numa = n;
}

/* Both locks if both are free (the local one first; it is given back when
 * the global one is taken), or the global lock alone where it can be held
 * alone: 0, else EBUSY. */
CO_OP int co_try(void *lock, void *g, co_t *c, const co_global_t *G, const co_local_ops_t *LO)
{
    if (G->try_alone) {
        if (!G->try_alone(g, lock))
            return EBUSY;
        if (c->holder_numa != CO_ALONE)
            c->holder_numa = CO_ALONE;
        return 0;
    }
    uint32_t n;
    co_local_t *L = co_mine(c, G, &n);
    if (!LO->try_acquire(lock, L))
        return EBUSY;
    if (!G->try_acquire(g, L)) {
        /* global busy: give the local lock back (a waiter that came
         * meanwhile takes the global lock itself) */
        LO->release(lock, L, 0, NULL, NULL);
        return EBUSY;
    }
    co_held(c, L, n, 0);
    return 0;
}

/* Uncontended acquisition: the global lock free and nobody waiting
 * passively for the lock, then co_try; true when taken. The instance calls
 * co_acquire_slow (kept out of line, CO_SLOW) otherwise. */
CO_OP bool co_acquire_fast(void *lock, void *g, co_t *c, const co_global_t *G, const co_local_ops_t *LO)
{
    if (NL_UNLIKELY(G->busy(g) || nl_gate_behind(lock)))
        return false;
    return co_try(lock, g, c, G, LO) == 0;
}

#define CO_SLOW static __attribute__((noinline))

CO_OP void co_acquire_slow(void *lock, void *g, co_t *c, const co_global_t *G,
                           const co_local_ops_t *LO, nl_busy_fn lock_busy)
{
    uint32_t n;
    co_local_t *L = co_mine(c, G, &n);
    nl_waiter_t w;
    /* taken, or others wait passively for it and we are not the thread the
     * gate let in (its release and acquisition take several steps, so it is
     * often free between two sections of the running thread: a thread that
     * lost it at the gate must not take it back then) */
    if (G->busy(g) || LO->busy(L) || nl_gate_behind(lock))
        nl_wait_begin(&w, lock, lock_busy, true); /* as MCS: the parts do not tell */
    else
        w.self = NULL; /* lazy: set up where it first waits */
    uint32_t v = LO->acquire(lock, L, &w);
    uint32_t passes = 0;
    if (CO_IS_PASSED(v))
        passes = v >> 2;
    else /* first of a cohort */
        G->acquire(g, L, &w);
    nl_wait_end(&w);
    co_held(c, L, n, passes);
}

CO_OP void co_release(void *lock, void *g, co_t *c, const co_global_t *G, const co_local_ops_t *LO)
{
    if (G->try_alone && c->holder_numa == CO_ALONE) {
        G->release_alone(g, lock);
        return;
    }
    co_local_t *L = &c->local[c->holder_numa];
    uint32_t k = L->passes + 1;
    /* a waiter of this node gets the global lock along, up to the bound */
    LO->release(lock, L, k < c->max_passes ? CO_PASSED(k) : 0, G, g);
}

/* The functions of an instance `P` whose lock type T holds its global lock
 * in field `g` (operations G) and its cohort state in `co`, with local locks
 * LO: P_busy, P_acquire (fast path, then P_acquire_slow out of line),
 * P_try, P_release (CO_STORAGE: P_destroy, P_bytes_at, P_footprint); the
 * instance writes its lock type, its global lock's operations, P_init and
 * its ops table
 * (ck_cohort's prototype macro, in the same spirit). */
#define CO_INSTANCE(P, T, g, G, LO)                                                                \
    static bool P##_busy(const void *p)                                                            \
    {                                                                                              \
        const T *l = p;                                                                            \
        return co_busy(&l->g, &G, &l->co, &LO);                                                    \
    }                                                                                              \
    CO_SLOW void P##_acquire_slow(T *l) { co_acquire_slow(l, &l->g, &l->co, &G, &LO, P##_busy); } \
    static void P##_acquire(void *p)                                                               \
    {                                                                                              \
        T *l = p;                                                                                  \
        if (!co_acquire_fast(l, &l->g, &l->co, &G, &LO))                                           \
            P##_acquire_slow(l);                                                                   \
    }                                                                                              \
    static int P##_try(void *p)                                                                    \
    {                                                                                              \
        T *l = p;                                                                                  \
        return co_try(l, &l->g, &l->co, &G, &LO);                                                  \
    }                                                                                              \
    static void P##_release(void *p)                                                               \
    {                                                                                              \
        T *l = p;                                                                                  \
        co_release(l, &l->g, &l->co, &G, &LO);                                                     \
    }

/* The destroy and sizes of an instance with only its local locks beside the
 * lock. */
#define CO_STORAGE(P, T)                                                                           \
    static void P##_destroy(void *p) { co_destroy(&((T *)p)->co); }                                \
    static size_t P##_bytes_at(unsigned nodes) { return sizeof(T) + nodes * sizeof(co_local_t); } \
    static size_t P##_footprint(const void *p) { return co_bytes(sizeof(T), &((const T *)p)->co); }

/* ---- local locks ------------------------------------------------------------ */

/* MCS queue per node; the queue node comes from the thread's pool, keyed by
 * the lock. */
CO_OP uint32_t co_mcs_acquire(void *lock, co_local_t *L, nl_waiter_t *w)
{
    return nl_mcsq_join(&L->tail, nl_qnode_get(lock), w);
}
/* The MCS queue `tail` if it is free, with the thread's queue node for
 * `lock` (given back to the pool when the queue is taken). */
CO_OP bool co_mcs_take_free(void *lock, nl_mcsq_tail_t *tail)
{
    nl_mcs_node_t *q = nl_qnode_get(lock);
    if (nl_mcsq_try(tail, q) == 0)
        return true;
    nl_qnode_put(q);
    return false;
}
CO_OP bool co_mcs_try(void *lock, co_local_t *L) { return co_mcs_take_free(lock, &L->tail); }
CO_OP void co_mcs_release(void *lock, co_local_t *L, uint32_t pass, const co_global_t *G, void *g)
{
    nl_mcs_node_t *q = nl_qnode_find(lock);
    nl_mcs_node_t *next = pass ? atomic_load_explicit(&q->next, memory_order_acquire) : NULL;
    if (next) {
        nl_grant32n(&next->granted, pass);
    } else {
        if (G)
            G->release(g, L);
        nl_mcsq_leave(&L->tail, q, CO_ACQUIRE_GLOBAL);
    }
    nl_qnode_put(q);
}
CO_OP bool co_mcs_busy(const co_local_t *L) { return nl_mcsq_busy(&L->tail); }

static const co_local_ops_t co_local_mcs = {
    co_mcs_acquire, co_mcs_try, co_mcs_release, co_mcs_busy,
};

/* Ticket lock per node; what a hand-over carries is in the local's `grant`. */
CO_OP uint32_t co_ticket_acquire(void *lock, co_local_t *L, nl_waiter_t *w)
{
    (void)lock;
    nl_ticket_await(&L->ticket, nl_ticket_take(&L->ticket), w);
    return L->grant;
}
CO_OP bool co_ticket_try(void *lock, co_local_t *L)
{
    (void)lock;
    return nl_ticket_take_free(&L->ticket);
}
CO_OP void co_ticket_release(void *lock, co_local_t *L, uint32_t pass, const co_global_t *G, void *g)
{
    (void)lock;
    if (pass && nl_ticket_waited(&L->ticket)) {
        L->grant = pass;
    } else {
        if (G)
            G->release(g, L);
        L->grant = CO_ACQUIRE_GLOBAL;
    }
    nl_ticket_release(&L->ticket);
}
CO_OP bool co_ticket_busy(const co_local_t *L) { return nl_ticket_busy(&L->ticket); }

static const co_local_ops_t co_local_ticket = {
    co_ticket_acquire, co_ticket_try, co_ticket_release, co_ticket_busy,
};

#endif
