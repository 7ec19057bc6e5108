/*
 * futex-rwlock: a read-write lock in one 32-bit word that is also its futex
 * word (src/locks/futex_rwlock.c). Reader-preferring like glibc's default
 * rwlock kind, or writer-preferring per call (glibc's
 * PREFER_WRITER_NONRECURSIVE kind). The preload library's pthread_rwlock_t
 * runs on it (src/interpose/rwlock.c); the registry entry "futex-rwlock" is
 * the reader-preferring form, so the stress harness and TSan run the same code.
 * Internal (not installed).
 */
#ifndef NL_FUTEX_RWLOCK_H
#define NL_FUTEX_RWLOCK_H

#include <stdint.h>
#include "../internal.h"

typedef struct nl_frw {
    _Atomic uint32_t state; /* FRW_WRITER | FRW_SLEEPERS | waiting writers | readers */
} nl_frw_t;

#define FRW_WRITER 0x80000000u
#define FRW_SLEEPERS 0x40000000u /* someone sleeps (or is about to) on the word */
#define FRW_WWAIT 0x3fc00000u    /* writers waiting (counted only when writers are preferred) */
#define FRW_WWAIT_ONE 0x00400000u
#define FRW_READERS 0x003fffffu

/* How a waiter sleeps on the word while it still holds `val`: returns 0 on a
 * wake-up (spurious ones included) or ETIMEDOUT to give up. NULL: sleep with
 * nl_futex_wait until woken. */
typedef int (*nl_frw_sleep_fn)(_Atomic uint32_t *word, uint32_t val, void *ctx);

/* One attempt: 0, EBUSY, or EAGAIN (read side: reader count saturated). */
NL_HIDDEN int nl_frw_try(nl_frw_t *l, int write, int prefer_writers);
/* Wait for the lock: 0, EAGAIN (as try) or ETIMEDOUT (from `sleep`). */
NL_HIDDEN int nl_frw_wait(nl_frw_t *l, int write, int prefer_writers, nl_frw_sleep_fn sleep, void *ctx);
NL_HIDDEN void nl_frw_write_unlock(nl_frw_t *l);
/* 0, or EPERM when the lock is not held for reading */
NL_HIDDEN int nl_frw_read_unlock(nl_frw_t *l);

static inline int nl_frw_held(const nl_frw_t *l)
{
    return (atomic_load_explicit(&((nl_frw_t *)l)->state, memory_order_relaxed) & (FRW_WRITER | FRW_READERS)) != 0;
}

#endif
