/*
 * The gate: concurrency restriction while the process is overloaded (after
 * Dice & Kogan, "Avoiding scalability collapse by restricting concurrency",
 * Euro-Par 2019: GCR, and its NUMA form GCR-NUMA).
 *
 * A thread that finds a lock saturated while the process is overloaded
 * does not queue on the lock: it waits passively here, so the lock passes
 * among the few threads that are running instead of to a queued waiter
 * that lost its CPU. Locks are hashed into NL_GATE_BUCKETS buckets; a
 * bucket has one FIFO per node (node % NL_GATE_QUEUES) and prefers one of
 * them at a time.
 *
 * Invariants:
 *  - tickets: a passive waiter takes ticket t = next++ of its node's FIFO;
 *    it is that FIFO's head when serving == t; only the head advances
 *    serving (to t + 1), once, when it holds the lock (nl_wait_end); so a
 *    FIFO has at most one head, its waiters enter in ticket order, and the
 *    next head starts its turn once the last entrant holds the lock;
 *  - a waiter behind a head sleeps on slot[t % NL_GATE_SLOTS] without a
 *    timeout: the head that makes it the head bumps that slot and wakes it
 *    (seq_cst on next, serving and the slot, so a waiter that missed the
 *    new serving sees the slot change and does not sleep);
 *  - only the head of the preferred FIFO enters the lock while the overload
 *    lasts. It enters at the first look that finds the lock free (busy()
 *    false), and once its turn (NL_GATE_TURN_NS) is over it looks every
 *    NL_GATE_NAP_MIN_NS; after NL_GATE_FORCE turns (and one nap at least)
 *    it queues on the lock however taken. The thread that kept the lock
 *    meanwhile finds it taken at its next acquisition and waits at the
 *    gate, behind the others;
 *  - the preference moves to another FIFO's head when the preferred FIFO is
 *    empty or has been preferred for NL_GATE_STAY_NS, so every node's
 *    waiters get in, and most hand-overs stay on one node;
 *  - every head leaves at once when the overload is over;
 *  - a bucket holds the waiters of one lock at a time (`owner`: the lock
 *    and its members, from the ticket to nl_gate_leave); an arrival for
 *    another lock of the bucket does not wait there but queues on its lock.
 *    Otherwise a FIFO of two locks deadlocks a thread that holds one and
 *    sleeps behind a head waiting for it (nested locks, or a signal handler
 *    that locks while its thread waits at the gate).
 * A lock that is released and not taken again waits at most one nap
 * (NL_GATE_NAP_MAX_NS) for the preferred head: the release of a lock is a
 * plain store in the fast paths, which does not look at the gate.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <pthread.h>
#include "wait.h"
#include "load.h"
#include "futex.h"
#include "knobs.h"

#define NL_GATE_QUEUES 4u   /* FIFOs per bucket, by node (node % NL_GATE_QUEUES) */
#define NL_GATE_SLOTS 4u    /* futex words per FIFO (ticket % NL_GATE_SLOTS)     */
/* The preferred FIFO's head naps between looks at the lock: short at first
 * (a lock that is about to be free), longer while it stays taken, short
 * again once its turn has come. */
#define NL_GATE_NAP_MIN_NS 20000ull     /* 20 us  */
#define NL_GATE_NAP_MAX_NS 160000ull    /* 160 us */
/* The turn of the thread that keeps the lock while the preferred head
 * waits: after it the head looks every NL_GATE_NAP_MIN_NS and enters at
 * the first free look, and after NL_GATE_FORCE turns it queues on the lock
 * however taken (a lock that is never seen free). */
#define NL_GATE_TURN_NS 1000000ull      /* 1 ms */
#define NL_GATE_FORCE 4u
/* How long one node's FIFO is preferred while another node's waits: many
 * turns, so that most hand-overs stay on a node (GCR-NUMA). */
#define NL_GATE_STAY_NS 100000000ull    /* 100 ms */
/* NL_GATE_FORCE and NL_GATE_STAY_NS as variables (knobs.h): a test that
 * needs the preferred head to stay at the gate, and the preference to stay
 * with it, while a lock is held for a while raises them (tests/test_wait.c). */
uint32_t nl_gate_force_turns = NL_GATE_FORCE;
uint64_t nl_gate_stay_ns = NL_GATE_STAY_NS;
/* A head of a FIFO that is not preferred looks this often at whether the
 * preference may move to it. */
#define NL_GATE_IDLE_NAP_NS 2000000ull /* 2 ms */

typedef struct {
    _Atomic uint32_t next;                /* tickets handed out          */
    _Atomic uint32_t serving;             /* the head's ticket           */
    _Atomic uint32_t slot[NL_GATE_SLOTS]; /* futex words behind the head */
} gate_fifo_t;

