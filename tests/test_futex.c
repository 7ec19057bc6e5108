/* Unit tests of the futex calls (src/wait/futex.h) on both of their paths,
 * the classic futex call and futex_wait/futex_wake with FUTEX2_NUMA (the
 * second where the kernel has it), and of the rule that no lock makes a
 * wake system call while nobody sleeps. No test asserts on time: a lost
 * wake-up hangs, and the watchdog (alarm) fails the test.
 *
 *   test_futex [calls|path|nowake|park|all]   exit 0 = pass
 *     calls   on each path: a wait whose value differs returns at once, a
 *             wake counts the sleepers it woke (0 with none), a sleeper on
 *             a plain and on a two-word futex wakes, the node half holds
 *             the waiter's node, timed waits end;
 *     path    NUMALOCK_FUTEX's values: a bad one gets one sentence;
 *     nowake  every lock of the registry but glibc's, runs under the spin
 *             and the adaptive policy on each path: in every run in which
 *             nobody parked (most locks must have some), no wake system
 *             call at all, and its statistics count no wake;
 *     park    every lock with waiters that park at once, on each path:
 *             mutual exclusion, progress, and most locks did park (the
 *             stress harness does the same through NUMALOCK_FUTEX; this runs
 *             where the environment cannot be set, as in make numa-test).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#define NL_TEST_FUTEX
#include "nl_test_internal.h"

static int failures, checks;
#define CHECK(cond, ...) do { checks++; if (!(cond)) { failures++; \
    fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); \
    fputc('\n', stderr); } } while (0)

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "FAIL: watchdog: a sleeper never woke up\n";
    if (write(2, msg, sizeof msg - 1) < 0) { /* nothing to do */ }
    _exit(1);
}

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* the paths this kernel has: "classic" always, "futex2" where it has it */
static int npaths(const char **paths)
{
    char err[256];
    int n = 0;
    paths[n++] = "classic";
    if (nl_futex_set_path("futex2", err, sizeof err) == 0)
        paths[n++] = "futex2";
    else
        printf("futex2: not on this kernel (%s), its runs skipped\n", err);
    nl_futex_set_path("auto", NULL, 0);
    return n;
}

/* ---- calls ------------------------------------------------------------------ */
/* a plain word and a two-word futex (its value, then its node half) */
static _Atomic uint32_t plain;
static _Alignas(8) _Atomic uint32_t pair[2];
static _Atomic int asleep_done;

static void *sleeper(void *arg)
{
    int node = arg != NULL;
    _Atomic uint32_t *w = node ? &pair[0] : &plain;
    if (node)
        nl_futex_node_claim(w);
    while (atomic_load(w) == 0) {
        if (node)
            nl_futex_wait_node(w, 0);
        else
            nl_futex_wait(w, 0);
    }
    atomic_store(&asleep_done, 1);
    return NULL;
}

/* A sleeper on the word is woken while the word still holds 0 (a wake
 * that finds it counts 1) and sleeps again; then the word changes and a
 * wake lets it go. */
static void check_sleeper(const char *path, int node)
{
    _Atomic uint32_t *w = node ? &pair[0] : &plain;
    atomic_store(w, 0);
    atomic_store(&pair[1], 0xffffffffu);
    atomic_store(&asleep_done, 0);
    pthread_t t;
    pthread_create(&t, NULL, sleeper, node ? (void *)1 : NULL);
    int woken = 0;
    for (int tries = 0; !woken && tries < 5000; tries++) { /* until it sleeps (a wake finds it) */
        sleep_ms(1);
        woken = node ? nl_futex_wake_node(w, 1) : nl_futex_wake(w, 1);
    }
    CHECK(woken == 1, "%s %s: a wake counted %d sleepers, 1 expected", path, node ? "two-word" : "plain", woken);
    atomic_store(w, 1);
    if (node)
        nl_futex_wake_node(w, 1);
    else
        nl_futex_wake(w, 1);
    pthread_join(t, NULL);
    CHECK(atomic_load(&asleep_done), "%s: the sleeper did not leave", path);
}

