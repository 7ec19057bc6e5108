/*
 * What every client shares: its sizes (NL_THREADS threads, each NL_ROUNDS
 * rounds or NL_ROUNDS_OF(tid), thread tid on node NL_NODE_OF(tid)), the exclusive section and
 * the run of its threads:
 * the workers, started together and waited for, and before them the coin
 * thread when the check's lock draws random numbers (NL_VERIFY_COINS:
 * env.c's coins).
 */
#include <assert.h>
#include <pthread.h>

#ifndef NL_THREADS
#define NL_THREADS 2
#endif
#ifndef NL_ROUNDS
#define NL_ROUNDS 1
#endif
/* rounds of thread tid */
#ifndef NL_ROUNDS_OF
#define NL_ROUNDS_OF(tid) NL_ROUNDS
#endif
#ifndef NL_NODE_OF
#define NL_NODE_OF(tid) ((tid) % 2)
#endif

/* What the sections share, non-atomic: GenMC reports a data race on them
 * when two sections are not ordered by happens-before. */
static int counter;
static int owner = -1;

/* An exclusive section of `who`: its owner field written and read back (a
 * section inside at the same time changes it) and the counter incremented. */
static void verify_section(int who)
{
    owner = who;
    counter++;
    assert(owner == who);
    owner = -1;
}

/* A worker's start: its index, and its node from now on. */
static int verify_worker_start(void *arg)
{
    int tid = (int)(long)arg;
    nl_verify_set_node(NL_NODE_OF(tid), NL_NODE_OF(tid));
    return tid;
}

/* the rounds of all threads together */
static int verify_rounds(void)
{
    int rounds = 0;
    for (int tid = 0; tid < NL_THREADS; tid++)
        rounds += NL_ROUNDS_OF(tid);
    return rounds;
}

/* after the lock's init: worker((void *)tid) for every tid, then back */
static void verify_run_workers(void *(*worker)(void *))
{
    pthread_t t[NL_THREADS];
    nl_verify_started = 1;
#ifdef NL_VERIFY_COINS
    pthread_t coins;
    verify_coins_on = 1;
    pthread_create(&coins, NULL, verify_coin_thread, NULL);
#endif
    for (long i = 0; i < NL_THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < NL_THREADS; i++)
        pthread_join(t[i], NULL);
#ifdef NL_VERIFY_COINS
    pthread_join(coins, NULL);
#endif
}
