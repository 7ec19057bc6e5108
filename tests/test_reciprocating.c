/*
 * Tests of the reciprocating locks' explicit APIs (include/numalock/
 * reciprocating.h), beyond what the stress harness covers through the ops
 * table:
 *   order      the admission order the paper promises: a held lock, three
 *              arrivals A, B, C (one segment), an arrival D while that
 *              segment is served: C, B, A, then D
 *   shared     one wait element per thread for three locks held at once
 *              (paper form, contexts on the stack), under contention,
 *              released in and out of order
 *   numa       reciprocating-numa on virtual:2: the holder on node 0, then
 *              arrivals R1 (node 1), L1 (node 0), R2 (node 1), L2 (node 0):
 *              L2, L1 (the holder's node first, newest first), then R2, R1
 *   bound      reciprocating-numa: a node-1 thread gets the lock while three
 *              node-0 threads take it again and again (the stay is bounded)
 * Usage: test_reciprocating [order|shared|numa|bound|all]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "numalock/numalock.h"
#include "numalock/reciprocating.h"
#include "numalock/topology.h"

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "test_reciprocating: FAIL %s:%d: ", \
    __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* wait (up to 10 s) until *word != old; false on time-out */
static int wait_change(_Atomic uintptr_t *word, uintptr_t old)
{
    double end = now_s() + 10;
    while (atomic_load(word) == old)
        if (now_s() > end)
            return 0;
    return 1;
}

/* ---- order ------------------------------------------------------------------ */
static nl_recip_t olock = NL_RECIP_INIT;
static _Atomic int order[8], norder;
static _Atomic int hold_c; /* C keeps the lock until D has arrived */

typedef struct { int id; nl_recip_wait_t e; } oarg_t;

static void *o_worker(void *p)
{
    oarg_t *a = p;
    nl_recip_ctx_t c;
    nl_recip_lock(&olock, &a->e, &c);
    atomic_store(&order[atomic_fetch_add(&norder, 1)], a->id);
    if (a->id == 'C')
        while (atomic_load(&hold_c))
            ;
    nl_recip_unlock(&olock, &c);
    return NULL;
}

