/*
 * Hemlock (Dice & Kogan, "Hemlock: Compact and Scalable Mutual Exclusion",
 * SPAA 2021; arXiv 2102.03863, listing 1, with the paper's coherence-traffic
 * reduction, CTR, in spirit: the waiter acknowledges with one atomic
 * exchange). The lock is one word, the tail; each thread has one element,
 * its grant word, for every lock it holds:
 *
 *   acquire  pred = exchange(tail, self); if pred: wait until pred->grant
 *            holds this lock's address, then clear it (the acknowledgement)
 *   release  CAS tail from self to empty; if that fails (a successor):
 *            grant = the lock's address, then wait until it is cleared
 *
 * A waiter watches its predecessor's word, not a node of its own; the
 * address tells the waiters of different locks held by one thread apart
 * (they may watch the same word at once). No node passes between threads:
 * the releaser's wait for the acknowledgement is what lets it reuse its
 * word at its next release.
 *
 * Waiting (src/wait/wait.h): the gate while the process is overloaded, then
 * the waiter spins on its predecessor's grant word while it has a CPU; when
 * its spin budget is spent it parks: it sets bit 0 of that word (HEM_SLEEP,
 * a fetch-or) and sleeps on the element's futex word `seq`. Whoever changes a grant
 * word with an exchange (the releaser's grant, the successor's
 * acknowledgement) wakes every sleeper of that element when the old value
 * had the bit; sleepers that were not waiting for this change sleep again.
 * The releaser's wait for the acknowledgement waits the same way. A waiter
 * that parked wakes the sleepers on its own element once it holds the lock
 * (early wake: its successor is probably asleep there).
 *
 * Invariants: a thread's grant word holds 0 (with or without HEM_SLEEP)
 * except between its release's grant and the acknowledgement, when it holds
 * that lock's address; only the thread writes a lock address there, only
 * that lock's successor clears it, anyone waiting on the element may set
 * HEM_SLEEP (a fetch-or: on a value that changed meanwhile the bit is
 * stale, costing one needless wake), and every exchange that removes
 * HEM_SLEEP wakes the element's sleepers. A sleeper reads `seq` (acquire) before it looks at
 * the grant word, and a waker increments it (release) after its exchange,
 * so a sleep begun before a change sees the change or is woken by it (the
 * sleeper's fetch-or alone would do under RC11; the orders keep it where a
 * load may take the value of a store that depends on a later one, IMM). The
 * waker touches the element after its exchange only when HEM_SLEEP was set:
 * then its owner sleeps there or holds another lock somebody sleeps for, so
 * the element is still in use.
 *
 * Deviations from the paper:
 *  - the fast path CASes an empty tail (as the library's MCS does) so that a
 *    contended arrival first passes the gate; the slow path exchanges as the
 *    paper does;
 *  - parking (HEM_SLEEP and `seq`), which the paper's spinning lock has no
 *    need for; the wait for the grant loads until the address appears, then
 *    exchanges once (the paper's CTR form polls with a CAS);
 *  - the node-free form's element is the calling thread's, kept per thread
 *    slot (allocated at the slot's first use, kept for the process, reused
 *    by the next thread of the slot); a thread without a slot (more than
 *    NL_MAX_THREADS alive) uses a pool slot per held lock instead, and so
 *    does a signal handler's lock while its thread is inside a release
 *    (hem_busy_self).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "numalock/hemlock.h"
#include "../internal.h"

#define HEM_SLEEP ((uint64_t)1)

static bool hem_busy(const void *l)
{
    return atomic_load_explicit(&((const nl_hemlock_t *)l)->tail, memory_order_relaxed) != NULL;
}

/* Wake every sleeper of `e` (its owner waiting for an acknowledgement, the
 * waiters of the locks its owner holds); the ones not concerned sleep again. */
static void hem_wake(nl_hemlock_elem_t *e)
{
    atomic_fetch_add_explicit(&e->seq, 1, memory_order_release);
    nl_wait_wake(&e->seq, INT_MAX);
}

