/* Unit tests of the waiting design (src/wait/wait.h): the early wake of a
 * parked waiter, the gate while overloaded and the order in which it lets
 * passive waiters in, the node stays weighed by received CPU time, the process's CPU budget (affinity and cgroup files),
 * the load levels, and statistics that count contention without changing
 * the acquisition path, for every registered lock. No test asserts on time:
 * a broken wake-up hangs, and the watchdog (alarm) fails the test.
 *
 *   test_wait [nudge|gate|fifo|fork|budget|level|stats|elsewhere|received|all]   exit 0 = pass
 *   test_wait --broken-nudge                must fail: a nudge that turns the
 *                                           word back to WAITING without a
 *                                           futex wake leaves the waiter asleep
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <sys/wait.h>
#include <stdint.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#define NL_TEST_WAIT
#include "nl_test_internal.h"
#include "numalock/spinlocks.h"
#include "numalock/shfl.h"
#include "numalock/topology.h"

static int failures, checks;
#define CHECK(cond, ...) do { checks++; if (!(cond)) { failures++; \
    fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); \
    fputc('\n', stderr); } } while (0)

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* Pin the evidence the waiting design sees (no re-sampling): the machine's
 * runnable tasks, a CPU budget of 64, no preemption seen. */
static void force_load(uint32_t runnable)
{
    atomic_store(&nl_load_next, UINT64_MAX);
    atomic_store(&nl_load_runnable, runnable);
    atomic_store(&nl_budget_cpus, 64);
    atomic_store(&nl_count_spinners, 0);
    atomic_store(&nl_spinning, 0);
    atomic_store(&nl_parked, 0);
    atomic_store(&nl_preempted, 0);
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "FAIL: watchdog: a waiter never woke up\n";
    if (write(2, msg, sizeof msg - 1) < 0) { /* nothing to do */ }
    _exit(1);
}

/* ---- nudge: PARKED -> WAITING + wake; the waiter spins again ---------------- */
static _Atomic uint32_t word;
static _Atomic uint64_t waiter_parks;
static _Atomic uint32_t waiter_got;
static _Atomic int waiter_tid;
static int broken_nudge;

static void *awaiter(void *p)
{
    (void)p;
    atomic_store(&waiter_tid, (int)gettid());
    nl_waiter_t w;
    nl_waiter_init(&w);
    uint32_t v = nl_wait_grant32(&w, &word);
    atomic_store(&waiter_parks, nl_test_self_parks());
    atomic_store(&waiter_got, v);
    return NULL;
}

static void wait_for_word(uint32_t want)
{
    while (atomic_load(&word) != want)
        sleep_ms(1);
}

/* Until thread `tid` sleeps (state S in /proc: its park's futex wait, the
 * only sleep it has). The word reads PARKED a moment before that: a change
 * in between makes the futex wait return at once, so a test that must see
 * a waiter stay asleep waits for this first (a slow machine, e.g. a qemu
 * guest, lets the main thread in between). */
static void wait_asleep(int tid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
    for (;;) {
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
            fclose(f);
        buf[n] = 0;
        const char *paren = strrchr(buf, ')'); /* "tid (comm) S ..." */
        if (!f || (paren && paren[1] == ' ' && paren[2] == 'S'))
            return; /* asleep (or no /proc: as before) */
        sleep_ms(1);
    }
}

static void test_nudge(void)
{
    char err[128];
    force_load(0); /* a CPU for everyone: adaptive waiters spin ~1 ms, then park */
    CHECK(nl_wait_set_policy("adaptive", err, sizeof err) == 0, "adaptive: %s", err);
    atomic_store(&word, NL_GRANT_WAITING);
    pthread_t t;
    pthread_create(&t, NULL, awaiter, NULL);
    wait_for_word(NL_GRANT_PARKED);            /* it spun, then parked */
    if (broken_nudge) {                        /* the word changes, nobody wakes it */
        wait_asleep(atomic_load(&waiter_tid));
        uint32_t expect = NL_GRANT_PARKED;
        atomic_compare_exchange_strong(&word, &expect, NL_GRANT_WAITING);
    } else {
        nl_nudge32(&word);
    }
    /* once awake it spins with WAITING in the word and parks again after its
     * budget: wait for that second park, so the grant below must wake it */
    wait_for_word(NL_GRANT_PARKED);
    nl_grant32(&word, 7);
    pthread_join(t, NULL);
    CHECK(atomic_load(&waiter_got) == 7, "grant value %u", atomic_load(&waiter_got));
    CHECK(atomic_load(&waiter_parks) == 2, "the waiter parked %llu times, 2 expected (park, nudge, park)",
          (unsigned long long)atomic_load(&waiter_parks));
}

