/* The simulated machine as the library and the workloads see it:
 *   - the library's machine seam (src/core/machine.h under NL_SIM): clock,
 *     pause, CPU number, CPU count, yield, futex, the load sampler's evidence;
 *   - the libc calls of the instrumented code that involve threads or time,
 *     redirected at link time (-Wl,--wrap=NAME: the instrumented objects'
 *     calls of NAME come to __wrap_NAME): thread creation and joining,
 *     sleeping, yielding, CPU affinity, pthread_once, glibc's normal mutex
 *     (the "pthread" lock), a model of its rwlock ("pthread-rwlock"). Memory
 *     placement is bench_numa.c's.
 * A simulated thread is a fiber on the machine's CPU chosen by the run's
 * placement (main.c), or by the affinity its attributes ask for. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "sim.h"

int sim_place_order[SIM_MAX_CPUS];
int sim_place_n;

/* ---- the library's machine seam ---------------------------------------------- */
uint64_t nl_machine_ns(void)
{
    if (!sim_cur)
        return 0;
    sim_advance(sim_m.c_clock);
    return sim_cur->clock / 1000;
}
uint64_t nl_machine_ticks(void) { return nl_machine_ns(); }
void nl_cpu_relax(void) { sim_pause(); }
int nl_machine_cpu(void) { return sim_cur && sim_cur->cpu >= 0 ? sim_cur->cpu : 0; }
int nl_machine_cpus_online(void) { return sim_m.ncpus; }
int nl_machine_cpus_present(unsigned char *set)
{
    memset(set, 0, 4096); /* NL_MAX_CPUS (numalock/topology.h) */
    memset(set, 1, (size_t)sim_m.ncpus);
    return 0;
}
void sim_sched_yield(void);
void nl_machine_yield(void) { sim_sched_yield(); }
/* one futex call: the flags (process-shared, two-word) change nothing here */
int nl_machine_futex_wait(void *word, uint32_t val, uint64_t ns, unsigned flags)
{
    (void)flags;
    return sim_futex_wait(word, val, ns);
}
int nl_machine_futex_wait_abs(void *word, uint32_t val, const struct timespec *abs, int clk, unsigned flags)
{
    (void)clk, (void)flags; /* an absolute time on the simulated clock */
    if (!abs)
        return sim_futex_wait(word, val, 0);
    uint64_t t = (uint64_t)abs->tv_sec * 1000000000ull + (uint64_t)abs->tv_nsec, now = nl_machine_ns();
    return t <= now ? ETIMEDOUT : sim_futex_wait(word, val, t - now);
}
int nl_machine_futex_wake(void *word, int n, unsigned flags)
{
    (void)flags;
    return sim_futex_wake(word, n);
}
/* the one path (machine.h's NL_FUTEX_CLASSIC; NL_FUTEX_FUTEX2 is not here) */
enum { SIM_FUTEX_CLASSIC = 1, SIM_FUTEX_FUTEX2 = 2 };
uint32_t nl_machine_futex_node(void) { return 0; }
int nl_machine_futex_use(int mode) { return mode == SIM_FUTEX_FUTEX2 ? ENOSYS : 0; }
int nl_machine_futex_path(void) { return SIM_FUTEX_CLASSIC; }
int nl_machine_futex_kernel(void) { return SIM_FUTEX_CLASSIC; }
int nl_machine_runnable_tasks(void) { return sim_runnable(); }
uint32_t nl_machine_affinity_cpus(void) { return (uint32_t)sim_m.ncpus; }
uint32_t nl_machine_cgroup_cpus(void) { return 0; }
/* no CPU-time clock: the gate measures turns in (virtual) wall time */
int nl_machine_thread_clock(void) { return -1; }
uint64_t nl_machine_thread_cpu_ns(int clk) { (void)clk; return 0; }

/* ---- threads --------------------------------------------------------------------- */
#define FIBER_HANDLE 0x51A0000000000000ull /* pthread_t of fiber i: this + i */

/* the CPU of the next thread: the first of the placement order that no live
 * simulated thread has */
