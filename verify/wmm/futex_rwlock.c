/* futex-rwlock (src/locks/futex_rwlock.c): the reader-preferring read-write
 * lock in one futex word, as the registry entry and the preload's default
 * pthread rwlock take it (a try, then the wait). A waiter tries twice
 * (spinning; a single try meets a GenMC 0.9 loop-jump-threading error that
 * runs a successful try again) or not at all (NL_VERIFY_PARK) before it sets
 * the sleeper bit and sleeps on the futex model, so every run goes through
 * the sleep/wake protocol: the releasing step clears the bit and wakes.
 * With NL_FRW_PREFER_WRITERS, the writer-preferring kind: a writer counts
 * itself among the waiting writers first. The client (client_rw.h): thread
 * 0 writes, the others read (NL_WRITER(tid) may make more writers); at the
 * end the word is back to 0 (no reader counted, no writer, no sleeper bit,
 * no waiting writer). Termination is checked: a lost wake-up is a sleep
 * that never ends. */
#include "env.h"
#ifndef NL_FRW_TRIES
#define NL_FRW_TRIES (NL_VERIFY_DUE ? 0 : 2)
#endif
#include "locks/futex_rwlock.c"
#include "env.c"

#ifdef NL_FRW_PREFER_WRITERS
#define FRW_PW 1
#else
#define FRW_PW 0
#endif
static void frw_lock(nl_frw_t *l, int write)
{
    if (nl_frw_try(l, write, FRW_PW))
        nl_frw_wait(l, write, FRW_PW, NULL, NULL);
}

#define NL_RW_T nl_frw_t
#define NL_RW_INIT(l) ((void)0)
#define NL_RDLOCK(l) frw_lock(l, 0)
#define NL_RDUNLOCK(l) assert(nl_frw_read_unlock(l) == 0)
#define NL_WRLOCK(l) frw_lock(l, 1)
#define NL_WRUNLOCK(l) nl_frw_write_unlock(l)
#define NL_RW_IDLE(l) (atomic_load_explicit(&(l)->state, memory_order_relaxed) == 0)
#include "client_rw.h"
