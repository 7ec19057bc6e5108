/*
 * The client every check runs: NL_THREADS threads each take the lock
 * NL_ROUNDS times (thread tid NL_ROUNDS_OF(tid) times); inside, a non-atomic counter is incremented and an owner
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
#include "workers.h"

static NL_LOCK_T the_lock;

static void *worker(void *arg)
{
    int tid = verify_worker_start(arg);
    for (int r = 0; r < NL_ROUNDS_OF(tid); r++) {
        NL_ACQUIRE(&the_lock);
        verify_section(tid);
        NL_RELEASE(&the_lock);
    }
    return NULL;
}

int main(void)
{
    NL_INIT(&the_lock);
    verify_run_workers(worker);
    assert(counter == verify_rounds());
    return 0;
}
