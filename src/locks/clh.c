/*
 * CLH queue lock (Craig, TR 93-02-02, 1993; Magnusson, Landin & Hagersten,
 * IPPS 1994, the LH lock). The lock word is the tail of an implicit queue:
 *
 *   acquire  mark our node taken; pred = exchange(tail, node); wait until
 *            pred's node is released; pred's node is ours from now on
 *   release  mark our node released (our successor, waiting on it, takes it)
 *
 * Each waiter spins on its predecessor's node, which nobody else watches,
 * and a hand-over writes only that node. Nodes pass from thread to thread.
 *
 * Waiting (src/wait/wait.h): the gate while the process is overloaded, then
 * the predecessor's node's word is a grant word that only its one successor
 * waits on: the waiter spins while it has a CPU and parks when its wait is
 * long, and the releaser's exchange wakes it only if it parked. A waiter
 * that parked wakes its own successor (parked on the waiter's node) once it
 * is granted (early wake).
 *
 * Deviations from the papers:
 *  - the lock starts empty (tail NULL, no dummy node), so all-zero storage
 *    is a free lock: the first arrival takes the lock without a predecessor,
 *    and a release that finds no successor CASes the tail back to NULL and
 *    keeps its node (as the MCS release does); a free lock holds no node;
 *  - the fast path CASes an empty tail (the slow path passes the gate
 *    before it swaps, as the library's MCS does);
 *  - the holder's node is kept in the lock (`head`, written by the holder;
 *    Scott, Shared-Memory Synchronization, 2013, the CLH lock's "standard
 *    interface" form), so the release needs no context from the acquire
 *    and any thread may release (not claimed as NL_PROP_ANY_UNLOCK, which
 *    would offer it to the preload library: a held lock holds a node, and
 *    100,000 mutexes held at once must not cost memory there);
 *  - nodes live on the heap: each thread slot keeps a small cache, a
 *    shared spare list takes a cache's surplus and fills an empty one, and
 *    nodes are never freed (a node in a cache or the spare list is in no
 *    queue). A thread's count of nodes moves by one per busy period of a
 *    lock (the first arrival gives its node away without taking one, the
 *    last release keeps its own besides the one it took), hence the list.
 *
 * Invariants: the node named by the tail is the newest arrival's; a node in
 * a queue is written by its owner (reset before its swap, the release's
 * grant) and, while its one successor waits, moved WAITING -> PARKED by that
 * successor only; a node is taken out of the queue by the successor that
 * saw it granted, or by its releaser's CAS when it is the tail; a node in a
 * cache belongs to no queue. `head` is written by each holder after it
 * acquired and read by the release of that acquisition.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "numalock/clh.h"
#include "../internal.h"

#define CLH_RELEASED 1u

typedef struct nl_clh_node {
    _Atomic uint32_t granted;  /* 0 its thread waits or holds, 3 its successor parked, 1 released */
    struct nl_clh_node *spare; /* link in a cache or the spare list */
} __attribute__((aligned(NL_CACHELINE))) nl_clh_node_t;

static bool clh_busy(const void *l)
{
    return atomic_load_explicit(&((const nl_clh_t *)l)->tail, memory_order_relaxed) != NULL;
}

/* ---- nodes ---------------------------------------------------------------- */
/* A thread slot's cache (its thread only): a stack of nodes, one word: the
 * top node, the number of nodes and a version. A signal handler may take a
 * CLH lock while its thread is half-way through a get or a put, so every
 * change is one compare-and-swap of the word (nl_local_cas64: atomic
 * against the thread's own handlers) from the value it was computed from,
 * and the version makes a word that a handler changed and changed back
 * differ. The model checker's build (verify/wmm, no signals, no pointer
 * arithmetic) keeps the top and the count as two fields. */
#define CLH_KEEP 16  /* a cache keeps at most this many nodes ... */
#define CLH_BATCH 8  /* ... and gives or takes this many at a time */

#ifndef NL_VERIFY
typedef struct {
    _Atomic uint64_t word;
} __attribute__((aligned(NL_CACHELINE))) clh_cache_t;

