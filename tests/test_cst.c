/*
 * CST lock tests beyond the shared stress harness.
 *
 *   test_cst share LOCK    N readers are inside the read lock at the same time
 *                          (fails unless more than one reader shares it), and a
 *                          writer cannot enter meanwhile
 *   test_cst writer LOCK   a writer is alone: readers and writers wait for it
 *   test_cst mutex         cst-mutex: zero-filled storage works, snodes are
 *                          allocated per node on first use only (footprint),
 *                          over-subscribed parking makes progress
 *   test_cst migrate       cst-rwsem: readers leave from another node than the one
 *                          they entered on (counts go negative per node); writers
 *                          still exclude them and still get in
 *   test_cst revoke        cst-mutex: a lock used from one node keeps its global
 *                          lock idle; threads of other nodes arriving at random
 *                          moments (fresh lock each round) must still get in
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
#include <unistd.h>
#include "numalock/cst.h"
#include "numalock/numalock.h"
#include "numalock/topology.h"

static int failures;
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "test_cst: FAIL %s:%d: ", __FILE__, __LINE__);                         \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

/* ---- readers share ------------------------------------------------------- */
enum { NREADERS = 4 };
static nl_lock_t *lk;
static _Atomic int inside, max_inside, entered, writer_in, release_readers;

static void *reader_share(void *p)
{
    (void)p;
    nl_lock_read_acquire(lk);
    int r = atomic_fetch_add(&inside, 1) + 1;
    int m = atomic_load(&max_inside);
    while (r > m && !atomic_compare_exchange_weak(&max_inside, &m, r))
        ;
    /* stay inside until every reader is inside (or 10 s passed) */
    double t0 = now_s();
    while (atomic_load(&inside) < NREADERS && now_s() - t0 < 10)
        sleep_ms(1);
    atomic_fetch_add(&entered, 1);
    /* keep holding until the main thread has tried to write */
    while (!atomic_load(&release_readers) && now_s() - t0 < 10)
        sleep_ms(1);
    atomic_fetch_sub(&inside, 1);
    nl_lock_read_release(lk);
    return NULL;
}

static void *try_writer(void *p)
{
    int *rc = p;
    *rc = nl_lock_try(lk);
    if (*rc == 0)
        nl_lock_release(lk);
    return NULL;
}

static int test_share(const char *name)
{
    lk = nl_lock_create(name, NULL);
    if (!lk) {
        fprintf(stderr, "test_cst: unknown or unusable lock '%s'\n", name);
        return 2;
    }
    CHECK(nl_lock_ops(lk)->props & NL_PROP_RW, "%s is not a read-write lock", name);
    pthread_t th[NREADERS];
    for (int i = 0; i < NREADERS; i++)
        pthread_create(&th[i], NULL, reader_share, NULL);
    double t0 = now_s();
    while (atomic_load(&inside) < NREADERS && now_s() - t0 < 10)
        sleep_ms(1);
    int wrc = -1;
    if (atomic_load(&inside) == NREADERS) { /* all readers inside: a writer must not get in */
        pthread_t w;
        pthread_create(&w, NULL, try_writer, &wrc);
        pthread_join(w, NULL);
    }
    CHECK(wrc == EBUSY, "%s: write trylock returned %d while readers were inside (-1: not tried)",
          name, wrc);
    atomic_store(&release_readers, 1);
    for (int i = 0; i < NREADERS; i++)
        pthread_join(th[i], NULL);
    int m = atomic_load(&max_inside);
    CHECK(m > 1, "%s: readers never shared the lock (max_readers=%d)", name, m);
    CHECK(m == NREADERS, "%s: only %d of %d readers were inside at once", name, m, NREADERS);
    nl_lock_destroy(lk);
    printf("test_cst: share lock=%s max_readers=%d writer_try_while_reading=%s\n", name, m,
           wrc == EBUSY ? "EBUSY" : "?");
    return failures ? 1 : 0;
}

/* ---- writer alone -------------------------------------------------------- */
static void *reader_blocked(void *p)
{
    (void)p;
    nl_lock_read_acquire(lk);
    if (atomic_load(&writer_in))
        atomic_store(&entered, -1000); /* reader inside together with the writer */
    atomic_fetch_add(&entered, 1);
    nl_lock_read_release(lk);
    return NULL;
}

static void *writer_blocked(void *p)
{
    (void)p;
    nl_lock_acquire(lk);
    if (atomic_load(&writer_in))
        atomic_store(&entered, -1000);
    atomic_fetch_add(&entered, 1);
    nl_lock_release(lk);
    return NULL;
}

