/*
 * The bottom layer of the library (not installed): the per-thread record
 * (dense id, cached node, a pool of queue nodes for the node-free lock forms,
 * waiting counters), clocks, random numbers, the pause instruction.
 * It depends on nothing in src/; src/wait/wait.h builds on it, the locks on
 * both (src/internal.h includes the three).
 */
#ifndef NL_SELF_H
#define NL_SELF_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include "numalock/numalock.h"
#include "numalock/topology.h"
#include "machine.h"

#define NL_HIDDEN __attribute__((visibility("hidden")))
#define NL_TLS __thread __attribute__((tls_model("initial-exec")))
#define NL_CACHELINE 64
#define NL_LIKELY(x) __builtin_expect(!!(x), 1)
#define NL_UNLIKELY(x) __builtin_expect(!!(x), 0)

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

/* Waiting counters of one thread, written only by it (plain stores), read by
 * the generic handle around its own calls (statistics) and by the preload's
 * profile. */
typedef struct nl_wait_counts {
    uint64_t slow;        /* acquisitions that took a lock's slow path        */
    uint64_t parks;       /* futex sleeps in a lock's queue                   */
    uint64_t gate_parks;  /* passive waits at the gate (over-subscription)    */
    uint64_t wakes;       /* futex wakes issued (hand-overs and early wakes)  */
    uint64_t woken;       /* ... the sleepers they woke                      */
    uint64_t to_parked;   /* grants received while parked (counted by the waiter) */
    uint64_t preempted;   /* waits in which the waiter saw itself lose its CPU */
    uint64_t extra[NL_STATS_EXTRA]; /* the lock's own events (nl_lock_ops_t.extra_names) */
} nl_wait_counts_t;

typedef struct nl_self {
    uint32_t depth;                    /* pool[0..depth) may be in use */
    uint32_t holes;                    /* free slots below depth */
    int id;                            /* dense id, -1 if none */
    int node;                          /* cached node */
    int leaf;                          /* cached domain of the finest level (topology.h) */
    const nl_topology_t *topo;         /* the topology node and leaf are of */
    int pinned_node;                   /* nl_thread_set_node, -1 if none */
    int pinned_leaf;                   /* nl_thread_set_leaf, -1 if none */
    uint32_t refresh;                  /* calls until the next node refresh */
    uint32_t topo_gen;                 /* topology generation the cache is for */
    uint64_t rng;                      /* per-thread pseudo-random state */
    nl_extra_node_t *extra;            /* overflow nodes (deep nesting) */
    nl_wait_counts_t wc;               /* waiting counters (src/wait)   */
    uint32_t load_countdown;           /* load-level looks until the next look at the sample age */
    nl_qnode_slot_t pool[NL_POOL_NODES];
} nl_self_t;

NL_HIDDEN extern NL_TLS nl_self_t *nl_self_tls;
NL_HIDDEN nl_self_t *nl_self_create(void);
/* Threads that have a record now (created and not yet exited). */
NL_HIDDEN uint32_t nl_threads_live(void);

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

/* The pool is also used by signal handlers that lock while their thread is
 * inside one of these functions: every step leaves a state a handler may
 * use and undo whole (a slot is claimed, owner set, before the depth counts
 * it, and leaves the count before its owner is cleared; a compiler fence
 * keeps the order), so the interrupted code's view stays right. */
static inline void *nl_qnode_get(const void *lock)
{
    nl_self_t *s = nl_self();
    uint32_t d = s->depth;
    if (NL_LIKELY(d < NL_POOL_NODES)) {
        s->pool[d].owner = lock;
        atomic_signal_fence(memory_order_seq_cst);
        s->depth = d + 1;
        atomic_signal_fence(memory_order_seq_cst);
        s->pool[d].owner = lock; /* again: a handler between the two took and freed the slot */
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
        s->depth = d - 1;
        atomic_signal_fence(memory_order_seq_cst);
        s->pool[d - 1].owner = NULL;
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
static inline void nl_qnode_pop(nl_self_t *s)
{
    uint32_t d = s->depth - 1;
    s->depth = d;
    atomic_signal_fence(memory_order_seq_cst);
    s->pool[d].owner = NULL;
}

/* Compare-and-swap of a word that only this thread and its signal handlers
 * touch: atomic against a handler that interrupts the thread (one
 * instruction on x86-64, without the bus lock), no order towards others. */
static inline bool nl_local_cas64(_Atomic uint64_t *p, uint64_t *expect, uint64_t desired)
{
#if defined(__x86_64__) && !defined(NL_VERIFY) && !defined(NL_SIM) && !defined(__SANITIZE_THREAD__)
    bool ok;
    __asm__ __volatile__("cmpxchgq %3, %1"
                         : "=@ccz"(ok), "+m"(*(uint64_t *)(void *)p), "+a"(*expect)
                         : "r"(desired)
                         : "memory");
    return ok;
#else
    return atomic_compare_exchange_strong_explicit(p, expect, desired, memory_order_relaxed, memory_order_relaxed);
#endif
}

/* nanosleep with cancellation disabled: a thread cancelled while it waits
 * for a lock must not unwind from inside the lock's code. */
static inline void nl_nap_uncancellable(const struct timespec *ts)
{
#if defined(NL_VERIFY)
    (void)ts; /* the model checker's clock does not move: never reached */
#elif defined(NL_SIM)
    nanosleep(ts, NULL);
#else
    int cs;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
    nanosleep(ts, NULL);
    pthread_setcancelstate(cs, NULL);
#endif
}

/* Zeroed memory kept for the process's life (never freed: a thread slot's
 * node block, a lock's queue nodes that go round for ever), `size` bytes at
 * a cache-line boundary, cut from mapped chunks with one atomic step, so a
 * signal handler may allocate it whatever its thread was doing (malloc may
 * not be called there); NULL without memory. (verify/wmm/env.c: from the
 * model checker's allocator.) */
NL_HIDDEN void *nl_forever_alloc(size_t size);

/* No memory for something a lock cannot go on without: one line on stderr
 * ("numalock: no memory for WHAT; stopping"), then abort(). */
NL_HIDDEN void nl_no_memory(const char *what) __attribute__((noreturn, cold));

/* Fast per-thread pseudo-random number (xorshift64*). */
#ifdef NL_VERIFY
uint64_t nl_verify_draw(void);
#endif
static inline uint64_t nl_rand(void)
{
#ifdef NL_VERIFY
    /* the model checker's build (verify/wmm): a draw the checker chooses,
     * 0 or 1, so that both sides of every random choice are explored */
    return nl_verify_draw();
#endif
    nl_self_t *s = nl_self();
    uint64_t x = s->rng;
    x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
    s->rng = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* The clock (machine.h): nl_machine_ns(), nl_machine_ticks(), and the
 * ticks' rate, measured by the load sampler (src/wait/load.c) against
 * nanoseconds; until then a guess for the counter. The conversions, inline
 * for the waiting loops (the API's nl_clock_* in thread.c are these). */
NL_HIDDEN extern _Atomic uint64_t nl_ticks_per_ms;
static inline uint64_t nl_ns_to_ticks(uint64_t ns)
{
    return ns * atomic_load_explicit(&nl_ticks_per_ms, memory_order_relaxed) / 1000000ull;
}
static inline uint64_t nl_ticks_to_ns(uint64_t ticks)
{
    uint64_t tpms = atomic_load_explicit(&nl_ticks_per_ms, memory_order_relaxed);
    return tpms ? ticks / tpms * 1000000ull + ticks % tpms * 1000000ull / tpms : ticks;
}

#endif