typedef struct {
    _Alignas(NL_CACHELINE) gate_fifo_t q[NL_GATE_QUEUES];
    _Atomic uint32_t nap;    /* futex word the heads nap on; bumped when the preference moves */
    _Atomic uint32_t pref;   /* the preferred FIFO */
    _Atomic uint64_t since;  /* when it became preferred (ns) */
    _Atomic int32_t entrant; /* thread id of the last thread that entered from here */
    _Atomic uint64_t owner;  /* the lock whose waiters are here (its address, 48 bits) << 16 | their number */
} gate_bucket_t;

static gate_bucket_t gate[NL_GATE_BUCKETS];
_Atomic uint32_t nl_gate_passive[NL_GATE_BUCKETS];

static inline uint32_t bucket_index(const void *lock)
{
    uintptr_t a = (uintptr_t)lock;
    return (uint32_t)(((a >> 6) ^ (a >> 14)) % NL_GATE_BUCKETS);
}

static inline gate_bucket_t *bucket_of(const void *lock) { return &gate[bucket_index(lock)]; }

#define OWNER_COUNT 0xffffull
static inline uint64_t owner_tag(const void *lock) { return (uint64_t)(uintptr_t)lock & 0xffffffffffffull; }

/* Join the bucket's waiters unless they wait for another lock (false). */
static bool owner_join(gate_bucket_t *b, const void *lock)
{
    uint64_t tag = owner_tag(lock), v = atomic_load_explicit(&b->owner, memory_order_relaxed);
    do {
        if ((v & OWNER_COUNT) && v >> 16 != tag)
            return false;
    } while (!atomic_compare_exchange_weak_explicit(&b->owner, &v, tag << 16 | ((v & OWNER_COUNT) + 1),
                                                    memory_order_relaxed, memory_order_relaxed));
    return true;
}

/* The bucket's waiters wait for `lock` (none wait: false). */
static inline bool owned_by(gate_bucket_t *b, const void *lock)
{
    uint64_t v = atomic_load_explicit(&b->owner, memory_order_relaxed);
    return (v & OWNER_COUNT) && v >> 16 == owner_tag(lock);
}

/* knobs.h: a lock's bucket, and whether any thread waits passively there */
uint32_t nl_gate_bucket(const void *lock) { return bucket_index(lock); }

bool nl_gate_crowded(const void *lock)
{
    return atomic_load_explicit(&nl_gate_passive[bucket_index(lock)], memory_order_relaxed) != 0;
}

static inline bool fifo_empty(gate_fifo_t *f)
{
    return atomic_load_explicit(&f->next, memory_order_relaxed) ==
           atomic_load_explicit(&f->serving, memory_order_relaxed);
}

bool nl_gate_behind_slow(const void *lock)
{
    return nl_gate_crowded(lock) && owned_by(bucket_of(lock), lock) &&
           atomic_load_explicit(&bucket_of(lock)->entrant, memory_order_relaxed) != nl_self()->id;
}

bool nl_gate_elsewhere_slow(const void *lock, int node)
{
    gate_bucket_t *b = bucket_of(lock);
    uint32_t p = atomic_load_explicit(&b->pref, memory_order_relaxed) % NL_GATE_QUEUES;
    return p != (uint32_t)node % NL_GATE_QUEUES && !fifo_empty(&b->q[p]) && owned_by(b, lock);
}

/* Move the preference from FIFO `from` to `to` (one mover wins); the heads
 * napping on the bucket look again. */
static void prefer(gate_bucket_t *b, uint32_t from, uint32_t to, uint64_t now)
{
    if (atomic_compare_exchange_strong_explicit(&b->pref, &from, to, memory_order_relaxed,
                                                memory_order_relaxed)) {
        atomic_store_explicit(&b->since, now, memory_order_relaxed);
        atomic_fetch_add_explicit(&b->nap, 1, memory_order_relaxed);
        nl_futex_wake(&b->nap, INT_MAX);
    }
}

