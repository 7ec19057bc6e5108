/*
 * lockref tests: exact count after concurrent get/put from 8 threads (with
 * the lock taken now and then, so that both paths run, which the statistics
 * must show), the lockless path taken when uncontended, an update made
 * while the lock is held taking the locked path, get_not_zero fails at
 * zero, put_or_lock returns with the lock held when the count would drop to
 * 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "numalock/lockref.h"

static int failures;
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "test_lockref: FAIL %s:%d: ", __FILE__, __LINE__);                     \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

enum { THREADS = 8, ITERS = 50000 };
static nl_lockref_t ref = NL_LOCKREF_INIT(1);
static long side; /* updated under the lockref's lock */
static pthread_barrier_t start;

static void *worker(void *p)
{
    long tid = (long)(intptr_t)p;
    pthread_barrier_wait(&start);
    for (long i = 0; i < ITERS; i++) {
        nl_lockref_get(&ref);
        if ((i + tid) % 64 == 0) { /* hold the lock a little: the others fall back */
            nl_qspin_lock(nl_lockref_lock(&ref));
            side++;
            nl_qspin_unlock(nl_lockref_lock(&ref));
        }
        if (i % 3 == 0) {
            CHECK(nl_lockref_get_not_zero(&ref) == 1, "get_not_zero failed at a positive count");
            CHECK(nl_lockref_put_not_zero(&ref) == 1, "put_not_zero failed above 1");
        }
        /* never drops to 0: the initial reference is held throughout */
        CHECK(nl_lockref_put_or_lock(&ref) == 1, "put_or_lock took the lock above 1");
    }
    return NULL;
}

static void *get_other(void *p)
{
    (void)p;
    nl_lockref_get(&ref);
    return NULL;
}

static void *try_lock_other(void *p)
{
    int *rc = p;
    *rc = nl_qspin_trylock(nl_lockref_lock(&ref));
    if (*rc == 0)
        nl_qspin_unlock(nl_lockref_lock(&ref));
    return NULL;
}

static int other_trylock(void)
{
    int rc = -1;
    pthread_t t;
    pthread_create(&t, NULL, try_lock_other, &rc);
    pthread_join(t, NULL);
    return rc;
}

