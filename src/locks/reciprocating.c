/*
 * Reciprocating lock (Dice & Kogan, "Reciprocating Locks", PPoPP 2025;
 * arXiv 2501.02380, listing 1). The lock is one word, `arrivals`:
 *
 *   0            free
 *   RECIP_EMPTY  held; nobody arrived since the holder's segment began
 *   element E    held; E is the newest arrival, the stack runs down from it
 *
 * Acquire: exchange our element into `arrivals`. The value we displaced is
 * our successor for the release (RECIP_EMPTY: none); 0 means the lock was
 * free and we hold it, our own element then marking the bottom of the stack
 * that builds up on it. Otherwise we wait on our element's gate until a
 * predecessor writes the end-of-segment mark there: the address at which
 * our segment stops (the element of the holder that detached it, or
 * RECIP_EMPTY). A successor equal to the mark is the bottom of the segment:
 * we are its last waiter.
 * Release: pass the mark to our successor; without one, the segment is
 * done: if nobody arrived (`arrivals` still holds our mark) a CAS frees the
 * lock, else one exchange detaches the whole arrival stack (leaving
 * RECIP_EMPTY) and the newest arrival gets the lock and our mark. Both run
 * in constant time; arrivals are served segment after segment, and inside a
 * segment newest first, so a waiter is overtaken only by threads of its own
 * segment that arrived after it (each at most once).
 *
 * Invariants: only the holder writes a waiter's gate (once per wait), and
 * only the holder detaches the stack; an element is written by others only
 * while its thread waits: afterwards its address is compared only (with a
 * mark), which is why one element per thread serves all the locks it holds
 * and why the element may be reused as soon as the thread holds the lock;
 * an element can be a mark only in the segment detached from above it, and
 * a re-arrival of its thread goes on the next stack, so a mark never equals
 * a live waiter of its segment.
 *
 * Deviations from listing 1:
 *  - the fast path CASes an empty word (as the library's MCS does) so that
 *    a contended arrival first passes the waiting design's gate; the slow
 *    path then exchanges as the paper does;
 *  - the gate word is a grant word of the waiting design (src/wait/wait.h):
 *    the waiter spins while it has a CPU and parks when its wait is long;
 *    the holder's write is an exchange that wakes it only if it parked; a
 *    waiter that parked wakes its own successor once it is granted (early
 *    wake), which the paper's lock (pure spinning) has no need for;
 *  - the node-free form keeps element and context in one slot of the
 *    thread's queue-node pool per held lock (the paper's element may live
 *    on the acquiring frame too, its appendix B); the paper form takes the
 *    element and the context apart, so one element per thread is enough.
 */
#include <errno.h>
#include "numalock/reciprocating.h"
#include "../internal.h"

#define RECIP_EMPTY ((uintptr_t)1)

typedef struct recip_node {
    nl_recip_wait_t e;
    nl_recip_ctx_t c;
} recip_node_t;

_Static_assert(sizeof(recip_node_t) <= NL_QNODE_BYTES, "reciprocating node fits a pool slot");

static bool recip_busy(const void *l)
{
    return atomic_load_explicit(&((const nl_recip_t *)l)->arrivals, memory_order_relaxed) != 0;
}

/* Contended arrival: the gate while the process is overloaded, then the
 * paper's exchange and wait. */
static __attribute__((noinline)) void recip_lock_slow(nl_recip_t *l, nl_recip_wait_t *e, nl_recip_ctx_t *c)
{
    nl_waiter_t w;
    /* saturated: the word does not tell a holder's element from a waiter's */
    nl_wait_begin(&w, l, recip_busy, true);
    /* reset before the exchange publishes us: a predecessor may grant at once */
    atomic_store_explicit(&e->gate, NL_GRANT_WAITING, memory_order_relaxed);
    uintptr_t tail = atomic_exchange_explicit(&l->arrivals, (uintptr_t)e, memory_order_acq_rel);
    nl_recip_wait_t *succ = NULL;
    uintptr_t eos = (uintptr_t)e;
    if (tail) {
        succ = tail == RECIP_EMPTY ? NULL : (nl_recip_wait_t *)tail;
        eos = (uintptr_t)nl_wait_grant64(&w, &e->gate);
        if ((uintptr_t)succ == eos) {
            /* the bottom of our segment: its holder's element, a mark only */
            succ = NULL;
            eos = RECIP_EMPTY;
        } else if (succ && nl_wait_parked(&w)) {
            nl_nudge64(&succ->gate); /* it probably parked too */
        }
    }
    c->succ = succ;
    c->eos = eos;
    nl_wait_end(&w);
}

