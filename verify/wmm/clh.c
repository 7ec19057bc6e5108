/* The CLH lock (src/locks/clh.c): nodes from each thread's cache (the
 * checker's zeroed pool: the shared spare list is not built), the holder's
 * node kept in the lock. With NL_ROUNDS_OF (checks.sh) a thread arrives
 * again with the node it took from its predecessor, or its own when it
 * found no successor. CLH_CROSS: thread 0's lock is released by thread 1,
 * which waits for a flag thread 0 sets while it holds the lock (any thread
 * may release). */
#include "env.h"
#include "locks/clh.c"
#include "env.c"

/* Each thread slot's cache and two nodes made before the threads start
 * (their allocation is the checker's bump allocator, whose shared counter
 * would multiply the executions without touching the lock's protocol). */
static void clh_prealloc(void)
{
#pragma GCC unroll 8
    for (int id = 0; id <= NL_THREADS; id++) {
        clh_cache_t *c;
        posix_memalign((void **)&c, NL_CACHELINE, sizeof *c);
        c->top = clh_alloc();
        c->top->spare = clh_alloc();
        c->n = 2;
        atomic_store_explicit(&clh_caches[id], c, memory_order_relaxed);
    }
}

#ifndef CLH_CROSS
#define NL_LOCK_T nl_clh_t
#define NL_INIT(l) clh_prealloc()
#define NL_ACQUIRE(l) nl_clh_acquire(l)
#define NL_RELEASE(l) nl_clh_release(l)
#include "client.h"
#else
#include "workers.h"
static nl_clh_t the_lock;
static _Atomic int handed;

static void *worker(void *arg)
{
    int tid = verify_worker_start(arg);
    if (tid == 0) {
        nl_clh_acquire(&the_lock);
        verify_section(tid);
        atomic_store_explicit(&handed, 1, memory_order_release);
    } else if (tid == 1) {
        while (!atomic_load_explicit(&handed, memory_order_acquire))
            ;
        nl_clh_release(&the_lock);
    } else {
        nl_clh_acquire(&the_lock);
        verify_section(tid);
        nl_clh_release(&the_lock);
    }
    return NULL;
}

int main(void)
{
    clh_prealloc();
    verify_run_workers(worker);
    assert(counter == NL_THREADS - 1);
    return 0;
}
#endif