static int next_cpu(void)
{
    for (int k = 0; k < sim_place_n; k++) {
        int cpu = sim_place_order[k], used = 0;
        for (int i = 1; i < sim_nfibers && !used; i++)
            used = sim_fibers[i] && sim_fibers[i]->state != SIM_DONE && sim_fibers[i]->cpu == cpu;
        if (!used)
            return cpu;
    }
    /* more threads than CPUs: they share, in placement order */
    int live = 0;
    for (int i = 1; i < sim_nfibers; i++)
        live += sim_fibers[i] && sim_fibers[i]->state != SIM_DONE;
    return sim_place_order[live % sim_place_n];
}

int __wrap_pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    int cpu = -1;
    cpu_set_t set;
    if (attr && pthread_attr_getaffinity_np(attr, sizeof set, &set) == 0 && CPU_COUNT(&set) < CPU_SETSIZE)
        for (int c = 0; c < sim_m.ncpus && cpu < 0; c++)
            if (CPU_ISSET(c, &set) && CPU_COUNT(&set) < sim_m.ncpus)
                cpu = c;
    if (cpu < 0)
        cpu = next_cpu();
    sim_fiber_t *f = sim_fiber_create(fn, arg, cpu);
    if (!f)
        return EAGAIN;
    sim_advance(SIM_NS(10000.0)); /* clone and the new thread's start: about 10 us */
    f->clock = sim_cur->clock;
    f->state = SIM_BLOCKED;
    sim_wake(f, f->clock);
    *th = (pthread_t)(FIBER_HANDLE + (uint64_t)f->id);
    return 0;
}

int __wrap_pthread_join(pthread_t th, void **ret)
{
    uint64_t id = (uint64_t)th - FIBER_HANDLE;
    if (id >= SIM_MAX_FIBERS || !sim_fibers[id])
        return ESRCH;
    sim_fiber_t *f = sim_fibers[id];
    while (f->state != SIM_DONE) {
        f->joiner = sim_cur->id;
        sim_block(0);
    }
    if (ret)
        *ret = f->ret;
    if (sim_cur->clock < f->clock)
        sim_cur->clock = f->clock;
    sim_fiber_free(f);
    return 0;
}

static void sleep_ns(uint64_t ns)
{
    sim_block(sim_cur->clock + SIM_NS((double)ns));
}

int __wrap_nanosleep(const struct timespec *req, struct timespec *rem)
{
    uint64_t ns = (uint64_t)req->tv_sec * 1000000000ull + (uint64_t)req->tv_nsec;
    if (rem) /* may be req itself */
        memset(rem, 0, sizeof *rem);
    sleep_ns(ns);
    return 0;
}

int __wrap_usleep(useconds_t us)
{
    sleep_ns((uint64_t)us * 1000);
    return 0;
}

int __wrap_sched_yield(void)
{
    sim_sched_yield();
    return 0;
}

int __wrap_sched_getaffinity(pid_t pid, size_t size, cpu_set_t *set)
{
    (void)pid;
    memset(set, 0, size);
    for (int c = 0; c < sim_m.ncpus && (size_t)c < size * 8; c++)
        CPU_SET_S((size_t)c, size, set);
    return 0;
}

int __wrap_sched_getcpu(void) { return nl_machine_cpu(); }

/* the calling thread moves to a CPU of the set: its own if the set has it,
 * else the first that no other live thread has, else the first */
int __wrap_sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *set)
{
    sim_fiber_t *me = sim_cur;
    if (pid || !me || me->cpu < 0)
        return 0;
    if (me->cpu < (int)(size * 8) && CPU_ISSET_S((size_t)me->cpu, size, set))
        return 0;
    int first = -1, free_cpu = -1;
    for (int c = 0; c < sim_m.ncpus && c < (int)(size * 8) && free_cpu < 0; c++) {
        if (!CPU_ISSET_S((size_t)c, size, set))
            continue;
        first = first < 0 ? c : first;
        int used = 0;
        for (int i = 1; i < sim_nfibers && !used; i++)
            used = sim_fibers[i] && sim_fibers[i] != me && sim_fibers[i]->state != SIM_DONE && sim_fibers[i]->cpu == c;
        free_cpu = used ? -1 : c;
    }
    int to = free_cpu >= 0 ? free_cpu : first;
    if (to < 0) {
        errno = EINVAL;
        return -1;
    }
    sim_move_cpu(me, to);
    return 0;
}