static void test_calls_on(const char *path)
{
    char err[256];
    CHECK(nl_futex_set_path(path, err, sizeof err) == 0, "%s: %s", path, err);
    const char *name = nl_futex_path_name();
    CHECK(!strncmp(name, path, strlen(path)), "path %s in use, %s asked for", name, path);
    printf("calls on path %s\n", name);
    atomic_store(&plain, 5);
    CHECK(nl_futex_wait(&plain, 4) == -1, "%s: a wait on a word that differs slept", path);
    CHECK(nl_futex_wake(&plain, 1) == 0, "%s: a wake without sleepers counted some", path);
    atomic_store(&pair[0], 5);
    /* on one CPU for the look (a migration would change the node) */
    cpu_set_t was, one;
    unsigned cpu = 0, node = 0;
    sched_getaffinity(0, sizeof was, &was);
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    sched_setaffinity(0, sizeof one, &one);
    nl_futex_node_claim(&pair[0]);
    CHECK(getcpu(&cpu, &node) == 0 && atomic_load(&pair[1]) == node,
          "%s: the node half holds %u, the caller's node is %u", path, atomic_load(&pair[1]), node);
    sched_setaffinity(0, sizeof was, &was);
    CHECK(nl_futex_wait_node(&pair[0], 4) == -1, "%s: a two-word wait on a word that differs slept", path);
    CHECK(nl_futex_wake_node(&pair[0], 1) == 0, "%s: a two-word wake without sleepers counted some", path);
    check_sleeper(path, 0);
    check_sleeper(path, 1);
    /* timed waits end (the word keeps its value) */
    atomic_store(&plain, 0);
    CHECK(nl_futex_wait_ns(&plain, 0, 1000000) == -1, "%s: a timed wait returned 0 without a wake", path);
    struct timespec abs;
    clockid_t clocks[2] = { CLOCK_MONOTONIC, CLOCK_REALTIME };
    for (int c = 0; c < 2; c++)
        for (int shared = 0; shared < 2; shared++) {
            clock_gettime(clocks[c], &abs);
            abs.tv_nsec += 1000000;
            if (abs.tv_nsec >= 1000000000) {
                abs.tv_sec++;
                abs.tv_nsec -= 1000000000;
            }
            int rc = nl_futex_wait_until(&plain, 0, &abs, clocks[c], shared);
            CHECK(rc == ETIMEDOUT, "%s: a wait until a time on clock %d (shared %d) gave %d, not ETIMEDOUT",
                  path, (int)clocks[c], shared, rc);
        }
    abs = (struct timespec){ -1, 0 };
    CHECK(nl_futex_wait_until(&plain, 0, &abs, CLOCK_MONOTONIC, 0) == ETIMEDOUT, "%s: a past deadline slept",
          path);
}

static void test_calls(void)
{
    const char *paths[2];
    int n = npaths(paths);
    for (int i = 0; i < n; i++)
        test_calls_on(paths[i]);
    nl_futex_set_path("auto", NULL, 0);
}

/* ---- path ------------------------------------------------------------------- */
static void test_path(void)
{
    char err[256] = "";
    CHECK(nl_futex_set_path("fast", err, sizeof err) == EINVAL, "'fast' accepted");
    CHECK(strstr(err, "'fast'") && strstr(err, "auto, classic, futex2"), "sentence: %s", err);
    CHECK(nl_futex_set_path("classic", err, sizeof err) == 0 && !strcmp(nl_futex_path_name(), "classic"),
          "classic: %s", nl_futex_path_name());
    CHECK(nl_futex_set_path("auto", err, sizeof err) == 0, "auto: %s", err);
    printf("auto chooses %s here\n", nl_futex_path_name());
}

/* ---- nowake ----------------------------------------------------------------- */
#ifdef __SANITIZE_THREAD__
#define NOWAKE_OPS 1000 /* TSan's threads are slow: fewer */
#else
#define NOWAKE_OPS 5000
#endif
static nl_lock_t *nw_lock;
static const nl_lock_ops_t *nw_ops;
static _Atomic uint64_t nw_syscalls;
static pthread_barrier_t nw_start;
static volatile uint64_t nw_section;