/* ---- gate: overloaded -> an arriving thread waits passively, then gets in --- */
static nl_mcs_t mcs;
static _Atomic uint64_t gate_waits_seen;
static _Atomic int entered;

static void *gate_acquirer(void *p)
{
    (void)p;
    nl_mcs_acquire(&mcs);
    atomic_store(&gate_waits_seen, nl_test_self_gate_waits());
    atomic_store(&entered, 1);
    nl_mcs_release(&mcs);
    return NULL;
}

static void run_gate(const char *policy, uint32_t runnable, uint64_t *gate_waits)
{
    char err[128];
    CHECK(nl_wait_set_policy(policy, err, sizeof err) == 0, "%s: %s", policy, err);
    force_load(runnable);
    atomic_store(&entered, 0);
    nl_mcs_acquire(&mcs);
    void *mine = atomic_load(&mcs.tail);
    pthread_t t;
    pthread_create(&t, NULL, gate_acquirer, NULL);
    /* wait until it has queued behind us: it has passed the gate by then */
    while (atomic_load(&mcs.tail) == mine)
        sleep_ms(1);
    CHECK(!atomic_load(&entered), "%s: got in while the lock was held", policy);
    nl_mcs_release(&mcs);
    pthread_join(t, NULL);
    CHECK(atomic_load(&entered), "%s: never got in", policy);
    *gate_waits = atomic_load(&gate_waits_seen);
}

static void test_gate(void)
{
    uint64_t w;
    run_gate("adaptive", 1000, &w); /* overloaded */
    CHECK(w >= 1, "overloaded: no passive wait at the gate (%llu)", (unsigned long long)w);
    run_gate("adaptive", 0, &w);    /* a CPU for everyone */
    CHECK(w == 0, "not overloaded: %llu gate waits", (unsigned long long)w);
    run_gate("spin", 1000, &w);     /* only the adaptive policy restricts */
    CHECK(w == 0, "spin policy: %llu gate waits", (unsigned long long)w);
}

/* ---- fifo: passive waiters enter in the order they arrived ---------------- */
static _Atomic int fifo_order[4], fifo_n;

static void *fifo_acquirer(void *p)
{
    int me = (int)(intptr_t)p;
    nl_mcs_acquire(&mcs);
    atomic_store(&fifo_order[atomic_fetch_add(&fifo_n, 1)], me);
    nl_mcs_release(&mcs);
    return NULL;
}

