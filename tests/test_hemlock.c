/*
 * Tests of Hemlock's explicit API (include/numalock/hemlock.h), beyond the
 * stress harness:
 *   multi      one thread holds A and B with its one element; a waiter of
 *              each watches that element's grant word: releasing B lets B's
 *              waiter in and not A's; releasing A then lets A's in. Run with
 *              waiters that spin and with waiters that sleep at once
 *              (NUMALOCK_WAIT=park:0:0 in the CTest line), so both waiters
 *              sleep on one word and each grant must wake the right one.
 *   shared     the paper form under contention: every thread one element
 *              (zeroed, its own), three locks held at once in every subset,
 *              released in and out of order; trylock
 * Usage: test_hemlock [multi|shared|all]
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
#include "numalock/hemlock.h"

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "test_hemlock: FAIL %s:%d: ", \
    __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- multi: two waiters on one element ------------------------------------ */
static nl_hemlock_t la = NL_HEMLOCK_INIT, lb = NL_HEMLOCK_INIT;
static _Atomic int got_a, got_b;

static void *wait_a(void *p)
{
    (void)p;
    nl_hemlock_acquire(&la);
    atomic_store(&got_a, 1);
    nl_hemlock_release(&la);
    return NULL;
}
static void *wait_b(void *p)
{
    (void)p;
    nl_hemlock_acquire(&lb);
    atomic_store(&got_b, 1);
    nl_hemlock_release(&lb);
    return NULL;
}

static int wait_until(_Atomic int *flag)
{
    double end = now_s() + 10;
    while (!atomic_load(flag))
        if (now_s() > end)
            return 0;
    return 1;
}

/* the tail moved off the holder: a waiter has swapped itself in */
static int wait_queued(nl_hemlock_t *l, nl_hemlock_elem_t *holder)
{
    double end = now_s() + 10;
    while (atomic_load(&l->tail) == holder)
        if (now_s() > end)
            return 0;
    return 1;
}

static void test_multi(void)
{
    static nl_hemlock_elem_t mine; /* zeroed: an element before its first use */
    pthread_t ta, tb;
    nl_hemlock_lock(&la, &mine);
    nl_hemlock_lock(&lb, &mine);
    pthread_create(&ta, NULL, wait_a, NULL);
    pthread_create(&tb, NULL, wait_b, NULL);
    CHECK(wait_queued(&la, &mine) && wait_queued(&lb, &mine), "the waiters did not queue");
    struct timespec ms = { 0, 20000000 };
    nanosleep(&ms, NULL); /* give them time to sleep (park:0:0) */
    nl_hemlock_unlock(&lb, &mine);
    CHECK(wait_until(&got_b), "B's waiter did not get B");
    nanosleep(&ms, NULL);
    CHECK(!atomic_load(&got_a), "A's waiter got A while A was held");
    nl_hemlock_unlock(&la, &mine);
    CHECK(wait_until(&got_a), "A's waiter did not get A");
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    CHECK(atomic_load(&mine.grant) <= 1, "the element's grant word holds %llu after the run",
          (unsigned long long)atomic_load(&mine.grant));
    CHECK(!nl_hemlock_is_locked(&la) && !nl_hemlock_is_locked(&lb), "a lock held after the run");
}

/* ---- shared: one element for three locks, under contention ------------------ */
#define SH_THREADS 6
#define SH_ROUNDS 5000 /* 6 threads on the 2 CPUs of CI: a queue lock convoys when its next holder is preempted */
static nl_hemlock_t sh_locks[3];
static volatile long sh_count[3];
static _Atomic int sh_inside[3], sh_bad;
static nl_hemlock_elem_t sh_elems[SH_THREADS];

static pthread_barrier_t sh_start;

static void *sh_worker(void *p)
{
    long id = (long)(intptr_t)p;
    pthread_barrier_wait(&sh_start); /* all at once: contention from the start */
    nl_hemlock_elem_t *e = &sh_elems[id];
    for (long i = 0; i < SH_ROUNDS; i++) {
        int mask = (int)((i + id) % 7) + 1;
        for (int k = 0; k < 3; k++)
            if (mask & (1 << k)) {
                if ((i & 15) == 0 && nl_hemlock_trylock(&sh_locks[k], e) == 0)
                    continue;
                nl_hemlock_lock(&sh_locks[k], e);
            }
        for (int k = 0; k < 3; k++)
            if (mask & (1 << k)) {
                if (atomic_fetch_add(&sh_inside[k], 1) != 0)
                    atomic_store(&sh_bad, 1);
                sh_count[k]++;
                atomic_fetch_sub(&sh_inside[k], 1);
            }
        for (int j = 0; j < 3; j++) {
            int k = (i & 1) ? 2 - j : j;
            if (mask & (1 << k))
                nl_hemlock_unlock(&sh_locks[k], e);
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
        CHECK(!nl_hemlock_is_locked(&sh_locks[k]), "lock %d held after the run", k);
    }
    nl_hemlock_elem_t e = { 0, 0, 0 };
    CHECK(nl_hemlock_trylock(&sh_locks[0], &e) == 0, "trylock of a free lock failed");
    CHECK(nl_hemlock_trylock(&sh_locks[0], &sh_elems[0]) != 0, "trylock of a held lock succeeded");
    nl_hemlock_unlock(&sh_locks[0], &e);
}

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "all";
    int all = !strcmp(which, "all");
    /* unless told (NUMALOCK_WAIT), waiters that yield: with more threads
     * than CPUs the adaptive policy would hold arrivals at the gate, and
     * these tests watch them queue */
    char err[256];
    if (!getenv("NUMALOCK_WAIT") && nl_wait_set_policy("yield", err, sizeof err))
        return 2;
    if (all || !strcmp(which, "multi"))
        test_multi();
    if (all || !strcmp(which, "shared"))
        test_shared();
    if (failures) {
        fprintf(stderr, "test_hemlock: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_hemlock: %s passed (waiting: %s)\n", which, nl_wait_policy_name());
    return 0;
}