/* Wait on `e`'s grant word until DONE(v) holds of its value v (the
 * grant of `lock` for a successor, its clearing for the releaser); spin
 * while the waiter may, then set HEM_SLEEP and sleep on `seq`. The value
 * seen. (A macro for the two waits, so that each loop's exit test is a
 * plain comparison.) */
#define HEM_AWAIT(w, e, DONE)                                                                   \
    ({                                                                                          \
        uint64_t v_;                                                                            \
        for (;;) {                                                                              \
            while (!nl_wait_due(w)) {                                                           \
                v_ = atomic_load_explicit(&(e)->grant, memory_order_acquire);                   \
                if (DONE(v_))                                                                   \
                    goto done_;                                                                 \
                nl_wait_step(w);                                                                \
            }                                                                                   \
            for (;;) {                                                                          \
                uint32_t seq_ = atomic_load_explicit(&(e)->seq, memory_order_acquire);          \
                v_ = atomic_load_explicit(&(e)->grant, memory_order_acquire);                   \
                if (DONE(v_))                                                                   \
                    goto done_;                                                                 \
                /* the bit on whatever the word holds now: a change since */           \
                /* the load is seen here (and a bit set on it is harmless); */            \
                /* acquire, as the load: the grant it may read is the hand-over */        \
                v_ = atomic_fetch_or_explicit(&(e)->grant, HEM_SLEEP, memory_order_acquire);   \
                if (DONE(v_))                                                                   \
                    goto done_;                                                                 \
                nl_wait_park(w, &(e)->seq, seq_);                                               \
                if (!nl_wait_due(w))                                                            \
                    break; /* woken (the budget renewed): spin again */                         \
            }                                                                                   \
        }                                                                                       \
    done_:                                                                                      \
        v_;                                                                                     \
    })

/* Our predecessor is `pred`: wait for its grant of `l`, acknowledge it. */
static void hem_wait_turn(nl_waiter_t *w, nl_hemlock_t *l, nl_hemlock_elem_t *self,
                          nl_hemlock_elem_t *pred)
{
    uint64_t lock = (uint64_t)(uintptr_t)l;
#define HEM_GRANTED(v) (((v) & ~HEM_SLEEP) == lock)
    HEM_AWAIT(w, pred, HEM_GRANTED);
#undef HEM_GRANTED
    /* the acknowledgement: pred may reuse its word now */
    if (atomic_exchange_explicit(&pred->grant, 0, memory_order_relaxed) & HEM_SLEEP)
        hem_wake(pred);
    if (nl_wait_parked(w)) {
        /* early wake: our successors probably sleep on our word too */
        uint64_t v = HEM_SLEEP;
        if (atomic_compare_exchange_strong_explicit(&self->grant, &v, 0, memory_order_relaxed,
                                                    memory_order_relaxed))
            hem_wake(self);
    }
}

static __attribute__((noinline)) void hem_lock_slow(nl_hemlock_t *l, nl_hemlock_elem_t *self)
{
    nl_waiter_t w;
    /* saturated: the tail does not tell the holder from a waiter */
    nl_wait_begin(&w, l, hem_busy, true);
    nl_hemlock_elem_t *pred = atomic_exchange_explicit(&l->tail, self, memory_order_acq_rel);
    if (pred)
        hem_wait_turn(&w, l, self, pred);
    nl_wait_end(&w);
}

void nl_hemlock_lock(nl_hemlock_t *l, nl_hemlock_elem_t *self)
{
    nl_hemlock_elem_t *empty = NULL;
    /* acq_rel: the element's first contents (its allocation) reach the
     * successor that reads it through the tail (the same instruction as
     * acquire on x86-64) */
    if (NL_LIKELY(atomic_compare_exchange_strong_explicit(&l->tail, &empty, self, memory_order_acq_rel,
                                                          memory_order_relaxed)))
        return;
    hem_lock_slow(l, self);
}

int nl_hemlock_trylock(nl_hemlock_t *l, nl_hemlock_elem_t *self)
{
    nl_hemlock_elem_t *empty = NULL;
    return atomic_compare_exchange_strong_explicit(&l->tail, &empty, self, memory_order_acq_rel, /* as the lock's */
                                                   memory_order_relaxed)
               ? 0
               : EBUSY;
}