static void test_fifo(void)
{
    char err[128];
    CHECK(nl_wait_set_policy("adaptive", err, sizeof err) == 0, "adaptive: %s", err);
    force_load(1000); /* overloaded: arrivals at the held lock wait at the gate */
    atomic_store(&fifo_n, 0);
    nl_mcs_acquire(&mcs);
    /* the order is FIFO within a node's queue (across nodes the gate keeps
     * one node preferred for a while): all three run on one CPU, so on one
     * node also on a machine with several */
    pthread_attr_t one_cpu;
    pthread_attr_init(&one_cpu);
    cpu_set_t allowed, first;
    CPU_ZERO(&first);
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &allowed)) {
                CPU_SET(c, &first);
                pthread_attr_setaffinity_np(&one_cpu, sizeof first, &first);
                break;
            }
    pthread_t t[3];
    for (int i = 0; i < 3; i++) {
        uint32_t before = atomic_load(&nl_gate_waiters);
        void *last = atomic_load(&mcs.tail);
        pthread_create(&t[i], &one_cpu, fifo_acquirer, (void *)(intptr_t)i);
        /* the next one arrives once this one waits at the gate (or, past
         * its turns, in the lock's queue: the tail moves from the last
         * arrival's node, not from ours, once the first went there), and
         * has had the time to take its ticket, which follows its count */
        while (atomic_load(&nl_gate_waiters) == before && atomic_load(&mcs.tail) == last)
            sleep_ms(1);
        sleep_ms(2);
    }
    nl_mcs_release(&mcs);
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    pthread_attr_destroy(&one_cpu);
    CHECK(atomic_load(&fifo_n) == 3, "%d of 3 got in", atomic_load(&fifo_n));
    for (int i = 0; i < 3; i++)
        CHECK(atomic_load(&fifo_order[i]) == i, "passive waiter %d entered %d-th",
              atomic_load(&fifo_order[i]), i);
    CHECK(atomic_load(&nl_gate_waiters) == 0, "%u passive waiters left behind",
          atomic_load(&nl_gate_waiters));
}

/* ---- elsewhere: while the gate prefers another node whose threads wait
 * there, an arrival from this node waits passively even at a lock that is
 * only held (shfl: saturated only once somebody queued); an arrival from the
 * preferred node queues in the lock ----------------------------------------- */
static nl_shfl_t shl;
static _Atomic int b_holds, b_may_go;
static _Atomic uint64_t else_gate_waits[4];
static _Atomic int else_valid[4];

static bool shl_queued(void) { return (atomic_load(&shl.val) & 0xffff0000u) != 0; }
static uint32_t shl_passive(void) { return atomic_load(&nl_gate_passive[nl_gate_bucket(&shl)]); }

static void *else_acquirer(void *p)
{
    int who = (int)(intptr_t)p; /* 0: B, 1: C, 2: D, 3: E */
    static const int node_of[4] = { 0, 1, 0, 1 };
    nl_thread_set_node(node_of[who]);
    /* the state D and E must meet: the lock only held, C (and then D)
     * passive (a stalled machine may still let C's turns run out) */
    if (who >= 2)
        atomic_store(&else_valid[who], !shl_queued() && shl_passive() == (uint32_t)(who - 1));
    uint64_t before = nl_test_self_gate_waits();
    nl_shfl_lock(&shl);
    atomic_store(&else_gate_waits[who], nl_test_self_gate_waits() - before);
    if (who == 0) {
        atomic_store(&b_holds, 1);
        while (!atomic_load(&b_may_go))
            sched_yield();
    }
    nl_shfl_unlock(&shl);
    return NULL;
}

/* One try; else_valid[] says whether D and E met the state above. */
static void elsewhere_once(void)
{
    atomic_store(&b_holds, 0);
    atomic_store(&b_may_go, 0);
    nl_shfl_lock(&shl);
    pthread_t t[4];
    /* B (node 0) finds the lock only held, nobody passive: it queues */
    pthread_create(&t[0], NULL, else_acquirer, (void *)(intptr_t)0);
    while (!shl_queued())
        sched_yield();
    /* C (node 1) finds it saturated: passive, its FIFO preferred once it heads it */
    pthread_create(&t[1], NULL, else_acquirer, (void *)(intptr_t)1);
    while (!nl_gate_elsewhere_slow(&shl, 0))
        sched_yield();
    /* B takes the lock from us: held, nobody queued, C passive */
    nl_shfl_unlock(&shl);
    while (!atomic_load(&b_holds))
        sched_yield();
    /* D (node 0): the lock is only held, but node 1 is preferred and waits */
    pthread_create(&t[2], NULL, else_acquirer, (void *)(intptr_t)2);
    while (shl_passive() < 2 && !shl_queued())
        sched_yield();
    /* E (node 1, the preferred node): queues in the lock */
    pthread_create(&t[3], NULL, else_acquirer, (void *)(intptr_t)3);
    while (!shl_queued() && shl_passive() < 3)
        sched_yield();
    atomic_store(&b_may_go, 1);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
}

