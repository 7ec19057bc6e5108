/*
 * Tests of ShflLock (src/locks/shfl.c, include/numalock/shfl.h) beyond what
 * the shared stress harness covers through the ops table:
 *   api      nl_shfl_* and nl_shfl_block_*: static initialiser, 4 bytes,
 *            trylock fails while held and succeeds when free, unlock by
 *            another thread, a free lock with a stale steal filter
 *            and nobody queued is not refused, mutual exclusion on the public API with
 *            threads of two virtual nodes, many short-lived threads (slot
 *            recycling reuses the per-slot node blocks)
 *   shuffle  one shuffle pass over hand-built queues: the waiters of the
 *            shuffler's node move forward in order, the others keep their
 *            order, the tail (maybe being linked) is never moved, and a
 *            batch past the fairness rule's time moves nobody
 *   stats    queued waiters shuffle under contention on virtual:2, and the
 *            shuffles and moved waiters reach the lock's statistics
 *   broken   a shuffle pass is checked against a wrong expected order: must
 *            fail (CTest WILL_FAIL), so the shuffle check can fail
 * Usage: test_shfl [api|shuffle|stats|broken|all]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "numalock/shfl.h"
#include "numalock/cna.h"
#include "numalock/topology.h"
#define NL_TEST_WAIT
#include "nl_test_internal.h"

/* the test hook of src/locks/shfl_impl.h (a hidden symbol of the static library) */
unsigned nl_shfl_test_shuffle(const int *numa, unsigned n, uint64_t since_ns, unsigned *order);

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "test_shfl: FAIL %s:%d: ", \
    __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

/* ---- api ------------------------------------------------------------------ */
static nl_shfl_t slock = NL_SHFL_INIT;
static int blocking;
static volatile long count;
static volatile int inside;
static _Atomic int bad;

static void s_lock(nl_shfl_t *l) { blocking ? nl_shfl_block_lock(l) : nl_shfl_lock(l); }
static int s_try(nl_shfl_t *l) { return blocking ? nl_shfl_block_trylock(l) : nl_shfl_trylock(l); }
static void s_unlock(nl_shfl_t *l) { blocking ? nl_shfl_block_unlock(l) : nl_shfl_unlock(l); }

static void *worker(void *p)
{
    long n = (long)(intptr_t)p;
    for (long i = 0; i < n; i++) {
        if ((i & 7) == 0) {
            if (s_try(&slock) != 0)
                s_lock(&slock);
        } else {
            s_lock(&slock);
        }
        if (inside++)
            atomic_store(&bad, 1);
        long c = count;
        if ((i & 63) == 0)
            sched_yield();
        count = c + 1;
        inside--;
        s_unlock(&slock);
    }
    return NULL;
}

static void *try_other(void *p)
{
    return (void *)(intptr_t)s_try((nl_shfl_t *)p);
}

/* a thread of node 1 trying a lock */
static void *try_on_node1(void *p)
{
    nl_thread_set_node(1);
    return (void *)(intptr_t)s_try((nl_shfl_t *)p);
}

static void *unlock_other(void *p)
{
    s_unlock((nl_shfl_t *)p);
    return NULL;
}

static void *short_lived(void *p)
{
    (void)p;
    for (int i = 0; i < 50; i++) {
        s_lock(&slock);
        count++;
        s_unlock(&slock);
    }
    return NULL;
}

