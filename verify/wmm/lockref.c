/* lockref (src/locks/lockref.c): a lock and a reference count in one 8-byte
 * word; a count update is one CAS of the word while the lock half is free,
 * else made under the lock. The lock half's steps are their word-wide forms
 * (NL_VERIFY: the checker has no mixed-size accesses).
 *
 * The client, an object with one reference per thread: thread 0 takes an
 * extra reference; each thread holds the lock for a section (a non-atomic
 * counter and an owner field, as client.h); thread 0 drops its extra
 * reference (never the last); each uses the object (a non-atomic write of
 * its own slot), then drops its own reference. (Every thread taking and
 * dropping an extra reference makes 2 threads take 80000 executions.) The put that finds the count at 1 returns with the lock held
 * and tears the object down: it reads every thread's slot (a data race
 * unless every earlier put happens before it), checks the count and marks
 * the lockref dead. Updates race both ways: a lockless CAS against a holder
 * of the lock half, a locked update against a lockless CAS. main checks that
 * exactly one put tore down, every section ran, and the word ends dead and
 * unlocked (no update lost). */
#include "env.h"
#include "locks/lockref.c"
#include "env.c"

#include "workers.h"

static nl_lockref_t ref;
static int used[NL_THREADS];  /* each thread's use of the object, before its last put */
static int torn;              /* teardowns (under the lock) */

static void *worker(void *arg)
{
    int tid = verify_worker_start(arg);
    if (tid == 0)
        nl_lockref_get(&ref);
    take(&ref);
    verify_section(tid);
    nl_lockref_unlock(&ref);
    if (tid == 0)
        assert(nl_lockref_put_or_lock(&ref) == 1); /* our own reference is still held */
    used[tid] = 1;
    if (nl_lockref_put_or_lock(&ref) == 0) {
        /* the last reference: the lock is ours, every other put is done */
        assert(nl_lockref_count(&ref) == 1);
        for (int i = 0; i < NL_THREADS; i++)
            assert(used[i] == 1);
        torn++;
        nl_lockref_mark_dead(&ref);
        nl_lockref_unlock(&ref);
    }
    return NULL;
}

int main(void)
{
    nl_lockref_init(&ref, NL_THREADS);
    verify_run_workers(worker);
    assert(torn == 1 && counter == NL_THREADS);
    uint64_t w = atomic_load_explicit(&ref.lock_count, memory_order_relaxed);
    assert(count_of(w) == NL_LOCKREF_DEAD && lock_free(w));
    return 0;
}
