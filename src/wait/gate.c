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
 *  - node stays are weighed in received time: each thread's `vt` is the CPU
 *    time it received while let in (from leaving the gate to its next
 *    arrival). The preference moves to another FIFO's head when the
 *    preferred node leads it by NL_GATE_LEAD_NS of vt (its FIFO's head's vt;
 *    when that FIFO is empty, the running entrant's), when the preferred
 *    FIFO is empty and the lock free or the entrant unknown, or after
 *    NL_GATE_STAY_NS of wall time. So every node's waiters get in, a node
 *    whose threads got less CPU (a busy program beside them) stays
 *    preferred until they caught up, and most hand-overs stay on one node.
 *    (Turns weighed the same way measured less fair, not kept.) A thread new
 *    at a bucket (its first wait, or back from another lock's) starts
 *    within NL_GATE_REACH_NS of the bucket's vt (the last entrant's), so it
 *    gains or loses at most that; at its own bucket its account is whole;
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
/* Received time: how far the preferred node's threads may lead another
 * node's head before the preference moves there (a node of n threads stays
 * about 2n leads of CPU), and how far a new thread's account may be from the
 * bucket's. */
#define NL_GATE_LEAD_NS 4000000ull      /* 4 ms */
#define NL_GATE_REACH_NS 8000000ull     /* 8 ms */
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
    _Atomic uint64_t head_vt;             /* the head's received time    */
} gate_fifo_t;

typedef struct {
    _Alignas(NL_CACHELINE) gate_fifo_t q[NL_GATE_QUEUES];
    _Atomic uint32_t nap;    /* futex word the heads nap on; bumped when the preference moves */
    _Atomic uint32_t nappers; /* heads napping on it: a move wakes only when one does */
    _Atomic uint32_t pref;   /* the preferred FIFO */
    _Atomic uint64_t since;  /* when it became preferred (ns) */
    _Atomic int32_t entrant; /* thread id of the last thread that entered from here */
    _Atomic uint64_t owner;  /* the lock whose waiters are here (its address, 48 bits) << 16 | their number */
    /* the last entrant: its vt when let in, vt - its CPU clock then (its vt
     * now: base + its clock now), its clock (0: none, or it came back) */
    _Atomic uint64_t ent_vt, ent_base;
    _Atomic int32_t ent_clk;
} gate_bucket_t;

/* A thread's received time (see the invariants): vt, its CPU clock when it
 * was let in (`in`: since then it has not come back), the bucket it entered. */
typedef struct {
    uint64_t vt, cpu_in;
    gate_bucket_t *b;
    int32_t clk;
    bool in, known;
} gate_self_t;
static NL_TLS gate_self_t my;
static inline bool clk_ok(int32_t c) { return c != 0 && c != -1; }

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

void nl_gate_set_received(const void *lock, uint64_t ns)
{
    my = (gate_self_t){ .vt = ns, .b = bucket_of(lock), .clk = nl_machine_thread_clock(), .known = true };
}

uint32_t nl_gate_preferred(const void *lock)
{
    return atomic_load_explicit(&bucket_of(lock)->pref, memory_order_relaxed) % NL_GATE_QUEUES;
}

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
        /* Dekker with nap_on(): bump, then look for nappers; a napper counts
         * itself, then the kernel compares the word. A napper we miss sees
         * the new word and returns at once. */
        atomic_fetch_add_explicit(&b->nap, 1, memory_order_seq_cst);
        if (atomic_load_explicit(&b->nappers, memory_order_seq_cst))
            nl_futex_wake(&b->nap, INT_MAX);
    }
}

/* A head's nap on the bucket's word (k: the word as it read it), counted so
 * that a move with nobody napping makes no wake call. */
static void nap_on(gate_bucket_t *b, uint32_t k, uint64_t ns)
{
    atomic_fetch_add_explicit(&b->nappers, 1, memory_order_seq_cst);
    nl_futex_wait_ns(&b->nap, k, ns);
    atomic_fetch_sub_explicit(&b->nappers, 1, memory_order_relaxed);
}

/* The entrant's vt now (false: unknown: none, it came back, or it left). */
static bool entrant(gate_bucket_t *b, uint64_t *vt)
{
    int32_t c = atomic_load_explicit(&b->ent_clk, memory_order_acquire);
    if (!clk_ok(c))
        return false;
    uint64_t base = atomic_load_explicit(&b->ent_base, memory_order_relaxed);
    uint64_t cpu = nl_machine_thread_cpu_ns(c);
    if (!cpu || atomic_load_explicit(&b->ent_clk, memory_order_acquire) != c)
        return false; /* a new entrant meanwhile: look again later */
    *vt = base + cpu;
    return true;
}

/* An arrival: add the CPU time received since we were let in, give up the
 * entrant's place; a thread new here (its first wait, or back from another
 * lock's bucket) starts within reach of the bucket's account. */
