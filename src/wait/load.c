/* The evidence behind nl_overloaded (load.h): the CPUs this process may use,
 * the machine's runnable tasks, the tick rate, and preemption seen by
 * waiters. One waiter refreshes the samples when they are stale; every other
 * thread reads the last answer. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "load.h"
#include "knobs.h"

/* Samples: the machine's runnable count every NL_LOAD_PERIOD_NS; the
 * affinity mask every NL_AFFINITY_PERIOD samples (one system call); the
 * cgroup files every NL_CGROUP_PERIOD samples (a few file reads). */
#define NL_LOAD_PERIOD_NS 2000000ull /* 2 ms */
#define NL_AFFINITY_PERIOD 32u       /* ~64 ms */
#define NL_CGROUP_PERIOD 512u        /* ~1 s   */
uint32_t nl_cgroup_every = NL_CGROUP_PERIOD; /* tests: 1 reads them at every sample */
/* How long one preemption seen by a waiter keeps the process overloaded. */
#define NL_EVIDENCE_NS 50000000ull   /* 50 ms */

_Atomic uint64_t nl_load_next;
_Atomic uint32_t nl_load_runnable = UINT32_MAX / 2; /* until sampled: overloaded */
_Atomic uint32_t nl_gate_waiters;
_Atomic uint32_t nl_spinning;
_Atomic uint32_t nl_parked;
_Atomic uint32_t nl_budget_cpus = 1;
_Atomic uint32_t nl_count_spinners = 1;
_Atomic uint32_t nl_preempted;
static _Atomic uint64_t preempted_until;   /* ticks */
static _Atomic int online_cpus;
static _Atomic uint32_t samples;
static _Atomic uint32_t cgroup_cpus;        /* 0: no limit found */
static _Atomic uint64_t calib_ticks, calib_ns; /* the first sample's clocks */

int nl_cpus_online(void)
{
    int n = atomic_load_explicit(&online_cpus, memory_order_relaxed);
    if (NL_UNLIKELY(n <= 0)) {
        n = nl_machine_cpus_online();
        atomic_store_explicit(&online_cpus, n, memory_order_relaxed);
    }
    return n;
}

uint32_t nl_cpu_budget(void)
{
    if (NL_UNLIKELY(!atomic_load_explicit(&samples, memory_order_relaxed)))
        nl_load_sample();
    return atomic_load_explicit(&nl_budget_cpus, memory_order_relaxed);
}

bool nl_overloaded(void) { return nl_load_level(true) != NL_LOAD_FREE; }

void nl_load_sample_cgroups_always(void) { nl_cgroup_every = 1; }

static uint32_t min_nonzero(uint32_t a, uint32_t b) { return !a ? b : !b ? a : a < b ? a : b; }

/* ---- the sampler ------------------------------------------------------------ */
void nl_load_sample(void)
{
    uint64_t now = nl_machine_ticks();
    uint64_t next = atomic_load_explicit(&nl_load_next, memory_order_relaxed);
    if (now < next)
        return;
    /* one thread samples; the others keep the previous answer */
    if (!atomic_compare_exchange_strong_explicit(&nl_load_next, &next,
                                                 now + nl_ns_to_ticks(NL_LOAD_PERIOD_NS),
                                                 memory_order_relaxed, memory_order_relaxed))
        return;
    uint32_t k = atomic_fetch_add_explicit(&samples, 1, memory_order_relaxed);

    /* the tick rate, against the monotonic clock, over the sampler's life */
    uint64_t ns = nl_machine_ns();
    uint64_t c_ns = atomic_load_explicit(&calib_ns, memory_order_acquire);
    if (!c_ns) {
        atomic_store_explicit(&calib_ticks, now, memory_order_relaxed);
        atomic_store_explicit(&calib_ns, ns, memory_order_release);
    } else {
        uint64_t c_ticks = atomic_load_explicit(&calib_ticks, memory_order_relaxed);
        if (ns - c_ns > 1000000ull && now > c_ticks) {
            uint64_t r = (now - c_ticks) * 1000000ull / (ns - c_ns); /* ticks per ms */
            if (r)
                atomic_store_explicit(&nl_ticks_per_ms, r, memory_order_relaxed);
        }
    }

    int r = nl_machine_runnable_tasks();
    /* unknown: say overloaded (parking is the safe answer) */
    atomic_store_explicit(&nl_load_runnable, r < 0 ? (uint32_t)nl_cpus_online() * 2 + 2 : (uint32_t)r,
                          memory_order_relaxed);

    if (k % (nl_cgroup_every ? nl_cgroup_every : 1) == 0) {
        uint32_t c = nl_machine_cgroup_cpus();
        if (c != UINT32_MAX)
            atomic_store_explicit(&cgroup_cpus, c, memory_order_relaxed);
    }
    if (k % NL_AFFINITY_PERIOD == 0) {
        uint32_t b = nl_machine_affinity_cpus();
        if (!b)
            b = (uint32_t)nl_cpus_online();
        b = min_nonzero(b, atomic_load_explicit(&cgroup_cpus, memory_order_relaxed));
        atomic_store_explicit(&nl_budget_cpus, b ? b : 1, memory_order_relaxed);
    }
    /* the spinners are worth counting only when the threads that use the
     * library outnumber the CPUs: otherwise every one of them has a CPU */
    atomic_store_explicit(&nl_count_spinners,
                          nl_threads_live() > atomic_load_explicit(&nl_budget_cpus, memory_order_relaxed),
                          memory_order_relaxed);
    if (atomic_load_explicit(&nl_preempted, memory_order_relaxed) &&
        now > atomic_load_explicit(&preempted_until, memory_order_relaxed))
        atomic_store_explicit(&nl_preempted, 0, memory_order_relaxed);
}

void nl_note_preempted(void)
{
    nl_self()->wc.preempted++;
    /* evidence pinned (nl_load_next at its maximum: tests that fix what the
     * policy sees): no sample would ever clear the flag, so it is not set */
    if (atomic_load_explicit(&nl_load_next, memory_order_relaxed) == UINT64_MAX)
        return;
    atomic_store_explicit(&preempted_until, nl_machine_ticks() + nl_ns_to_ticks(NL_EVIDENCE_NS),
                          memory_order_relaxed);
    if (!atomic_load_explicit(&nl_preempted, memory_order_relaxed))
        atomic_store_explicit(&nl_preempted, 1, memory_order_relaxed);
}

