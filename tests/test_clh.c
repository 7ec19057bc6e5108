/*
 * Tests of the CLH lock's API (include/numalock/clh.h), beyond the stress
 * harness:
 *   cross      the lock released by another thread than its holder (the
 *              holder's node is in the lock): a waiter queued behind the
 *              holder gets it then; the lock is free and works afterwards
 *   balance    nodes pass between threads: one thread always finds the lock
 *              free and hands its node to the other, which always keeps its
 *              own at its release; 20000 such rounds must not allocate a
 *              node a round (the caches' surplus goes to the spare list)
 *   try        trylock of a held and of a free lock
 * Usage: test_clh [cross|balance|try|all]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "numalock/numalock.h"
#include "numalock/clh.h"

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "test_clh: FAIL %s:%d: ", \
    __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The waits below yield: the other thread may share this CPU (tests run
 * beside others, an emulator on one host CPU), and a pure spin waited a
 * time slice for each of the balance test's 40,000 hand-overs. */
static int wait_flag(_Atomic int *flag, int value)
{
    double end = now_s() + 10;
    while (atomic_load(flag) != value)
        if (now_s() > end)
            return 0;
        else
            sched_yield();
    return 1;
}

/* the tail moved off t0: somebody swapped itself in behind */
static int wait_tail_moves(nl_clh_t *l, void *t0)
{
    double end = now_s() + 10;
    while (atomic_load(&l->tail) == t0)
        if (now_s() > end)
            return 0;
        else
            sched_yield();
    return 1;
}

/* ---- cross ------------------------------------------------------------------ */
static nl_clh_t xlock = NL_CLH_INIT;
static _Atomic int x_held, x_waiter_in;
static volatile int x_count;

static void *x_holder(void *p)
{
    (void)p;
    nl_clh_acquire(&xlock);
    x_count++;
    atomic_store(&x_held, 1); /* main releases it */
    return NULL;
}

static void *x_waiter(void *p)
{
    (void)p;
    nl_clh_acquire(&xlock);
    x_count++;
    atomic_store(&x_waiter_in, 1);
    nl_clh_release(&xlock);
    return NULL;
}

static void test_cross(void)
{
    pthread_t h, w;
    pthread_create(&h, NULL, x_holder, NULL);
    pthread_join(h, NULL); /* the holder is gone; its lock is held */
    CHECK(atomic_load(&x_held) && nl_clh_is_locked(&xlock), "the holder did not take the lock");
    void *t0 = atomic_load(&xlock.tail);
    pthread_create(&w, NULL, x_waiter, NULL);
    CHECK(wait_tail_moves(&xlock, t0), "the waiter did not queue");
    CHECK(!atomic_load(&x_waiter_in), "the waiter got in while the lock was held");
    nl_clh_release(&xlock); /* by main, not the holder */
    CHECK(wait_flag(&x_waiter_in, 1), "the waiter did not get the lock");
    pthread_join(w, NULL);
    CHECK(!nl_clh_is_locked(&xlock), "lock held after the run");
    nl_clh_acquire(&xlock);
    x_count++;
    nl_clh_release(&xlock);
    CHECK(x_count == 3, "%d sections, want 3", x_count);
}

/* ---- balance ----------------------------------------------------------------- */
#define BAL_ROUNDS 20000
static nl_clh_t block = NL_CLH_INIT;
static _Atomic int b_turn; /* 0: first's turn, 1: second may queue, 2: round done */
static volatile long b_count;

static void *b_first(void *p)
{
    (void)p;
    for (int i = 0; i < BAL_ROUNDS; i++) {
        wait_flag(&b_turn, 0);
        nl_clh_acquire(&block); /* free: no predecessor, no node taken */
        b_count++;
        void *t0 = atomic_load(&block.tail);
        atomic_store(&b_turn, 1);
        wait_tail_moves(&block, t0);
        nl_clh_release(&block); /* a successor: the node goes to it */
    }
    return NULL;
}

static void *b_second(void *p)
{
    (void)p;
    for (int i = 0; i < BAL_ROUNDS; i++) {
        wait_flag(&b_turn, 1);
        nl_clh_acquire(&block); /* takes first's node */
        b_count++;
        atomic_store(&b_turn, 0);
        nl_clh_release(&block); /* nobody behind: keeps its own too */
    }
    return NULL;
}

static void test_balance(void)
{
    struct mallinfo2 before = mallinfo2();
    pthread_t a, b;
    pthread_create(&a, NULL, b_first, NULL);
    pthread_create(&b, NULL, b_second, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    struct mallinfo2 after = mallinfo2();
    size_t grew = after.uordblks > before.uordblks ? after.uordblks - before.uordblks : 0;
    CHECK(b_count == 2 * BAL_ROUNDS, "%ld sections, want %d", b_count, 2 * BAL_ROUNDS);
    /* a node a round would be 20000 x 64 bytes; the caches and spares hold
     * a few dozen */
    CHECK(grew < 256 * 1024, "the heap grew by %zu bytes in %d rounds", grew, BAL_ROUNDS);
    printf("test_clh: balance: heap grew by %zu bytes in %d rounds\n", grew, BAL_ROUNDS);
}

/* ---- try --------------------------------------------------------------------- */
static nl_clh_t tlock = NL_CLH_INIT;
static _Atomic int t_result = -1;

static void *t_other(void *p)
{
    (void)p;
    atomic_store(&t_result, nl_clh_try(&tlock));
    return NULL;
}

static void test_try(void)
{
    pthread_t t;
    CHECK(nl_clh_try(&tlock) == 0, "trylock of a free lock failed");
    pthread_create(&t, NULL, t_other, NULL);
    pthread_join(t, NULL);
    CHECK(atomic_load(&t_result) != 0, "trylock of a held lock succeeded");
    nl_clh_release(&tlock);
    CHECK(!nl_clh_is_locked(&tlock), "lock held after release");
}

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "all";
    int all = !strcmp(which, "all");
    char err[256];
    /* waiters that yield: with more threads than CPUs the adaptive policy
     * would hold arrivals at the gate, and these tests watch them queue */
    if (nl_wait_set_policy("yield", err, sizeof err))
        return 2;
    if (all || !strcmp(which, "cross"))
        test_cross();
    if (all || !strcmp(which, "balance"))
        test_balance();
    if (all || !strcmp(which, "try"))
        test_try();
    if (failures) {
        fprintf(stderr, "test_clh: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_clh: %s passed\n", which);
    return 0;
}
