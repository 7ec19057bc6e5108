/*
 * reciprocating-numa: a NUMA-aware reciprocating lock, this library's own
 * design (not from a paper): CNA's idea (Dice & Kogan, EuroSys 2019: keep
 * the lock on the holder's node, set the other nodes' waiters aside, bound
 * the stay) applied where a reciprocating lock (Dice & Kogan, PPoPP 2025;
 * reciprocating.c) makes its one decision: when the holder at the end of a
 * segment turns the arrival stack into the next segment.
 *
 * The lock is one word, `arrivals`, as the reciprocating lock's (0 free,
 * RN_EMPTY held with no arrival since the segment began, an untagged node
 * address held by a thread that came through an empty lock, else the
 * newest arrival). An arrival pushes its node's address tagged with its
 * node (the node is 64-byte aligned: six bits) and RN_HOMOG when the value
 * it displaces is the stack's bottom or of its node and RN_HOMOG itself:
 * the whole stack below is of its node. It CASes the value it saw (its
 * `link`, what it displaces, written before), and after RN_CAS_TRIES failed
 * ones takes the exchange as there, without RN_HOMOG, its link after. At the
 * end of a segment the holder detaches the stack (one exchange, as there).
 * A stack marked RN_HOMOG becomes the next segment as it is, none of its
 * lines read, when no choice is to be made (no deferred waiters, or none of
 * the holder's node arrived and the deferred ones are the stack's node) or
 * the lock stays. Otherwise the holder walks it (newest first) and splits
 * it into the waiters of its own node and the others. Then, if a waiter of
 * its node arrived and the lock may stay on the node (the CNA fairness
 * rule, nl_cna_set_fairness: by default 1 ms since the node's first such
 * choice, or the paper's random draw), the node's waiters form the next
 * segment and the others are appended to the deferred list; otherwise the
 * lock moves: the deferred list, the other nodes' arrivals and then the
 * holder's node's, in that order, are split by the node of the first of
 * them, whose waiters form the segment, the rest stays deferred (with two
 * nodes no walk is needed: the deferred list carries the node all its
 * waiters share). A segment that ends with no new arrival but deferred
 * waiters moves the lock the same way. The deferred list travels with the
 * lock as CNA's secondary queue in the grant word: the grant value is its
 * head (| RN_GRANT_DL) or RN_NO_DL, and its tail, common node and the
 * stay's start live in the head's node. Inside a segment, newest first, as
 * the reciprocating lock, each holder passing on the grant value it got.
 *
 * Invariants:
 *  - every segment holds waiters of one node, the holder's (or, after a
 *    move, the next holder's); the deferred list holds no waiter of the
 *    node the lock is on;
 *  - a word value names a waiter iff its tag's node code is not 0; a
 *    waiter's `link` is what its arrival displaced (0 while an exchanged
 *    arrival has not yet written it), then rewritten only by holders: the
 *    next waiter of its segment or of the deferred list, at a segment's end
 *    a value that names no waiter (the bottom mark: RN_EMPTY or a holder's
 *    untagged node, or 0); a stack marked RN_HOMOG ends in such a mark;
 *  - only holders write a waiting node's link, gate and (as a deferred
 *    list's head) dtail, dnode, since, and the grant (release) orders those
 *    writes before the new holder reads them; the gate and the link are on
 *    separate lines, so those writes do not disturb the waiter's polling;
 *    a node whose gate is WAITING at its release came through an empty
 *    lock: its own address is the bottom mark of the stack above it;
 *  - bounded waiting: a waiter is in the segment or the deferred list after
 *    the first turn that follows its arrival; a segment is at most one
 *    waiter per thread; the lock leaves a node at the first turn after its
 *    stay is over (or when no waiter of the node arrived), and a move serves
 *    the oldest deferred waiter's node, so a deferred waiter is served after
 *    at most (nodes - 1) moves.
 *
 * Cost beside the reciprocating lock: a hand-over inside a segment, and a
 * turn whose stack is marked RN_HOMOG without a choice, write only the
 * grant, as there; a turn that walks reads each arrival's line and writes
 * the links that change; a turn that has waiters of its node and of others
 * reads the clock (the counter); a change of the deferred list writes its
 * head's fields; a turn is no longer constant time (it walks what arrived).
 */
#include <errno.h>
#include <stddef.h>
#include "numalock/reciprocating.h"
#include "cna_impl.h"

