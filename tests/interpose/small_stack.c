/* The pthread objects of an unmodified program, on the smallest thread
 * stacks glibc allows (PTHREAD_STACK_MIN), for the preload library: mutexes
 * (plain, timed, try), condition variables (wait, timed wait, signal,
 * broadcast), rwlocks, spin locks and C11 mtx_t / cnd_t, contended by more
 * threads than the machine has CPUs, so that waiters spin, park and wait at
 * the gate on those stacks. With NUMALOCK_PRELOAD_SAMPLE_ALL=1 every load
 * sample a waiter takes reads the cgroup files too.
 *
 *   nl_small_stack [THREADS [ROUNDS]]     exit 0 = pass, 1 = a check failed
 *
 * A path that needs more stack than the thread has faults (SIGSEGV) or
 * writes into another thread's stack; the counters below catch lost
 * updates. Under glibc alone it passes too (tests/interpose.cmake runs it
 * under every interposable lock; tests/test_small_stack.c is the library's
 * side). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t spin;
static mtx_t cmtx;
static cnd_t ccnd;

static long in_mutex, in_rw, in_spin, in_c11; /* guarded by their lock: plain */
static int round_no, arrived, threads;         /* guarded by mu: the broadcast barrier */
static int rounds = 40;
static int failures;

#define ITERS 400

static void fail(const char *what)
{
    fprintf(stderr, "FAIL: %s\n", what);
    __atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);
}

/* every thread waits for the others on the condition variable (a
 * broadcast wakes them all: the pthread_cond_broadcast tests' pattern) */
static void barrier(void)
{
    pthread_mutex_lock(&mu);
    int mine = round_no;
    if (++arrived == threads) {
        arrived = 0;
        round_no++;
        pthread_cond_broadcast(&cv);
    } else {
        while (round_no == mine) {
            struct timespec t;
            clock_gettime(CLOCK_REALTIME, &t);
            t.tv_sec += 5;
            if (pthread_cond_timedwait(&cv, &mu, &t) == ETIMEDOUT)
                pthread_cond_wait(&cv, &mu); /* a slow machine: keep waiting */
        }
    }
    pthread_mutex_unlock(&mu);
}

static void timed_mutex(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_sec += 10;
    if (pthread_mutex_timedlock(&mu, &t) != 0) {
        fail("pthread_mutex_timedlock");
        return;
    }
    in_mutex++;
    pthread_mutex_unlock(&mu);
}

static void one_round(void)
{
    for (int i = 0; i < ITERS; i++) {
        if (i % 7 == 0) {
            timed_mutex();
        } else if (i % 11 == 0) {
            if (pthread_mutex_trylock(&mu) != 0)
                pthread_mutex_lock(&mu);
            in_mutex++;
            pthread_mutex_unlock(&mu);
        } else {
            pthread_mutex_lock(&mu);
            in_mutex++;
            if (i % 13 == 0)
                pthread_cond_signal(&cv); /* nobody may wait: harmless */
            pthread_mutex_unlock(&mu);
        }
        if (i % 3 == 0) {
            pthread_rwlock_rdlock(&rw);
            pthread_rwlock_unlock(&rw);
        } else {
            pthread_rwlock_wrlock(&rw);
            in_rw++;
            pthread_rwlock_unlock(&rw);
        }
        pthread_spin_lock(&spin);
        in_spin++;
        pthread_spin_unlock(&spin);
        mtx_lock(&cmtx);
        in_c11++;
        if (i % 17 == 0)
            cnd_broadcast(&ccnd);
        mtx_unlock(&cmtx);
    }
}

static void *worker(void *arg)
{
    (void)arg;
    for (int r = 0; r < rounds; r++) {
        one_round();
        barrier();
    }
    return NULL;
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "FAIL: nl_small_stack hung (watchdog)\n";
    if (write(2, msg, sizeof msg - 1) < 0)
        _exit(3);
    _exit(2);
}

int main(int argc, char **argv)
{
    threads = argc > 1 ? atoi(argv[1]) : 8;
    rounds = argc > 2 ? atoi(argv[2]) : rounds;
    if (threads < 1 || threads > 64 || rounds < 1) {
        fprintf(stderr, "usage: nl_small_stack [THREADS 1..64 [ROUNDS >= 1]]\n");
        return 2;
    }
    signal(SIGALRM, on_alarm);
    alarm(300);
    pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
    mtx_init(&cmtx, mtx_plain);
    cnd_init(&ccnd);
    size_t stack = (size_t)sysconf(_SC_THREAD_STACK_MIN);
    pthread_attr_t a;
    pthread_attr_init(&a);
    if (pthread_attr_setstacksize(&a, stack)) {
        fprintf(stderr, "FAIL: a stack of %zu bytes is refused\n", stack);
        return 1;
    }
    pthread_t t[64];
    for (int i = 0; i < threads; i++)
        if (pthread_create(&t[i], &a, worker, NULL)) {
            fprintf(stderr, "FAIL: pthread_create\n");
            return 1;
        }
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    long want = (long)threads * rounds * ITERS;
    long want_rw = (long)threads * rounds * (ITERS - (ITERS + 2) / 3);
    if (in_mutex != want || in_spin != want || in_c11 != want || in_rw != want_rw)
        fail("a lost update: mutual exclusion broken");
    printf("nl_small_stack: %d threads on %zu-byte stacks, %d rounds: mutex %ld, rwlock %ld, spin %ld, c11 %ld: %s\n",
           threads, stack, rounds, in_mutex, in_rw, in_spin, in_c11, failures ? "FAIL" : "ok");
    return failures ? 1 : 0;
}
