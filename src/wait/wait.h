/*
 * The waiting design shared by every lock of the library (not installed).
 * Layer: above src/core/self.h (the thread record) and src/topology/node.h,
 * below the locks.
 *
 * Policies (NUMALOCK_WAIT, nl_wait_set_policy):
 *   adaptive (default)  spin while the system has a CPU for every runnable
 *                       thread, restrict concurrency when it has not:
 *     - load: runnable tasks (sampled from /proc/loadavg every few ms) plus
 *       this process's passive waiters, against online CPUs (nl_overloaded);
 *     - a queued waiter spins with pauses; it parks on its grant word only
 *       after NL_SPIN_TICKS (about 1 ms) while the system is not overloaded
 *       (a waiter that has a CPU of its own does not park: the CPU would idle
 *       and the wake-up would sit on the hand-over path), after
 *       NL_OVER_SPIN_TICKS of pausing briefly and yielding when it is;
 *     - early wake: a waiter that parked wakes its own successor as soon as
 *       it is granted (nl_nudge*), so the next holder is running when the
 *       lock reaches it;
 *     - the gate (concurrency restriction, after Dice's Malthusian locks and
 *       GCR): while overloaded, a thread that finds the lock saturated (held
 *       and waited for) waits passively (a timed futex sleep) before it may
 *       queue, so the queue holds running threads only and the lock is never
 *       handed to a waiter that is not running while a running one could
 *       take it; a passive waiter queues after its timeout (so every thread
 *       gets in), preferring the node that entered last for a bounded time
 *       (NUMA-aware, GCR-NUMA).
 *   spin                pause forever;
 *   yield               pause, then sched_yield;
 *   park, park:S:Y      the fixed policy of earlier versions: S pauses,
 *                       Y yields, then park (no gate, no early wake).
 *
 * Primitives:
 *   nl_spin_once        one step of a short wait loop (a successor linking
 *                       itself, a queue head waiting for the lock word);
 *   nl_await32/64       wait on a grant word, nl_grant32/64 grant it (wakes
 *                       the waiter only if it parked), nl_nudge32/64 wake a
 *                       parked waiter early without granting;
 *   nl_gate             the passive wait of an arriving thread (slow paths
 *                       only: a lock calls it once its fast path failed).
 * Every parking, gate wait, wake and hand-over to a parked waiter is counted
 * in the calling thread's record (nl_self()->wc).
 */
#ifndef NL_WAIT_H
#define NL_WAIT_H

#include <time.h>
#include "../core/self.h"
#include "../topology/node.h"

/* ---- policy --------------------------------------------------------------- */
enum { NL_WAIT_ADAPTIVE = 0, NL_WAIT_SPIN = 1, NL_WAIT_YIELD = 2, NL_WAIT_PARK = 3 };
typedef struct nl_wait_policy {
    int kind;
    uint32_t spins;   /* busy iterations before yielding (yield, park)   */
    uint32_t yields;  /* sched_yield calls before parking (park only)    */
} nl_wait_policy_t;

NL_HIDDEN extern nl_wait_policy_t nl_wait_policy;
NL_HIDDEN void nl_wait_policy_init(void);

/* Budgets in time-stamp-counter ticks (about 2.5 per ns on the x86 machines
 * measured; the order of magnitude is what matters). */
#define NL_SPIN_TICKS 2500000ull      /* ~1 ms: park a waiter that has a CPU  */
#define NL_OVER_SPIN_TICKS 250000ull  /* ~100 us: ... while overloaded        */
#define NL_OVER_PAUSES 8u             /* pauses before yielding when overloaded */

/* ---- load ------------------------------------------------------------------ */
NL_HIDDEN extern _Atomic uint64_t nl_load_next;    /* tick of the next sample */
NL_HIDDEN extern _Atomic uint32_t nl_load_runnable; /* runnable tasks, last sample */
NL_HIDDEN extern _Atomic uint32_t nl_gate_waiters; /* this process's passive waiters */
NL_HIDDEN int nl_cpus_online(void);
NL_HIDDEN void nl_load_sample(void);

