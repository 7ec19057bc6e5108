/*
 * Hemlock (Dice & Kogan, "Hemlock: Compact and Scalable Mutual Exclusion",
 * SPAA 2021; arXiv 2102.03863, listing 1).
 *
 * The lock is one word, the tail of an implicit queue: each thread has one
 * grant word for all the locks it holds, and a waiter watches its
 * predecessor's grant word for the lock's address, then acknowledges by
 * clearing it; the releaser waits for that acknowledgement. No queue nodes
 * pass between threads. All-zero is unlocked.
 *
 *  - Paper form: nl_hemlock_lock(l, self) / nl_hemlock_unlock(l, self),
 *    `self` the thread's element (one per thread, every lock; zero-filled
 *    before its first use and kept, unmoved, while the thread may use a
 *    lock). Only the thread that locked may unlock, with the same element.
 *  - Node-free form: nl_hemlock_acquire(l): the element is the calling
 *    thread's own, kept by the library per thread slot.
 */
#ifndef NUMALOCK_HEMLOCK_H
#define NUMALOCK_HEMLOCK_H

#include "numalock.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A thread's element: its grant word (0, or the address of the lock it is
 * handing over; bit 0: a thread sleeps on this element) and the futex word
 * sleepers wait on. Keep it on a cache line of its own (the library's own
 * elements are). */
typedef struct nl_hemlock_elem {
    NL_ATOMIC(uint64_t) grant;
    NL_ATOMIC(uint32_t) seq;
    uint32_t reserved;
} nl_hemlock_elem_t;

typedef struct { NL_ATOMIC(nl_hemlock_elem_t *) tail; } nl_hemlock_t;
#define NL_HEMLOCK_INIT { 0 }

/* paper form */
NL_API void nl_hemlock_lock(nl_hemlock_t *l, nl_hemlock_elem_t *self);
NL_API int  nl_hemlock_trylock(nl_hemlock_t *l, nl_hemlock_elem_t *self); /* 0 or EBUSY */
NL_API void nl_hemlock_unlock(nl_hemlock_t *l, nl_hemlock_elem_t *self);
/* node-free form: the calling thread's own element */
NL_API void nl_hemlock_acquire(nl_hemlock_t *l);
NL_API int  nl_hemlock_try(nl_hemlock_t *l);
NL_API void nl_hemlock_release(nl_hemlock_t *l);
/* true while some thread holds the lock (a snapshot) */
NL_API bool nl_hemlock_is_locked(const nl_hemlock_t *l);

#ifdef __cplusplus
}
#endif
#endif
