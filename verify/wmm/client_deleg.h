/*
 * The client of a delegation lock's check: NL_THREADS threads each execute
 * NL_ROUNDS requests (or NL_ROUNDS_OF(tid)) through the lock (execute(lock, fn, arg)); the
 * request's function is the critical section: it writes an owner field,
 * increments a non-atomic counter, reads the owner back, and returns a value
 * derived from its argument, which the requester checks, together with a
 * non-atomic result field the function wrote for it. GenMC reports a data
 * race when two functions are not ordered by happens-before (mutual
 * exclusion, whichever thread runs them), or when a requester's reads after
 * execute returns are not ordered after its function (the request's
 * publication and completion orders); an assertion when the owner changed
 * under a function, a request ran twice or its answer is wrong; a blocked
 * execution when a request is never answered. main checks the count once
 * every thread has finished: no request lost, none run twice.
 *
 * A check defines NL_DELEG_T, NL_DELEG_INIT(l), NL_EXECUTE(l, fn, arg) (and
 * may define NL_NODE_OF(tid), and NL_ROUNDS_OF(tid), the requests of thread
 * tid, at most NL_ROUNDS) before including this file; `tid`, the thread's
 * index, is in scope in them.
 */
#include "workers.h"

static NL_DELEG_T the_lock;
static int ran[NL_THREADS][NL_ROUNDS]; /* written by whoever runs the request */

static void *critical(void *arg)
{
    int id = (int)(long)arg; /* tid * NL_ROUNDS + round */
    ran[id / NL_ROUNDS][id % NL_ROUNDS]++;
    verify_section(id);
    return (void *)(long)(id + 1000);
}

static void *worker(void *arg)
{
    int tid = verify_worker_start(arg);
    for (int r = 0; r < NL_ROUNDS_OF(tid); r++) {
        long id = tid * NL_ROUNDS + r;
        void *res = NL_EXECUTE(&the_lock, critical, (void *)id);
        assert(res == (void *)(id + 1000));
        assert(ran[tid][r] == 1);
    }
    return NULL;
}

int main(void)
{
    NL_DELEG_INIT(&the_lock);
    verify_run_workers(worker);
    assert(counter == verify_rounds());
    return 0;
}