/* The gate tests' start: virtual:2, the adaptive policy, an overloaded
 * process, this thread on node 0, and the gate's turns and stays made
 * longer than any test takes; gate_restore() puts them back. */
typedef struct {
    uint32_t force;
    uint64_t stay;
} gate_knobs_t;

static gate_knobs_t gate_held_open(void)
{
    char err[128];
    CHECK(nl_topology_set("virtual:2", err, sizeof err) == 0, "virtual:2: %s", err);
    CHECK(nl_wait_set_policy("adaptive", err, sizeof err) == 0, "adaptive: %s", err);
    force_load(1000);
    nl_thread_set_node(0);
    gate_knobs_t saved = { nl_gate_force_turns, nl_gate_stay_ns };
    nl_gate_force_turns = 10000;
    nl_gate_stay_ns = 60000000000ull;
    return saved;
}

static void gate_restore(gate_knobs_t saved)
{
    nl_gate_force_turns = saved.force;
    nl_gate_stay_ns = saved.stay;
    nl_thread_set_node(-1);
}

static void test_elsewhere(void)
{
    /* C stays at the gate, and node 1 preferred, while B holds the lock for
     * as long as the test takes on a loaded or emulated machine (C's turns
     * otherwise end after 4 ms, the preference after 100 ms) */
    gate_knobs_t saved = gate_held_open();
    /* D's check counts once D met its state, E's once E met its own
     * behind a D that waited passively */
    bool decided = false;
    for (int tries = 0; tries < 20 && !decided; tries++) {
        elsewhere_once();
        if (!atomic_load(&else_valid[2]))
            continue;
        if (atomic_load(&else_gate_waits[2]) == 0) {
            CHECK(0, "an arrival from the node not preferred queued in the lock (no passive wait)");
            decided = true;
        } else if (atomic_load(&else_valid[3])) {
            CHECK(atomic_load(&else_gate_waits[3]) == 0,
                  "an arrival from the preferred node waited passively (%llu)",
                  (unsigned long long)atomic_load(&else_gate_waits[3]));
            decided = true;
        }
    }
    CHECK(decided, "in 20 tries the preferred head left the gate before the arrivals came");
    CHECK(atomic_load(&nl_gate_waiters) == 0, "%u passive waiters left behind",
          atomic_load(&nl_gate_waiters));
    gate_restore(saved);
}

/* ---- fork: a child does not inherit the parent's passive waiters ----------- */
static void test_fork(void)
{
    char err[128];
    CHECK(nl_wait_set_policy("adaptive", err, sizeof err) == 0, "adaptive: %s", err);
    force_load(1000);
    atomic_store(&entered, 0);
    /* the passive waiter stays at the gate until we release the lock: past
     * its turns it would queue on the lock, and a child that forked while
     * it was linking in would wait for a link that never comes */
    uint32_t force = nl_gate_force_turns;
    nl_gate_force_turns = 10000;
    nl_mcs_acquire(&mcs);
    pthread_t t;
    pthread_create(&t, NULL, gate_acquirer, NULL);
    while (atomic_load(&nl_gate_waiters) == 0)
        sleep_ms(1);
    pid_t pid = fork();
    if (pid == 0) {
        /* the passive waiter is not here: its ticket must not hold back
         * this process's arrivals at the lock's bucket */
        int bad = nl_gate_crowded(&mcs) || atomic_load(&nl_gate_waiters) != 0;
        nl_mcs_release(&mcs);
        _exit(bad ? 1 : 0);
    }
    int st = -1;
    CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "the child saw the parent's passive waiter at the gate (status %d)", st);
    nl_mcs_release(&mcs);
    pthread_join(t, NULL);
    nl_gate_force_turns = force;
    CHECK(atomic_load(&entered), "the passive waiter never got in");
    force_load(0);
}

/* ---- budget: the CPUs a cgroup gives, read from files ---------------------- */
static char root[256];

