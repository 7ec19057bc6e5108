/*
 * The waiting design shared by every lock of the library (not installed):
 * what a lock calls. Layer: above src/core/self.h (the thread record) and
 * src/topology/node.h, below the locks.
 *
 * A lock waits through one object, the waiter (nl_waiter_t): it begins when
 * the lock's fast path failed (nl_wait_begin: counts the contended
 * acquisition, passes the gate), takes steps while it polls a word
 * (nl_wait_step), asks whether it has spun long enough (nl_wait_due), parks
 * on a futex (nl_wait_park) or waits on a grant word (nl_wait_grant32/64),
 * and ends once it holds the lock (nl_wait_end). No lock reads the policy
 * or the load itself, and every lock counts the same events.
 *
 * Policies (NUMALOCK_WAIT, nl_wait_set_policy):
 *   adaptive (default)  spin while the process has a CPU for every thread
 *                       that wants one, restrict concurrency when it has not
 *                       ("overloaded": nl_overloaded, counts.h; load.h):
 *     - a waiter spins with pauses and parks after NL_SPIN_NS (1 ms) when
 *       not overloaded (a waiter with a CPU of its own should not park: the
 *       CPU would idle and the wake-up would sit on the hand-over path);
 *       while overloaded it pauses NL_OVER_PAUSES times, then yields at each
 *       step, and parks after NL_OVER_SPIN_NS;
 *     - early wake: a waiter that parked wakes its own successor as soon as
 *       it is granted (nl_nudge*), so the next holder is running when the
 *       lock reaches it;
 *     - the gate (concurrency restriction, after Dice & Kogan's GCR, PPoPP
 *       2019): while overloaded, a thread that finds a lock saturated (a
 *       waiter is already in line, or the lock hands over in order) waits
 *       passively outside the lock, in FIFO order, so that the lock passes
 *       between running threads and is never handed to one that lost its
 *       CPU (gate.c).
 *   spin                pause forever;
 *   yield               pause, then sched_yield;
 *   park, park:S:Y      S pauses, Y yields, then park (no gate).
 *
 * Other primitives: nl_grant32/64 grant a word (waking the waiter only if
 * it parked), nl_nudge32/64 wake a parked waiter early without granting,
 * nl_backoff pauses a randomised, growing number of times between steps.
 *
 * The files behind it: wait.c (the policy, a waiter's steps), grant.c
 * (parking, grant words), gate.c (the gate), load.c (the evidence, load.h),
 * futex.c (the futex calls, futex.h); knobs.h holds what tests set and look
 * at. This header declares of them only what its inline paths call
 * (counts.h: the waiters' counts and the verdict; the gate's doors below);
 * a lock includes this header and no other of src/wait.
 */
#ifndef NL_WAIT_H
#define NL_WAIT_H

#include "../core/self.h"
#include "../topology/node.h"
#include "counts.h"

/* ---- policy --------------------------------------------------------------- */
enum { NL_WAIT_ADAPTIVE = 0, NL_WAIT_SPIN = 1, NL_WAIT_YIELD = 2, NL_WAIT_PARK = 3 };
typedef struct nl_wait_policy {
    int kind;
    uint32_t spins;   /* busy iterations before yielding (yield, park)   */
    uint32_t yields;  /* sched_yield calls before parking (park only)    */
} nl_wait_policy_t;

NL_HIDDEN extern nl_wait_policy_t nl_wait_policy;
NL_HIDDEN void nl_wait_policy_init(void);

/* Wait budgets, in nanoseconds (converted to ticks with the measured rate). */
#define NL_SPIN_NS 1000000ull      /* park a waiter that has a CPU after 1 ms    */
#define NL_SHARED_SPIN_NS 50000ull /* ... on a busy machine, after 50 us         */
#define NL_OVER_PAUSES 8u          /* pauses before yielding (or parking) when
                                    * the process's threads outnumber its CPUs */
/* A waiter whose clock jumped this far between two looks lost its CPU. */
#define NL_GAP_NS 500000ull        /* 500 us */

/* ---- the waiter ---------------------------------------------------------------- */
typedef struct nl_waiter {
    nl_self_t *self;
    uint32_t n;        /* steps since the wait began or the waiter woke */
    uint32_t look_at;  /* step at which the policy and the load are looked at again */
    uint64_t since;    /* ticks when the wait began or the waiter woke */
    uint64_t mark;     /* ticks at the last look (a long gap: preempted) */
    uint8_t over;      /* nl_load_level() at the last look */
    uint8_t due;       /* the spin budget is spent: time to park */
    uint8_t counted;   /* counted in nl_spinning */
    uint8_t slept;     /* parked, and no step since: a grant found it asleep */
    uint8_t parked;    /* parked at least once in this wait */
    void *gate;        /* the gate FIFO whose head role this waiter holds */
    uint32_t ticket;   /* ... and its ticket there */
} nl_waiter_t;