static void *nw_thread(void *arg)
{
    (void)arg;
    uint64_t before = nl_futex_thread_wakes();
    pthread_barrier_wait(&nw_start);
    for (int i = 0; i < NOWAKE_OPS; i++) {
        if ((nw_ops->props & NL_PROP_RW) && (i & 3) == 3) {
            nl_lock_read_acquire(nw_lock);
            nl_lock_read_release(nw_lock);
        } else {
            nl_lock_acquire(nw_lock);
            for (int k = 0; k < 50; k++) /* a section long enough for the other thread to wait */
                nw_section = nw_section * 3 + 1;
            nl_lock_release(nw_lock);
        }
    }
    atomic_fetch_add(&nw_syscalls, nl_futex_thread_wakes() - before);
    return NULL;
}

/* One lock, `threads` threads: its statistics and the wake system calls
 * its threads made. */
static void nw_run(const nl_lock_ops_t *ops, int threads, nl_stats_snapshot_t *st, uint64_t *syscalls)
{
    nl_attr_t attr = { .stats = true };
    nw_ops = ops;
    nw_lock = nl_lock_create_ops(ops, &attr);
    CHECK(nw_lock != NULL, "cannot create %s", ops->name);
    if (!nw_lock)
        return;
    atomic_store(&nw_syscalls, 0);
    uint64_t before = nl_futex_thread_wakes();
    pthread_t t[16];
    pthread_barrier_init(&nw_start, NULL, (unsigned)threads);
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, nw_thread, NULL);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&nw_start);
    nl_lock_stats(nw_lock, st);
    nl_lock_destroy(nw_lock);
    *syscalls = atomic_load(&nw_syscalls) + nl_futex_thread_wakes() - before;
}

/* Every run of a lock in which nobody parked nor waited at the gate: no
 * wake system call, no wake counted. Most locks must have such runs (under
 * the spin policy waiters park only where a lock sleeps by design, as
 * futex-rwlock's writers and shfl-block's waiters far from the head may). */
static void test_nowake(void)
{
    const char *paths[2], *policies[2] = { "spin", "adaptive" };
    int n = npaths(paths);
    char err[128];
    for (int p = 0; p < n; p++) {
        CHECK(nl_futex_set_path(paths[p], err, sizeof err) == 0, "%s", err);
        int locks = 0, quiet = 0, runs = 0, untried = 0;
        char failed[512] = "";
        uint64_t contended = 0, wakes = 0;
        for (size_t i = 0; i < nl_lock_count(); i++) {
            const nl_lock_ops_t *ops = nl_lock_at(i);
            if (ops->props & NL_PROP_FOREIGN)
                continue; /* glibc's mutex: its own waiting */
            int mine = 0;
            for (int k = 0; k < 4; k++, runs++) {
                CHECK(nl_wait_set_policy(policies[k % 2], err, sizeof err) == 0, "%s", err);
                nl_stats_snapshot_t st;
                uint64_t sys = 0;
                nw_run(ops, 2, &st, &sys);
                if (st.parks || st.gate_waits)
                    continue; /* somebody slept: a wake may be due */
                mine++;
                contended += st.contended;
                wakes += sys + st.wakes;
                if (sys || st.wakes || st.woken)
                    snprintf(failed + strlen(failed), sizeof failed - strlen(failed), " %s(%s: %llu calls, %llu wakes)",
                             ops->name, policies[k % 2], (unsigned long long)sys, (unsigned long long)st.wakes);
                CHECK(sys == 0 && st.wakes == 0 && st.woken == 0,
                      "%s (%s, path %s): nobody slept, yet %llu wake system calls, %llu counted wakes, "
                      "%llu woken",
                      ops->name, policies[k % 2], paths[p], (unsigned long long)sys, (unsigned long long)st.wakes,
                      (unsigned long long)st.woken);
            }
            if (!mine) /* a lock whose waiters park by design, on a busy machine */
                printf("nowake: %s: every run had a sleeper (not tried)\n", ops->name);
            quiet += mine;
            untried += !mine;
            locks++;
        }
        printf("nowake, path %s: %d locks, 2 threads x %d operations, spin and adaptive policies: %d of %d runs "
               "without a sleeper, %llu contended acquisitions and %llu wakes in them%s%s\n",
               nl_futex_path_name(), locks, NOWAKE_OPS, quiet, runs, (unsigned long long)contended,
               (unsigned long long)wakes, failed[0] ? ":" : "", failed);
        CHECK(untried * 2 < locks, "%d of %d locks had a sleeper in every run: the rule was hardly tried", untried,
              locks);
    }
    nl_wait_set_policy("adaptive", NULL, 0);
    nl_futex_set_path("auto", NULL, 0);
}