void nl_gate_wait(nl_waiter_t *w, const void *lock, nl_busy_fn busy)
{
    if (!nl_overloaded())
        return; /* the gate is shut only while the process is overloaded */
    gate_bucket_t *b = bucket_of(lock);
    if (!owner_join(b, lock))
        return; /* another lock's waiters: queue on ours */
    uint32_t me = (uint32_t)nl_self_node(w->self) % NL_GATE_QUEUES;
    gate_fifo_t *f = &b->q[me];
    nl_wait_counts_t *wc = &w->self->wc;
    _Atomic uint32_t *passive = &nl_gate_passive[bucket_index(lock)];
    atomic_fetch_add_explicit(&nl_gate_waiters, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(passive, 1, memory_order_relaxed);
    /* Store-buffering pair with nl_gate_leave: here next++ then serving is
     * read; there serving is written then next is read. Under seq_cst one of
     * the two sees the other's write: the leaver sees our ticket out (and
     * wakes our slot) or we see serving == t (and do not sleep). Release and
     * acquire alone allow both to read the old values: a sleep nobody ends. */
    uint32_t t = atomic_fetch_add_explicit(&f->next, 1, memory_order_seq_cst);
    _Atomic uint32_t *slot = &f->slot[t % NL_GATE_SLOTS];
    for (;;) {
        /* the slot before serving: a leaver that bumps the slot after we read
         * it makes the futex wait below return at once (its value changed).
         * Acquire would do for the slot; serving's load is the store-buffering
         * half above and needs seq_cst */
        uint32_t seq = atomic_load_explicit(slot, memory_order_seq_cst);
        if (atomic_load_explicit(&f->serving, memory_order_seq_cst) == t)
            break;
        wc->gate_parks++;
        nl_futex_wait(slot, seq);
    }
    /* the head of our FIFO. Preferred: wait for a free lock, the end of the
     * overload or our turn. Not preferred: wait for the preference, which
     * moves to us when the preferred FIFO is empty or has had it for
     * NL_GATE_STAY_NS. */
    uint64_t start = nl_machine_ns(), nap = NL_GATE_NAP_MIN_NS;
    bool napped = false; /* a head preempted past its turns still naps once */
    for (;;) {
        if (!nl_overloaded())
            break;
        uint32_t k = atomic_load_explicit(&b->nap, memory_order_relaxed);
        uint32_t p = atomic_load_explicit(&b->pref, memory_order_relaxed);
        uint64_t now = nl_machine_ns();
        if (p != me) {
            if (fifo_empty(&b->q[p % NL_GATE_QUEUES]) ||
                now - atomic_load_explicit(&b->since, memory_order_relaxed) >= nl_gate_stay_ns) {
                prefer(b, p, me, now);
                start = now;
                nap = NL_GATE_NAP_MIN_NS;
                continue;
            }
            wc->gate_parks++;
            nl_futex_wait_ns(&b->nap, k, NL_GATE_IDLE_NAP_NS);
            continue;
        }
        if ((busy && !busy(lock)) || (napped && now - start >= nl_gate_force_turns * NL_GATE_TURN_NS))
            break;
        wc->gate_parks++;
        napped = true;
        nl_futex_wait_ns(&b->nap, k, nap);
        /* past our turn, look often: the holder's next release lets us in */
        nap = now - start >= NL_GATE_TURN_NS ? NL_GATE_NAP_MIN_NS
            : nap * 2 > NL_GATE_NAP_MAX_NS ? NL_GATE_NAP_MAX_NS : nap * 2;
    }
    /* we enter: no longer passive, but the head until we hold the lock */
    atomic_fetch_sub_explicit(passive, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&nl_gate_waiters, 1, memory_order_relaxed);
    atomic_store_explicit(&b->entrant, w->self->id, memory_order_relaxed);
    w->gate = f;
    w->ticket = t;
}

void nl_gate_leave(nl_waiter_t *w)
{
    gate_fifo_t *f = w->gate;
    uint32_t t = w->ticket;
    w->gate = NULL;
    /* hand the head role to the next ticket, if it is out: the store of
     * serving and the load of next are the leaver's half of the
     * store-buffering pair in nl_gate_wait (both seq_cst for it) */
    atomic_store_explicit(&f->serving, t + 1, memory_order_seq_cst);
    if (atomic_load_explicit(&f->next, memory_order_seq_cst) != t + 1) {
        _Atomic uint32_t *ns = &f->slot[(t + 1) % NL_GATE_SLOTS];
        /* release would do (message passing to the waiter's slot-then-serving
         * reads: one that reads the bumped slot reads the new serving; one
         * that read the slot before sleeps on its old value, which the futex
         * wait refuses or the wake below ends); seq_cst costs the same
         * instruction on x86 and arm64 for a read-modify-write */
        atomic_fetch_add_explicit(ns, 1, memory_order_seq_cst);
        nl_futex_wake(ns, INT_MAX);
    }
    /* no longer one of the waiters of the FIFO's bucket */
    gate_bucket_t *b = &gate[((uintptr_t)f - (uintptr_t)gate) / sizeof *gate];
    atomic_fetch_sub_explicit(&b->owner, 1, memory_order_relaxed);
}

/* In a child of fork() only the forking thread exists, and it waits at no
 * gate: the tickets of the parent's passive waiters would never be served. */
static void gate_forget(void)
{
    for (uint32_t b = 0; b < NL_GATE_BUCKETS; b++) {
        atomic_store_explicit(&nl_gate_passive[b], 0, memory_order_relaxed);
        atomic_store_explicit(&gate[b].owner, 0, memory_order_relaxed);
        for (uint32_t q = 0; q < NL_GATE_QUEUES; q++)
            atomic_store_explicit(&gate[b].q[q].serving,
                                  atomic_load_explicit(&gate[b].q[q].next, memory_order_relaxed),
                                  memory_order_relaxed);
    }
    atomic_store_explicit(&nl_gate_waiters, 0, memory_order_relaxed);
}

__attribute__((constructor)) static void gate_init(void) { pthread_atfork(NULL, NULL, gate_forget); }
