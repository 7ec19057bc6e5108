/*
 * The client every check runs: NL_THREADS threads each take the lock
 * NL_ROUNDS times; inside, a non-atomic counter is incremented and an owner
 * field written and read back. GenMC reports a data race on either when two
 * critical sections are not ordered by happens-before (mutual exclusion or
 * a missing release/acquire), an assertion when the owner changed under a
 * holder, and a blocked execution when a waiter is never granted (a lost
 * waiter). main checks the count once every thread has finished.
 *
 * A check defines NL_LOCK_T, NL_INIT(l), NL_ACQUIRE(l), NL_RELEASE(l) (and
 * may define NL_NODE_OF(tid) for the node each thread runs on) before
 * including this file; `tid`, the thread's index, is in scope in them.
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

static NL_LOCK_T the_lock;
static int counter;
static int owner = -1;

static void *worker(void *arg)
{
    int tid = (int)(long)arg;
    nl_verify_set_node(NL_NODE_OF(tid), NL_NODE_OF(tid));
    for (int r = 0; r < NL_ROUNDS; r++) {
        NL_ACQUIRE(&the_lock);
        owner = tid;
        counter++;
        assert(owner == tid);
        owner = -1;
        NL_RELEASE(&the_lock);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[NL_THREADS];
    NL_INIT(&the_lock);
    nl_verify_started = 1;
#ifdef NL_VERIFY_COINS
    /* the lock draws random numbers: the coins of main's record and the
     * workers' */
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
    assert(counter == NL_THREADS * NL_ROUNDS);
    return 0;
}