int main(void)
{
    alarm(120);
    nl_lockref_stats_t st;

    /* 1. uncontended: every update takes the lockless path */
    nl_lockref_init(&ref, 1);
    nl_lockref_stats_reset();
    for (int i = 0; i < 1000; i++) {
        nl_lockref_get(&ref);
        CHECK(nl_lockref_put_or_lock(&ref) == 1, "uncontended put_or_lock took the lock");
    }
    nl_lockref_stats(&st);
    CHECK(st.lockless == 2000 && st.locked == 0,
          "uncontended: %llu lockless and %llu locked updates, expected 2000 and 0",
          (unsigned long long)st.lockless, (unsigned long long)st.locked);
    printf("test_lockref: uncontended lockless=%llu locked=%llu\n",
           (unsigned long long)st.lockless, (unsigned long long)st.locked);

    /* 2. concurrent get/put from 8 threads ends at the exact count; both
     * paths need a hold that meets another thread's update, which a machine
     * whose other CPU is busy may not give in one round: up to 5 rounds */
    cpu_set_t cpus;
    bool parallel = sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) >= 2;
    pthread_t th[THREADS];
    pthread_barrier_init(&start, NULL, THREADS);
    for (int round = 0; round < 5; round++) {
        nl_lockref_init(&ref, 1);
        nl_lockref_stats_reset();
        for (long t = 0; t < THREADS; t++)
            pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
        for (int t = 0; t < THREADS; t++)
            pthread_join(th[t], NULL);
        nl_lockref_stats(&st);
        if (!parallel || st.locked > 0)
            break;
    }
    CHECK(nl_lockref_count(&ref) == 1, "count %d after balanced get/put, expected 1",
          nl_lockref_count(&ref));
    CHECK(!nl_qspin_is_locked(nl_lockref_lock(&ref)), "lock left held");
    CHECK(st.lockless + st.locked >= (uint64_t)THREADS * ITERS * 2,
          "only %llu updates counted", (unsigned long long)(st.lockless + st.locked));
    /* another thread's update falls back while the lock is held only if it
     * runs then: with one CPU (taskset -c 0, the emulated aarch64 tests) the
     * holder's brief hold rarely meets one */
    if (parallel)
        CHECK(st.lockless > 0 && st.locked > 0,
              "concurrent: %llu lockless and %llu locked updates, both paths expected",
              (unsigned long long)st.lockless, (unsigned long long)st.locked);
    else
        printf("test_lockref: both paths under concurrency not checked: one CPU\n");
    printf("test_lockref: concurrent threads=%d count=%d lockless=%llu locked=%llu side=%ld\n",
           THREADS, nl_lockref_count(&ref), (unsigned long long)st.lockless,
           (unsigned long long)st.locked, side);

    /* 2b. an update while the lock is held cannot be lockless: it waits and
     * takes the locked path */
    nl_lockref_init(&ref, 1);
    nl_lockref_stats_reset();
    nl_qspin_lock(nl_lockref_lock(&ref));
    pthread_t g;
    pthread_create(&g, NULL, get_other, NULL);
    usleep(20000); /* it has found the lock held, or is about to */
    CHECK(nl_lockref_count(&ref) == 1, "a get completed while the lock was held");
    nl_qspin_unlock(nl_lockref_lock(&ref));
    pthread_join(g, NULL);
    nl_lockref_stats(&st);
    CHECK(nl_lockref_count(&ref) == 2, "count %d after one get, expected 2", nl_lockref_count(&ref));
    CHECK(st.locked >= 1, "a get that met the held lock counted %llu locked updates",
          (unsigned long long)st.locked);

    /* 3. get_not_zero fails at zero, on the lockless and on the locked path */
    nl_lockref_init(&ref, 0);
    CHECK(nl_lockref_get_not_zero(&ref) == 0, "get_not_zero succeeded at 0");
    CHECK(nl_lockref_count(&ref) == 0, "get_not_zero changed a zero count");
    CHECK(nl_lockref_put_return(&ref) == -1, "put_return below zero did not fail");
    nl_lockref_init(&ref, 2);
    CHECK(nl_lockref_put_return(&ref) == 1, "put_return from 2 did not return 1");
    nl_lockref_init(&ref, 3);
    nl_qspin_lock(nl_lockref_lock(&ref));
    CHECK(nl_lockref_put_return(&ref) == -1, "put_return worked while the lock was held");
    nl_qspin_unlock(nl_lockref_lock(&ref));

    /* 4. put_or_lock at 1: returns 0 with the lock held and the count unchanged */
    nl_lockref_init(&ref, 2);
    CHECK(nl_lockref_put_or_lock(&ref) == 1, "put_or_lock from 2 failed");
    CHECK(nl_lockref_count(&ref) == 1, "count %d after put from 2", nl_lockref_count(&ref));
    CHECK(nl_lockref_put_or_lock(&ref) == 0, "put_or_lock at 1 did not return 0");
    CHECK(nl_qspin_is_locked(nl_lockref_lock(&ref)), "put_or_lock returned 0 without the lock");
    CHECK(other_trylock() == EBUSY, "another thread could take the lock put_or_lock returned");
    CHECK(nl_lockref_count(&ref) == 1, "put_or_lock at 1 changed the count");
    nl_lockref_mark_dead(&ref); /* the object is torn down */
    nl_lockref_unlock(&ref);
    CHECK(nl_lockref_get_not_dead(&ref) == 0, "get_not_dead succeeded on a dead lockref");
    CHECK(nl_lockref_get_not_zero(&ref) == 0, "get_not_zero succeeded on a dead lockref");
    CHECK(other_trylock() == 0, "lock not free after nl_lockref_unlock");

    if (!failures)
        printf("test_lockref: PASS\n");
    return failures ? 1 : 0;
}