/* A lock's test "is it taken?" (held or waited for), for the gate's passive
 * waiter, which enters as soon as the lock is free. */
typedef bool (*nl_busy_fn)(const void *lock);

NL_HIDDEN void nl_wait_step_slow(nl_waiter_t *w);

/* ---- the gate's doors (gate.c) ---------------------------------------------
 * While overloaded, wait passively outside a saturated lock until the gate
 * lets the waiter in (returns at once when the process is not overloaded;
 * w->gate is set when it waited); and, once the waiter holds the lock, let
 * the next one in line look at it. */
NL_HIDDEN void nl_gate_wait(nl_waiter_t *w, const void *lock, nl_busy_fn busy);
NL_HIDDEN void nl_gate_leave(nl_waiter_t *w);
NL_HIDDEN bool nl_gate_behind_slow(const void *lock);
/* For a lock whose acquisition takes several steps (so it is often free
 * between two sections of its running thread): others wait passively for
 * it and the caller is not the one the gate let in last. Such an arrival
 * begins a wait even though the lock looks free. One load while nobody in
 * the process waits passively. */
static inline bool nl_gate_behind(const void *lock)
{
    return NL_UNLIKELY(atomic_load_explicit(&nl_gate_waiters, memory_order_relaxed) != 0) &&
           nl_gate_behind_slow(lock);
}
NL_HIDDEN bool nl_gate_elsewhere_slow(const void *lock, int node);
/* The gate prefers another node's FIFO and some of its threads wait there:
 * an arrival of thread `s` would take the lock from them (GCR-NUMA keeps the
 * threads of the nodes not preferred passive). One load while nobody in the
 * process waits passively; the thread's node is looked up only after it. */
static inline bool nl_gate_elsewhere(const void *lock, nl_self_t *s)
{
    return NL_UNLIKELY(atomic_load_explicit(&nl_gate_waiters, memory_order_relaxed) != 0) &&
           nl_gate_elsewhere_slow(lock, nl_self_node(s));
}

/* A waiter for a short wait inside a lock's protocol (a successor linking
 * itself, a head waiting for the lock word): steps only, nothing counted. */
static inline void nl_waiter_init(nl_waiter_t *w)
{
#ifndef NL_VERIFY
    *w = (nl_waiter_t){ .self = nl_self() };
#else
    /* the model checker (verify/wmm) does not follow the compiler's memset
     * of the tail of a struct: the same zeroes, field by field (a field
     * left out is an uninitialised read there) */
    w->self = nl_self();
    w->n = w->look_at = w->ticket = 0;
    w->since = w->mark = 0;
    w->over = w->counted = w->slept = w->parked = 0;
    w->due = NL_VERIFY_DUE; /* 1: the waiter parks where its lock can */
    w->gate = NULL;
#endif
}

/* A waiter for a path that usually does not wait (an uncontended
 * acquisition that may still meet a holder on a second level): only its
 * `self` is set, to NULL, and it is set up where the path first has to
 * wait (nl_wait_end ignores it if it never did). */
static inline void nl_waiter_lazy(nl_waiter_t *w)
{
    if (NL_UNLIKELY(!w->self))
        nl_waiter_init(w);
}

/* only the adaptive policy reads the count (nl_load_level), and only its
 * sampler turns the counting off: under the others it would cost every
 * contended acquisition two atomics on one process-wide line */
static inline void nl_wait_count(nl_waiter_t *w)
{
    if (nl_wait_policy.kind == NL_WAIT_ADAPTIVE && atomic_load_explicit(&nl_count_spinners, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&nl_spinning, 1, memory_order_relaxed);
        w->counted = 1;
    }
}
static inline void nl_wait_uncount(nl_waiter_t *w)
{
    if (w->counted) {
        atomic_fetch_sub_explicit(&nl_spinning, 1, memory_order_relaxed);
        w->counted = 0;
    }
}

/* The lock's fast path failed: count a contended acquisition and, while
 * overloaded, wait at the gate if the lock is saturated (`saturated`: a
 * waiter is in line already, or the lock serves arrivals strictly in
 * order, so that one arrival that loses its CPU stalls it), or if the
 * gate prefers another node whose threads wait there. Otherwise an
 * arrival at a lock that is only held does not wait there even while
 * others do: with short critical sections and long work between them,
 * threads that could run would sleep (docs/ALGORITHMS.md, Waiting). `busy` tells
 * the passive waiter when the lock is free; a lock without one (NULL: any
 * running thread may take it) never waits at the gate. True when the
 * thread waited at the gate (its view of the lock word is stale). */