static void test_api(void)
{
    CHECK(sizeof(nl_shfl_t) == 4, "nl_shfl_t is %zu bytes", sizeof(nl_shfl_t));
    static const char zero[4];
    for (blocking = 0; blocking < 2; blocking++) {
        const char *name = blocking ? "shfl-block" : "shfl";
        nl_shfl_t l = NL_SHFL_INIT;
        CHECK(!memcmp(&l, zero, 4), "%s: the initialiser is all-zero", name);
        CHECK(!nl_shfl_is_locked(&l), "%s: fresh lock reads as locked", name);
        CHECK(s_try(&l) == 0, "%s: trylock of a free lock failed", name);
        CHECK(nl_shfl_is_locked(&l), "%s: held lock reads as free", name);
        pthread_t t;
        void *rc;
        pthread_create(&t, NULL, try_other, &l);
        pthread_join(t, &rc);
        CHECK((intptr_t)rc == EBUSY, "%s: trylock of a held lock gave %d", name, (int)(intptr_t)rc);
        /* released by another thread than the holder */
        pthread_create(&t, NULL, unlock_other, &l);
        pthread_join(t, NULL);
        CHECK(!nl_shfl_is_locked(&l), "%s: unlock by another thread left it locked", name);
        pthread_create(&t, NULL, try_other, &l);
        pthread_join(t, &rc);
        CHECK((intptr_t)rc == 0, "%s: trylock after a foreign unlock failed", name);
        s_unlock(&l);
        CHECK(!memcmp(&l, zero, 4), "%s: a released, uncontended lock is all-zero again", name);

        /* a free lock whose steal filter still names node 0 (the last
         * slow-path taker's) while nobody is queued: the filter protects
         * only a waiting queue head, so a thread of node 1 that only ever
         * trylocks gets it (it was refused forever: a hang under the
         * preload with trylock loops) */
        nl_shfl_t stale = { (1u << 8) };
        pthread_create(&t, NULL, try_on_node1, &stale);
        pthread_join(t, &rc);
        CHECK((intptr_t)rc == 0, "%s: trylock of a free lock with a stale filter gave %d", name,
              (int)(intptr_t)rc);
        CHECK(nl_shfl_is_locked(&stale), "%s: stale-filter trylock did not take the lock", name);

        /* mutual exclusion on the public API, 6 threads on 2 virtual nodes */
        enum { T = 6, N = 20000 };
        pthread_t th[T];
        count = 0;
        for (int i = 0; i < T; i++)
            pthread_create(&th[i], NULL, worker, (void *)(intptr_t)N);
        for (int i = 0; i < T; i++)
            pthread_join(th[i], NULL);
        CHECK(!atomic_load(&bad), "%s: two threads inside", name);
        CHECK(count == (long)T * N, "%s: count %ld, expected %ld", name, count, (long)T * N);

        /* many short-lived threads: recycled slots reuse their node blocks */
        count = 0;
        for (int round = 0; round < 20; round++) {
            pthread_t st[4];
            for (int i = 0; i < 4; i++)
                pthread_create(&st[i], NULL, short_lived, NULL);
            for (int i = 0; i < 4; i++)
                pthread_join(st[i], NULL);
        }
        CHECK(count == 20 * 4 * 50, "%s: short-lived threads: count %ld", name, count);
        CHECK(!nl_shfl_is_locked(&slock), "%s: lock left held", name);
    }
}

/* ---- shuffle -------------------------------------------------------------- */
/* one pass over the queue numa[0..n) (numa[0]: the shuffler, head);
 * checks the order and the moved count */
static void shuffle_case(const char *what, const int *numa, unsigned n, uint64_t since_ns,
                         const unsigned *want, unsigned want_moved)
{
    unsigned order[16];
    unsigned moved = nl_shfl_test_shuffle(numa, n, since_ns, order);
    char got[128] = "", exp[128] = "";
    for (unsigned i = 0; i < n; i++) {
        snprintf(got + strlen(got), sizeof got - strlen(got), " %u", order[i]);
        snprintf(exp + strlen(exp), sizeof exp - strlen(exp), " %u", want[i]);
    }
    CHECK(!strcmp(got, exp), "shuffle %s: queue order%s, expected%s", what, got, exp);
    CHECK(moved == want_moved, "shuffle %s: %u moved, expected %u", what, moved, want_moved);
}

static void test_shuffle(void)
{
    /* alternating nodes: 2 and 4 move behind the shuffler, 5 is the tail */
    shuffle_case("alternating", (int[]){ 0, 1, 0, 1, 0, 1 }, 6, 0, (unsigned[]){ 0, 2, 4, 1, 3, 5 }, 2);
    /* a group already behind the shuffler joins without moving */
    shuffle_case("grouped", (int[]){ 0, 0, 0, 1, 1, 0, 1 }, 7, 0, (unsigned[]){ 0, 1, 2, 5, 3, 4, 6 }, 1);
    /* the tail is never moved (its successor may be linking itself) */
    shuffle_case("tail", (int[]){ 0, 1, 1, 0 }, 4, 0, (unsigned[]){ 0, 1, 2, 3 }, 0);
    /* nobody of the shuffler's node: unchanged */
    shuffle_case("none", (int[]){ 2, 1, 0, 1, 3 }, 5, 0, (unsigned[]){ 0, 1, 2, 3, 4 }, 0);
    /* order among the moved waiters and among the skipped ones is kept */
    shuffle_case("order", (int[]){ 1, 0, 2, 1, 0, 1, 2, 1, 0 }, 9, 0,
                 (unsigned[]){ 0, 3, 5, 7, 1, 2, 4, 6, 8 }, 3);
    /* the batch started 10 s ago: past the fairness rule's time, nobody moves */
    shuffle_case("expired", (int[]){ 0, 1, 0, 1, 0, 1 }, 6, 10000000000ull, (unsigned[]){ 0, 1, 2, 3, 4, 5 }, 0);
}

/* the shuffle check itself must be able to fail */
static void test_broken(void)
{
    shuffle_case("broken (expects FIFO order)", (int[]){ 0, 1, 0, 1, 0, 1 }, 6, 0,
                 (unsigned[]){ 0, 1, 2, 3, 4, 5 }, 0);
}

/* ---- stats ---------------------------------------------------------------- */
static nl_lock_t *hl;
static _Atomic int go;

