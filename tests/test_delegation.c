/*
 * Delegation harness for sanl and fc (include/numalock/delegation.h):
 *   once      every request runs exactly once and its caller gets its own
 *             result; server executions and in-place holders (plain
 *             acquire/release, one thread in four) exclude each other; sanl
 *             in forced delegation with a server that downgrades after every
 *             walk (T_s 1) and clients that give up waiting fast (T_w small),
 *             so hand-overs, take-overs and downgrades with pending requests
 *             are the common case; fc the same
 *   switch    the same while a controller flips sanl between in-place and
 *             delegation mode every few hundred microseconds, and in the
 *             adaptive mode with its own votes
 *   numa      serving-first and distance-first with threads on virtual nodes
 *             (remote clients queue, one per node, to become the server)
 *   cond      a critical section that waits on an nl_sanl_cond_t inside a
 *             delegated section does not stall the other requests
 *   slots     5,000 short-lived threads (more than NL_DELEG_MAX_SLOTS) each
 *             run a request: slots are recycled, no cap over the process life
 *   execute   nl_lock_execute on every registered lock (handle with and
 *             without statistics): each call returns its own function's
 *             result, and the sections exclude each other
 * Usage: test_delegation [once|switch|numa|cond|slots|execute|all] [--threads N] [--topology SPEC]
 *
 * Built a second time with NL_SANL_BROKEN_DROP (test_delegation_broken): the
 * algorithm of src/locks/sanl_impl.h compiled into the test with a server
 * that, when it downgrades, answers pending requests without running them.
 * `once` must fail on it (CTest WILL_FAIL).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "numalock/delegation.h"
#include "numalock/topology.h"

#include "nl_test_internal.h" /* with NL_SANL_BROKEN_DROP: src/locks/sanl_impl.h */
#ifdef NL_SANL_BROKEN_DROP
#define SANL_EXECUTE sanl_execute_impl
#else
#define SANL_EXECUTE nl_sanl_execute
#endif

static _Atomic int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "test_delegation: FAIL %s:%d: ", \
    __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

static int nthreads = 8;
static int nnodes = 1;

/* ---- once / switch / numa: the exactly-once harness ------------------------ */
enum { KIND_SANL, KIND_FC };
#define MAX_T 64
#define PER_T 4000

static int kind;
static nl_sanl_t sanl;
static nl_fc_t fc;
static volatile long counter;     /* protected by the lock, deliberately plain */
static volatile int owner;
static unsigned char ran[MAX_T][PER_T]; /* executions of each request (under the lock) */
static _Atomic int bad;
static _Atomic int stop_flipper;
static pthread_barrier_t barrier;

typedef struct { int tid; int i; } req_t;

static void *cs(void *p)
{
    req_t *r = p;
    if (owner)
        atomic_store(&bad, 1);
    owner = r->tid + 1;
    long c = counter;
    for (int k = 0; k < 100; k++) /* hold long enough for others to queue */
        __asm__ __volatile__("" ::: "memory");
    counter = c + 1;
    ran[r->tid][r->i]++;
    if (owner != r->tid + 1)
        atomic_store(&bad, 2);
    owner = 0;
    return (void *)(uintptr_t)(((uintptr_t)r->tid << 20) | (uintptr_t)r->i | 1ull << 40);
}

static void lk_acquire(void) { kind == KIND_SANL ? nl_sanl_acquire(&sanl) : nl_fc_acquire(&fc); }
static void lk_release(void) { kind == KIND_SANL ? nl_sanl_release(&sanl) : nl_fc_release(&fc); }

static void *worker(void *p)
{
    int tid = (int)(intptr_t)p;
    if (nnodes > 1)
        nl_thread_set_node(tid % nnodes);
    uint64_t rng = 0x9E3779B97F4A7C15ull * (uint64_t)(tid + 3);
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < PER_T; i++) {
        rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
        req_t r = { tid, i };
        if (tid % 4 == 3 && (rng & 1)) { /* an in-place holder */
            lk_acquire();
            cs(&r);
            lk_release();
            continue;
        }
        void *want = (void *)(uintptr_t)(((uintptr_t)tid << 20) | (uintptr_t)i | 1ull << 40);
        void *got = kind == KIND_SANL ? SANL_EXECUTE(&sanl, cs, &r) : nl_fc_execute(&fc, cs, &r);
        static _Atomic int shown;
        if (got != want && (atomic_store(&bad, 3), atomic_fetch_add(&shown, 1) < 5)) {
            fprintf(stderr, "test_delegation: thread %d request %d got %p, want %p\n", tid, i, got, want);
        }
        if ((rng >> 8) % 16 == 0) /* uneven arrival */
            for (int k = 0; k < (int)(rng >> 40) % 2000; k++)
                __asm__ __volatile__("" ::: "memory");
        if ((rng >> 20) % 64 == 0)
            sched_yield();
    }
    return NULL;
}

