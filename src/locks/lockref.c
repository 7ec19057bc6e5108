/*
 * lockref (Linux lib/lockref.c, v3.12; "Linux locking: cache-line contention
 * on large NUMA systems", lockref slides): a spin lock and a reference count
 * in one 8-byte word.
 *
 * Fast path (CMPXCHG_LOOP in Linux): read the word; while the lock half is
 * entirely zero (no holder, no pending bit, no queue), compute the new count
 * and compare-and-swap the whole word, at most 100 tries. A successful CAS
 * proves the lock was free at that instant, so the update is equivalent to
 * one made under the lock.
 * Slow path: take the 4-byte qspinlock (nl_qspin_*, the MCS-queued Linux
 * layout from cna.h) and update the count under it.
 *
 * Count updates made while holding the lock are atomic adds on the high half
 * of the word (never plain stores): lockless readers load the whole word
 * concurrently, and queued waiters change the lock's pending/tail bits in the
 * low half while we hold it.
 *
 * Not a registered lock (it has no acquire/release of its own).
 */
#include <errno.h>
#include <string.h>
#include "numalock/lockref.h"
#include "../internal.h"

#define LOCKREF_RETRIES 100
#define ONE ((uint64_t)1 << 32)

_Static_assert(sizeof(nl_lockref_t) == 8, "lockref is one 8-byte word");
_Static_assert(sizeof(nl_qspinlock_t) == 4, "the lock half is 4 bytes");

/* ---- statistics: per-thread-slot counters, no shared hot line ---------- */
typedef struct {
    _Alignas(NL_CACHELINE) _Atomic uint64_t lockless;
    _Atomic uint64_t locked;
} shard_t;
static shard_t shards[64];

