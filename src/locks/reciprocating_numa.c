/*
 * reciprocating-numa: a NUMA-aware reciprocating lock, this library's own
 * design (not from a paper): CNA's idea (Dice & Kogan, EuroSys 2019: keep
 * the lock on the holder's node, set the other nodes' waiters aside, bound
 * the stay) applied where a reciprocating lock (Dice & Kogan, PPoPP 2025;
 * reciprocating.c) makes its one decision: when the holder at the end of a
 * segment turns the arrival stack into the next segment.
 *
 * The lock is one word, `arrivals`, as the reciprocating lock's (0 free,
 * RN_EMPTY held with no arrival since the segment began, else the newest
 * arrival). An arrival exchanges its node in, as there, and then publishes
 * what it displaced in its node's `link` (the reciprocating lock keeps it in
 * a local: here the holder that turns the stack must walk it). At the end of
 * a segment the holder detaches the stack (one exchange, as there), walks it
 * (newest first) and splits it into the waiters of its own node and the
 * others. Then, if a waiter of its node arrived and the lock may stay on
 * the node (the CNA fairness rule, nl_cna_set_fairness: by default 1 ms
 * since the node's first such choice, or the paper's random draw), the
 * node's waiters form the next segment and the others are appended to the
 * deferred list; otherwise the lock moves: the deferred list, the other
 * nodes' arrivals and then the holder's node's, in that order, are split by
 * the node of the first of them, whose waiters form the segment, the rest
 * stays deferred (with two nodes no walk is needed: the deferred list
 * carries the node all its waiters share). A segment that ends with no new
 * arrival but deferred waiters moves the lock the same way. The deferred
 * list travels with the lock: each holder hands its head, tail, common node
 * and the stay's start to its successor in the successor's node, before the
 * grant, as CNA's secondary queue travels in the grant word. Inside a
 * segment, newest first, as the reciprocating lock.
 *
 * Invariants:
 *  - every segment holds waiters of one node, the holder's (or, after a
 *    move, the next holder's); the deferred list holds no waiter of the
 *    node the lock is on;
 *  - a node's `link` is 0 from its reset until its owner publishes what its
 *    exchange displaced; only the holder that detached the stack reads it
 *    and rewrites it (to the next waiter of the segment or of the deferred
 *    list; NULL at a segment's end), after it was published;
 *  - only holders write a waiting node's link, dhead, dtail, dnode, since
 *    and gate, and the grant (release) orders those writes before the new
 *    holder reads them; a node whose gate is WAITING at its release came
 *    through an empty lock: its own address is the bottom mark of the stack
 *    above it (as in the reciprocating lock), otherwise the mark is RN_EMPTY;
 *  - bounded waiting: a waiter is in the segment or the deferred list after
 *    the first turn that follows its arrival; a segment is at most one
 *    waiter per thread; the lock leaves a node at the first turn after its
 *    stay is over (or when no waiter of the node arrived), and a move serves
 *    the oldest deferred waiter's node, so a deferred waiter is served after
 *    at most (nodes - 1) moves.
 *
 * Cost beside the reciprocating lock: the arrival stores its link (its own
 * line; a holder that walks the stack meanwhile waits for it); the turn
 * walks the detached stack, reading each arrival's line before it writes
 * the first one's (amortised one read per hand-over; the reciprocating
 * lock's holder only writes its successor's line); a turn that has waiters
 * of its node and of others reads the clock (the counter); a hand-over
 * writes four more words into the successor's node, on the line it grants
 * anyway; a turn is no longer constant time (it walks what arrived).
 */
#include <errno.h>
#include "numalock/reciprocating.h"
#include "cna_impl.h"

#define RN_EMPTY ((uintptr_t)1)
#define RN_GRANTED 1u

