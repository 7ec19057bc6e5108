/*
 * The machine the library runs on (not installed): the one seam between the
 * locks and the hardware and kernel. Whatever a lock or its waiting asks of
 * the machine comes through here:
 *
 *   nl_machine_ticks()     a fast counter for short intervals (its rate is
 *                          measured against nl_machine_ns(): load.c)
 *   nl_machine_ns()        monotonic nanoseconds
 *   nl_cpu_relax()         the pause of a polling loop
 *   nl_machine_cpu()       the CPU the calling thread runs on (-1: unknown)
 *   nl_machine_cpus_online()  CPUs of the machine
 *   nl_machine_cpus_present(set)  set[cpu] = 1 for each CPU the machine has
 *                          (NL_MAX_CPUS entries)
 *   nl_machine_yield()     give the CPU away
 *   nl_machine_futex_wait(word, val, ns, flags)   sleep while *word == val
 *                          (ns: a relative timeout, 0 for none): 0, or an
 *                          errno (EAGAIN: the word differed; ETIMEDOUT; EINTR)
 *   nl_machine_futex_wait_abs(word, val, abs, clk, flags)  the same until an
 *                          absolute time on CLOCK_MONOTONIC or _REALTIME
 *   nl_machine_futex_wake(word, n, flags)  wake up to n sleepers: how many
 *                          woke (0 also when the call failed)
 *   nl_machine_futex_node()  the kernel's node of the caller's CPU, for the
 *                          node half of a two-word futex (NL_FUTEX_NODE)
 *                          flags: NL_FUTEX_SHARED (process-shared word),
 *                          NL_FUTEX_NODE (two-word futex, below)
 *   nl_machine_runnable_tasks()   the machine's runnable tasks (-1: unknown)
 *   nl_machine_affinity_cpus()    CPUs the calling thread may run on (0: unknown)
 *   nl_machine_cgroup_cpus()      the CPUs its cgroup allows (0: no limit
 *                          found; UINT32_MAX: could not look now)
 *   nl_machine_thread_clock()     a handle to the calling thread's CPU-time
 *                          clock (-1: none)
 *   nl_machine_thread_cpu_ns(clk) the CPU time the handle's thread has
 *                          received, any thread may ask (0: unknown)
 *
 * Three machines implement it:
 *   - Linux, the default: the counter and the pause inline, the rest in
 *     machine_linux.c;
 *   - the model checker's (NL_VERIFY, verify/wmm): a clock that never
 *     advances, a pause that is nothing (a poll loop is only its loads); the
 *     checks replace the waiting code that sleeps and yields (verify/wmm/env.c);
 *   - the simulator's (NL_SIM, sim/): every call goes to the simulated
 *     machine, in virtual time (docs/SIMULATION.md).
 * Memory order is not part of the seam: the locks use C11 atomics, which
 * the model checker interprets and the simulator's compiler instrumentation
 * sees.
 */
#ifndef NL_MACHINE_H
#define NL_MACHINE_H

#include <stdbool.h>
#include <stdint.h>

#define NL_MACHINE_HIDDEN __attribute__((visibility("hidden")))

NL_MACHINE_HIDDEN int nl_machine_cpus_online(void);
NL_MACHINE_HIDDEN int nl_machine_cpus_present(unsigned char *set);
/* Futex flags. NL_FUTEX_NODE: a two-word futex, FUTEX2_NUMA's form: the
 * 32-bit value at `word`, 8-byte aligned, and beside it (word + 4 bytes)
 * the node whose hash bucket the kernel uses, written by the waiter
 * (nl_machine_futex_node) before it says it sleeps. Where the kernel takes
 * FUTEX2_NUMA its waits and wakes go there; elsewhere the node half is
 * ignored. Waiter and waker of a word must give the same flags. */
#define NL_FUTEX_SHARED 1u
#define NL_FUTEX_NODE 2u

/* Which call the futexes go through (Linux; the simulator has one): the
 * classic futex(2), or futex_wait/futex_wake (Linux 6.7), with FUTEX2_NUMA
 * for two-word futexes where the kernel takes it. NL_FUTEX_AUTO: futex2
 * where the kernel has it, found out once at the first call. */
enum { NL_FUTEX_AUTO = 0, NL_FUTEX_CLASSIC = 1, NL_FUTEX_FUTEX2 = 2 };
#define NL_FUTEX_NUMA_ON 4 /* in nl_machine_futex_path(): FUTEX2_NUMA is used */

NL_MACHINE_HIDDEN int nl_machine_futex_wait(void *word, uint32_t val, uint64_t ns, unsigned flags);
NL_MACHINE_HIDDEN int nl_machine_futex_wake(void *word, int n, unsigned flags);
NL_MACHINE_HIDDEN uint32_t nl_machine_futex_node(void);
/* Force a path (before any thread sleeps: a waiter and its waker must use
 * the same one): 0, or ENOSYS when the kernel lacks futex2. */
NL_MACHINE_HIDDEN int nl_machine_futex_use(int mode);
/* The path in use: NL_FUTEX_CLASSIC or NL_FUTEX_FUTEX2, | NL_FUTEX_NUMA_ON. */
NL_MACHINE_HIDDEN int nl_machine_futex_path(void);
/* What the kernel offers (probed once): the same bits. */
NL_MACHINE_HIDDEN int nl_machine_futex_kernel(void);
NL_MACHINE_HIDDEN int nl_machine_runnable_tasks(void);
NL_MACHINE_HIDDEN uint32_t nl_machine_affinity_cpus(void);
NL_MACHINE_HIDDEN uint32_t nl_machine_cgroup_cpus(void);
NL_MACHINE_HIDDEN int nl_machine_thread_clock(void);
NL_MACHINE_HIDDEN uint64_t nl_machine_thread_cpu_ns(int clk);

struct timespec;
NL_MACHINE_HIDDEN int nl_machine_futex_wait_abs(void *word, uint32_t val, const struct timespec *abs, int clk,
                                                unsigned flags);

#if defined(NL_SIM)

NL_MACHINE_HIDDEN uint64_t nl_machine_ticks(void);
NL_MACHINE_HIDDEN uint64_t nl_machine_ns(void);
NL_MACHINE_HIDDEN void nl_cpu_relax(void);
NL_MACHINE_HIDDEN int nl_machine_cpu(void);
NL_MACHINE_HIDDEN void nl_machine_yield(void);

#elif defined(NL_VERIFY)

/* a time that never advances leaves every spin budget unspent */
static inline uint64_t nl_machine_ticks(void) { return 0; }
static inline uint64_t nl_machine_ns(void) { return 0; }
static inline void nl_cpu_relax(void) {}
static inline int nl_machine_cpu(void) { return -1; }
static inline void nl_machine_yield(void) {}

#else /* Linux */

#include <sched.h>
#include <time.h>

static inline uint64_t nl_machine_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* x86: the time-stamp counter; aarch64: the virtual counter CNTVCT_EL0;
 * elsewhere nanoseconds (include/numalock/clock.h reads the same) */
static inline uint64_t nl_machine_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
    uint64_t v;
    __asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v) : : "memory");
    return v;
#else
    return nl_machine_ns();
#endif
}

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

static inline int nl_machine_cpu(void) { return sched_getcpu(); }
static inline void nl_machine_yield(void) { sched_yield(); }

#endif
#endif
