/*
 * Internal helpers shared by the lock implementations (not installed).
 *
 *  - nl_cpu_relax / nl_spinner: bounded spinning that turns into sched_yield,
 *    so a waiter never burns a whole scheduler slice while the thread it
 *    waits for is descheduled (2 cores, 32 threads is the normal case here).
 *  - grant words (nl_await32/64, nl_grant32/64): a waiter spins, yields, then
 *    parks on a futex; the granter wakes it only if it really parked.
 *  - the per-thread record: dense id, cached node, a pool of queue nodes for
 *    the node-free lock forms.
 */
#ifndef NL_INTERNAL_H
#define NL_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <sched.h>
#include "numalock/numalock.h"
#include "numalock/topology.h"

#define NL_HIDDEN __attribute__((visibility("hidden")))
#define NL_TLS __thread __attribute__((tls_model("initial-exec")))
#define NL_CACHELINE 64
#define NL_LIKELY(x) __builtin_expect(!!(x), 1)
#define NL_UNLIKELY(x) __builtin_expect(!!(x), 0)

static inline void nl_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

/* ---- waiting policy ------------------------------------------------------ */
enum { NL_WAIT_SPIN = 0, NL_WAIT_YIELD = 1, NL_WAIT_PARK = 2 };
typedef struct nl_wait_policy {
    int kind;
    uint32_t spins;   /* busy iterations before yielding */
    uint32_t yields;  /* sched_yield calls before parking (PARK only) */
} nl_wait_policy_t;

NL_HIDDEN extern nl_wait_policy_t nl_wait_policy;
NL_HIDDEN void nl_wait_policy_init(void);

/* A spinner: call nl_spin_once() in a wait loop. It pauses for the policy's
 * spin budget, then yields the CPU on every call (unless policy is "spin"). */
typedef struct { uint32_t n; } nl_spinner_t;
#define NL_SPINNER_INIT {0}
static inline void nl_spin_once(nl_spinner_t *s)
{
    if (s->n < nl_wait_policy.spins || nl_wait_policy.kind == NL_WAIT_SPIN) {
        s->n++;
        nl_cpu_relax();
    } else {
        sched_yield();
    }
}

/* ---- grant words ----------------------------------------------------------
 * A waiter owns a word initialised to NL_GRANT_WAITING. nl_await*() returns
 * once the word holds a grant value; nl_grant*() stores one and wakes the
 * waiter if it parked. Grant values must not be 0 or NL_GRANT_PARKED, and for
 * the 64-bit form the low 32 bits must not equal NL_GRANT_PARKED (aligned
 * pointers and small odd/even constants other than 3 are fine). */
#define NL_GRANT_WAITING 0u
#define NL_GRANT_PARKED 3u

NL_HIDDEN uint32_t nl_await32_slow(_Atomic uint32_t *w);
NL_HIDDEN uint64_t nl_await64_slow(_Atomic uint64_t *w);
NL_HIDDEN void nl_futex_wake(void *addr, int n);
NL_HIDDEN int nl_futex_wait(void *addr, uint32_t expected);

static inline uint32_t nl_await32(_Atomic uint32_t *w)
{
    uint32_t v = atomic_load_explicit(w, memory_order_acquire);
    if (NL_LIKELY(v != NL_GRANT_WAITING && v != NL_GRANT_PARKED))
        return v;
    return nl_await32_slow(w);
}
static inline void nl_grant32(_Atomic uint32_t *w, uint32_t v)
{
    if (atomic_exchange_explicit(w, v, memory_order_acq_rel) == NL_GRANT_PARKED)
        nl_futex_wake(w, 1);
}
static inline uint64_t nl_await64(_Atomic uint64_t *w)
{
    uint64_t v = atomic_load_explicit(w, memory_order_acquire);
    if (NL_LIKELY(v != NL_GRANT_WAITING && v != NL_GRANT_PARKED))
        return v;
    return nl_await64_slow(w);
}
static inline void nl_grant64(_Atomic uint64_t *w, uint64_t v)
{
    if (atomic_exchange_explicit(w, v, memory_order_acq_rel) == NL_GRANT_PARKED)
        nl_futex_wake(w, 1); /* the low half is at w on little-endian */
}

/* ---- per-thread record ----------------------------------------------------
 * One heap block per thread (TLS holds only a pointer, so the library can be
 * dlopen'ed and preloaded with initial-exec TLS). Freed at thread exit.
 *
 * Queue-node pool for the node-free lock forms: a small stack of cache-line
 * aligned slots. Locks are usually released in the reverse order of their
 * acquisition, so the common release finds its node on top of the stack in
 * O(1), with the owner tag in the node's own cache line. A release out of
 * order leaves a hole that is reclaimed when the slots above it are freed. */
