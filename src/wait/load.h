/*
 * The evidence behind the waiting policy's "overloaded" (load.c; not
 * installed): what the process and the machine have of CPUs and of threads
 * that want one. Layer: inside src/wait, below the waiter's steps (wait.c)
 * and the gate (gate.c); the locks do not include it (they see the verdict
 * only, through wait.h: nl_wait_begin, nl_wait_restricting).
 *
 * Refreshed by whichever waiter finds the sample stale (every ~2 ms; the
 * affinity mask every ~64 ms, the cgroup limits every ~1 s).
 */
#ifndef NL_WAIT_LOAD_H
#define NL_WAIT_LOAD_H

#include "counts.h"

NL_HIDDEN extern _Atomic uint64_t nl_load_next;     /* tick of the next sample */
NL_HIDDEN extern _Atomic uint32_t nl_load_runnable; /* the machine's runnable tasks */
NL_HIDDEN extern _Atomic uint32_t nl_budget_cpus;   /* CPUs this process may use */
NL_HIDDEN extern _Atomic uint32_t nl_preempted;     /* 1: a waiter lost its CPU lately */
NL_HIDDEN void nl_load_sample(void);
NL_HIDDEN void nl_note_preempted(void);
/* CPUs the process may use: affinity mask, cgroup cpuset and CPU quota. */
NL_HIDDEN uint32_t nl_cpu_budget(void);
/* The cgroup limit (v1 or v2) of the process described by a
 * /proc/self/cgroup file under a cgroup mount root; 0 when none
 * (src/core/machine_linux.c). */
NL_HIDDEN uint32_t nl_cgroup_cpus(const char *proc_cgroup, const char *sysfs_root);
/* Read the cgroup files at every sample from now on (the preload's tests:
 * samples taken in waiters, on the program's stacks). */
NL_HIDDEN void nl_load_sample_cgroups_always(void);

/* Overloaded (counts.h) when any of:
 *  - the process: waiters that spin (for the gate: also those asleep in a
 *    queue and at the gate) and one holder outnumber the CPUs it may use
 *    (affinity, cpuset, quota);
 *  - the machine: runnable tasks and this process's passive waiters exceed
 *    the online CPUs (plus one per 16 CPUs): one busy program beside two
 *    threads on two CPUs is a shared machine (a margin of one task more
 *    let a queue lock there hand over to waiters that lost their CPU, at
 *    a third of the barging mutex's throughput);
 *  - a waiter of this process lost its CPU in the last 50 ms (other
 *    processes on its CPUs, a quota that throttles). */
enum {
    NL_LOAD_FREE = 0,    /* a CPU for every thread that wants one               */
    NL_LOAD_SHARED = 1,  /* the machine's CPUs are busy (or a waiter lost its
                          * CPU lately): a spinner takes a CPU from some thread */
    NL_LOAD_OWN = 2,     /* the process's own threads outnumber its CPUs: a
                          * spinner takes a CPU from the holder, probably       */
};
/* The level of load for a decision: `passive_too` adds this process's
 * passive waiters and the waiters asleep in a lock's queue to the demand
 * (the gate's decisions: they would run if let in or granted; without
 * them, a queue whose waiters all sleep hands the lock from one sleeper to
 * the next, each wake-up on the hand-over path, and never looks loaded),
 * false counts only the threads that want a CPU now (whether to spin). */
static inline int nl_load_level(bool passive_too)
{
    /* the sample's age is read (the TSC: ~11 ns in the VMs measured) once
     * in 64 calls per thread */
    nl_self_t *s = nl_self();
    if (NL_UNLIKELY(s->load_countdown-- == 0)) {
        s->load_countdown = 63;
        if (nl_machine_ticks() >= atomic_load_explicit(&nl_load_next, memory_order_relaxed))
            nl_load_sample();
    }
    uint32_t passive = passive_too ? atomic_load_explicit(&nl_gate_waiters, memory_order_relaxed) +
                                         atomic_load_explicit(&nl_parked, memory_order_relaxed)
                                   : 0;
    if (atomic_load_explicit(&nl_spinning, memory_order_relaxed) + passive + 1 >
        atomic_load_explicit(&nl_budget_cpus, memory_order_relaxed))
        return NL_LOAD_OWN;
    uint32_t cpus = (uint32_t)nl_cpus_online();
    if (atomic_load_explicit(&nl_load_runnable, memory_order_relaxed) + passive > cpus + cpus / 16 ||
        atomic_load_explicit(&nl_preempted, memory_order_relaxed))
        return NL_LOAD_SHARED;
    return NL_LOAD_FREE;
}

#endif