void nl_recip_lock(nl_recip_t *l, nl_recip_wait_t *e, nl_recip_ctx_t *c)
{
    uintptr_t empty = 0;
    /* uncontended: our element becomes the bottom mark, nobody writes it */
    if (NL_LIKELY(atomic_compare_exchange_strong_explicit(&l->arrivals, &empty, (uintptr_t)e,
                                                          memory_order_acquire, memory_order_relaxed))) {
        c->succ = NULL;
        c->eos = (uintptr_t)e;
        return;
    }
    recip_lock_slow(l, e, c);
}

int nl_recip_trylock(nl_recip_t *l, nl_recip_wait_t *e, nl_recip_ctx_t *c)
{
    uintptr_t empty = 0;
    if (!atomic_compare_exchange_strong_explicit(&l->arrivals, &empty, (uintptr_t)e, memory_order_acquire,
                                                 memory_order_relaxed))
        return EBUSY;
    c->succ = NULL;
    c->eos = (uintptr_t)e;
    return 0;
}

/* The segment is done and somebody arrived: the arrival stack becomes the
 * next segment, its newest waiter gets the lock and our mark. */
static __attribute__((noinline)) void recip_unlock_slow(nl_recip_t *l, uintptr_t eos)
{
    /* acquire: the arrivals' gate resets happen before our grant */
    nl_recip_wait_t *top =
        (nl_recip_wait_t *)atomic_exchange_explicit(&l->arrivals, RECIP_EMPTY, memory_order_acquire);
    nl_grant64(&top->gate, eos);
}

void nl_recip_unlock(nl_recip_t *l, nl_recip_ctx_t *c)
{
    if (c->succ) {
        nl_grant64(&c->succ->gate, c->eos);
        return;
    }
    uintptr_t eos = c->eos;
    if (NL_LIKELY(atomic_compare_exchange_strong_explicit(&l->arrivals, &eos, 0, memory_order_release,
                                                          memory_order_relaxed)))
        return;
    recip_unlock_slow(l, c->eos);
}

bool nl_recip_is_locked(const nl_recip_t *l) { return recip_busy(l); }

/* ---- node-free form: element and context from the thread's pool ---------- */
void nl_recip_acquire(nl_recip_t *l)
{
    recip_node_t *n = nl_qnode_get(l);
    nl_recip_lock(l, &n->e, &n->c);
}

int nl_recip_try(nl_recip_t *l)
{
    recip_node_t *n = nl_qnode_get(l);
    if (nl_recip_trylock(l, &n->e, &n->c) == 0)
        return 0;
    nl_qnode_put(n);
    return EBUSY;
}

void nl_recip_release(nl_recip_t *l)
{
    nl_self_t *s = nl_self();
    recip_node_t *n = nl_qnode_top(s, l); /* the usual LIFO case */
    if (NL_LIKELY(n)) {
        nl_recip_unlock(l, &n->c);
        nl_qnode_pop(s);
        return;
    }
    n = nl_qnode_find(l);
    nl_recip_unlock(l, &n->c);
    nl_qnode_put(n);
}

static void op_acquire(void *l) { nl_recip_acquire(l); }
static int op_try(void *l) { return nl_recip_try(l); }
static void op_release(void *l) { nl_recip_release(l); }
static int op_held(const void *l) { return recip_busy(l); }

NL_HIDDEN const nl_lock_ops_t nl_ops_reciprocating = {
    .name = "reciprocating",
    .description = "reciprocating lock: one word, arrival stack served segment by segment, "
                   "constant-time arrival and release",
    .paper = "Dice & Kogan, PPoPP 2025 (arXiv 2501.02380) listing 1",
    .size = sizeof(nl_recip_t), .align = 8,
    .props = NL_PROP_FAIR | NL_PROP_ZERO_INIT,
    .acquire = op_acquire, .try_acquire = op_try, .release = op_release,
    .held = op_held,
};