#define NL_POOL_NODES 8
#define NL_QNODE_BYTES 120 /* usable bytes of a queue node (8-byte aligned) */

typedef struct nl_qnode_slot {
    _Alignas(NL_CACHELINE) const void *owner; /* lock the node is in use for, NULL if free */
    _Alignas(8) unsigned char mem[NL_QNODE_BYTES];
} nl_qnode_slot_t;

typedef struct nl_extra_node {
    nl_qnode_slot_t slot;
    struct nl_extra_node *next;
} nl_extra_node_t;

typedef struct nl_self {
    uint32_t depth;                    /* pool[0..depth) may be in use */
    uint32_t holes;                    /* free slots below depth */
    int id;                            /* dense id, -1 if none */
    int node;                          /* cached node */
    int pinned_node;                   /* nl_thread_set_node, -1 if none */
    uint32_t refresh;                  /* calls until the next node refresh */
    uint32_t topo_gen;                 /* topology generation the cache is for */
    uint64_t rng;                      /* per-thread pseudo-random state */
    nl_extra_node_t *extra;            /* overflow nodes (deep nesting) */
    nl_qnode_slot_t pool[NL_POOL_NODES];
} nl_self_t;

NL_HIDDEN extern NL_TLS nl_self_t *nl_self_tls;
NL_HIDDEN nl_self_t *nl_self_create(void);

static inline nl_self_t *nl_self(void)
{
    nl_self_t *s = nl_self_tls;
    if (NL_UNLIKELY(!s))
        s = nl_self_create();
    return s;
}

/* Take a queue node (NL_QNODE_BYTES, 8-byte aligned, in one cache-aligned
 * slot; initialising its fields is the caller's job) for `lock`; find it again
 * at release (NULL if this thread holds no node for `lock`); give it back. */
NL_HIDDEN void *nl_qnode_get_slow(nl_self_t *s, const void *lock);
NL_HIDDEN void *nl_qnode_find_slow(nl_self_t *s, const void *lock);
NL_HIDDEN void nl_qnode_put_slow(nl_self_t *s, void *node);

static inline void *nl_qnode_get(const void *lock)
{
    nl_self_t *s = nl_self();
    uint32_t d = s->depth;
    if (NL_LIKELY(d < NL_POOL_NODES)) {
        s->depth = d + 1;
        s->pool[d].owner = lock;
        return s->pool[d].mem;
    }
    return nl_qnode_get_slow(s, lock);
}
static inline void *nl_qnode_find(const void *lock)
{
    nl_self_t *s = nl_self();
    uint32_t d = s->depth;
    if (NL_LIKELY(d && s->pool[d - 1].owner == lock))
        return s->pool[d - 1].mem;
    return nl_qnode_find_slow(s, lock);
}
static inline void nl_qnode_put(void *node)
{
    nl_self_t *s = nl_self();
    uint32_t d = s->depth;
    if (NL_LIKELY(d && (unsigned char *)node == s->pool[d - 1].mem && !s->holes)) {
        s->pool[d - 1].owner = NULL;
        s->depth = d - 1;
        return;
    }
    nl_qnode_put_slow(s, node);
}

/* Release fast path: the node for `lock` if it is on top of the stack (the
 * usual LIFO case), else NULL; after using it, nl_qnode_pop(). Otherwise use
 * nl_qnode_find() + nl_qnode_put(). */
static inline void *nl_qnode_top(nl_self_t *s, const void *lock)
{
    uint32_t d = s->depth;
    return (d && !s->holes && s->pool[d - 1].owner == lock) ? s->pool[d - 1].mem : NULL;
}
static inline void nl_qnode_pop(nl_self_t *s) { s->pool[--s->depth].owner = NULL; }

/* Fast per-thread pseudo-random number (xorshift64*). */
static inline uint64_t nl_rand(void)
{
    nl_self_t *s = nl_self();
    uint64_t x = s->rng;
    x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
    s->rng = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* Monotonic nanoseconds. */
NL_HIDDEN uint64_t nl_now_ns(void);

/* Topology generation (bumped by nl_topology_set). */
NL_HIDDEN extern _Atomic uint32_t nl_topo_gen;

/* Node of the calling thread, using the thread record directly. */
NL_HIDDEN int nl_self_node_refresh(nl_self_t *s);
static inline int nl_self_node(nl_self_t *s)
{
    if (NL_LIKELY(s->refresh != 0 &&
                  s->topo_gen == atomic_load_explicit(&nl_topo_gen, memory_order_relaxed))) {
        s->refresh--;
        return s->node;
    }
    return nl_self_node_refresh(s);
}

#endif