/* Wait until `self`'s word holds no lock's address (see below). */
static __attribute__((noinline)) void hem_await_free(nl_hemlock_elem_t *self)
{
    nl_waiter_t w;
    nl_waiter_init(&w);
#define HEM_FREE(v) (((v) & ~HEM_SLEEP) == 0)
    HEM_AWAIT(&w, self, HEM_FREE);
#undef HEM_FREE
}

/* A successor has swapped the tail: grant, wait for the acknowledgement.
 * The word holds another lock's address only when a signal handler of this
 * thread releases a lock while the thread, interrupted, waits for the
 * acknowledgement of its own release: the grant waits for that one (its
 * successor is another thread), else it would overwrite it and that
 * successor would wait for ever. Only this thread writes addresses, and a
 * handler returns with the word free, so the test needs no atomic step. */
static __attribute__((noinline)) void hem_unlock_slow(nl_hemlock_t *l, nl_hemlock_elem_t *self)
{
    uint64_t lock = (uint64_t)(uintptr_t)l;
    if (NL_UNLIKELY(atomic_load_explicit(&self->grant, memory_order_relaxed) & ~HEM_SLEEP))
        hem_await_free(self);
    nl_waiter_t w;
    nl_waiter_init(&w);
    if (atomic_exchange_explicit(&self->grant, lock, memory_order_release) & HEM_SLEEP)
        hem_wake(self);
#define HEM_ACKED(v) (((v) & ~HEM_SLEEP) != lock)
    HEM_AWAIT(&w, self, HEM_ACKED);
#undef HEM_ACKED
}

void nl_hemlock_unlock(nl_hemlock_t *l, nl_hemlock_elem_t *self)
{
    nl_hemlock_elem_t *me = self;
    if (NL_LIKELY(atomic_compare_exchange_strong_explicit(&l->tail, &me, NULL, memory_order_release,
                                                          memory_order_relaxed)))
        return;
    hem_unlock_slow(l, self);
}

bool nl_hemlock_is_locked(const nl_hemlock_t *l) { return hem_busy(l); }

/* ---- node-free form: the thread's own element --------------------------- */
typedef struct {
    _Alignas(NL_CACHELINE) nl_hemlock_elem_t e;
    _Atomic uint32_t pooled; /* locks its thread holds on pool slots (signal handlers) */
} hem_slot_elem_t;

static _Atomic(hem_slot_elem_t *) hem_elems[NL_MAX_THREADS];
/* A slot whose element could not be allocated: its threads use pool slots
 * from then on, so that a release never finds an element its acquisition
 * did not use (a later allocation that succeeds would give one). */
#define HEM_NO_ELEM ((hem_slot_elem_t *)1)

/* only the thread holding `id` gets here (the slot's next thread finds the
 * element through the id's hand-over) */
static __attribute__((noinline)) hem_slot_elem_t *hem_elem_slow(int id)
{
    hem_slot_elem_t *b = nl_forever_alloc(sizeof *b); /* zeroed; never freed (a slot keeps it) */
    if (!b) {
        atomic_store_explicit(&hem_elems[id], HEM_NO_ELEM, memory_order_relaxed);
        return NULL;
    }
    atomic_store_explicit(&hem_elems[id], b, memory_order_release);
    return b;
}

/* The thread's element, NULL for a thread without a slot. */
static inline hem_slot_elem_t *hem_self(nl_self_t *s)
{
    if (NL_UNLIKELY(s->id < 0))
        return NULL;
    hem_slot_elem_t *b = atomic_load_explicit(&hem_elems[s->id], memory_order_acquire);
    if (NL_LIKELY((uintptr_t)b > (uintptr_t)HEM_NO_ELEM))
        return b;
    return b ? NULL : hem_elem_slow(s->id);
}