/* More runnable threads than CPUs, by a margin of one task (plus one per 16
 * CPUs): a spinning waiter would keep a thread (perhaps the holder) off a
 * CPU. The margin keeps a passing task (a kernel worker, a shell) from
 * turning a machine with a CPU per waiter into an overloaded one: sampled
 * with two busy threads on two CPUs, the runnable count read 2 to 4. */
static inline bool nl_overloaded(void)
{
    /* the sample's age is read (the TSC: ~11 ns in the VMs measured, 14 % of
     * a contended two-thread qspinlock pair) once in 64 calls per thread */
    nl_self_t *s = nl_self();
    if (NL_UNLIKELY(s->load_countdown-- == 0)) {
        s->load_countdown = 63;
        if (nl_ticks() >= atomic_load_explicit(&nl_load_next, memory_order_relaxed))
            nl_load_sample();
    }
    uint32_t demand = atomic_load_explicit(&nl_load_runnable, memory_order_relaxed) +
                      atomic_load_explicit(&nl_gate_waiters, memory_order_relaxed);
    uint32_t cpus = (uint32_t)nl_cpus_online();
    return demand > cpus + 1 + cpus / 16;
}

/* Overloaded under the adaptive policy: where the gate holds arrivals back
 * and the locks wait passively (the fixed policies keep their own ways). */
static inline bool nl_adaptive_overloaded(void)
{
    return nl_wait_policy.kind == NL_WAIT_ADAPTIVE && nl_overloaded();
}

/* ---- short waits ------------------------------------------------------------ */
typedef struct { uint32_t n; uint32_t yield_at; } nl_spinner_t;
#define NL_SPINNER_INIT {0, 0}

NL_HIDDEN void nl_spin_yield_slow(nl_spinner_t *s);

/* One step of a wait loop: pause; under the adaptive policy yield instead
 * once NL_OVER_PAUSES pauses are done while the system is overloaded (the
 * answer is refreshed every 256 steps); under yield/park after `spins`. */
static inline void nl_spin_once(nl_spinner_t *s)
{
    uint32_t n = s->n++;
    if (NL_LIKELY(n < s->yield_at || (n && nl_wait_policy.kind == NL_WAIT_SPIN))) {
        nl_cpu_relax();
        return;
    }
    nl_spin_yield_slow(s);
}

/* ---- backoff ------------------------------------------------------------------
 * For retries on a word that many threads test-and-set (ttas, hbo, the
 * cohort lock's global word, the qspinlock pending waiter): each step pauses
 * a random 1..limit times, doubles limit up to a maximum, then takes one
 * waiting step (nl_spin_once: one more pause, or a yield while the system
 * is overloaded). */
typedef struct { uint32_t limit; nl_spinner_t sp; } nl_backoff_t;
#define NL_BACKOFF_INIT(min) { (min), NL_SPINNER_INIT }

static inline void nl_backoff(nl_backoff_t *b, uint32_t max)
{
    uint32_t n = 1 + (uint32_t)(nl_rand() % b->limit);
    for (uint32_t i = 0; i < n; i++)
        nl_cpu_relax();
    if (b->limit < max)
        b->limit <<= 1;
    nl_spin_once(&b->sp);
}

/* ---- grant words ------------------------------------------------------------
 * A waiter owns a word initialised to NL_GRANT_WAITING. nl_await*() returns
 * once the word holds a grant value; nl_grant*() stores one and wakes the
 * waiter if it parked; nl_nudge*() turns PARKED back into WAITING and wakes
 * the waiter, which spins again. Grant values must not be 0 or
 * NL_GRANT_PARKED, and for the 64-bit form the low 32 bits must not equal
 * NL_GRANT_PARKED (aligned pointers and small constants other than 3 are
 * fine). */
#define NL_GRANT_WAITING 0u
#define NL_GRANT_PARKED 3u