static void put(const char *rel, const char *text)
{
    char path[512], cmd[600];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
    if (system(cmd) != 0)
        return;
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static uint32_t cgroup_cpus(const char *proc_cgroup)
{
    char proc[512], sys[512];
    put("proc-cgroup", proc_cgroup);
    snprintf(proc, sizeof proc, "%s/proc-cgroup", root);
    snprintf(sys, sizeof sys, "%s/sys", root);
    return nl_cgroup_cpus(proc, sys);
}

static void fresh_root(void)
{
    char cmd[300];
    if (root[0]) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
        if (system(cmd) != 0)
            return;
    }
    snprintf(root, sizeof root, "/tmp/nl-cgroup-XXXXXX");
    if (!mkdtemp(root))
        root[0] = 0;
}

static void *budget_thread(void *p)
{
    (void)p;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    CHECK(sched_setaffinity(0, sizeof one, &one) == 0, "bind to CPU 0");
    /* an affinity sample comes every 32 load samples */
    for (int i = 0; i < 64; i++) {
        atomic_store(&nl_load_next, 0);
        nl_load_sample();
    }
    return NULL;
}

static void test_budget(void)
{
    /* cgroup v2: a quota of 1.5 CPUs on a parent, none below, 8 CPUs in the cpuset */
    fresh_root();
    put("sys/cgroup.controllers", "cpuset cpu\n");
    put("sys/a/cpu.max", "150000 100000\n");
    put("sys/a/b/cpu.max", "max 100000\n");
    put("sys/a/b/cpuset.cpus.effective", "0-7\n");
    CHECK(cgroup_cpus("0::/a/b\n") == 2, "v2 quota 1.5 CPUs on the parent: %u", cgroup_cpus("0::/a/b\n"));
    put("sys/a/b/cpuset.cpus.effective", "3\n");
    CHECK(cgroup_cpus("0::/a/b\n") == 1, "v2 cpuset of one CPU: %u", cgroup_cpus("0::/a/b\n"));
    /* a container sees its own cgroup as the mount's root */
    fresh_root();
    put("sys/cgroup.controllers", "cpu\n");
    put("sys/cpu.max", "300000 100000\n");
    CHECK(cgroup_cpus("0::/kubepods/pod1/ctr\n") == 3, "v2 container root: %u",
          cgroup_cpus("0::/kubepods/pod1/ctr\n"));
    /* cgroup v1: quota in cpu,cpuacct, CPUs in cpuset; the smaller wins */
    fresh_root();
    put("sys/cpu,cpuacct/g/cpu.cfs_quota_us", "400000\n");
    put("sys/cpu,cpuacct/g/cpu.cfs_period_us", "100000\n");
    put("sys/cpuset/g/cpuset.effective_cpus", "0-1,4\n");
    const char *v1 = "12:cpuset:/g\n4:cpu,cpuacct:/g\n0::/\n";
    CHECK(cgroup_cpus(v1) == 3, "v1 quota 4, cpuset 3: %u", cgroup_cpus(v1));
    put("sys/cpuset/g/cpuset.effective_cpus", "0-15\n");
    CHECK(cgroup_cpus(v1) == 4, "v1 quota 4, cpuset 16: %u", cgroup_cpus(v1));
    put("sys/cpu,cpuacct/g/cpu.cfs_quota_us", "-1\n");
    CHECK(cgroup_cpus(v1) == 16, "v1 no quota, cpuset 16: %u", cgroup_cpus(v1));
    /* malformed or missing files limit nothing */
    put("sys/cpuset/g/cpuset.effective_cpus", "0-\n");
    CHECK(cgroup_cpus(v1) == 0, "malformed cpuset: %u", cgroup_cpus(v1));
    CHECK(cgroup_cpus("garbage\n") == 0, "no cgroup line: %u", cgroup_cpus("garbage\n"));
    fresh_root();
    CHECK(cgroup_cpus("0::/\n") == 0, "nothing mounted: %u", cgroup_cpus("0::/\n"));
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", root);

    /* the affinity mask of the sampling thread: bound to one CPU, one CPU */
    pthread_t t;
    pthread_create(&t, NULL, budget_thread, NULL);
    pthread_join(t, NULL);
    CHECK(atomic_load(&nl_budget_cpus) == 1, "budget bound to CPU 0: %u", atomic_load(&nl_budget_cpus));
}