/* word: top >> 6 in bits 22-63 (addresses below 2^48), count in 16-21, version in 0-15 */
static inline nl_clh_node_t *cw_top(uint64_t w) { return (nl_clh_node_t *)(uintptr_t)(w >> 22 << 6); }
static inline uint32_t cw_n(uint64_t w) { return (uint32_t)(w >> 16) & 63u; }
static inline uint64_t cw_make(nl_clh_node_t *top, uint32_t n, uint64_t old)
{
    return (uint64_t)(uintptr_t)top >> 6 << 22 | (uint64_t)n << 16 | ((old + 1) & 0xffffu);
}
static inline bool clh_fits(const nl_clh_node_t *n) { return (uint64_t)(uintptr_t)n >> 48 == 0; }
static inline uint64_t cw_load(clh_cache_t *c) { return atomic_load_explicit(&c->word, memory_order_relaxed); }

/* the top node, taken (NULL: empty) */
static inline nl_clh_node_t *clh_pop(clh_cache_t *c)
{
    uint64_t w = cw_load(c);
    for (nl_clh_node_t *n; (n = cw_top(w));)
        if (nl_local_cas64(&c->word, &w, cw_make(n->spare, cw_n(w) - 1, w)))
            return n;
    return NULL;
}
/* push `n` while the cache has fewer than `keep` nodes (false: it has) */
static inline bool clh_push_below(clh_cache_t *c, nl_clh_node_t *n, uint32_t keep)
{
    uint64_t w = cw_load(c);
    while (cw_n(w) < keep) {
        n->spare = cw_top(w);
        if (nl_local_cas64(&c->word, &w, cw_make(n, cw_n(w) + 1, w)))
            return true;
    }
    return false;
}
/* the top CLH_BATCH nodes, taken as a list first..*last (NULL: fewer) */
static inline nl_clh_node_t *clh_pop_batch(clh_cache_t *c, nl_clh_node_t **last)
{
    uint64_t w = cw_load(c);
    for (;;) {
        nl_clh_node_t *first = cw_top(w), *l = first;
        for (uint32_t i = 1; i < CLH_BATCH && l; i++)
            l = l->spare;
        if (!l || cw_n(w) < CLH_BATCH)
            return NULL;
        if (nl_local_cas64(&c->word, &w, cw_make(l->spare, cw_n(w) - CLH_BATCH, w))) {
            *last = l;
            return first;
        }
    }
}
#else
typedef struct {
    nl_clh_node_t *top;
    uint32_t n;
} __attribute__((aligned(NL_CACHELINE))) clh_cache_t;

static inline bool clh_fits(const nl_clh_node_t *n) { return (void)n, true; }
static inline nl_clh_node_t *clh_pop(clh_cache_t *c)
{
    nl_clh_node_t *n = c->top;
    if (n) {
        c->top = n->spare;
        c->n--;
    }
    return n;
}
static inline bool clh_push_below(clh_cache_t *c, nl_clh_node_t *n, uint32_t keep)
{
    if (c->n >= keep)
        return false;
    n->spare = c->top;
    c->top = n;
    c->n++;
    return true;
}
#endif
#define CLH_FULL 63 /* the count's field */

static _Atomic(clh_cache_t *) clh_caches[NL_MAX_THREADS];

#ifndef NL_VERIFY
/* Nodes are never freed: cut from the library's mapped chunks
 * (nl_forever_alloc: a signal handler may allocate one whatever its thread
 * was doing); without a new mapping, 64 nodes in the library's data, each
 * taken once. */
#define CLH_RESERVE 64
static nl_clh_node_t clh_reserve[CLH_RESERVE];
static _Atomic uint32_t clh_reserve_next;
#endif

static nl_clh_node_t *clh_alloc(void)
{
    nl_clh_node_t *n = nl_forever_alloc(sizeof *n);
#ifndef NL_VERIFY
    if (!n) {
        uint32_t i = atomic_fetch_add_explicit(&clh_reserve_next, 1, memory_order_relaxed);
        n = i < CLH_RESERVE ? &clh_reserve[i] : NULL;
    }
#endif
    return n;
}

#ifndef NL_VERIFY
/* The spare list: surplus nodes of the caches, and the nodes of threads
 * without a slot. A spin word guards it, taken only by threads whose cache
 * over- or underflows, and only tried: its holder may be this thread, in
 * the code a signal handler interrupted (a get then allocates, a put keeps
 * the node). A child of fork() starts with it free and empty. */
static _Atomic uint32_t clh_spares_busy;
static nl_clh_node_t *clh_spares;
static pthread_once_t clh_fork_once = PTHREAD_ONCE_INIT;

static void clh_atfork_child(void)
{
    atomic_store_explicit(&clh_spares_busy, 0, memory_order_relaxed);
    clh_spares = NULL; /* its nodes may be half moved: left behind */
}
static void clh_fork_setup(void) { pthread_atfork(NULL, NULL, clh_atfork_child); }