#define RN_EMPTY ((uintptr_t)1)
#ifndef RN_CAS_TRIES
#define RN_CAS_TRIES 2 /* an arrival's CAS tries before the exchange */
#endif

/* A waiter's word value: its node's address (64-byte aligned) and a tag in
 * the six bits below: the node's code (node + 1; RN_CODE_FAR: node >= 30,
 * its `node` field tells) above RN_HOMOG. 0, RN_EMPTY and an untagged
 * address (a holder that came through an empty lock) have code 0. */
#define RN_HOMOG ((uintptr_t)1) /* every arrival below, to the bottom, is of its node */
#define RN_CODE_FAR 31
#define RN_TAGS ((uintptr_t)63)
#define RN_MIXED (-1) /* a list's waiters are of more than one node */

/* grant values: no deferred list, or its head's address | RN_GRANT_DL */
#define RN_NO_DL 1u
#define RN_GRANT_DL ((uintptr_t)2)

/* The part of a node that holders read and write; the waiter polls its
 * gate, on the line before (see rn_slot_t). */
typedef struct rn_node {
    _Atomic uintptr_t link; /* see the invariants above */
    int32_t node;           /* the waiter's node */
    int32_t dnode;          /* as the deferred list's head: the node of all its waiters (RN_MIXED) */
    uintptr_t dtail;        /* ... its tail */
    uint64_t since;         /* ... ticks: the lock's stay on its node began (0: not yet) */
} rn_node_t;

/* A pool slot: the gate on the line of the slot's owner word, the node on
 * the next line, 64-byte aligned (six tag bits) */
typedef struct rn_slot {
    _Atomic uint64_t gate; /* grant word: 0 waiting, 3 parked, else a grant value */
    unsigned char pad[NL_CACHELINE - offsetof(nl_qnode_slot_t, mem) - sizeof(uint64_t)];
    rn_node_t n;
} rn_slot_t;

_Static_assert(sizeof(rn_slot_t) <= NL_QNODE_BYTES, "reciprocating-numa node fits a pool slot");
_Static_assert(offsetof(nl_qnode_slot_t, mem) + offsetof(rn_slot_t, n) == NL_CACHELINE,
               "the node starts a cache line of its slot");

static inline rn_node_t *rn_of(void *mem) { return &((rn_slot_t *)mem)->n; }
static inline void *rn_mem(rn_node_t *n) { return (char *)n - offsetof(rn_slot_t, n); }
static inline _Atomic uint64_t *rn_gate(rn_node_t *n) { return &((rn_slot_t *)rn_mem(n))->gate; }
static inline rn_node_t *rn_ptr(uintptr_t v) { return (rn_node_t *)(v & ~RN_TAGS); }
static inline int rn_code(uintptr_t v) { return (int)(v >> 1 & 31); }
static inline bool rn_is_waiter(uintptr_t v) { return rn_code(v) != 0; }
static inline uintptr_t rn_tagged(rn_node_t *n, int node)
{
    return (uintptr_t)n | (uintptr_t)(node >= 0 && node < RN_CODE_FAR - 1 ? node + 1 : RN_CODE_FAR) << 1;
}
static inline int rn_vnode(uintptr_t v)
{
    return rn_code(v) != RN_CODE_FAR ? rn_code(v) - 1 : rn_ptr(v)->node;
}

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

/* A choice (waiters of the holder's node and of others): the clock is read
 * only here; the stay starts at the node's first choice. */
static inline bool rn_stay(uint64_t *since)
{
    uint64_t now = nl_machine_ticks();
    if (!*since)
        *since = now;
    return rn_keep_local(*since, now);
}

