/* The reciprocating lock (src/locks/reciprocating.c). Paper form: each
 * thread brings its wait element and the context of its acquisition. With
 * 3 threads the holder's element is the bottom mark of a segment of two,
 * and an arrival during a segment lands on the next stack (RECIP_EMPTY).
 * Variants: NL_ROUNDS_OF (checks.sh), a thread arrives again while its
 * element may still be the mark of the segment it detached;
 * RECIP_NODE_FREE, the node-free form (element and context from the
 * thread's pool); RECIP_TWO_LOCKS, one element per thread for two locks:
 * thread 0 holds A and takes B with the same element while thread 1 queues
 * on A and thread 2 on B (a waiter's element is only compared once its
 * thread holds the lock). */
#include "env.h"
#include "locks/reciprocating.c"
#include "env.c"

static nl_recip_wait_t elems[NL_VERIFY_MAX_THREADS];

#ifndef RECIP_TWO_LOCKS
#define NL_LOCK_T nl_recip_t
#define NL_INIT(l) ((void)0)
#ifdef RECIP_NODE_FREE
#define NL_ACQUIRE(l) nl_recip_acquire(l)
#define NL_RELEASE(l) nl_recip_release(l)
#else
static nl_recip_ctx_t ctxs[NL_VERIFY_MAX_THREADS];
#define NL_ACQUIRE(l) nl_recip_lock(l, &elems[tid], &ctxs[tid])
#define NL_RELEASE(l) nl_recip_unlock(l, &ctxs[tid])
#endif
#include "client.h"
#else
#include "workers.h"
static nl_recip_t lock_a, lock_b;
static int count_a, count_b; /* non-atomic: one lock each */

static void *worker(void *arg)
{
    int tid = verify_worker_start(arg);
    nl_recip_ctx_t ca, cb;
    if (tid != 2)
        nl_recip_lock(&lock_a, &elems[tid], &ca);
    if (tid != 1)
        nl_recip_lock(&lock_b, &elems[tid], &cb);
    if (tid != 2)
        count_a++;
    if (tid != 1)
        count_b++;
    if (tid != 1)
        nl_recip_unlock(&lock_b, &cb);
    if (tid != 2)
        nl_recip_unlock(&lock_a, &ca);
    return NULL;
}

int main(void)
{
    verify_run_workers(worker);
    assert(count_a == 2 && count_b == 2);
    return 0;
}
#endif