static bool clh_spares_lock(void)
{
    pthread_once(&clh_fork_once, clh_fork_setup);
    nl_waiter_t w;
    nl_waiter_init(&w);
    for (uint32_t i = 0; i < 128; i++) { /* a holder on another CPU is done in a few steps */
        if (!atomic_load_explicit(&clh_spares_busy, memory_order_relaxed) &&
            !atomic_exchange_explicit(&clh_spares_busy, 1, memory_order_acquire))
            return true;
        nl_wait_step(&w);
    }
    return false;
}
static void clh_spares_unlock(void) { atomic_store_explicit(&clh_spares_busy, 0, memory_order_release); }

/* Up to `max` spare nodes, linked through `spare`; *got their number. */
static nl_clh_node_t *clh_spares_take(uint32_t max, uint32_t *got)
{
    *got = 0;
    if (!clh_spares_lock())
        return NULL;
    nl_clh_node_t *first = clh_spares, *last = NULL;
    uint32_t n = 0;
    for (nl_clh_node_t *p = first; p && n < max; p = p->spare, n++)
        last = p;
    if (last) {
        clh_spares = last->spare;
        last->spare = NULL;
    }
    clh_spares_unlock();
    *got = n;
    return n ? first : NULL;
}

/* false: the list was not free, the nodes stay the caller's */
static bool clh_spares_give(nl_clh_node_t *first, nl_clh_node_t *last)
{
    if (!clh_spares_lock())
        return false;
    last->spare = clh_spares;
    clh_spares = first;
    clh_spares_unlock();
    return true;
}
#endif

/* only the thread holding slot `id` gets here (the slot's next thread finds
 * the cache through the id's hand-over) */
static __attribute__((noinline)) clh_cache_t *clh_cache_slow(int id)
{
    clh_cache_t *c = nl_forever_alloc(sizeof *c); /* zeroed; never freed (a slot keeps it) */
    if (!c)
        return NULL;
    atomic_store_explicit(&clh_caches[id], c, memory_order_release);
    return c;
}

/* The slot's cache, NULL for a thread without a slot (or no memory). */
static inline clh_cache_t *clh_cache(nl_self_t *s)
{
    if (NL_UNLIKELY(s->id < 0))
        return NULL;
    clh_cache_t *c = atomic_load_explicit(&clh_caches[s->id], memory_order_acquire);
    return NL_LIKELY(c) ? c : clh_cache_slow(s->id);
}

#ifndef NL_VERIFY
/* Keep `n` in the cache over its count, else in the spare list; with both
 * full or busy (the list's holder may be this very thread, interrupted by
 * the signal handler we run in) the node is lost, never reused. */
static void clh_keep(clh_cache_t *c, nl_clh_node_t *n)
{
    if (!(c && clh_fits(n) && clh_push_below(c, n, CLH_FULL)))
        clh_spares_give(n, n);
}
#endif

static __attribute__((noinline)) nl_clh_node_t *clh_get_slow(clh_cache_t *c)
{
#ifndef NL_VERIFY
    uint32_t got;
    nl_clh_node_t *list = clh_spares_take(c ? CLH_BATCH : 1, &got);
    if (list) {
        for (nl_clh_node_t *p = list->spare, *next; c && p; p = next) {
            next = p->spare;
            clh_keep(c, p);
        }
        return list;
    }
#else
    (void)c;
#endif
    return clh_alloc();
}

/* A node for an arrival (NULL: out of memory). */
static inline nl_clh_node_t *clh_get(nl_self_t *s)
{
    clh_cache_t *c = clh_cache(s);
    nl_clh_node_t *n = c ? clh_pop(c) : NULL;
    return NL_LIKELY(n) ? n : clh_get_slow(c);
}

static __attribute__((noinline)) void clh_put_slow(clh_cache_t *c, nl_clh_node_t *n)
{
#ifndef NL_VERIFY
    /* give CLH_BATCH of the cache to the spare list (if it is busy, the
     * cache keeps them over its count: the next put tries again) */
    nl_clh_node_t *last, *first = c && clh_fits(n) ? clh_pop_batch(c, &last) : NULL;
    if (first && !clh_spares_give(first, last))
        for (nl_clh_node_t *p = first, *next; p; p = next) {
            next = p == last ? NULL : p->spare;
            clh_keep(c, p);
        }
    clh_keep(c, n);
#else
    if (c) /* the checker's threads all have slots */
        clh_push_below(c, n, CLH_FULL);
#endif
}