static void test_order(void)
{
    static oarg_t args[4] = { { 'A', { 0 } }, { 'B', { 0 } }, { 'C', { 0 } }, { 'D', { 0 } } };
    pthread_t t[4];
    nl_recip_wait_t me;
    nl_recip_ctx_t c;
    atomic_store(&hold_c, 1);
    nl_recip_lock(&olock, &me, &c);
    for (int i = 0; i < 3; i++) {
        uintptr_t before = atomic_load(&olock.arrivals);
        pthread_create(&t[i], NULL, o_worker, &args[i]);
        CHECK(wait_change(&olock.arrivals, before), "arrival %c not seen", args[i].id);
    }
    nl_recip_unlock(&olock, &c);
    /* C holds now; D arrives onto the next stack */
    double end = now_s() + 10;
    while (atomic_load(&norder) < 1 && now_s() < end)
        ;
    uintptr_t before = atomic_load(&olock.arrivals);
    pthread_create(&t[3], NULL, o_worker, &args[3]);
    CHECK(wait_change(&olock.arrivals, before), "arrival D not seen");
    atomic_store(&hold_c, 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    char got[5] = { 0 };
    for (int i = 0; i < 4; i++)
        got[i] = (char)atomic_load(&order[i]);
    CHECK(!strcmp(got, "CBAD"), "admission order %s, want CBAD", got);
    CHECK(!nl_recip_is_locked(&olock), "lock held after the run");
    /* trylock on a free and a held lock */
    CHECK(nl_recip_trylock(&olock, &me, &c) == 0, "trylock of a free lock failed");
    nl_recip_wait_t other;
    nl_recip_ctx_t oc;
    CHECK(nl_recip_trylock(&olock, &other, &oc) != 0, "trylock of a held lock succeeded");
    nl_recip_unlock(&olock, &c);
}

/* ---- shared: one element, three locks --------------------------------------- */
#define SH_THREADS 6
#define SH_ROUNDS 5000 /* 6 threads on the 2 CPUs of CI: a queue lock convoys when its next holder is preempted */
static nl_recip_t sh_locks[3];
static volatile long sh_count[3];
static _Atomic int sh_inside[3], sh_bad;

static void sh_enter(int k)
{
    if (atomic_fetch_add(&sh_inside[k], 1) != 0)
        atomic_store(&sh_bad, 1);
    sh_count[k]++;
    atomic_fetch_sub(&sh_inside[k], 1);
}

static pthread_barrier_t sh_start;

static void *sh_worker(void *p)
{
    long id = (long)(intptr_t)p;
    pthread_barrier_wait(&sh_start); /* all at once: contention from the start */
    nl_recip_wait_t e; /* the thread's one element, for every lock */
    for (long i = 0; i < SH_ROUNDS; i++) {
        nl_recip_ctx_t c[3];
        int mask = (int)((i + id) % 7) + 1; /* a non-empty subset, taken in index order */
        for (int k = 0; k < 3; k++)
            if (mask & (1 << k))
                nl_recip_lock(&sh_locks[k], &e, &c[k]);
        for (int k = 0; k < 3; k++)
            if (mask & (1 << k))
                sh_enter(k);
        /* release in order on even rounds, in reverse on odd ones */
        for (int j = 0; j < 3; j++) {
            int k = (i & 1) ? 2 - j : j;
            if (mask & (1 << k))
                nl_recip_unlock(&sh_locks[k], &c[k]);
        }
    }
    return NULL;
}

static void test_shared(void)
{
    pthread_t t[SH_THREADS];
    long want[3] = { 0, 0, 0 };
    pthread_barrier_init(&sh_start, NULL, SH_THREADS);
    for (long id = 0; id < SH_THREADS; id++) {
        pthread_create(&t[id], NULL, sh_worker, (void *)(intptr_t)id);
        for (long i = 0; i < SH_ROUNDS; i++) {
            int mask = (int)((i + id) % 7) + 1;
            for (int k = 0; k < 3; k++)
                want[k] += (mask >> k) & 1;
        }
    }
    for (int id = 0; id < SH_THREADS; id++)
        pthread_join(t[id], NULL);
    CHECK(!atomic_load(&sh_bad), "two threads inside one lock");
    for (int k = 0; k < 3; k++) {
        CHECK(sh_count[k] == want[k], "lock %d: %ld sections, want %ld", k, sh_count[k], want[k]);
        CHECK(!nl_recip_is_locked(&sh_locks[k]), "lock %d held after the run", k);
    }
}

/* ---- numa: the holder's node first ------------------------------------------ */
static nl_recip_numa_t nlock = NL_RECIP_NUMA_INIT;
static _Atomic int norder2[8], nn;

typedef struct { int idx, node; const char *name; } narg_t;

static void *n_worker(void *p)
{
    narg_t *a = p;
    nl_thread_set_node(a->node);
    nl_recip_numa_acquire(&nlock);
    atomic_store(&norder2[atomic_fetch_add(&nn, 1)], a->idx);
    nl_recip_numa_release(&nlock);
    return NULL;
}

static void test_numa(void)
{
    static narg_t args[4] = { { 0, 1, "R1" }, { 1, 0, "L1" }, { 2, 1, "R2" }, { 3, 0, "L2" } };
    char err[256];
    CHECK(nl_topology_set("virtual:2", err, sizeof err) == 0, "virtual:2: %s", err);
    nl_thread_set_node(0);
    pthread_t t[4];
    nl_recip_numa_acquire(&nlock);
    for (int i = 0; i < 4; i++) {
        uintptr_t before = atomic_load(&nlock.arrivals);
        pthread_create(&t[i], NULL, n_worker, &args[i]);
        CHECK(wait_change(&nlock.arrivals, before), "arrival %s not seen", args[i].name);
    }
    nl_recip_numa_release(&nlock);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    char got[32] = "";
    for (int i = 0; i < 4; i++) {
        strcat(got, args[atomic_load(&norder2[i])].name);
        strcat(got, i < 3 ? "," : "");
    }
    CHECK(!strcmp(got, "L2,L1,R2,R1"), "admission order %s, want L2,L1,R2,R1", got);
    CHECK(!nl_recip_numa_is_locked(&nlock), "lock held after the run");
}

/* ---- bound: a remote waiter gets in while local threads hammer -------------- */
static nl_recip_numa_t block = NL_RECIP_NUMA_INIT;
static _Atomic int b_remote_done, b_started;
static _Atomic long b_local_ops;
static volatile long b_count;

static void *b_local(void *p)
{
    (void)p;
    nl_thread_set_node(0);
    atomic_fetch_add(&b_started, 1);
    while (!atomic_load(&b_remote_done)) {
        nl_recip_numa_acquire(&block);
        b_count++;
        nl_recip_numa_release(&block);
        atomic_fetch_add(&b_local_ops, 1);
    }
    return NULL;
}

static void *b_remote(void *p)
{
    (void)p;
    nl_thread_set_node(1);
    while (atomic_load(&b_local_ops) < 1000)
        ;
    nl_recip_numa_acquire(&block);
    b_count++;
    nl_recip_numa_release(&block);
    atomic_store(&b_remote_done, 1);
    return NULL;
}

static void test_bound(void)
{
    char err[256];
    CHECK(nl_topology_set("virtual:2", err, sizeof err) == 0, "virtual:2: %s", err);
    pthread_t t[4];
    double t0 = now_s();
    for (int i = 0; i < 3; i++)
        pthread_create(&t[i], NULL, b_local, NULL);
    pthread_create(&t[3], NULL, b_remote, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    double took = now_s() - t0;
    CHECK(took < 30, "the node-1 thread waited %.1f s", took);
    CHECK(b_count == atomic_load(&b_local_ops) + 1, "%ld sections, want %ld", b_count,
          atomic_load(&b_local_ops) + 1);
}

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "all";
    /* waiters that yield: with more threads than CPUs the adaptive policy
     * would hold arrivals at the gate, before they reach the lock, and the
     * order tests watch the lock's own order */
    char err[256];
    if (nl_wait_set_policy("yield", err, sizeof err)) {
        fprintf(stderr, "test_reciprocating: %s\n", err);
        return 2;
    }
    int all = !strcmp(which, "all");
    if (all || !strcmp(which, "order"))
        test_order();
    if (all || !strcmp(which, "shared"))
        test_shared();
    if (all || !strcmp(which, "numa"))
        test_numa();
    if (all || !strcmp(which, "bound"))
        test_bound();
    if (failures) {
        fprintf(stderr, "test_reciprocating: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_reciprocating: %s passed\n", which);
    fflush(stdout);
    return 0;
}