static inline bool nl_wait_begin(nl_waiter_t *w, const void *lock, nl_busy_fn busy, bool saturated)
{
    nl_waiter_init(w);
    w->self->wc.slow++;
    if (busy && nl_wait_policy.kind == NL_WAIT_ADAPTIVE && (saturated || nl_gate_elsewhere(lock, w->self)))
        nl_gate_wait(w, lock, busy); /* passes at once unless overloaded */
    nl_wait_count(w);
    return w->gate != NULL;
}

/* The waiter holds the lock now (a waiter from the gate lets the next one
 * in line look at the lock). */
static inline void nl_wait_end(nl_waiter_t *w)
{
    if (!w->self)
        return; /* a lazy waiter that never waited */
    if (w->gate)
        nl_gate_leave(w);
    nl_wait_uncount(w);
    if (w->slept)
        w->self->wc.to_parked++; /* the lock came while it slept */
}

/* One step of a wait loop: a pause; under the adaptive policy a yield once
 * NL_OVER_PAUSES pauses are done while overloaded (the answer is looked at
 * again every 64 steps otherwise); under yield/park a yield after `spins`. */
static inline void nl_wait_step(nl_waiter_t *w)
{
#ifdef NL_VERIFY
    /* the model checker's build (verify/wmm): a poll loop is only its loads,
     * which the checker reads as an await; whether the waiter parks was
     * decided when it began (nl_waiter_init) */
    (void)w;
    return;
#endif
    uint32_t n = w->n++;
    w->slept = 0;
    if (NL_LIKELY(n < w->look_at || (n && nl_wait_policy.kind == NL_WAIT_SPIN))) {
        nl_cpu_relax();
        return;
    }
    nl_wait_step_slow(w);
}

/* The waiter has spun its budget: a lock with its own parking protocol
 * parks it now (the adaptive policy: NL_SPIN_NS, or NL_OVER_SPIN_NS while
 * overloaded; park:S:Y: S + Y steps; spin and yield: never). */
static inline bool nl_wait_due(const nl_waiter_t *w) { return w->due; }

/* The process was overloaded at the waiter's last look (adaptive policy
 * only): a lock with its own patience (how long it lets others steal, when
 * it parks) keeps it short. */
static inline bool nl_wait_short(const nl_waiter_t *w) { return w->over; }

/* A fresh spin budget (the lock was told its turn is near). */
static inline void nl_wait_renew(nl_waiter_t *w)
{
    w->n = 0;
    w->look_at = 0;
    w->since = 0;
    w->due = 0;
}

/* Sleep while *word == val (a futex wait), counted as a park; the waiter
 * spins afresh when it wakes. */
NL_HIDDEN void nl_wait_park(nl_waiter_t *w, _Atomic uint32_t *word, uint32_t val);
/* Did the waiter park during this wait? (It then wakes its successor early,
 * which has probably parked too.) */
static inline bool nl_wait_parked(const nl_waiter_t *w) { return w->parked; }

/* A park done by the lock's own sleep (a deadline the caller gave). */
static inline void nl_wait_note_park(nl_waiter_t *w)
{
    w->self->wc.parks++;
    w->slept = 1;
    w->parked = 1;
}

/* Outside any wait, for a lock that chooses between modes (SANL: whether
 * a server may spin for its clients): is concurrency restricted now (the
 * adaptive policy, and the process overloaded)? */
static inline bool nl_wait_restricting(void)
{
    return nl_wait_policy.kind == NL_WAIT_ADAPTIVE && nl_overloaded();
}

/* Wake up to n threads parked on word (a futex wake), counted. */
NL_HIDDEN void nl_wait_wake(void *word, int n);

/* A lock's own condition variable (SANL's): sleep while *word == val, and
 * wake up to n sleepers of word. Not counted: they hand no lock over. */
NL_HIDDEN void nl_wait_cond_sleep(_Atomic uint32_t *word, uint32_t val);
NL_HIDDEN void nl_wait_cond_wake(_Atomic uint32_t *word, int n);

/* ---- backoff ------------------------------------------------------------------
 * For retries on a word that many threads test-and-set (ttas, hbo, the
 * cohort lock's global word, the qspinlock pending waiter): each step pauses
 * a random 1..limit times, doubles limit up to a maximum, then takes one
 * waiting step. */
typedef struct { uint32_t limit; nl_waiter_t *w; } nl_backoff_t;
#define NL_BACKOFF_INIT(min, waiter) { (min), (waiter) }

static inline void nl_backoff(nl_backoff_t *b, uint32_t max)
{
#ifdef NL_VERIFY
    (void)b, (void)max; /* a step of the model checker's build: nothing (nl_wait_step) */
    return;
#endif
    uint32_t n = 1 + (uint32_t)(nl_rand() % b->limit);
    for (uint32_t i = 0; i < n; i++)
        nl_cpu_relax();
    if (b->limit < max)
        b->limit <<= 1;
    b->w->n += n; /* the waiter's steps count pauses */
    nl_wait_step(b->w);
}