/* ---- pthread_once: the first caller runs the routine; the others wait -------- */
int __wrap_pthread_once(pthread_once_t *once, void (*fn)(void))
{
    _Atomic int *state = (_Atomic int *)once; /* 0 new, 1 running, 2 done */
    int s = 0;
    if (atomic_load(state) == 2)
        return 0;
    if (atomic_compare_exchange_strong(state, &s, 1)) {
        fn();
        atomic_store(state, 2);
        sim_futex_wake(state, 1 << 30);
        return 0;
    }
    while (atomic_load(state) == 1)
        sim_futex_wait(state, 1, 0);
    return 0;
}

/* ---- glibc's normal mutex (the "pthread" lock, and any the code takes) --------
 * Its lock word is the first of pthread_mutex_t: 0 free, 1 taken, 2 taken
 * with waiters; a contended lock exchanges in 2 and sleeps on the word, an
 * unlock that finds 2 wakes one (glibc's lll_lock and lll_unlock). */
static _Atomic uint32_t *mword(pthread_mutex_t *m) { return (_Atomic uint32_t *)(void *)m; }

int __wrap_pthread_mutex_trylock(pthread_mutex_t *m)
{
    uint32_t e = 0;
    sim_access(mword(m), 4, SIM_RMW);
    return atomic_compare_exchange_strong(mword(m), &e, 1) ? 0 : EBUSY;
}

int __wrap_pthread_mutex_lock(pthread_mutex_t *m)
{
    if (__wrap_pthread_mutex_trylock(m) == 0)
        return 0;
    for (;;) {
        sim_access(mword(m), 4, SIM_RMW);
        if (atomic_exchange(mword(m), 2) == 0)
            return 0;
        sim_futex_wait(mword(m), 2, 0);
    }
}

int __wrap_pthread_mutex_unlock(pthread_mutex_t *m)
{
    sim_access(mword(m), 4, SIM_RMW);
    if (atomic_exchange(mword(m), 0) == 2)
        sim_futex_wake(mword(m), 1);
    return 0;
}

/* ---- glibc's rwlock (the "pthread-rwlock" lock) -------------------------------
 * A model, not glibc's algorithm: one word, readers count in its low bits
 * and a writer bit on top, readers preferred (as glibc's default); waiters
 * sleep on the word and every release that frees it wakes them all. */
#define RW_WRITER 0x80000000u
static _Atomic uint32_t *rwword(pthread_rwlock_t *l) { return (_Atomic uint32_t *)(void *)l; }

int __wrap_pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
    _Atomic uint32_t *w = rwword(l);
    sim_access(w, 4, SIM_LOAD);
    uint32_t v = atomic_load(w);
    while (!(v & RW_WRITER)) {
        sim_access(w, 4, SIM_RMW);
        if (atomic_compare_exchange_strong(w, &v, v + 1))
            return 0;
    }
    return EBUSY;
}

int __wrap_pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
    uint32_t v = 0;
    sim_access(rwword(l), 4, SIM_RMW);
    return atomic_compare_exchange_strong(rwword(l), &v, RW_WRITER) ? 0 : EBUSY;
}

int __wrap_pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
    while (__wrap_pthread_rwlock_tryrdlock(l)) {
        uint32_t v = atomic_load(rwword(l));
        if (v & RW_WRITER)
            sim_futex_wait(rwword(l), v, 0);
    }
    return 0;
}

int __wrap_pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
    while (__wrap_pthread_rwlock_trywrlock(l)) {
        uint32_t v = atomic_load(rwword(l));
        if (v)
            sim_futex_wait(rwword(l), v, 0);
    }
    return 0;
}

int __wrap_pthread_rwlock_unlock(pthread_rwlock_t *l)
{
    _Atomic uint32_t *w = rwword(l);
    sim_access(w, 4, SIM_RMW);
    uint32_t v = atomic_load(w);
    uint32_t left = v & RW_WRITER ? (atomic_store(w, 0), 0) : atomic_fetch_sub(w, 1) - 1;
    if (!left)
        sim_futex_wake(w, 1 << 30);
    return 0;
}