/* A node no queue holds any more joins the thread's cache. */
static inline void clh_put(nl_self_t *s, nl_clh_node_t *n)
{
    clh_cache_t *c = clh_cache(s);
    if (NL_LIKELY(c && clh_fits(n) && clh_push_below(c, n, CLH_KEEP)))
        return;
    clh_put_slow(c, n);
}

/* ---- the lock ---------------------------------------------------------------- */
static __attribute__((noinline)) void clh_lock_slow(nl_clh_t *l, nl_self_t *s, nl_clh_node_t *n)
{
    nl_waiter_t w;
    /* saturated: the tail does not tell the holder from a waiter */
    nl_wait_begin(&w, l, clh_busy, true);
    /* release: our node's reset reaches the successor that swaps behind us */
    nl_clh_node_t *pred = atomic_exchange_explicit(&l->tail, n, memory_order_acq_rel);
    if (pred) {
        nl_wait_grant32(&w, &pred->granted);
        clh_put(s, pred); /* our predecessor's node is ours now */
        if (nl_wait_parked(&w))
            nl_nudge32(&n->granted); /* our successor waits on our node */
    }
    nl_wait_end(&w);
}

void nl_clh_acquire(nl_clh_t *l)
{
    nl_self_t *s = nl_self();
    nl_clh_node_t *n = clh_get(s);
    if (NL_UNLIKELY(!n))
        nl_no_memory("a CLH queue node"); /* nothing can be waited on */
    atomic_store_explicit(&n->granted, NL_GRANT_WAITING, memory_order_relaxed);
    nl_clh_node_t *empty = NULL;
    if (NL_UNLIKELY(!atomic_compare_exchange_strong_explicit(&l->tail, &empty, n, memory_order_acq_rel,
                                                             memory_order_relaxed)))
        clh_lock_slow(l, s, n);
    atomic_store_explicit(&l->head, n, memory_order_relaxed);
}

int nl_clh_try(nl_clh_t *l)
{
    if (clh_busy(l))
        return EBUSY;
    nl_self_t *s = nl_self();
    nl_clh_node_t *n = clh_get(s);
    if (NL_UNLIKELY(!n))
        return EBUSY;
    atomic_store_explicit(&n->granted, NL_GRANT_WAITING, memory_order_relaxed);
    nl_clh_node_t *empty = NULL;
    if (!atomic_compare_exchange_strong_explicit(&l->tail, &empty, n, memory_order_acq_rel,
                                                 memory_order_relaxed)) {
        clh_put(s, n);
        return EBUSY;
    }
    atomic_store_explicit(&l->head, n, memory_order_relaxed);
    return 0;
}

void nl_clh_release(nl_clh_t *l)
{
    nl_clh_node_t *n = atomic_load_explicit(&l->head, memory_order_relaxed);
    nl_clh_node_t *mine = n;
    /* nobody behind us: the lock is empty again and the node stays ours */
    if (NL_LIKELY(atomic_compare_exchange_strong_explicit(&l->tail, &mine, NULL, memory_order_release,
                                                          memory_order_relaxed))) {
        clh_put(nl_self(), n);
        return;
    }
    nl_grant32(&n->granted, CLH_RELEASED); /* the node is our successor's now */
}

bool nl_clh_is_locked(const nl_clh_t *l) { return clh_busy(l); }

static void op_acquire(void *l) { nl_clh_acquire(l); }
static int op_try(void *l) { return nl_clh_try(l); }
static void op_release(void *l) { nl_clh_release(l); }
static int op_held(const void *l) { return clh_busy(l); }

NL_HIDDEN const nl_lock_ops_t nl_ops_clh = {
    .name = "clh",
    .description = "CLH queue lock: waiters spin on their predecessor's node, nodes pass between "
                   "threads",
    .paper = "Craig 1993; Magnusson, Landin & Hagersten 1994 (LH lock)",
    .size = sizeof(nl_clh_t), .align = 8,
    /* any thread may release, but NL_PROP_ANY_UNLOCK is not claimed: it is
     * also what offers a lock to the preload library, whose mutexes hold no
     * memory of their own, and a held CLH lock holds a queue node */
    .props = NL_PROP_FAIR | NL_PROP_ZERO_INIT,
    .acquire = op_acquire, .try_acquire = op_try, .release = op_release,
    .held = op_held,
};