/* ---- level: what the waiter decides from the evidence ---------------------- */
static void test_level(void)
{
    force_load(0);
    CHECK(nl_load_level(true) == NL_LOAD_FREE, "idle: level %d", nl_load_level(true));
    /* the process's threads outnumber its CPUs: one CPU, a spinner beside the holder */
    atomic_store(&nl_budget_cpus, 1);
    atomic_store(&nl_spinning, 1);
    CHECK(nl_load_level(false) == NL_LOAD_OWN, "1 CPU, 1 spinner: level %d", nl_load_level(false));
    /* two CPUs: the spinner has its own; passive waiters count for the gate only */
    atomic_store(&nl_budget_cpus, 2);
    CHECK(nl_load_level(false) == NL_LOAD_FREE, "2 CPUs, 1 spinner: level %d", nl_load_level(false));
    atomic_store(&nl_gate_waiters, 3);
    CHECK(nl_load_level(true) == NL_LOAD_OWN, "2 CPUs, 3 passive: level %d", nl_load_level(true));
    CHECK(nl_load_level(false) == NL_LOAD_FREE, "2 CPUs, 3 passive, spin level %d", nl_load_level(false));
    atomic_store(&nl_gate_waiters, 0);
    /* a queue whose waiters sleep: loaded for the gate (they would run if
     * granted), not for spinning */
    atomic_store(&nl_parked, 3);
    CHECK(nl_load_level(true) == NL_LOAD_OWN, "2 CPUs, 3 parked: level %d", nl_load_level(true));
    CHECK(nl_load_level(false) == NL_LOAD_FREE, "2 CPUs, 3 parked, spin level %d", nl_load_level(false));
    atomic_store(&nl_parked, 0);
    atomic_store(&nl_spinning, 0);
    /* the machine is busy with other processes */
    force_load(1000);
    CHECK(nl_load_level(false) == NL_LOAD_SHARED, "busy machine: level %d", nl_load_level(false));
    /* one task more than the online CPUs (below 16 CPUs) is already a
     * shared machine: two threads of ours and one busy program on two
     * CPUs; as many as the CPUs is not */
    uint32_t cpus = (uint32_t)nl_cpus_online();
    if (cpus < 16) {
        force_load(cpus + 1);
        CHECK(nl_load_level(false) == NL_LOAD_SHARED, "%u runnable on %u CPUs: level %d", cpus + 1, cpus,
              nl_load_level(false));
        force_load(cpus);
        CHECK(nl_load_level(false) == NL_LOAD_FREE, "%u runnable on %u CPUs: level %d", cpus, cpus,
              nl_load_level(false));
    }
    /* a waiter that lost its CPU lately */
    force_load(0);
    /* not pinned (a pinned flag could never clear, so it is not set), but
     * no sample comes before the check */
    atomic_store(&nl_load_next, UINT64_MAX - 1);
    nl_note_preempted();
    CHECK(nl_load_level(false) == NL_LOAD_SHARED, "preempted lately: level %d", nl_load_level(false));
    force_load(0);
}

/* ---- counted: only the adaptive policy counts its spinners ----------------- */
/* The count is read by the adaptive policy alone (nl_load_level), and only
 * its sampler turns the counting off: under the other policies counting
 * would cost every contended acquisition two atomics on one process-wide
 * line and tell nobody anything. */
