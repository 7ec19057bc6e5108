/*
 * numalock: locks for NUMA machines.
 *
 * Generic, runtime-selected API. Every algorithm is described by an
 * nl_lock_ops_t (see registry.c for the list) and can be used either
 *   - through a handle:            nl_lock_create("mcs", NULL) ... nl_lock_destroy()
 *   - on caller-provided storage:  ops = nl_lock_find("mcs"); ops->init(storage, NULL); ...
 *
 * Errors are returned as errno values (or NULL + errno); the library never prints.
 */
#ifndef NUMALOCK_H
#define NUMALOCK_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(NL_BUILDING_LIBRARY)
#define NL_API __attribute__((visibility("default")))
#else
#define NL_API
#endif

#define NL_VERSION "0.1.0"

/* Inline fast paths of the explicit APIs (spinlocks.h, cna.h): in a user's
 * code they are inline-only definitions, never emitted: where the compiler
 * does not inline one, the call goes to the library's copy. The library emits
 * the one external copy of each (src/inline.c defines NL_EMIT_INLINE). The
 * slow paths are out of line in the library (nl_*_slow). */
#if defined(NL_EMIT_INLINE)
#define NL_INLINE NL_API
#else
#define NL_INLINE extern __inline__ __attribute__((__gnu_inline__))
#endif

/* Lock and statistics fields the library updates atomically. In C they are
 * _Atomic. In C++ (which has no _Atomic) they are the plain integer or
 * pointer of the same size, aligned as GCC and Clang align the _Atomic type
 * (to its size), so both languages see one struct layout (tests/cxx: test_cxx
 * compares sizes, alignments and offsets). Only the library, and inline code
 * in these headers through NL_ATOMIC_* below (C11 atomics or the builtins),
 * reads or writes them: to C++ code they are opaque storage. */
#ifdef __cplusplus
#define NL_ATOMIC(T) alignas(sizeof(T)) T
#define NL_ALIGNAS(n) alignas(n)
#else
#define NL_ATOMIC(T) _Atomic(T)
#define NL_ALIGNAS(n) _Alignas(n)
#endif

/* The atomic steps of the inline code in these headers, on NL_ATOMIC
 * fields: C11's atomics in C (Clang, unlike GCC, refuses the __atomic
 * builtins on an _Atomic object), the builtins on the plain field in C++.
 * Orders are the __ATOMIC_* constants, which equal C11's memory_order_*. */
#ifdef __cplusplus
#define NL_ATOMIC_LOAD(p, mo) __atomic_load_n((p), (mo))
#define NL_ATOMIC_STORE(p, v, mo) __atomic_store_n((p), (v), (mo))
#define NL_ATOMIC_XCHG(p, v, mo) __atomic_exchange_n((p), (v), (mo))
#define NL_ATOMIC_FETCH_AND(p, v, mo) __atomic_fetch_and((p), (v), (mo))
#define NL_ATOMIC_CAS(p, e, d, s, f) __atomic_compare_exchange_n((p), (e), (d), 0, (s), (f))
#else
#include <stdatomic.h>
#define NL_ATOMIC_LOAD(p, mo) atomic_load_explicit((p), (memory_order)(mo))
#define NL_ATOMIC_STORE(p, v, mo) atomic_store_explicit((p), (v), (memory_order)(mo))
#define NL_ATOMIC_XCHG(p, v, mo) atomic_exchange_explicit((p), (v), (memory_order)(mo))
#define NL_ATOMIC_FETCH_AND(p, v, mo) atomic_fetch_and_explicit((p), (v), (memory_order)(mo))
#define NL_ATOMIC_CAS(p, e, d, s, f) \
    atomic_compare_exchange_strong_explicit((p), (e), (d), (memory_order)(s), (memory_order)(f))
#endif

/* ---- properties of an algorithm ---------------------------------------- */
enum {
    NL_PROP_FAIR        = 1u << 0, /* FIFO or bounded-bypass admission            */
    NL_PROP_BLOCKING    = 1u << 1, /* waiters park in the kernel (futex)           */
    NL_PROP_NUMA_AWARE  = 1u << 2, /* admission policy prefers the holder's node   */
    NL_PROP_ZERO_INIT   = 1u << 3, /* all-zero storage is an unlocked lock         */
    NL_PROP_ANY_UNLOCK  = 1u << 4, /* may be released by a thread other than owner */
    NL_PROP_RW          = 1u << 5, /* read_acquire/read_release available          */
    NL_PROP_DELEGATE    = 1u << 6, /* critical sections run by a server (execute)  */
    NL_PROP_NEEDS_DESTROY = 1u << 7, /* destroy frees memory: must be called        */
    NL_PROP_FREE_RELEASE = 1u << 8,  /* release of a free lock leaves it free and
                                        working (a stray unlock is harmless)        */
    NL_PROP_FOREIGN     = 1u << 9  /* not numalock's code (glibc): its waiting is
                                      not seen, so statistics count an acquisition
                                      contended when `held` says taken at arrival */
};