static inline void count_path(int locked)
{
    shard_t *s = &shards[(unsigned)nl_self()->id & 63];
    _Atomic uint64_t *c = locked ? &s->locked : &s->lockless;
    /* load + store, not an atomic add: the slot is normally this thread's */
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

void nl_lockref_stats(nl_lockref_stats_t *out)
{
    out->lockless = out->locked = 0;
    for (int i = 0; i < 64; i++) {
        out->lockless += atomic_load_explicit(&shards[i].lockless, memory_order_relaxed);
        out->locked += atomic_load_explicit(&shards[i].locked, memory_order_relaxed);
    }
}

void nl_lockref_stats_reset(void)
{
    for (int i = 0; i < 64; i++) {
        atomic_store_explicit(&shards[i].lockless, 0, memory_order_relaxed);
        atomic_store_explicit(&shards[i].locked, 0, memory_order_relaxed);
    }
}

/* ---- word helpers --------------------------------------------------------- */
static inline int32_t count_of(uint64_t w) { return (int32_t)(uint32_t)(w >> 32); }
static inline uint64_t with_count(uint64_t w, int32_t c)
{
    return (w & 0xffffffffull) | ((uint64_t)(uint32_t)c << 32);
}
static inline int lock_free(uint64_t w) { return (uint32_t)w == 0; }

nl_qspinlock_t *nl_lockref_lock(nl_lockref_t *lr)
{
    /* little-endian: the low half of the word is at its first byte */
    return (nl_qspinlock_t *)(void *)&lr->lock_count;
}

static uint64_t word(const nl_lockref_t *lr)
{
    return atomic_load_explicit(&((nl_lockref_t *)lr)->lock_count, memory_order_relaxed);
}

int32_t nl_lockref_count(const nl_lockref_t *lr) { return count_of(word(lr)); }

void nl_lockref_init(nl_lockref_t *lr, int32_t count)
{
    atomic_store_explicit(&lr->lock_count, with_count(0, count), memory_order_relaxed);
}

/* The lockless loop. op decides from the old count: returns the new count
 * through *n and 1 to try the CAS, 0 to stop with "condition failed". */
enum { GET, GET_NOT_ZERO, GET_NOT_DEAD, PUT_NOT_ZERO, PUT_RETURN, PUT_OR_LOCK };

static inline int decide(int op, int32_t c, int32_t *n)
{
    switch (op) {
    case GET: *n = c + 1; return 1;
    case GET_NOT_ZERO: *n = c + 1; return c > 0;
    case GET_NOT_DEAD: *n = c + 1; return c >= 0;
    case PUT_NOT_ZERO: *n = c - 1; return c > 1;
    case PUT_RETURN: *n = c - 1; return c > 0;
    case PUT_OR_LOCK: *n = c - 1; return c > 1;
    }
    return 0;
}

/* 1: done without the lock (*newc set); 0: the lock is busy or the CAS kept
 * failing (take the lock); -1: the condition failed on a free lock */
static inline int cmpxchg_loop(nl_lockref_t *lr, int op, int32_t *newc)
{
    uint64_t old = word(lr);
    for (int retry = LOCKREF_RETRIES; lock_free(old) && retry; retry--) {
        int32_t n;
        if (!decide(op, count_of(old), &n))
            return -1;
        /* acq_rel, as an update under the lock would be: release so that a
         * later taker of the lock or the count (the put that finds the count
         * at 1 and tears the object down) sees what this thread did before
         * its put (verify/wmm/lockref.c fails without it: the teardown races
         * an earlier lockless put's writes); acquire so that a get sees what
         * the last holder or updater did, as taking the lock would (that
         * check does not tell: its gets read nothing after) */
        if (atomic_compare_exchange_weak_explicit(&lr->lock_count, &old, with_count(old, n),
                                                  memory_order_acq_rel, memory_order_relaxed)) {
            count_path(0);
            *newc = n;
            return 1;
        }
    }
    return 0;
}

static void add_locked(nl_lockref_t *lr, int32_t d)
{
    if (d > 0)
        atomic_fetch_add_explicit(&lr->lock_count, ONE, memory_order_relaxed);
    else
        atomic_fetch_sub_explicit(&lr->lock_count, ONE, memory_order_relaxed);
}

#ifdef NL_VERIFY
/* The model checker's build (verify/wmm), which has no mixed-size accesses
 * (the qspinlock's 4-byte steps inside this 8-byte word): the lock half
 * taken and released by steps on the whole word with the qspinlock's
 * orders, its fast path (from an all-zero lock half to locked, acquire)
 * and its unlock (the locked byte cleared, release). The qspinlock has its
 * own check (verify/wmm/qspinlock.c); what the lockref adds, count updates
 * racing the lock half, meets the same word and orders here. */
static void take(nl_lockref_t *lr)
{
    for (;;) {
        uint64_t old;
        while (!lock_free(old = word(lr)))
            ;
        if (atomic_compare_exchange_strong_explicit(&lr->lock_count, &old, old | 1u, memory_order_acquire,
                                                    memory_order_relaxed))
            break;
    }
    count_path(1);
}

void nl_lockref_unlock(nl_lockref_t *lr)
{
    atomic_fetch_and_explicit(&lr->lock_count, ~(uint64_t)0xff, memory_order_release);
}
#else
static void take(nl_lockref_t *lr)
{
    nl_qspin_lock(nl_lockref_lock(lr));
    count_path(1);
}

void nl_lockref_unlock(nl_lockref_t *lr) { nl_qspin_unlock(nl_lockref_lock(lr)); }
#endif

void nl_lockref_set_locked(nl_lockref_t *lr, int32_t count)
{
    uint64_t old = word(lr);
    while (!atomic_compare_exchange_weak_explicit(&lr->lock_count, &old, with_count(old, count),
                                                  memory_order_relaxed, memory_order_relaxed))
        ;
}

void nl_lockref_mark_dead(nl_lockref_t *lr) { nl_lockref_set_locked(lr, NL_LOCKREF_DEAD); }

void nl_lockref_get(nl_lockref_t *lr)
{
    int32_t n;
    if (cmpxchg_loop(lr, GET, &n) == 1)
        return;
    take(lr);
    add_locked(lr, 1);
    nl_lockref_unlock(lr);
}

static int get_if(nl_lockref_t *lr, int op)
{
    int32_t n;
    int r = cmpxchg_loop(lr, op, &n);
    if (r == 1)
        return 1;
    if (r < 0)
        return 0;
    take(lr);
    int ok = decide(op, count_of(word(lr)), &n);
    if (ok)
        add_locked(lr, 1);
    nl_lockref_unlock(lr);
    return ok;
}

int nl_lockref_get_not_zero(nl_lockref_t *lr) { return get_if(lr, GET_NOT_ZERO); }
int nl_lockref_get_not_dead(nl_lockref_t *lr) { return get_if(lr, GET_NOT_DEAD); }

int nl_lockref_put_not_zero(nl_lockref_t *lr)
{
    int32_t n;
    int r = cmpxchg_loop(lr, PUT_NOT_ZERO, &n);
    if (r == 1)
        return 1;
    if (r < 0)
        return 0;
    take(lr);
    int ok = count_of(word(lr)) > 1;
    if (ok)
        add_locked(lr, -1);
    nl_lockref_unlock(lr);
    return ok;
}

int nl_lockref_put_return(nl_lockref_t *lr)
{
    int32_t n;
    return cmpxchg_loop(lr, PUT_RETURN, &n) == 1 ? n : -1;
}

int nl_lockref_put_or_lock(nl_lockref_t *lr)
{
    int32_t n;
    if (cmpxchg_loop(lr, PUT_OR_LOCK, &n) == 1)
        return 1;
    /* the count would drop to 0 (or the lock is busy): take the lock */
    take(lr);
    if (count_of(word(lr)) <= 1)
        return 0; /* lock held, count unchanged */
    add_locked(lr, -1);
    nl_lockref_unlock(lr);
    return 1;
}