/* ---- park ------------------------------------------------------------------- */
/* Every lock with waiters that park at once (park:0:0), on each path: the
 * critical sections exclude each other (a plain counter), every thread
 * finishes (the watchdog), and the locks that can park did. */
#define PARK_OPS 2000
static volatile long pk_counter;
static _Atomic int pk_inside;

static void *pk_thread(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&nw_start);
    for (int i = 0; i < PARK_OPS; i++) {
        nl_lock_acquire(nw_lock);
        if (atomic_fetch_add(&pk_inside, 1) != 0)
            fprintf(stderr, "FAIL: %s: two threads inside\n", nw_ops->name), _exit(1);
        long c = pk_counter;
        sched_yield(); /* a section others wait through */
        pk_counter = c + 1;
        atomic_fetch_sub(&pk_inside, 1);
        nl_lock_release(nw_lock);
    }
    return NULL;
}

static void test_park(void)
{
    const char *paths[2];
    int n = npaths(paths);
    char err[128];
    CHECK(nl_wait_set_policy("park:0:0", err, sizeof err) == 0, "%s", err);
    for (int p = 0; p < n; p++) {
        CHECK(nl_futex_set_path(paths[p], err, sizeof err) == 0, "%s", err);
        uint64_t parks = 0, wakes = 0;
        int parked = 0, locks = 0;
        for (size_t i = 0; i < nl_lock_count(); i++) {
            const nl_lock_ops_t *ops = nl_lock_at(i);
            if (ops->props & NL_PROP_FOREIGN)
                continue;
            nl_attr_t attr = { .stats = true };
            nw_ops = ops;
            nw_lock = nl_lock_create_ops(ops, &attr);
            pk_counter = 0;
            pthread_t t[4];
            pthread_barrier_init(&nw_start, NULL, 4);
            for (int k = 0; k < 4; k++)
                pthread_create(&t[k], NULL, pk_thread, NULL);
            for (int k = 0; k < 4; k++)
                pthread_join(t[k], NULL);
            pthread_barrier_destroy(&nw_start);
            nl_stats_snapshot_t st;
            nl_lock_stats(nw_lock, &st);
            nl_lock_destroy(nw_lock);
            CHECK(pk_counter == 4 * PARK_OPS, "%s: %ld sections counted, %d expected", ops->name, pk_counter,
                  4 * PARK_OPS);
            parks += st.parks;
            wakes += st.wakes;
            parked += st.parks > 0;
            locks++;
        }
        CHECK(parked * 2 > locks, "path %s: only %d of %d locks parked", paths[p], parked, locks);
        printf("park, path %s: %d locks, 4 threads x %d sections: %d locks parked, %llu parks, %llu wakes\n",
               nl_futex_path_name(), locks, PARK_OPS, parked, (unsigned long long)parks, (unsigned long long)wakes);
    }
    nl_wait_set_policy("adaptive", NULL, 0);
    nl_futex_set_path("auto", NULL, 0);
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "all";
    int all = !strcmp(what, "all");
    if (!all && strcmp(what, "calls") && strcmp(what, "path") && strcmp(what, "nowake") && strcmp(what, "park")) {
        fprintf(stderr, "test_futex: unknown test '%s': valid choices are calls, path, nowake, park, all\n", what);
        return 2;
    }
    signal(SIGALRM, on_alarm);
    /* one watchdog a part, 60 s each (times NL_STRESS_WATCHDOG_SCALE where
     * the machine is slower, as make test-arm's emulator): one for the whole
     * run took the time of the parts together for a hang, and under the
     * emulator beside other tests the parts together went past it */
    const char *sc = getenv("NL_STRESS_WATCHDOG_SCALE");
    unsigned dog = 60u * (sc && atoi(sc) > 0 ? (unsigned)atoi(sc) : 1u);
    alarm(dog);
    if (all || !strcmp(what, "path"))
        test_path();
    alarm(dog);
    if (all || !strcmp(what, "calls"))
        test_calls();
    alarm(dog);
    if (all || !strcmp(what, "nowake"))
        test_nowake();
    alarm(dog);
    if (all || !strcmp(what, "park"))
        test_park();
    printf("%d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