static void *flipper(void *p)
{
    (void)p;
    int m = NL_SANL_DELEGATE;
    struct timespec ts = { 0, 300000 };
    while (!atomic_load(&stop_flipper)) {
        m = m == NL_SANL_DELEGATE ? NL_SANL_INPLACE : NL_SANL_DELEGATE;
        __atomic_store_n(&sanl.cfg.mode, m, __ATOMIC_RELAXED);
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void run_once(const char *what, int k, const nl_sanl_config_t *cfg, int flip)
{
    kind = k;
    counter = 0;
    memset(ran, 0, sizeof ran);
    atomic_store(&bad, 0);
    if (k == KIND_SANL)
        CHECK(nl_sanl_init(&sanl, cfg) == 0, "nl_sanl_init");
    else
        CHECK(nl_fc_init(&fc) == 0, "nl_fc_init");
    pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
    pthread_t th[MAX_T], fl;
    atomic_store(&stop_flipper, 0);
    if (flip)
        pthread_create(&fl, NULL, flipper, NULL);
    for (int t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    if (flip) {
        atomic_store(&stop_flipper, 1);
        pthread_join(fl, NULL);
    }
    pthread_barrier_destroy(&barrier);
    long lost = 0, twice = 0;
    for (int t = 0; t < nthreads; t++)
        for (int i = 0; i < PER_T; i++) {
            lost += ran[t][i] == 0;
            twice += ran[t][i] > 1;
        }
    CHECK(!lost && !twice, "%s, %d threads: %ld requests never ran, %ld ran more than once", what, nthreads,
          lost, twice);
    CHECK(counter == (long)nthreads * PER_T, "%s: counter %ld, expected %ld", what, counter,
          (long)nthreads * PER_T);
    CHECK(atomic_load(&bad) == 0, "%s: %s", what,
          atomic_load(&bad) == 3 ? "a caller got another result than its own request's"
                                 : "mutual exclusion violated");
    if (k == KIND_SANL) {
        nl_sanl_stats_t st;
        nl_sanl_stats(&sanl, &st);
        printf("  %-34s served %llu own %llu in-place %llu terms %llu switches %llu takeovers %llu\n", what,
               (unsigned long long)st.served, (unsigned long long)st.own, (unsigned long long)st.inplace,
               (unsigned long long)st.terms, (unsigned long long)st.switches, (unsigned long long)st.takeovers);
        nl_sanl_destroy(&sanl);
    } else {
        nl_fc_stats_t st;
        nl_fc_stats(&fc, &st);
        printf("  %-34s served %llu own %llu sessions %llu\n", what, (unsigned long long)st.served,
               (unsigned long long)st.own, (unsigned long long)st.terms);
        nl_fc_destroy(&fc);
    }
}

static void test_once(void)
{
#ifdef NL_SANL_BROKEN_DROP
    /* the dropped request needs a downgrade with a request pending: repeat
     * until one happens (a correct lock never fails, so this cannot hide one) */
    for (int round = 0; round < 50 && !failures; round++) {
        nl_sanl_config_t b = { .mode = NL_SANL_DELEGATE, .t_s = 1, .t_w_ns = 1200, .ls_k = 1 };
        run_once("broken sanl delegate T_s=1", KIND_SANL, &b, 0);
    }
    return;
#endif
    nl_sanl_config_t c = { .mode = NL_SANL_DELEGATE, .t_s = 1, .t_w_ns = 1200, .ls_k = 1 };
    run_once("sanl delegate T_s=1", KIND_SANL, &c, 0);
    c.t_s = 100;
    c.t_w_ns = 0;
    run_once("sanl delegate T_s=100", KIND_SANL, &c, 0);
    run_once("fc", KIND_FC, NULL, 0);
}

static void test_switch(void)
{
    nl_sanl_config_t c = { .mode = NL_SANL_DELEGATE, .t_s = 2, .t_w_ns = 1200 };
    run_once("sanl flipped modes", KIND_SANL, &c, 1);
    nl_sanl_config_t a = { .mode = NL_SANL_ADAPTIVE, .boundary = 1 };
    run_once("sanl adaptive", KIND_SANL, &a, 0);
}

static void test_numa(void)
{
    nnodes = nl_topology_nodes();
    for (int pol = NL_SANL_SERVING_FIRST; pol <= NL_SANL_NO_NUMA; pol++) {
        /* theta_f 1/1024: every thread votes restrictive, remote clients wait */
        nl_sanl_config_t c = { .policy = pol, .mode = NL_SANL_DELEGATE, .t_s = 20, .t_w_ns = 2000,
                               .theta_f = 1, .boundary = 1 };
        char what[64];
        snprintf(what, sizeof what, "sanl policy %s, %d nodes",
                 pol == NL_SANL_SERVING_FIRST ? "serving-first" : pol == NL_SANL_DISTANCE_FIRST ? "distance-first"
                                                                                                : "none",
                 nnodes);
        run_once(what, KIND_SANL, &c, 0);
    }
    nnodes = 1;
}

/* ---- cond: a waiting critical section does not stall the server ---------- */
static nl_sanl_cond_t nonempty;
static volatile int items;
static volatile long consumed;
#define COND_ROUNDS 2000

static void *take(void *p)
{
    (void)p;
    while (items == 0)
        nl_sanl_cond_wait(&sanl, &nonempty);
    items--;
    consumed++;
    return NULL;
}

static void *put(void *p)
{
    (void)p;
    items++;
    nl_sanl_cond_signal(&nonempty);
    return NULL;
}

static void *consumer(void *p)
{
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < COND_ROUNDS; i++)
        SANL_EXECUTE(&sanl, take, p);
    return NULL;
}

static void *producer(void *p)
{
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < COND_ROUNDS; i++) {
        SANL_EXECUTE(&sanl, put, p);
        if (i % 16 == 0)
            sched_yield();
    }
    return NULL;
}

static void test_cond(void)
{
    int pairs = nthreads / 2 > 0 ? nthreads / 2 : 1;
    for (int mode = NL_SANL_ADAPTIVE; mode <= NL_SANL_DELEGATE; mode++) {
        nl_sanl_config_t c = { .mode = mode, .t_s = 50, .t_w_ns = 2000 };
        CHECK(nl_sanl_init(&sanl, &c) == 0, "init");
        items = 0;
        consumed = 0;
        pthread_barrier_init(&barrier, NULL, (unsigned)(2 * pairs));
        pthread_t th[2 * MAX_T];
        for (int i = 0; i < pairs; i++) {
            pthread_create(&th[2 * i], NULL, consumer, NULL);
            pthread_create(&th[2 * i + 1], NULL, producer, NULL);
        }
        for (int i = 0; i < 2 * pairs; i++)
            pthread_join(th[i], NULL);
        pthread_barrier_destroy(&barrier);
        CHECK(consumed == (long)pairs * COND_ROUNDS && items == 0, "cond mode %d: consumed %ld of %ld, %d left",
              mode, consumed, (long)pairs * COND_ROUNDS, items);
        nl_sanl_stats_t st;
        nl_sanl_stats(&sanl, &st);
        printf("  cond %-8s served %llu, sent back to wait on their own thread %llu\n",
               mode == NL_SANL_ADAPTIVE ? "adaptive" : mode == NL_SANL_INPLACE ? "in-place" : "delegate",
               (unsigned long long)st.served, (unsigned long long)st.handbacks);
        nl_sanl_destroy(&sanl);
    }
    printf("  cond: %d consumers waited inside delegated sections, %d items each\n", pairs, COND_ROUNDS);
}

/* ---- slots: recycled ids, no cap over the life of the process ------------ */
static void *inc(void *p)
{
    (*(long *)p)++;
    return p;
}

static void *one_request(void *p)
{
    long *n = p;
    CHECK(SANL_EXECUTE(&sanl, inc, n) == n, "slots: result");
    return NULL;
}

static void test_slots(void)
{
    nl_sanl_config_t c = { .mode = NL_SANL_DELEGATE };
    nl_sanl_init(&sanl, &c);
    long n = 0;
    int made = 0;
    for (int round = 0; round < 1250; round++) {
        pthread_t th[4];
        for (int i = 0; i < 4; i++)
            if (pthread_create(&th[i], NULL, one_request, &n) == 0)
                made++;
            else
                th[i] = 0;
        for (int i = 0; i < 4; i++)
            if (th[i])
                pthread_join(th[i], NULL);
    }
    CHECK(n == made && made == 5000, "slots: %ld requests ran of %d threads", n, made);
    int32_t hwm = atomic_load(&sanl.hwm);
    CHECK(hwm <= 16, "slots: slot high-water mark %d after 5000 threads, 4 at a time (ids not recycled)", hwm);
    printf("  slots: 5000 threads, 4 at a time, used slots 0..%d; footprint %zu bytes\n", hwm - 1,
           nl_sanl_footprint(&sanl));
    nl_sanl_destroy(&sanl);
}

/* ---- execute: nl_lock_execute on every registered lock -------------------- */
static nl_lock_t *ex_lock;
static volatile long ex_counter;
static volatile int ex_inside;
static _Atomic int ex_bad;

static void *ex_cs(void *p)
{
    if (ex_inside++)
        atomic_store(&ex_bad, 1);
    ex_counter++;
    ex_inside--;
    return p;
}

static void *ex_worker(void *p)
{
    (void)p;
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < 2000; i++) {
        int token;
        if (nl_lock_execute(ex_lock, ex_cs, &token) != &token)
            atomic_store(&ex_bad, 2);
    }
    return NULL;
}