/* ---- grant words ------------------------------------------------------------
 * A waiter owns a word initialised to NL_GRANT_WAITING. nl_wait_grant*()
 * returns once the word holds a grant value; nl_grant*() stores one and
 * wakes the waiter if it parked; nl_nudge*() turns PARKED back into WAITING
 * and wakes the waiter, which spins again. Grant values must not be 0 or
 * NL_GRANT_PARKED, and for the 64-bit form the low 32 bits must not equal
 * NL_GRANT_PARKED (aligned pointers and small constants other than 3 are
 * fine). */
#define NL_GRANT_WAITING 0u
#define NL_GRANT_PARKED 3u

NL_HIDDEN uint64_t nl_wait_grant_slow(nl_waiter_t *w, void *word, int form);
NL_HIDDEN void nl_wake_parked(void *addr);
NL_HIDDEN void nl_wake_parked_node(void *addr);

/* The 32-bit futex word inside a 64-bit word: its low half, wherever the
 * byte order puts it. */
static inline void *nl_futex64(_Atomic uint64_t *w)
{
#if defined(NL_VERIFY)
    /* the model checker's futex (verify/wmm/env.c) reads the whole word, as
     * it has no mixed-size accesses: the word's address, tagged 64-bit */
    return (void *)((uintptr_t)w | 1);
#elif __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return (uint32_t *)(void *)w + 1;
#else
    return w;
#endif
}

static inline uint32_t nl_wait_grant32(nl_waiter_t *w, _Atomic uint32_t *word)
{
    uint32_t v = atomic_load_explicit(word, memory_order_acquire);
    if (NL_LIKELY(v != NL_GRANT_WAITING && v != NL_GRANT_PARKED))
        return v;
    return (uint32_t)nl_wait_grant_slow(w, word, 0);
}
static inline uint64_t nl_wait_grant64(nl_waiter_t *w, _Atomic uint64_t *word)
{
    uint64_t v = atomic_load_explicit(word, memory_order_acquire);
    if (NL_LIKELY(v != NL_GRANT_WAITING && v != NL_GRANT_PARKED))
        return v;
    return nl_wait_grant_slow(w, word, 1);
}
static inline void nl_grant32(_Atomic uint32_t *w, uint32_t v)
{
    if (NL_UNLIKELY(atomic_exchange_explicit(w, v, memory_order_acq_rel) == NL_GRANT_PARKED))
        nl_wake_parked(w);
}
static inline void nl_grant64(_Atomic uint64_t *w, uint64_t v)
{
    if (NL_UNLIKELY(atomic_exchange_explicit(w, v, memory_order_acq_rel) == NL_GRANT_PARKED))
        nl_wake_parked(nl_futex64(w));
}

NL_HIDDEN void nl_nudge_slow(void *addr, int form);
static inline void nl_nudge32(_Atomic uint32_t *w)
{
    if (atomic_load_explicit(w, memory_order_relaxed) == NL_GRANT_PARKED)
        nl_nudge_slow(w, 0);
}
static inline void nl_nudge64(_Atomic uint64_t *w)
{
    if (atomic_load_explicit(w, memory_order_relaxed) == NL_GRANT_PARKED)
        nl_nudge_slow(w, 1);
}

/* A grant word with a node half: the 32-bit word, 8-byte aligned, and the
 * 32 bits after it, which only the waiting code writes (a two-word futex,
 * FUTEX2_NUMA's form: src/core/machine.h). Its waiter writes its node there
 * before it parks, so that where the kernel takes FUTEX2_NUMA the sleep
 * and its wake use a hash bucket on the waiter's node. The protocol of the
 * 32-bit form; a word is used through one of the two forms only (a wake of
 * the other form would miss its sleeper). */
static inline uint32_t nl_wait_grant32n(nl_waiter_t *w, _Atomic uint32_t *word)
{
    uint32_t v = atomic_load_explicit(word, memory_order_acquire);
    if (NL_LIKELY(v != NL_GRANT_WAITING && v != NL_GRANT_PARKED))
        return v;
    return (uint32_t)nl_wait_grant_slow(w, word, 2);
}
static inline void nl_grant32n(_Atomic uint32_t *w, uint32_t v)
{
    if (NL_UNLIKELY(atomic_exchange_explicit(w, v, memory_order_acq_rel) == NL_GRANT_PARKED))
        nl_wake_parked_node(w);
}
static inline void nl_nudge32n(_Atomic uint32_t *w)
{
    if (atomic_load_explicit(w, memory_order_relaxed) == NL_GRANT_PARKED)
        nl_nudge_slow(w, 2);
}

#endif