/* list steps on word values: a link written only where it changes */
static inline void rn_set_link(uintptr_t t, uintptr_t x)
{
    _Atomic uintptr_t *p = &rn_ptr(t)->link;
    if (atomic_load_explicit(p, memory_order_relaxed) != x)
        atomic_store_explicit(p, x, memory_order_relaxed);
}
#define RN_APPEND(h, t, x)                                                          \
    do {                                                                            \
        if (t)                                                                      \
            rn_set_link(t, x);                                                      \
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

/* The deferred list as a holder sees it: head and tail (word values, 0:
 * none), the node of all its waiters (RN_MIXED: several), the stay's start.
 * The last three live in the head's node, written by the holder that makes
 * the list (where they change) and read at a turn. */
typedef struct rn_dl {
    uintptr_t h, t;
    int node;
    uint64_t since;
} rn_dl_t;

static inline rn_dl_t rn_dl_of(uint64_t grant)
{
    rn_dl_t d = { 0, 0, RN_MIXED, 0 };
    if (grant != RN_NO_DL) {
        rn_node_t *h = rn_ptr((uintptr_t)grant);
        d.h = rn_tagged(h, h->node);
        d.t = h->dtail;
        d.node = h->dnode;
        d.since = h->since;
    }
    return d;
}

/* Hand the lock to the first waiter of a segment, with the deferred list
 * `d` (its fields written into its head where they differ from `was`). */
static inline void rn_grant(uintptr_t first, const rn_dl_t *d, const rn_dl_t *was)
{
    uint64_t g = RN_NO_DL;
    if (d->h) {
        rn_node_t *h = rn_ptr(d->h);
        if (d->h != was->h || d->t != was->t || d->node != was->node || d->since != was->since) {
            h->dtail = d->t;
            h->dnode = d->node;
            h->since = d->since;
        }
        g = (uintptr_t)h | RN_GRANT_DL;
    }
    nl_grant64(rn_gate(rn_ptr(first)), g);
}

/* The next arrival below `cur` (its link); an arrival that took the
 * exchange publishes its link after it (it may be off its CPU): waited for. */
static inline uintptr_t rn_next_arrival(rn_node_t *cur)
{
    uintptr_t next = atomic_load_explicit(&cur->link, memory_order_acquire);
    if (NL_UNLIKELY(!next)) {
        nl_waiter_t w;
        nl_waiter_init(&w);
        while (!(next = atomic_load_explicit(&cur->link, memory_order_acquire)))
            nl_wait_step(&w);
    }
    return next;
}

/* A move: the deferred waiters first, then the other nodes' arrivals
 * (rh..rt, all of node rnode or RN_MIXED), ours (lh..lt) last; the first
 * one's node gets the lock (the segment eh..et), the rest stays deferred. */
static void rn_move(rn_dl_t *d, uintptr_t rh, uintptr_t rt, int rnode, uintptr_t lh, uintptr_t lt, int mine,
                    uintptr_t *eh, uintptr_t *et)
{
    int to = d->h ? (d->node != RN_MIXED ? d->node : rn_vnode(d->h)) : rn_vnode(rh);
    d->since = 0; /* the new node's stay starts at its first choice */
    if ((!d->h || d->node == to) && (!rh || rnode == to)) {
        /* the common case, two nodes: no walk */
        *eh = d->h ? d->h : rh;
        *et = rh ? rt : d->t;
        if (d->h && rh)
            rn_set_link(d->t, rh);
        d->h = lh;
        d->t = lt;
        d->node = mine;
        return;
    }
    uintptr_t ph = 0, pt = 0, h = 0, t = 0;
    RN_CONCAT(ph, pt, d->h, d->t);
    RN_CONCAT(ph, pt, rh, rt);
    RN_CONCAT(ph, pt, lh, lt);
    *eh = *et = d->h = d->t = 0;
    d->node = RN_MIXED;
    for (uintptr_t cur = ph, next;; cur = next) {
        next = cur == pt ? 0 : atomic_load_explicit(&rn_ptr(cur)->link, memory_order_relaxed);
        int n = rn_vnode(cur);
        if (n == to) {
            RN_APPEND(h, t, cur);
        } else {
            d->node = !d->h ? n : d->node == n ? n : RN_MIXED;
            RN_APPEND(d->h, d->t, cur);
        }
        if (!next)
            break;
    }
    *eh = h;
    *et = t;
}

/* A turn with the arrival stack from `top` walked: split into our node's
 * waiters and the others', then stay (keep: 1 yes, 0 no, -1 not decided
 * yet) or move. `mark`: the holder's node if it came through an empty lock
 * (the stack's bottom may link to it), else NULL. */
static __attribute__((noinline)) void rn_turn_walk(uintptr_t top, rn_node_t *mark, rn_dl_t d, int mine,
                                                   int keep)
{
    const rn_dl_t was = d;
    uintptr_t lh = 0, lt = 0, rh = 0, rt = 0;
    int rnode = RN_MIXED;
    for (uintptr_t cur = top; rn_is_waiter(cur) && rn_ptr(cur) != mark;) {
        uintptr_t next = rn_next_arrival(rn_ptr(cur));
        int n = rn_vnode(cur);
        if (n == mine) {
            RN_APPEND(lh, lt, cur);
        } else {
            rnode = !rh ? n : rnode == n ? rnode : RN_MIXED;
            RN_APPEND(rh, rt, cur);
        }
        cur = next;
    }
    uintptr_t eh, et; /* the next segment */
    if (keep < 0)
        keep = lh && (rh || d.h) && rn_stay(&d.since);
    if (!rh && !d.h) {
        eh = lh; /* only our node waits */
        et = lt;
    } else if (keep) {
        eh = lh;
        et = lt;
        if (rh)
            d.node = !d.h ? rnode : d.node == rnode ? d.node : RN_MIXED;
        RN_CONCAT(d.h, d.t, rh, rt);
    } else {
        rn_move(&d, rh, rt, rnode, lh, lt, mine, &eh, &et);
    }
    /* the segment's end: a link that names no waiter */
    if (rn_is_waiter(atomic_load_explicit(&rn_ptr(et)->link, memory_order_relaxed)))
        atomic_store_explicit(&rn_ptr(et)->link, 0, memory_order_relaxed);
    rn_grant(eh, &d, &was);
}

/* The end of a segment with somebody to serve (arrivals or deferred
 * waiters `d`): build the next segment and grant its first waiter. */
static __attribute__((noinline)) void rn_turn(nl_recip_numa_t *l, rn_node_t *mark, rn_dl_t d, int mine)
{
    uintptr_t top = 0;
    /* without deferred waiters we come here because somebody arrived */
    if (!d.h || atomic_load_explicit(&l->arrivals, memory_order_relaxed) != RN_EMPTY)
        top = atomic_exchange_explicit(&l->arrivals, RN_EMPTY, memory_order_acquire);
    int keep = -1;
    if (rn_is_waiter(top) && (top & RN_HOMOG)) {
        /* the stack is of one node and its bottom links to no waiter: it
         * can be a segment as it is, no line of it read */
        int n = rn_code(top) - 1;
        if (!d.h) {
            rn_grant(top, &d, &d); /* no choice: the stack, whichever node */
            return;
        }
        if (n != mine && d.node == n) {
            /* no waiter of ours: a move, the deferred waiters then the stack */
            rn_set_link(d.t, top);
            rn_dl_t none = { 0, 0, RN_MIXED, 0 };
            rn_grant(d.h, &none, &d);
            return;
        }
        if (n == mine) {
            const rn_dl_t was = d;
            keep = rn_stay(&d.since);
            if (keep) {
                rn_grant(top, &d, &was);
                return;
            }
        }
    }
    rn_turn_walk(top, mark, d, mine, keep);
}

static __attribute__((noinline)) void rn_lock_slow(nl_recip_numa_t *l, rn_node_t *me, uintptr_t cur)
{
    nl_waiter_t w;
    /* saturated: the word does not tell a holder's node from a waiter's */
    nl_wait_begin(&w, l, rn_busy, true);
    int node = nl_self_node(w.self);
    me->node = node;
    uintptr_t self = rn_tagged(me, node), tail;
    /* a CAS on the value seen: our link is published with our arrival, and
     * RN_HOMOG set when what we displace is the bottom or of our node and
     * homogeneous */
    for (int tries = 0; tries < RN_CAS_TRIES; tries++) {
        if (!cur) {
            if (atomic_compare_exchange_strong_explicit(&l->arrivals, &cur, (uintptr_t)me, memory_order_acquire,
                                                        memory_order_relaxed))
                goto held; /* through an empty lock */
            continue;
        }
        bool homog = rn_code(self) != RN_CODE_FAR &&
                     (!rn_is_waiter(cur) || ((cur & RN_HOMOG) && rn_code(cur) == rn_code(self)));
        atomic_store_explicit(&me->link, cur, memory_order_relaxed);
        if (atomic_compare_exchange_strong_explicit(&l->arrivals, &cur, self | (homog ? RN_HOMOG : 0),
                                                    memory_order_acq_rel, memory_order_relaxed))
            goto wait;
    }
    /* contended: the paper's exchange (wait-free), not homogeneous; the
     * link follows it */
    atomic_store_explicit(&me->link, 0, memory_order_relaxed);
    tail = atomic_exchange_explicit(&l->arrivals, self, memory_order_acq_rel);
    if (!tail) {
        /* the lock was free: untag our value, the bottom mark (an arrival
         * that already displaced it has no RN_HOMOG and its holder walks) */
        uintptr_t v = self;
        atomic_compare_exchange_strong_explicit(&l->arrivals, &v, (uintptr_t)me, memory_order_relaxed,
                                                memory_order_relaxed);
        goto held;
    }
    /* relaxed: the walking holder waits for a link it reads as 0, and its
     * exchange of `arrivals` (acquire) orders our node's writes before */
    atomic_store_explicit(&me->link, tail, memory_order_relaxed);
wait:
    nl_wait_grant64(&w, rn_gate(me));
    if (nl_wait_parked(&w)) {
        uintptr_t next = atomic_load_explicit(&me->link, memory_order_relaxed);
        if (rn_is_waiter(next))
            nl_nudge64(rn_gate(rn_ptr(next))); /* it probably parked too */
    }
held: /* through an empty lock our gate stays WAITING (the release reads it) */
    nl_wait_end(&w);
}

static inline void rn_lock(nl_recip_numa_t *l, rn_node_t *me)
{
    uintptr_t cur = 0;
    /* WAITING at the release: we came through an empty lock */
    atomic_store_explicit(rn_gate(me), NL_GRANT_WAITING, memory_order_relaxed);
    if (NL_LIKELY(atomic_compare_exchange_strong_explicit(&l->arrivals, &cur, (uintptr_t)me,
                                                          memory_order_acquire, memory_order_relaxed)))
        return;
    rn_lock_slow(l, me, cur);
}

/* The release of a holder that was granted the lock (`g`: its grant). */
static __attribute__((noinline)) void rn_unlock_granted(nl_recip_numa_t *l, rn_node_t *me, uint64_t g)
{
    uintptr_t succ = atomic_load_explicit(&me->link, memory_order_relaxed);
    if (rn_is_waiter(succ)) {
        /* the segment goes on, on this node: our grant (the deferred list) goes along */
        nl_grant64(rn_gate(rn_ptr(succ)), g);
        return;
    }
    if (g == RN_NO_DL) {
        uintptr_t v = RN_EMPTY;
        if (atomic_compare_exchange_strong_explicit(&l->arrivals, &v, 0, memory_order_release,
                                                    memory_order_relaxed))
            return;
    }
    rn_turn(l, NULL, rn_dl_of(g), me->node);
}

static inline void rn_unlock(nl_recip_numa_t *l, rn_node_t *me)
{
    uint64_t g = atomic_load_explicit(rn_gate(me), memory_order_relaxed);
    if (NL_LIKELY(g == NL_GRANT_WAITING)) {
        /* came through an empty lock: our node is the stack's bottom mark */
        uintptr_t v = (uintptr_t)me;
        if (NL_LIKELY(atomic_compare_exchange_strong_explicit(&l->arrivals, &v, 0, memory_order_release,
                                                              memory_order_relaxed)))
            return;
        rn_dl_t none = { 0, 0, RN_MIXED, 0 };
        rn_turn(l, me, none, nl_self_node(nl_self()));
        return;
    }
    rn_unlock_granted(l, me, g);
}

/* ---- node-free form (the node from the thread's pool) --------------------- */
void nl_recip_numa_acquire(nl_recip_numa_t *l) { rn_lock(l, rn_of(nl_qnode_get(l))); }

int nl_recip_numa_try(nl_recip_numa_t *l)
{
    rn_node_t *me = rn_of(nl_qnode_get(l));
    uintptr_t empty = 0;
    atomic_store_explicit(rn_gate(me), NL_GRANT_WAITING, memory_order_relaxed);
    if (atomic_compare_exchange_strong_explicit(&l->arrivals, &empty, (uintptr_t)me, memory_order_acquire,
                                                memory_order_relaxed))
        return 0;
    nl_qnode_put(rn_mem(me));
    return EBUSY;
}

void nl_recip_numa_release(nl_recip_numa_t *l)
{
    nl_self_t *s = nl_self();
    void *mem = nl_qnode_top(s, l); /* the usual LIFO case */
    if (NL_LIKELY(mem)) {
        rn_unlock(l, rn_of(mem));
        nl_qnode_pop(s);
        return;
    }
    mem = nl_qnode_find(l);
    rn_unlock(l, rn_of(mem));
    nl_qnode_put(mem);
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