static void *stats_worker(void *p)
{
    long n = (long)(intptr_t)p;
    while (!atomic_load(&go))
        sched_yield();
    for (long i = 0; i < n; i++) {
        nl_lock_acquire(hl);
        /* a critical section that sleeps: every other thread queues (on
         * 2 cores a short one is mostly run by one thread per time slice) */
        struct timespec ts = { 0, 20000 };
        nanosleep(&ts, NULL);
        count++;
        nl_lock_release(hl);
    }
    return NULL;
}

static void test_stats(void)
{
    char err[256];
    if (nl_topology_set("virtual:2", err, sizeof err)) {
        CHECK(0, "virtual:2: %s", err);
        return;
    }
    /* A shuffle needs queued waiters. Under the default adaptive policy on
     * this over-subscribed machine the gate keeps arrivals out of the queue,
     * so the adaptive run sees the evidence of a machine with a CPU per
     * thread (what the 16-core machines have), and the fixed park policy
     * runs too. */
    char saved[64];
    snprintf(saved, sizeof saved, "%s", nl_wait_policy_name());
    for (int run = 0; run < 4; run++) {
        const char *name = run & 1 ? "shfl-block" : "shfl";
        const char *policy = run < 2 ? "adaptive" : "park";
        if (nl_wait_set_policy(policy, err, sizeof err)) {
            CHECK(0, "%s policy: %s", policy, err);
            return;
        }
        if (run < 2) { /* pinned: no re-sampling, a CPU for everyone */
            atomic_store(&nl_load_next, UINT64_MAX);
            atomic_store(&nl_load_runnable, 0);
            atomic_store(&nl_budget_cpus, 64);
            atomic_store(&nl_count_spinners, 0);
            atomic_store(&nl_preempted, 0);
        }
        /* a shuffle needs two waiters of different nodes queued behind a
         * third: a round can miss it, five in a row do not */
        for (int round = 0; round < 5; round++) {
            nl_attr_t attr = { .stats = true };
            hl = nl_lock_create(name, &attr);
            CHECK(hl != NULL, "%s: not registered (%s)", name, strerror(errno));
            if (!hl)
                break;
            enum { T = 8, N = 300 };
            pthread_t th[T];
            count = 0;
            atomic_store(&go, 0);
            for (int i = 0; i < T; i++)
                pthread_create(&th[i], NULL, stats_worker, (void *)(intptr_t)N);
            atomic_store(&go, 1);
            for (int i = 0; i < T; i++)
                pthread_join(th[i], NULL);
            nl_stats_snapshot_t s;
            CHECK(nl_lock_stats(hl, &s) == 0, "%s: no statistics", name);
            CHECK(count == (long)T * N, "%s: count %ld", name, count);
            printf("test_shfl: %s, %s, 8 threads, virtual:2: %llu acquisitions, %llu contended, %llu hand-overs "
                   "(%llu remote), %llu shuffles moved %llu waiters\n",
                   name, policy, (unsigned long long)s.acquisitions, (unsigned long long)s.contended,
                   (unsigned long long)s.handovers, (unsigned long long)s.remote_handovers,
                   (unsigned long long)s.extra[0], (unsigned long long)s.extra[1]);
            CHECK(s.acquisitions == (uint64_t)T * N, "%s: %llu acquisitions counted", name,
                  (unsigned long long)s.acquisitions);
            const nl_lock_ops_t *ops = nl_lock_find(name);
            CHECK(ops && ops->extra_names[0] && !strcmp(ops->extra_names[0], "shuffles") &&
                      ops->extra_names[1] && !strcmp(ops->extra_names[1], "moved_waiters"),
                  "%s: extra counters not named shuffles, moved_waiters", name);
            CHECK(s.extra[1] >= s.extra[0], "%s: %llu moved waiters < %llu shuffles", name,
                  (unsigned long long)s.extra[1], (unsigned long long)s.extra[0]);
            nl_lock_destroy(hl);
            if (s.extra[0] > 0)
                break;
            CHECK(round < 4, "%s, %s: no shuffle counted in 5 rounds", name, policy);
        }
    }
    nl_wait_set_policy(saved, NULL, 0);
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "all";
    int all = !strcmp(what, "all");
    int known = all;
    char err[256];
    if (nl_topology_set("virtual:2", err, sizeof err)) {
        fprintf(stderr, "test_shfl: %s\n", err);
        return 2;
    }
    if (all || !strcmp(what, "api")) { known = 1; test_api(); }
    if (all || !strcmp(what, "shuffle")) { known = 1; test_shuffle(); }
    if (all || !strcmp(what, "stats")) { known = 1; test_stats(); }
    if (!strcmp(what, "broken")) { known = 1; test_broken(); }
    if (!known) {
        fprintf(stderr, "test_shfl: unknown test '%s': valid choices are api, shuffle, stats, broken, all\n", what);
        return 2;
    }
    if (failures) {
        fprintf(stderr, "test_shfl: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_shfl: %s: ok\n", what);
    return 0;
}