NL_HIDDEN uint32_t nl_await32_slow(_Atomic uint32_t *w);
NL_HIDDEN uint64_t nl_await64_slow(_Atomic uint64_t *w);
NL_HIDDEN void nl_futex_wake(void *addr, int n);
NL_HIDDEN int nl_futex_wait(void *addr, uint32_t expected);
NL_HIDDEN int nl_futex_wait_ns(void *addr, uint32_t expected, uint64_t ns);
/* until an absolute time on CLOCK_MONOTONIC or CLOCK_REALTIME (abs NULL: no
 * deadline), on a private or a process-shared word; 0 or an errno value */
NL_HIDDEN int nl_futex_wait_until(_Atomic uint32_t *w, uint32_t val, const struct timespec *abs,
                                  clockid_t clk, int shared);
NL_HIDDEN void nl_futex_wake_shared(_Atomic uint32_t *w, int n);
NL_HIDDEN void nl_wake_parked(void *addr);

static inline uint32_t nl_await32(_Atomic uint32_t *w)
{
    uint32_t v = atomic_load_explicit(w, memory_order_acquire);
    if (NL_LIKELY(v != NL_GRANT_WAITING && v != NL_GRANT_PARKED))
        return v;
    return nl_await32_slow(w);
}
static inline void nl_grant32(_Atomic uint32_t *w, uint32_t v)
{
    if (NL_UNLIKELY(atomic_exchange_explicit(w, v, memory_order_acq_rel) == NL_GRANT_PARKED))
        nl_wake_parked(w);
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
    if (NL_UNLIKELY(atomic_exchange_explicit(w, v, memory_order_acq_rel) == NL_GRANT_PARKED))
        nl_wake_parked(w); /* the low half is at w on little-endian */
}

/* Early wake: did the calling thread park in its last grant-word wait? (It
 * then wakes its successor, which has probably parked too.) Reading it
 * clears it. */
static inline bool nl_parked_last(nl_self_t *s)
{
    bool p = s->parked_last;
    s->parked_last = false;
    return p;
}
NL_HIDDEN void nl_nudge_slow(void *addr, bool wide);
static inline void nl_nudge32(_Atomic uint32_t *w)
{
    if (atomic_load_explicit(w, memory_order_relaxed) == NL_GRANT_PARKED)
        nl_nudge_slow(w, false);
}
static inline void nl_nudge64(_Atomic uint64_t *w)
{
    if (atomic_load_explicit(w, memory_order_relaxed) == NL_GRANT_PARKED)
        nl_nudge_slow(w, true);
}

/* ---- the gate (concurrency restriction) ------------------------------------ */
NL_HIDDEN void nl_gate_slow(const void *lock);

/* Called by a lock's slow path before it queues. `queued`: the lock says
 * somebody waits for it already (not only that it is held). While the
 * system is overloaded, an arrival at such a saturated lock waits passively
 * for a while (see the top of this file); true when it did (the caller's
 * view of the lock word is stale). An arrival at a lock that is only held
 * queues at once: it becomes the next holder, the queue stays at one
 * running waiter, and a short critical section does not cost it a sleep
 * (with a 100 us sleep per arrival a moderately contended lock ran at
 * 0.7-0.8x glibc's mutex under the preload, 4 threads on 2 CPUs). A lock
 * whose word cannot tell a waiter from the holder (an MCS tail) passes
 * true, and so does a lock that nobody may take ahead of a waiter (ticket):
 * there a waiter that loses its CPU stalls the lock. */
static inline bool nl_gate(const void *lock, bool queued)
{
    if (!queued || !nl_adaptive_overloaded())
        return false;
    nl_gate_slow(lock);
    return true;
}

/* Add what the calling thread's waiting counters moved by since `before` to
 * a lock's statistics (src/stats.c). */
NL_HIDDEN void nl_stats_add_waiting(nl_stats_t *s, const nl_wait_counts_t *before);

/* Count a slow-path acquisition (the generic handle's "contended"). */
static inline void nl_count_slow(nl_self_t *s) { s->wc.slow++; }

#endif