static int test_writer(const char *name)
{
    lk = nl_lock_create(name, NULL);
    if (!lk) {
        fprintf(stderr, "test_cst: unknown or unusable lock '%s'\n", name);
        return 2;
    }
    nl_lock_acquire(lk);
    atomic_store(&writer_in, 1);
    pthread_t th[4];
    for (int i = 0; i < 3; i++)
        pthread_create(&th[i], NULL, reader_blocked, NULL);
    pthread_create(&th[3], NULL, writer_blocked, NULL);
    sleep_ms(200); /* long enough for the waiters to spin out and park */
    CHECK(atomic_load(&entered) == 0, "%s: %d threads entered while a writer held the lock", name,
          atomic_load(&entered));
    atomic_store(&writer_in, 0);
    nl_lock_release(lk); /* the last writer out wakes the parked readers */
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    CHECK(atomic_load(&entered) == 4, "%s: after the writer left, %d of 4 waiters entered "
          "(a waiter saw the writer inside when negative)", name, atomic_load(&entered));
    nl_lock_destroy(lk);
    printf("test_cst: writer lock=%s waiters_entered_after_release=%d\n", name, atomic_load(&entered));
    return failures ? 1 : 0;
}

/* ---- cst-mutex specifics --------------------------------------------------- */
static nl_cst_mutex_t static_mutex = NL_CST_MUTEX_INITIALIZER;
static nl_cst_mutex_t node_mutex;
static long shared_counter;

typedef struct { int node; } node_arg_t;

static void *use_from_node(void *p)
{
    node_arg_t *a = p;
    nl_thread_set_node(a->node);
    nl_cst_mutex_lock(&node_mutex);
    shared_counter++;
    nl_cst_mutex_unlock(&node_mutex);
    return NULL;
}

static void *hammer(void *p)
{
    long n = (long)(intptr_t)p;
    for (long i = 0; i < n; i++) {
        nl_cst_mutex_lock(&static_mutex);
        long c = shared_counter;
        if ((i & 255) == 0)
            sched_yield(); /* descheduled inside: the others spin out and park */
        shared_counter = c + 1;
        nl_cst_mutex_unlock(&static_mutex);
    }
    return NULL;
}

static int test_mutex(void)
{
    char err[256];
    if (nl_topology_set("virtual:8", err, sizeof err)) {
        fprintf(stderr, "test_cst: %s\n", err);
        return 2;
    }
    /* zero-filled storage is an unlocked lock */
    CHECK(sizeof(nl_cst_mutex_t) <= 40, "nl_cst_mutex_t is %zu bytes", sizeof(nl_cst_mutex_t));
    CHECK(nl_cst_mutex_footprint(&static_mutex) == sizeof(nl_cst_mutex_t),
          "an unused lock allocated memory");
    CHECK(nl_cst_mutex_trylock(&static_mutex) == 0, "trylock on a zero-filled lock failed");
    nl_cst_mutex_unlock(&static_mutex);

    /* snodes: one per node that used the lock, none for the others */
    size_t base = nl_cst_mutex_footprint(&node_mutex), prev = base;
    const nl_lock_ops_t *ops = nl_lock_find("cst-mutex");
    CHECK(ops != NULL, "cst-mutex is not registered");
    for (int node = 0; node < 8; node++) {
        for (int rep = 0; rep < 2; rep++) { /* a second use from the same node adds nothing */
            node_arg_t a = { node };
            pthread_t t;
            pthread_create(&t, NULL, use_from_node, &a);
            pthread_join(t, NULL);
            size_t fp = nl_cst_mutex_footprint(&node_mutex);
            if (rep == 0)
                CHECK(fp > prev, "node %d: footprint %zu did not grow from %zu", node, fp, prev);
            else
                CHECK(fp == prev, "node %d again: footprint %zu changed from %zu", node, fp, prev);
            prev = fp;
        }
        if (ops)
            CHECK(prev == nl_lock_bytes_at_nodes(ops, (unsigned)node + 1),
                  "footprint %zu after %d nodes, bytes_at_nodes says %zu", prev, node + 1,
                  nl_lock_bytes_at_nodes(ops, (unsigned)node + 1));
    }
    printf("test_cst: mutex footprint unused=%zu 1node=%zu 8nodes=%zu\n", base,
           base + (prev - base) / 8, prev);
    nl_cst_mutex_destroy(&node_mutex);
    CHECK(nl_cst_mutex_footprint(&node_mutex) == sizeof(nl_cst_mutex_t), "destroy kept snodes");

    /* over-subscription: 16 threads on few cores, holders descheduled inside */
    shared_counter = 0;
    enum { T = 16, N = 5000 };
    pthread_t th[T];
    for (int i = 0; i < T; i++)
        pthread_create(&th[i], NULL, hammer, (void *)(intptr_t)N);
    for (int i = 0; i < T; i++)
        pthread_join(th[i], NULL);
    CHECK(shared_counter == (long)T * N, "counter %ld, expected %ld", shared_counter, (long)T * N);
    nl_cst_mutex_destroy(&static_mutex);
    printf("test_cst: mutex oversubscribed counter=%ld\n", shared_counter);
    return failures ? 1 : 0;
}

/* ---- idle keep revoked by a second node ------------------------------------ */
static nl_cst_mutex_t race_mutex;
static long race_counter;
static pthread_barrier_t race_start;
typedef struct { int node, n, delay; } race_arg_t;