static void test_counted(void)
{
    static const char *const policies[] = { "adaptive", "spin", "yield", "park" };
    char err[256];
    for (int i = 0; i < 4; i++) {
        CHECK(nl_wait_set_policy(policies[i], err, sizeof err) == 0, "%s: %s", policies[i], err);
        force_load(0);
        atomic_store(&nl_count_spinners, 1); /* as when threads outnumber the CPUs */
        nl_waiter_t w;
        nl_wait_begin(&w, NULL, NULL, false);
        uint32_t during = atomic_load(&nl_spinning);
        nl_wait_end(&w);
        uint32_t want = i == 0 ? 1 : 0;
        CHECK(during == want, "%s: %u waiters counted while one waits, want %u", policies[i], during, want);
        CHECK(atomic_load(&nl_spinning) == 0, "%s: %u counted after the wait", policies[i],
              atomic_load(&nl_spinning));
    }
    CHECK(nl_wait_set_policy("adaptive", err, sizeof err) == 0, "adaptive: %s", err);
    force_load(0);
}

/* ---- stats: contention counted from the slow path, no trylock first -------- */
/* mcs behind an ops table that counts the calls of its try_acquire */
static _Atomic int try_calls;
static const nl_lock_ops_t *mcs_ops;
static void counting_acquire(void *l) { mcs_ops->acquire(l); }
static int counting_try(void *l) { atomic_fetch_add(&try_calls, 1); return mcs_ops->try_acquire(l); }
static void counting_release(void *l) { mcs_ops->release(l); }

static nl_lock_t *slock;
static void *stats_acquirer(void *p)
{
    (void)p;
    nl_lock_acquire(slock);
    nl_lock_release(slock);
    return NULL;
}

static void test_stats(void)
{
    char err[128];
    CHECK(nl_wait_set_policy("adaptive", err, sizeof err) == 0, "adaptive");
    force_load(0);
    /* the handle with statistics acquires exactly as without: no trylock */
    mcs_ops = nl_lock_find("mcs");
    nl_lock_ops_t counting = *mcs_ops;
    counting.name = "counting-mcs";
    counting.acquire = counting_acquire;
    counting.try_acquire = counting_try;
    counting.release = counting_release;
    nl_attr_t attr = { .stats = true };
    nl_lock_t *c = nl_lock_create_ops(&counting, &attr);
    CHECK(c != NULL, "create counting-mcs");
    for (int i = 0; c && i < 100; i++) {
        nl_lock_acquire(c);
        nl_lock_release(c);
    }
    CHECK(atomic_load(&try_calls) == 0, "acquire with statistics called try_acquire %d times",
          atomic_load(&try_calls));
    nl_lock_destroy(c);

    /* contended = the lock's slow path ran (a foreign lock: taken at
     * arrival): never when alone; seen when a second thread arrives while
     * the lock is held (within 50 rounds); every registered lock */
    size_t nlocks = nl_lock_count();
    for (size_t i = 0; i < nlocks; i++) {
        const char *name = nl_lock_at(i)->name;
        slock = nl_lock_create(name, &attr);
        CHECK(slock != NULL, "create %s", name);
        if (!slock)
            continue;
        nl_lock_acquire(slock);
        nl_lock_release(slock);
        nl_stats_snapshot_t s;
        nl_lock_stats(slock, &s);
        CHECK(s.acquisitions == 1 && s.contended == 0, "%s alone: %llu acquisitions, %llu contended",
              name, (unsigned long long)s.acquisitions, (unsigned long long)s.contended);
        int rounds = 0;
        for (; rounds < 50 && s.contended == 0; rounds++) {
            nl_lock_acquire(slock);
            pthread_t t;
            pthread_create(&t, NULL, stats_acquirer, NULL);
            sleep_ms(5); /* the other thread probably finds the lock held */
            nl_lock_release(slock);
            pthread_join(t, NULL);
            nl_lock_stats(slock, &s);
        }
        CHECK(s.contended >= 1 && s.contended <= (uint64_t)rounds,
              "%s: %llu contended in %d two-thread rounds", name, (unsigned long long)s.contended, rounds);
        CHECK(s.acquisitions == 1 + 2 * (uint64_t)rounds, "%s: %llu acquisitions", name,
              (unsigned long long)s.acquisitions);
        nl_lock_destroy(slock);
    }
}

/* ---- received: the gate's node stays weigh the CPU time each thread
 * received while let in. While node 0's head waits for a held lock, node 1's
 * head takes the preference when node 0's threads received NL_GATE_LEAD_NS
 * more than it did, and not when they received as much ------------------ */