typedef struct rn_node {
    _Atomic uint64_t gate;           /* grant word: 0 waiting, 3 parked, RN_GRANTED */
    _Atomic(struct rn_node *) link;  /* see the invariants above */
    struct rn_node *dhead, *dtail;   /* the deferred list, handed with the lock ... */
    int32_t dnode;                   /* ... the node of all its waiters (RN_MIXED: several) */
    int32_t node;                    /* the waiter's node */
    uint64_t since;                  /* ticks: the lock's stay on this node began (0: not yet) */
} rn_node_t;

_Static_assert(sizeof(rn_node_t) <= NL_QNODE_BYTES, "reciprocating-numa node fits a pool slot");

static bool rn_busy(const void *l)
{
    return atomic_load_explicit(&((const nl_recip_numa_t *)l)->arrivals, memory_order_relaxed) != 0;
}

/* May the lock stay on its node? The CNA fairness rule (cna.h). */
static inline bool rn_keep_local(uint64_t since, uint64_t now)
{
    int mode = atomic_load_explicit(&nl_cna_mode, memory_order_relaxed);
    if (NL_UNLIKELY(mode == NL_CNA_MODE_UNSET))
        mode = nl_cna_fairness_init();
    if (mode == NL_CNA_MODE_RANDOM)
        return (nl_rand() & atomic_load_explicit(&nl_cna_mask, memory_order_relaxed)) != 0;
    return now - since < nl_ns_to_ticks(atomic_load_explicit(&nl_cna_limit_ns, memory_order_relaxed));
}

/* list steps: append one node, or a whole list, at a tail */
#define RN_APPEND(h, t, x)                                                          \
    do {                                                                            \
        if (t)                                                                      \
            atomic_store_explicit(&(t)->link, (x), memory_order_relaxed);           \
        else                                                                        \
            (h) = (x);                                                              \
        (t) = (x);                                                                  \
    } while (0)
#define RN_CONCAT(h, t, xh, xt)                                                     \
    do {                                                                            \
        if (xh) {                                                                   \
            RN_APPEND(h, t, xh);                                                    \
            (t) = (xt);                                                             \
        }                                                                           \
    } while (0)

/* The next arrival below `cur` (its link); an arrival between its exchange
 * and its link (it may be off its CPU) is waited for. */
static inline rn_node_t *rn_next_arrival(rn_node_t *cur)
{
    rn_node_t *next = atomic_load_explicit(&cur->link, memory_order_acquire);
    if (NL_UNLIKELY(!next)) {
        nl_waiter_t w;
        nl_waiter_init(&w);
        while (!(next = atomic_load_explicit(&cur->link, memory_order_acquire)))
            nl_wait_step(&w);
    }
    return next;
}

#define RN_MIXED (-1) /* a list's waiters are of more than one node */

/* The end of a segment with somebody to serve (arrivals or deferred
 * waiters): build the next segment and grant its first waiter. `mark` is
 * the bottom of the arrival stack, `(dh, dt)` the deferred list and `dnode`
 * the node of all its waiters (RN_MIXED: several), `since` the stay's start
 * (0: not started), `mine` the holder's node. */
