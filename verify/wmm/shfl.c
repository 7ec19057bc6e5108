/* ShflLock (src/locks/shfl.c, queue nodes of src/locks/tail_nodes.h): shfl,
 * or with NL_SHFL_BLOCK shfl-block (waiters park; the queue head wakes the
 * next ones ahead of their turn). The lock byte, the steal filter and the
 * tail share one word; the byte and half-word steps are checked in their
 * word-wide forms (NL_VERIFY).
 *
 * The client: main (node 1) takes the lock, starts NL_THREADS - 1 workers
 * (node 0) and releases it at any point; each worker takes the lock once.
 * The workers meet a held lock, so they queue: with two of them the first
 * is the head and the second links behind it; the head, a shuffler, finds
 * a waiter of its node right behind it, which joins its batch and gets the
 * shuffler role (its own pass then walks behind itself); the head sets the
 * no-stealing filter at its first look (SH_PATIENCE 0), takes the lock byte
 * and grants the head role on. A non-atomic counter and an owner field in
 * every section, as client.h; main checks the count.
 *
 * The batch rule is the time rule on a clock that does not advance, so
 * every shuffle keeps the batch: the end of a batch is not explored. */
#include "env.h"
#define SH_PATIENCE 0
#include "locks/shfl.c"
#include "locks/tail_nodes.c"
#include "env.c"

#ifndef NL_THREADS
#define NL_THREADS 3
#endif
#include "workers.h"

/* CNA's fairness settings (cna.c, whose operation tables would clash with
 * shfl.c's in one translation unit) and the clock (src/core/thread.c) */
_Atomic int nl_cna_mode = NL_CNA_MODE_TIME;
_Atomic uint64_t nl_cna_limit_ns = UINT64_MAX, nl_cna_mask;
int nl_cna_fairness_init(void) { return NL_CNA_MODE_TIME; }
uint64_t nl_clock_ns(void) { return 0; }

static nl_shfl_t the_lock;

static void lock(void)
{
#ifdef NL_SHFL_BLOCK
    nl_shfl_block_lock(&the_lock);
#else
    nl_shfl_lock(&the_lock);
#endif
}

static void *worker(void *arg)
{
    int tid = (int)(long)arg;
    nl_verify_set_node(0, 0);
    lock();
    verify_section(tid);
    nl_shfl_unlock(&the_lock);
    return NULL;
}

int main(void)
{
    pthread_t t[NL_THREADS];
    /* the threads' tail nodes made before they run (the library makes them
     * at a thread's first queue wait): their allocation is not what this
     * check is about, and in the runs it would take minutes */
    nl_tail_block_slow(0);
    nl_tail_block_slow(1);
    if (NL_THREADS > 2)
        nl_tail_block_slow(2);
    nl_verify_started = 1;
    nl_verify_set_node(1, 1);
    lock();
    for (long i = 1; i < NL_THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    verify_section(0);
    nl_shfl_unlock(&the_lock);
    for (int i = 1; i < NL_THREADS; i++)
        pthread_join(t[i], NULL);
    assert(counter == NL_THREADS);
    return 0;
}