static void test_execute(void)
{
    int n = nthreads < 8 ? nthreads : 8;
    for (size_t k = 0; k < nl_lock_count(); k++) {
        const nl_lock_ops_t *ops = nl_lock_at(k);
        for (int stats = 0; stats < 2; stats++) {
            nl_attr_t attr = { .stats = stats != 0 };
            ex_lock = nl_lock_create_ops(ops, &attr);
            CHECK(ex_lock, "execute: cannot create %s", ops->name);
            if (!ex_lock)
                continue;
            ex_counter = 0;
            atomic_store(&ex_bad, 0);
            pthread_barrier_init(&barrier, NULL, (unsigned)n);
            pthread_t th[8];
            for (int t = 0; t < n; t++)
                pthread_create(&th[t], NULL, ex_worker, NULL);
            for (int t = 0; t < n; t++)
                pthread_join(th[t], NULL);
            pthread_barrier_destroy(&barrier);
            CHECK(ex_counter == 2000L * n && !atomic_load(&ex_bad),
                  "execute on %s (stats %d): counter %ld of %ld, %s", ops->name, stats, ex_counter, 2000L * n,
                  atomic_load(&ex_bad) == 2 ? "a call got another result" :
                  atomic_load(&ex_bad) ? "sections overlapped" : "");
            if (stats) {
                nl_stats_snapshot_t st;
                nl_lock_stats(ex_lock, &st);
                CHECK(st.acquisitions >= 2000ull * (unsigned)n, "execute on %s: %llu acquisitions counted",
                      ops->name, (unsigned long long)st.acquisitions);
            }
            nl_lock_destroy(ex_lock);
        }
    }
    printf("  execute: %zu locks, %d threads, with and without statistics\n", nl_lock_count(), n);
}