static void account(gate_bucket_t *b)
{
    bool fresh = !my.known || my.b != b;
    if (!my.known) {
        my.clk = nl_machine_thread_clock();
        my.known = true;
    }
    if (my.in) {
        uint64_t c = clk_ok(my.clk) ? nl_machine_thread_cpu_ns(my.clk) : 0;
        if (c > my.cpu_in && my.cpu_in)
            my.vt += c - my.cpu_in;
        my.in = false;
        int32_t mine = my.clk;
        if (clk_ok(mine))
            atomic_compare_exchange_strong_explicit(&my.b->ent_clk, &mine, 0, memory_order_relaxed,
                                                    memory_order_relaxed);
    }
    if (!fresh)
        return;
    uint64_t at = atomic_load_explicit(&b->ent_vt, memory_order_relaxed);
    if (at > NL_GATE_REACH_NS && my.vt < at - NL_GATE_REACH_NS)
        my.vt = at - NL_GATE_REACH_NS;
    else if (my.vt > at + NL_GATE_REACH_NS)
        my.vt = at + NL_GATE_REACH_NS;
}

/* We enter: the entrant now (its clock last, so a reader that sees it sees
 * the rest) */
static void admit(gate_bucket_t *b)
{
    uint64_t c = clk_ok(my.clk) ? nl_machine_thread_cpu_ns(my.clk) : 0;
    my.cpu_in = c;
    my.in = true;
    my.b = b;
    atomic_store_explicit(&b->ent_clk, 0, memory_order_relaxed);
    atomic_store_explicit(&b->ent_vt, my.vt, memory_order_relaxed);
    atomic_store_explicit(&b->ent_base, my.vt - c, memory_order_relaxed);
    if (c)
        atomic_store_explicit(&b->ent_clk, my.clk, memory_order_release);
}

/* May the head of FIFO `me` take the preference from FIFO p? */
static bool may_prefer(gate_bucket_t *b, uint32_t p, uint64_t now, const void *lock, nl_busy_fn busy)
{
    if (now - atomic_load_explicit(&b->since, memory_order_relaxed) >= nl_gate_stay_ns)
        return true; /* every node gets in */
    gate_fifo_t *pf = &b->q[p % NL_GATE_QUEUES];
    if (!fifo_empty(pf)) /* its head has received LEAD more than we have */
        return atomic_load_explicit(&pf->head_vt, memory_order_relaxed) >= my.vt + NL_GATE_LEAD_NS;
    /* none of the preferred node waits here: its threads run, or are gone */
    uint64_t vt;
    if ((busy && !busy(lock)) || !entrant(b, &vt))
        return true;
    return vt >= my.vt + NL_GATE_LEAD_NS;
}

/* The head of FIFO `me`. Preferred: wait for a free lock, the end of the
 * overload or our turn. Not preferred: wait for the preference. */
static void head_wait(nl_waiter_t *w, gate_bucket_t *b, uint32_t me, const void *lock, nl_busy_fn busy)
{
    nl_wait_counts_t *wc = &w->self->wc;
    atomic_store_explicit(&b->q[me].head_vt, my.vt, memory_order_relaxed);
    uint64_t start = nl_machine_ns(), nap = NL_GATE_NAP_MIN_NS;
    bool napped = false; /* a head preempted past its turns still naps once */
    for (;;) {
        if (!nl_overloaded())
            return;
        uint32_t k = atomic_load_explicit(&b->nap, memory_order_relaxed);
        uint32_t p = atomic_load_explicit(&b->pref, memory_order_relaxed);
        uint64_t now = nl_machine_ns();
        if (p != me) {
            if (may_prefer(b, p, now, lock, busy)) {
                prefer(b, p, me, now);
                start = now;
                nap = NL_GATE_NAP_MIN_NS;
                continue;
            }
            wc->gate_parks++;
            nap_on(b, k, NL_GATE_IDLE_NAP_NS);
            continue;
        }
        if ((busy && !busy(lock)) || (napped && now - start >= nl_gate_force_turns * NL_GATE_TURN_NS))
            return;
        wc->gate_parks++;
        napped = true;
        nap_on(b, k, nap);
        /* past our turn, look often: the holder's next release lets us in */
        nap = now - start >= NL_GATE_TURN_NS ? NL_GATE_NAP_MIN_NS
            : nap * 2 > NL_GATE_NAP_MAX_NS ? NL_GATE_NAP_MAX_NS : nap * 2;
    }
}

void nl_gate_wait(nl_waiter_t *w, const void *lock, nl_busy_fn busy)
{
    if (!nl_overloaded())
        return; /* the gate is shut only while the process is overloaded */
    gate_bucket_t *b = bucket_of(lock);
    if (!owner_join(b, lock))
        return; /* another lock's waiters: queue on ours */
    account(b);
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
    head_wait(w, b, me, lock, busy);
    /* we enter: no longer passive, but the head until we hold the lock */
    atomic_fetch_sub_explicit(passive, 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&nl_gate_waiters, 1, memory_order_relaxed);
    atomic_store_explicit(&b->entrant, w->self->id, memory_order_relaxed);
    admit(b);
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
        atomic_store_explicit(&gate[b].ent_clk, 0, memory_order_relaxed);
        for (uint32_t q = 0; q < NL_GATE_QUEUES; q++)
            atomic_store_explicit(&gate[b].q[q].serving,
                                  atomic_load_explicit(&gate[b].q[q].next, memory_order_relaxed),
                                  memory_order_relaxed);
    }
    atomic_store_explicit(&nl_gate_waiters, 0, memory_order_relaxed);
    my = (gate_self_t){ .vt = my.vt }; /* the child's thread has a clock of its own */
}

__attribute__((constructor)) static void gate_init(void) { pthread_atfork(NULL, NULL, gate_forget); }