/* Attributes for creating a lock; NULL means defaults. */
typedef struct nl_attr {
    bool stats;           /* keep per-lock statistics (nl_lock_stats)              */
    uint32_t local_passes;/* NUMA-aware locks: bound on consecutive same-node passes
                             before the lock must move on (0 = algorithm default)  */
    uint32_t reserved[6];
} nl_attr_t;

/* Slots for a lock's own events in the statistics (nl_lock_ops_t.extra_names). */
#define NL_STATS_EXTRA 2

typedef struct nl_lock_ops {
    const char *name;
    const char *description;
    const char *paper;      /* paper + section, for `numalock list` */
    size_t size;            /* bytes of the lock itself (what lives in place) */
    size_t align;
    unsigned props;         /* NL_PROP_* */
    /* init may be NULL: zero-filled storage is an unlocked lock. Returns errno. */
    int  (*init)(void *lock, const nl_attr_t *attr);
    void (*destroy)(void *lock);                  /* may be NULL */
    void (*acquire)(void *lock);
    int  (*try_acquire)(void *lock);              /* 0 or EBUSY */
    void (*release)(void *lock);
    /* read side (NL_PROP_RW); acquire/release above are the write side */
    void (*read_acquire)(void *lock);
    int  (*read_try_acquire)(void *lock);
    void (*read_release)(void *lock);
    /* delegation (NL_PROP_DELEGATE); generic fallback is acquire; fn(arg); release */
    void *(*execute)(void *lock, void *(*fn)(void *), void *arg);
    /* bytes used in total (lock + memory it allocated), NULL: size */
    size_t (*footprint)(const void *lock);
    /* bytes of a lock sized for a machine with `nodes` nodes, NULL: size */
    size_t (*bytes_at_nodes)(unsigned nodes);
    /* non-zero while some thread holds the lock (write side; a read-write
     * lock: or readers). A snapshot, for misuse checks: the preload library
     * needs it of every lock that replaces a pthread mutex (EBUSY from
     * destroying a held mutex; a stray unlock of a free one is skipped when
     * the lock lacks NL_PROP_FREE_RELEASE). NULL: cannot tell. */
    int (*held)(const void *lock);
    /* names of the lock's own events, counted in the statistics' `extra`
     * slots (NULL: slot unused), e.g. ShflLock's shuffles */
    const char *extra_names[NL_STATS_EXTRA];
} nl_lock_ops_t;

/* ---- registry ------------------------------------------------------------ */
NL_API const nl_lock_ops_t *nl_lock_find(const char *name);   /* NULL if unknown */
NL_API size_t nl_lock_count(void);
NL_API const nl_lock_ops_t *nl_lock_at(size_t index);          /* NULL past the end */
/* Writes "a, b, c" (the valid names) into buf; returns buf. */
NL_API const char *nl_lock_names(char *buf, size_t len);
NL_API size_t nl_lock_bytes_at_nodes(const nl_lock_ops_t *ops, unsigned nodes);

/* ---- statistics ---------------------------------------------------------- */
#define NL_STATS_LEVELS 4 /* = NL_MAX_LEVELS of topology.h */
typedef struct nl_stats_snapshot {
    uint64_t acquisitions;      /* write (exclusive) acquisitions             */
    uint64_t contended;         /* acquisitions that took the lock's slow path  */
    uint64_t handovers;         /* acquisitions by another thread than the last holder */
    uint64_t remote_handovers;  /* ... whose node differs from the last holder's node */
    uint64_t read_acquisitions;
    uint64_t extra[NL_STATS_EXTRA]; /* the lock's own events (ops->extra_names) */
    uint64_t parks;             /* waiters that slept on a futex in the queue   */
    uint64_t gate_waits;        /* passive waits at the gate (over-subscribed)  */
    uint64_t wakes;             /* futex wakes issued (hand-overs, early wakes) */
    uint64_t handovers_to_parked; /* hand-overs whose receiver was asleep       */
    /* hand-overs whose previous holder was in another domain of level l of
     * the topology's hierarchy (topology.h; the node level's count is
     * remote_handovers) */
    uint64_t crossings[NL_STATS_LEVELS];
    uint64_t woken;             /* sleepers those wakes woke (at most one each
                                 * but for a lock that wakes all its sleepers) */
} nl_stats_snapshot_t;