int main(int argc, char **argv)
{
    const char *which = "all";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            nthreads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--topology") && i + 1 < argc) {
            char err[256];
            if (nl_topology_set(argv[++i], err, sizeof err)) {
                fprintf(stderr, "test_delegation: %s\n", err);
                return 2;
            }
        } else if (argv[i][0] != '-')
            which = argv[i];
        else {
            fprintf(stderr, "test_delegation: unknown option '%s': valid options are --threads, --topology\n",
                    argv[i]);
            return 2;
        }
    }
    if (nthreads < 1 || nthreads > MAX_T) {
        fprintf(stderr, "test_delegation: --threads must be 1..%d\n", MAX_T);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    alarm(240); /* a hang fails (SIGALRM) instead of waiting for the CTest timeout */
    int all = !strcmp(which, "all"), known = 0;
    if (all || !strcmp(which, "once")) { known = 1; test_once(); }
    if (all || !strcmp(which, "switch")) { known = 1; test_switch(); }
    if (all || !strcmp(which, "numa")) { known = 1; test_numa(); }
    if (all || !strcmp(which, "cond")) { known = 1; test_cond(); }
    if (all || !strcmp(which, "slots")) { known = 1; test_slots(); }
    if (all || !strcmp(which, "execute")) { known = 1; test_execute(); }
    if (!known) {
        fprintf(stderr, "test_delegation: unknown test '%s': valid choices are once, switch, numa, cond, slots, execute, all\n",
                which);
        return 2;
    }
    if (failures)
        fprintf(stderr, "test_delegation: %d failure(s)\n", failures);
    else
        printf("test_delegation: PASS %s threads=%d topology=%s\n", which, nthreads, nl_topology_current()->spec);
    return failures ? 1 : 0;
}