static void *race_worker(void *p)
{
    race_arg_t *a = p;
    nl_thread_set_node(a->node);
    pthread_barrier_wait(&race_start);
    for (volatile int i = 0; i < a->delay; i++)
        ;
    for (int i = 0; i < a->n; i++) {
        if (i % 3 == 0 && nl_cst_mutex_trylock(&race_mutex) == 0) {
            race_counter++;
            nl_cst_mutex_unlock(&race_mutex);
            continue;
        }
        nl_cst_mutex_lock(&race_mutex);
        race_counter++;
        if (i % 50 == 0)
            sched_yield();
        nl_cst_mutex_unlock(&race_mutex);
    }
    return NULL;
}

static int test_revoke(void)
{
    char err[256];
    if (nl_topology_set("virtual:4", err, sizeof err)) {
        fprintf(stderr, "test_cst: %s\n", err);
        return 2;
    }
    enum { ROUNDS = 1000, N = 200 };
    for (int r = 0; r < ROUNDS; r++) {
        nl_cst_mutex_init(&race_mutex, NULL);
        race_counter = 0;
        int T = 2 + r % 3;
        pthread_barrier_init(&race_start, NULL, (unsigned)T);
        pthread_t th[4];
        race_arg_t a[4];
        for (int t = 0; t < T; t++) {
            a[t] = (race_arg_t){ t, N, (r * 7919 + t * 104729) % 20000 };
            pthread_create(&th[t], NULL, race_worker, &a[t]);
        }
        for (int t = 0; t < T; t++)
            pthread_join(th[t], NULL);
        CHECK(race_counter == (long)N * T, "round %d: counter %ld, expected %ld", r, race_counter,
              (long)N * T);
        nl_cst_mutex_destroy(&race_mutex);
        pthread_barrier_destroy(&race_start);
        if (failures)
            return 1;
    }
    printf("test_cst: revoke rounds=%d PASS\n", ROUNDS);
    return 0;
}

/* ---- cst-rwsem: readers that change node while inside ------------------- */
static nl_cst_rwsem_t mig;
static _Atomic int mig_readers, mig_writer, mig_bad, mig_stop;
static void *mig_reader(void *p)
{
    int node = (int)(intptr_t)p;
    for (int i = 0; i < 20000 && !atomic_load(&mig_stop); i++) {
        nl_thread_set_node(node % 4);
        nl_cst_rwsem_down_read(&mig);
        atomic_fetch_add(&mig_readers, 1);
        if (atomic_load(&mig_writer))
            atomic_store(&mig_bad, 1);
        node++; /* leave from the next node */
        nl_thread_set_node(node % 4);
        atomic_fetch_sub(&mig_readers, 1);
        nl_cst_rwsem_up_read(&mig);
    }
    return NULL;
}
static void *mig_writer_fn(void *p)
{
    (void)p;
    for (int i = 0; i < 2000; i++) {
        nl_thread_set_node(i % 4);
        nl_cst_rwsem_down_write(&mig);
        atomic_store(&mig_writer, 1);
        if (atomic_load(&mig_readers))
            atomic_store(&mig_bad, 1);
        atomic_store(&mig_writer, 0);
        nl_cst_rwsem_up_write(&mig);
    }
    return NULL;
}
static int test_migrate(void)
{
    char err[256];
    if (nl_topology_set("virtual:4", err, sizeof err)) {
        fprintf(stderr, "test_cst: %s\n", err);
        return 2;
    }
    nl_cst_rwsem_init(&mig, NULL);
    pthread_t r[6], w;
    for (int i = 0; i < 6; i++)
        pthread_create(&r[i], NULL, mig_reader, (void *)(intptr_t)i);
    pthread_create(&w, NULL, mig_writer_fn, NULL);
    pthread_join(w, NULL);
    atomic_store(&mig_stop, 1);
    for (int i = 0; i < 6; i++)
        pthread_join(r[i], NULL);
    CHECK(!atomic_load(&mig_bad), "a writer and a reader were inside together");
    /* every reader left: a writer gets in at once, from any node */
    for (int n = 0; n < 4; n++) {
        nl_thread_set_node(n);
        CHECK(nl_cst_rwsem_down_write_trylock(&mig) == 0, "writer trylock from node %d failed after "
              "all readers left (counts do not sum to zero)", n);
        nl_cst_rwsem_up_write(&mig);
    }
    size_t fp = nl_cst_rwsem_footprint(&mig);
    nl_cst_rwsem_destroy(&mig);
    printf("test_cst: migrate footprint=%zu %s\n", fp, failures ? "FAIL" : "PASS");
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    alarm(120); /* a lost wake-up must fail the test, not hang it */
    if (argc >= 3 && !strcmp(argv[1], "share"))
        return test_share(argv[2]);
    if (argc >= 3 && !strcmp(argv[1], "writer"))
        return test_writer(argv[2]);
    if (argc >= 2 && !strcmp(argv[1], "mutex"))
        return test_mutex();
    if (argc >= 2 && !strcmp(argv[1], "revoke"))
        return test_revoke();
    if (argc >= 2 && !strcmp(argv[1], "migrate"))
        return test_migrate();
    fprintf(stderr, "usage: test_cst share LOCK | writer LOCK | mutex | revoke | migrate\n");
    return 2;
}