static nl_mcs_t rmcs;
static uint64_t r_vt[2];

static void *recv_acquirer(void *p)
{
    int who = (int)(intptr_t)p; /* its node, too */
    nl_thread_set_node(who);
    nl_gate_set_received(&rmcs, r_vt[who]);
    nl_mcs_acquire(&rmcs);
    nl_mcs_release(&rmcs);
    return NULL;
}

static uint32_t rmcs_passive(void) { return atomic_load(&nl_gate_passive[nl_gate_bucket(&rmcs)]); }

/* B (node 0) waits at the gate, its FIFO preferred; C (node 1) arrives. True
 * when C took the preference while B waited (`wait_ms` at most, 0: until it
 * does; the watchdog ends a test in which it never does). */
static bool recv_once(uint64_t vt_b, uint64_t vt_c, int wait_ms)
{
    r_vt[0] = vt_b;
    r_vt[1] = vt_c;
    nl_mcs_acquire(&rmcs);
    pthread_t t[2];
    /* C alone first, so that node 1 is preferred and the move to node 0
     * below starts a stay (the bucket's first preference has none) */
    pthread_create(&t[1], NULL, recv_acquirer, (void *)(intptr_t)1);
    while (nl_gate_preferred(&rmcs) != 1)
        sleep_ms(1);
    nl_mcs_release(&rmcs);
    pthread_join(t[1], NULL);
    nl_mcs_acquire(&rmcs);
    pthread_create(&t[0], NULL, recv_acquirer, (void *)(intptr_t)0);
    while (rmcs_passive() < 1 || nl_gate_preferred(&rmcs) != 0)
        sleep_ms(1);
    pthread_create(&t[1], NULL, recv_acquirer, (void *)(intptr_t)1);
    while (rmcs_passive() < 2)
        sleep_ms(1);
    for (int ms = 0; nl_gate_preferred(&rmcs) == 0 && (!wait_ms || ms < wait_ms); ms++)
        sleep_ms(1);
    bool took = nl_gate_preferred(&rmcs) == 1;
    nl_mcs_release(&rmcs);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    return took;
}

static void test_received(void)
{
    /* B stays at the gate, and the preference with node 0, for as long as the
     * test takes unless received time moves it (turns and stays otherwise end
     * after 4 ms and 100 ms) */
    gate_knobs_t saved = gate_held_open();
    /* as much: C's head looks every 2 ms; 20 of its looks leave node 0 preferred */
    CHECK(!recv_once(50000000ull, 50000000ull, 40), "node 1 took the preference from a node that received as much");
    /* node 0 received 50 ms more */
    CHECK(recv_once(100000000ull, 50000000ull, 0), "node 1 did not take the preference");
    CHECK(atomic_load(&nl_gate_waiters) == 0, "%u passive waiters left behind", atomic_load(&nl_gate_waiters));
    gate_restore(saved);
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "all";
    signal(SIGALRM, on_alarm);
    alarm(60);
    if (!strcmp(what, "--broken-nudge")) {
        broken_nudge = 1;
        alarm(10);
        test_nudge();
    } else {
        bool all = !strcmp(what, "all");
        if (all || !strcmp(what, "nudge"))
            test_nudge();
        if (all || !strcmp(what, "gate"))
            test_gate();
        if (all || !strcmp(what, "fifo"))
            test_fifo();
        if (all || !strcmp(what, "fork"))
            test_fork();
        if (all || !strcmp(what, "budget"))
            test_budget();
        if (all || !strcmp(what, "level"))
            test_level();
        if (all || !strcmp(what, "counted"))
            test_counted();
        if (all || !strcmp(what, "stats"))
            test_stats();
        if (all || !strcmp(what, "elsewhere"))
            test_elsewhere();
        if (all || !strcmp(what, "received"))
            test_received();
    }
    printf("test_wait %s: %d checks, %d failures\n", what, checks, failures);
    return failures ? 1 : 0;
}
