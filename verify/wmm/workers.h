/*
 * What every client shares: its sizes (NL_THREADS threads, each NL_ROUNDS
 * rounds, thread tid on node NL_NODE_OF(tid)) and the run of its threads:
 * the workers, started together and waited for, and before them the coin
 * thread when the check's lock draws random numbers (NL_VERIFY_COINS:
 * env.c's coins of main's record and the workers').
 */
#include <assert.h>
#include <pthread.h>

#ifndef NL_THREADS
#define NL_THREADS 2
#endif
#ifndef NL_ROUNDS
#define NL_ROUNDS 1
#endif
#ifndef NL_NODE_OF
#define NL_NODE_OF(tid) ((tid) % 2)
#endif

/* after the lock's init: worker((void *)tid) for every tid, then back */
static void verify_run_workers(void *(*worker)(void *))
{
    pthread_t t[NL_THREADS];
    nl_verify_started = 1;
#ifdef NL_VERIFY_COINS
    pthread_t coins;
    verify_coins_on = 1;
    pthread_create(&coins, NULL, verify_coin_thread, (void *)(long)(NL_THREADS + 1));
#endif
    for (long i = 0; i < NL_THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < NL_THREADS; i++)
        pthread_join(t[i], NULL);
#ifdef NL_VERIFY_COINS
    pthread_join(coins, NULL);
#endif
}