static __attribute__((noinline)) void rn_turn(nl_recip_numa_t *l, uintptr_t mark, rn_node_t *dh,
                                              rn_node_t *dt, int dnode, uint64_t since, int mine)
{
    rn_node_t *top = NULL;
    /* without deferred waiters we come here because somebody arrived */
    if (!dh || atomic_load_explicit(&l->arrivals, memory_order_relaxed) != RN_EMPTY)
        top = (rn_node_t *)atomic_exchange_explicit(&l->arrivals, RN_EMPTY, memory_order_acquire);
    /* the stack, newest first: our node's waiters (lh..lt), the others'
     * (rh..rt, all of node rnode or RN_MIXED) */
    rn_node_t *lh = NULL, *lt = NULL, *rh = NULL, *rt = NULL;
    int rnode = RN_MIXED;
    for (rn_node_t *cur = top; cur && (uintptr_t)cur != mark && (uintptr_t)cur != RN_EMPTY;) {
        rn_node_t *next = rn_next_arrival(cur);
        if (cur->node == mine) {
            RN_APPEND(lh, lt, cur);
        } else {
            rnode = !rh ? cur->node : rnode == cur->node ? rnode : RN_MIXED;
            RN_APPEND(rh, rt, cur);
        }
        cur = next;
    }
    rn_node_t *eh, *et; /* the next segment */
    bool keep = false;
    if (lh && (rh || dh)) {
        /* a choice: stay while the CNA rule allows (the clock read only here) */
        uint64_t now = nl_machine_ticks();
        if (!since)
            since = now; /* the stay on this node starts at its first choice */
        keep = rn_keep_local(since, now);
    }
    if (!rh && !dh) {
        eh = lh; /* only our node waits */
        et = lt;
    } else if (keep) {
        eh = lh;
        et = lt;
        dnode = !dh ? rnode : dnode == rnode ? dnode : RN_MIXED;
        RN_CONCAT(dh, dt, rh, rt);
    } else {
        /* move: the deferred waiters first, then the other nodes' arrivals,
         * ours last; the first one's node gets the lock, the rest waits */
        int to = dh ? (dnode != RN_MIXED ? dnode : dh->node) : rh->node;
        if ((!dh || dnode == to) && (!rh || rnode == to)) {
            /* the common case, two nodes: no walk */
            eh = dh ? dh : rh;
            et = rh ? rt : dt;
            if (dh && rh)
                atomic_store_explicit(&dt->link, rh, memory_order_relaxed);
            dh = lh;
            dt = lt;
            dnode = mine;
        } else {
            rn_node_t *ph = NULL, *pt = NULL;
            RN_CONCAT(ph, pt, dh, dt);
            RN_CONCAT(ph, pt, rh, rt);
            RN_CONCAT(ph, pt, lh, lt);
            eh = et = dh = dt = NULL;
            dnode = RN_MIXED;
            int first = 1;
            for (rn_node_t *cur = ph, *next;; cur = next) {
                next = cur == pt ? NULL : atomic_load_explicit(&cur->link, memory_order_relaxed);
                if (cur->node == to) {
                    RN_APPEND(eh, et, cur);
                } else {
                    dnode = first ? cur->node : dnode == cur->node ? dnode : RN_MIXED;
                    first = 0;
                    RN_APPEND(dh, dt, cur);
                }
                if (!next)
                    break;
            }
        }
        since = 0; /* the new node's stay starts at its first choice */
    }
    atomic_store_explicit(&et->link, NULL, memory_order_relaxed);
    eh->dhead = dh;
    eh->dtail = dt;
    eh->dnode = dnode;
    eh->since = since;
    nl_grant64(&eh->gate, RN_GRANTED);
}

static __attribute__((noinline)) void rn_lock_slow(nl_recip_numa_t *l, rn_node_t *me)
{
    nl_waiter_t w;
    /* saturated: the word does not tell a holder's node from a waiter's */
    nl_wait_begin(&w, l, rn_busy, true);
    me->node = nl_self_node(w.self);
    atomic_store_explicit(&me->link, NULL, memory_order_relaxed);
    atomic_store_explicit(&me->gate, NL_GRANT_WAITING, memory_order_relaxed);
    uintptr_t tail = atomic_exchange_explicit(&l->arrivals, (uintptr_t)me, memory_order_acq_rel);
    if (tail) {
        /* relaxed: the walking holder's exchange of `arrivals` (acquire)
         * reads from ours or a later arrival's, so our node and resets reach
         * it through the arrivals' release sequence; the link is a value */
        atomic_store_explicit(&me->link, (rn_node_t *)tail, memory_order_relaxed);
        nl_wait_grant64(&w, &me->gate);
        if (nl_wait_parked(&w)) {
            rn_node_t *next = atomic_load_explicit(&me->link, memory_order_relaxed);
            if (next)
                nl_nudge64(&next->gate); /* it probably parked too */
        }
    }
    /* tail 0: the lock was free, our gate stays WAITING (the release reads it) */
    nl_wait_end(&w);
}

