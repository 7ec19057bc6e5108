/*
 * The client of the reader-writer lock checks (client.h's idea for a lock
 * with two modes): NL_THREADS threads, each a writer or a reader
 * (NL_WRITER(tid); by default thread 0 writes and the others read), take
 * the lock NL_ROUNDS times in their mode. A writer increments a non-atomic
 * counter and writes an owner field and reads it back; a reader reads both
 * twice and asserts that no writer is inside (owner -1) and that the counter
 * did not change under it. GenMC reports a data race when a writer's
 * section is not ordered by happens-before with another writer's or a
 * reader's (exclusion or a missing release/acquire; readers only read, so
 * readers together are no race), an assertion when a writer was seen
 * inside, and a blocked execution when a waiter of either mode is never let
 * in (a lost reader or writer). main checks the count once every thread
 * has finished, and, where the check defines NL_RW_IDLE(l), that the lock
 * is back in its idle state.
 *
 * A check defines NL_RW_T, NL_RW_INIT(l), NL_RDLOCK(l), NL_RDUNLOCK(l),
 * NL_WRLOCK(l), NL_WRUNLOCK(l) (and may define NL_NODE_OF(tid) and
 * NL_WRITER(tid)) before including this file; `tid`, the thread's index,
 * is in scope in them.
 */
#include "workers.h"
#ifndef NL_WRITER
#define NL_WRITER(tid) ((tid) == 0)
#endif

static NL_RW_T the_lock;

static void *worker(void *arg)
{
    int tid = verify_worker_start(arg);
    for (int r = 0; r < NL_ROUNDS; r++) {
        if (NL_WRITER(tid)) {
            NL_WRLOCK(&the_lock);
            verify_section(tid);
            NL_WRUNLOCK(&the_lock);
        } else {
            NL_RDLOCK(&the_lock);
            int seen = counter;
            assert(owner == -1);
            assert(counter == seen);
            NL_RDUNLOCK(&the_lock);
        }
    }
    return NULL;
}

int main(void)
{
    int writers = 0;
    NL_RW_INIT(&the_lock);
    verify_run_workers(worker);
    for (int i = 0; i < NL_THREADS; i++)
        writers += NL_WRITER(i) ? 1 : 0;
    assert(counter == writers * NL_ROUNDS);
#ifdef NL_RW_IDLE
    assert(NL_RW_IDLE(&the_lock));
#endif
    return 0;
}