/* Raw statistics block, usable by code that keeps locks in its own storage. */
typedef struct nl_stats {
    NL_ATOMIC(uint64_t) acquisitions, contended, handovers, remote_handovers, read_acquisitions;
    NL_ATOMIC(uint64_t) extra[NL_STATS_EXTRA]; /* the lock's own events, counted by waiters */
    NL_ATOMIC(uint64_t) parks, gate_waits, wakes, handovers_to_parked; /* waiting (src/wait) */
    NL_ATOMIC(uint64_t) crossings[NL_STATS_LEVELS];
    NL_ATOMIC(uint64_t) woken;
    NL_ATOMIC(int64_t) last_thread;
    NL_ATOMIC(int32_t) last_node;
    NL_ATOMIC(int32_t) last_leaf;
} nl_stats_t;

NL_API void nl_stats_init(nl_stats_t *s);
/* Call with the lock held exclusively, right after acquiring it. */
NL_API void nl_stats_on_acquire(nl_stats_t *s, bool contended);
NL_API void nl_stats_on_read_acquire(nl_stats_t *s);
NL_API void nl_stats_read(const nl_stats_t *s, nl_stats_snapshot_t *out);

/* ---- handle API -------------------------------------------------------- */
typedef struct nl_lock nl_lock_t;

/* NULL + errno: ENOENT unknown algorithm, EINVAL bad attribute, ENOMEM. */
NL_API nl_lock_t *nl_lock_create(const char *algorithm, const nl_attr_t *attr);
NL_API nl_lock_t *nl_lock_create_ops(const nl_lock_ops_t *ops, const nl_attr_t *attr);
NL_API void nl_lock_destroy(nl_lock_t *lock);
NL_API void nl_lock_acquire(nl_lock_t *lock);
NL_API int  nl_lock_try(nl_lock_t *lock);               /* 0 or EBUSY */
NL_API void nl_lock_release(nl_lock_t *lock);
NL_API void nl_lock_read_acquire(nl_lock_t *lock);       /* exclusive if not RW */
NL_API int  nl_lock_read_try(nl_lock_t *lock);
NL_API void nl_lock_read_release(nl_lock_t *lock);
NL_API void *nl_lock_execute(nl_lock_t *lock, void *(*fn)(void *), void *arg);
NL_API const nl_lock_ops_t *nl_lock_ops(const nl_lock_t *lock);
NL_API void *nl_lock_storage(nl_lock_t *lock);
/* EINVAL when the lock was created without stats. */
NL_API int nl_lock_stats(const nl_lock_t *lock, nl_stats_snapshot_t *out);
NL_API size_t nl_lock_footprint(const nl_lock_t *lock);

/* ---- threads ------------------------------------------------------------- */
/* Small dense id of the calling thread, recycled when threads exit;
 * -1 when more than NL_MAX_THREADS threads are alive at once. */
#define NL_MAX_THREADS 16383
NL_API int nl_thread_id(void);

/* ---- waiting policy ------------------------------------------------------ */
/* "adaptive" (the default: spin while the process has a CPU for every
 * thread that wants one; otherwise park sooner and let arrivals at a
 * saturated lock wait passively, in order), "spin", "yield" (spin then
 * sched_yield), "park" (spin, yield, then futex) or "park:SPINS:YIELDS". Read
 * from NUMALOCK_WAIT before main. Returns 0 or EINVAL (err gets one
 * sentence naming the bad value and the valid choices). */
NL_API int nl_wait_set_policy(const char *spec, char *err, size_t errlen);
NL_API const char *nl_wait_policy_name(void);
/* The futex call a parked waiter sleeps in: "auto" (the default:
 * futex_wait/futex_wake, Linux 6.7, with FUTEX2_NUMA on the grant words
 * that carry a node half, where the kernel has them; the classic futex
 * call elsewhere), "classic" or "futex2". Set before any thread parks;
 * read from NUMALOCK_FUTEX before main. 0, EINVAL or ENOSYS (no futex2
 * here), err gets one sentence. The name: "classic", "futex2" or
 * "futex2+numa". */
NL_API int nl_futex_set_path(const char *spec, char *err, size_t errlen);
NL_API const char *nl_futex_path_name(void);

#ifdef __cplusplus
}
#endif
#endif