static inline void rn_lock(nl_recip_numa_t *l, rn_node_t *me)
{
    uintptr_t empty = 0;
    /* WAITING at the release: we came through an empty lock */
    atomic_store_explicit(&me->gate, NL_GRANT_WAITING, memory_order_relaxed);
    if (NL_LIKELY(atomic_compare_exchange_strong_explicit(&l->arrivals, &empty, (uintptr_t)me,
                                                          memory_order_acquire, memory_order_relaxed)))
        return;
    rn_lock_slow(l, me);
}

static inline void rn_unlock(nl_recip_numa_t *l, rn_node_t *me)
{
    if (atomic_load_explicit(&me->gate, memory_order_relaxed) == NL_GRANT_WAITING) {
        /* came through an empty lock: our node is the stack's bottom mark */
        uintptr_t v = (uintptr_t)me;
        if (NL_LIKELY(atomic_compare_exchange_strong_explicit(&l->arrivals, &v, 0, memory_order_release,
                                                              memory_order_relaxed)))
            return;
        rn_turn(l, (uintptr_t)me, NULL, NULL, RN_MIXED, 0, nl_self_node(nl_self()));
        return;
    }
    rn_node_t *succ = atomic_load_explicit(&me->link, memory_order_relaxed);
    if (succ) {
        /* the segment goes on, on this node: the deferred list and the stay go along */
        succ->dhead = me->dhead;
        succ->dtail = me->dtail;
        succ->dnode = me->dnode;
        succ->since = me->since;
        nl_grant64(&succ->gate, RN_GRANTED);
        return;
    }
    if (!me->dhead) {
        uintptr_t v = RN_EMPTY;
        if (atomic_compare_exchange_strong_explicit(&l->arrivals, &v, 0, memory_order_release,
                                                    memory_order_relaxed))
            return;
    }
    rn_turn(l, RN_EMPTY, me->dhead, me->dtail, me->dnode, me->since, me->node);
}

/* ---- node-free form (the node from the thread's pool) --------------------- */
void nl_recip_numa_acquire(nl_recip_numa_t *l) { rn_lock(l, nl_qnode_get(l)); }

int nl_recip_numa_try(nl_recip_numa_t *l)
{
    rn_node_t *me = nl_qnode_get(l);
    uintptr_t empty = 0;
    atomic_store_explicit(&me->gate, NL_GRANT_WAITING, memory_order_relaxed);
    if (atomic_compare_exchange_strong_explicit(&l->arrivals, &empty, (uintptr_t)me, memory_order_acquire,
                                                memory_order_relaxed))
        return 0;
    nl_qnode_put(me);
    return EBUSY;
}

void nl_recip_numa_release(nl_recip_numa_t *l)
{
    nl_self_t *s = nl_self();
    rn_node_t *me = nl_qnode_top(s, l); /* the usual LIFO case */
    if (NL_LIKELY(me)) {
        rn_unlock(l, me);
        nl_qnode_pop(s);
        return;
    }
    me = nl_qnode_find(l);
    rn_unlock(l, me);
    nl_qnode_put(me);
}

bool nl_recip_numa_is_locked(const nl_recip_numa_t *l) { return rn_busy(l); }

static void op_acquire(void *l) { nl_recip_numa_acquire(l); }
static int op_try(void *l) { return nl_recip_numa_try(l); }
static void op_release(void *l) { nl_recip_numa_release(l); }
static int op_held(const void *l) { return rn_busy(l); }

NL_HIDDEN const nl_lock_ops_t nl_ops_reciprocating_numa = {
    .name = "reciprocating-numa",
    .description = "reciprocating lock whose segments admit the holder's node first, the others "
                   "deferred for a bounded stay (CNA's rule)",
    .paper = "this library's design on Dice & Kogan's reciprocating lock (PPoPP 2025) and CNA (EuroSys 2019)",
    .size = sizeof(nl_recip_numa_t), .align = 8,
    .props = NL_PROP_NUMA_AWARE | NL_PROP_ZERO_INIT,
    .acquire = op_acquire, .try_acquire = op_try, .release = op_release,
    .held = op_held,
};