/* The thread's element is busy: its word holds the address of a lock whose
 * release the thread is in (a signal handler runs on top of it). A lock
 * taken with it now would be released by a second grant into that word,
 * which must wait for the first acknowledgement, which may come from a
 * thread whose handler waits for this very lock: so the handler's lock takes
 * a pool slot instead. Only the thread writes addresses into its word, and a
 * handler returns with its own grants acknowledged, so a plain load decides. */
static inline bool hem_busy_self(hem_slot_elem_t *b)
{
    return atomic_load_explicit(&b->e.grant, memory_order_relaxed) & ~HEM_SLEEP;
}

/* A pool slot as the element of one acquisition (threads without a slot). */
static nl_hemlock_elem_t *hem_pool_elem(const void *l)
{
    nl_hemlock_elem_t *e = nl_qnode_get(l);
    atomic_store_explicit(&e->grant, 0, memory_order_relaxed);
    atomic_store_explicit(&e->seq, 0, memory_order_relaxed);
    return e;
}

/* A pool slot as this acquisition's element (a thread without a slot, or
 * whose element is busy), counted in its element when it has one. */
static __attribute__((noinline)) int hem_pooled(nl_hemlock_t *l, hem_slot_elem_t *b, bool try)
{
    nl_hemlock_elem_t *e = hem_pool_elem(l);
    if (b)
        atomic_fetch_add_explicit(&b->pooled, 1, memory_order_relaxed); /* before it is held */
    if (!try)
        nl_hemlock_lock(l, e);
    else if (nl_hemlock_trylock(l, e)) {
        if (b)
            atomic_fetch_sub_explicit(&b->pooled, 1, memory_order_relaxed);
        nl_qnode_put(e);
        return EBUSY;
    }
    return 0;
}

void nl_hemlock_acquire(nl_hemlock_t *l)
{
    hem_slot_elem_t *b = hem_self(nl_self());
    if (NL_LIKELY(b && !hem_busy_self(b)))
        nl_hemlock_lock(l, &b->e);
    else
        hem_pooled(l, b, false);
}

int nl_hemlock_try(nl_hemlock_t *l)
{
    hem_slot_elem_t *b = hem_self(nl_self());
    if (NL_LIKELY(b && !hem_busy_self(b)))
        return nl_hemlock_trylock(l, &b->e);
    return hem_pooled(l, b, true);
}

/* Some lock of this thread's is on a pool slot: this one, if the pool has
 * a slot for it, else the thread's element. */
static __attribute__((noinline)) void hem_release_pooled(nl_hemlock_t *l, hem_slot_elem_t *b)
{
    nl_hemlock_elem_t *e = nl_qnode_find(l);
    if (!e) {
        nl_hemlock_unlock(l, &b->e);
        return;
    }
    nl_hemlock_unlock(l, e);
    nl_qnode_put(e);
    if (b)
        atomic_fetch_sub_explicit(&b->pooled, 1, memory_order_relaxed);
}

void nl_hemlock_release(nl_hemlock_t *l)
{
    hem_slot_elem_t *b = hem_self(nl_self());
    if (NL_LIKELY(b && !atomic_load_explicit(&b->pooled, memory_order_relaxed)))
        nl_hemlock_unlock(l, &b->e);
    else
        hem_release_pooled(l, b);
}

static void op_acquire(void *l) { nl_hemlock_acquire(l); }
static int op_try(void *l) { return nl_hemlock_try(l); }
static void op_release(void *l) { nl_hemlock_release(l); }
static int op_held(const void *l) { return hem_busy(l); }

NL_HIDDEN const nl_lock_ops_t nl_ops_hemlock = {
    .name = "hemlock",
    .description = "Hemlock: one word per lock and one grant word per thread, waiters watch "
                   "their predecessor's word, no queue nodes passed",
    .paper = "Dice & Kogan, SPAA 2021 (arXiv 2102.03863) listing 1",
    .size = sizeof(nl_hemlock_t), .align = 8,
    .props = NL_PROP_FAIR | NL_PROP_ZERO_INIT,
    .acquire = op_acquire, .try_acquire = op_try, .release = op_release,
    .held = op_held,
};
