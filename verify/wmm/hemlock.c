/* Hemlock (src/locks/hemlock.c). Paper form: each thread brings its
 * element (one per thread, zeroed). HEM_NODE_FREE: the node-free form (the
 * thread slot's element, allocated at first use). HEM_TWO_LOCKS: thread 0
 * holds A and B with its one element while thread 1 waits on A and thread 2
 * on B, both watching thread 0's grant word (the grant names the lock); with
 * NL_VERIFY_PARK both sleep on it. */
#include "env.h"
#include "locks/hemlock.c"
#include "env.c"

static nl_hemlock_elem_t elems[NL_VERIFY_MAX_THREADS];
/* The locks' addresses as each thread reads them from a word of its own
 * with a compare-and-swap that fails (the compiler turns an idle add into a
 * load): GenMC inlines every call and reads each wait's exit test (the
 * grant word compared with the lock's address) as an expression, in which
 * it takes neither an address constant nor a second load (which it reads
 * as its confirmation pattern). */
static _Atomic(uintptr_t) hem_refs[NL_VERIFY_MAX_THREADS][2];
static void hem_set_refs(void *a, void *b)
{
#pragma GCC unroll 8
    for (int t = 0; t < NL_THREADS; t++) {
        atomic_store_explicit(&hem_refs[t][0], (uintptr_t)a, memory_order_relaxed);
        atomic_store_explicit(&hem_refs[t][1], (uintptr_t)b, memory_order_relaxed);
    }
}
static inline nl_hemlock_t *hem_ref(int tid, int i)
{
    uintptr_t v = 0;
    atomic_compare_exchange_strong_explicit(&hem_refs[tid][i], &v, 0, memory_order_relaxed,
                                            memory_order_relaxed);
    return (nl_hemlock_t *)v;
}
#define HEM_REF(i) hem_ref(tid, (i))

#ifndef HEM_TWO_LOCKS
#define NL_LOCK_T nl_hemlock_t
#ifdef HEM_NODE_FREE
/* every thread slot's element made before the threads start (the
 * checker's bump allocator would multiply the executions); the slow path
 * that makes one at a thread's first use is hem_elem_slow */
static void hem_prealloc(void)
{
#pragma GCC unroll 8
    for (int id = 0; id <= NL_THREADS; id++)
        (void)hem_elem_slow(id);
}
#define NL_INIT(l) (hem_set_refs((l), NULL), hem_prealloc())
#else
#define NL_INIT(l) hem_set_refs((l), NULL)
#endif
#ifdef HEM_NODE_FREE
#define NL_ACQUIRE(l) nl_hemlock_acquire(HEM_REF(0))
#define NL_RELEASE(l) nl_hemlock_release(HEM_REF(0))
#else
#define NL_ACQUIRE(l) nl_hemlock_lock(HEM_REF(0), &elems[tid])
#define NL_RELEASE(l) nl_hemlock_unlock(HEM_REF(0), &elems[tid])
#endif
#include "client.h"
#else
#include "workers.h"
static nl_hemlock_t lock_a, lock_b;
static int count_a, count_b; /* non-atomic: one lock each */

static void *worker(void *arg)
{
    int tid = verify_worker_start(arg);
    if (tid != 2)
        nl_hemlock_lock(HEM_REF(0), &elems[tid]);
    if (tid != 1)
        nl_hemlock_lock(HEM_REF(1), &elems[tid]);
    if (tid != 2)
        count_a++;
    if (tid != 1)
        count_b++;
    if (tid != 2)
        nl_hemlock_unlock(HEM_REF(0), &elems[tid]);
    if (tid != 1)
        nl_hemlock_unlock(HEM_REF(1), &elems[tid]);
    return NULL;
}

int main(void)
{
    hem_set_refs(&lock_a, &lock_b);
    verify_run_workers(worker);
    assert(count_a == 2 && count_b == 2);
    return 0;
}
#endif
