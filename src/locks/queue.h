/*
 * The steps every MCS-style queue takes (not installed), for any node type
 * with a `next` link and a grant word (src/wait/wait.h): the MCS queue of
 * mcs_queue.h (32-bit grant `granted`), CNA and the 4-byte queue locks
 * (64-bit grant `spin`). One copy of each step, written as macros over the
 * node type and its grant field.
 *
 * Invariants the steps rely on: a node's `next` is written once, by its
 * successor, after the successor swapped itself into the tail; a node's
 * grant word is written by its predecessor only (or the holder that picks
 * it), once it is linked.
 */
#ifndef NL_QUEUE_H
#define NL_QUEUE_H

#include <errno.h>
#include "../internal.h"

/* A queue's 32-bit grant word is the MCS node's, which carries a node half
 * (the two-word form of src/wait/wait.h: nl_wait_grant32n) */
#define NL_GRANT_WAIT(w, word)                                                                 \
    _Generic((word), _Atomic uint32_t *: nl_wait_grant32n, _Atomic uint64_t *: nl_wait_grant64)( \
        (w), (word))
#define NL_NUDGE(word) _Generic((word), _Atomic uint32_t *: nl_nudge32n, _Atomic uint64_t *: nl_nudge64)(word)

/* Wait for `me`'s turn (its grant word, field `gf`) once it is linked behind
 * its predecessor; a waiter that parked then wakes its own successor at
 * once (early wake: that one has probably parked too, and is back on a CPU
 * by the time its turn comes). The grant value. */
#define NL_QUEUE_AWAIT(w, me, gf)                                                              \
    ({                                                                                         \
        __typeof__(atomic_load_explicit(&(me)->gf, memory_order_relaxed)) g_ =                 \
            NL_GRANT_WAIT((w), &(me)->gf);                                                     \
        if (nl_wait_parked(w)) {                                                               \
            __typeof__(me) n_ = (__typeof__(me))atomic_load_explicit(&(me)->next,              \
                                                                     memory_order_acquire);    \
            if (n_)                                                                            \
                NL_NUDGE(&n_->gf);                                                             \
        }                                                                                      \
        g_;                                                                                    \
    })

/* `me`'s successor, which has swapped the tail but may not have linked
 * itself yet: wait for the link (steps of `w`; the successor may have lost
 * its CPU between its swap and its link). */
#define NL_QUEUE_NEXT(w, me)                                                                   \
    ({                                                                                         \
        __typeof__(me) n_;                                                                     \
        while (!(n_ = (__typeof__(me))atomic_load_explicit(&(me)->next, memory_order_acquire))) \
            nl_wait_step(w);                                                                   \
        n_;                                                                                    \
    })

/* Take an empty queue whose tail is `tail` with node `me` (one CAS): 0, or
 * EBUSY when anybody holds or waits. */
#define NL_QUEUE_TRY(tail, me, gf)                                                             \
    ({                                                                                         \
        __typeof__(me) e_ = NULL;                                                              \
        atomic_store_explicit(&(me)->next, NULL, memory_order_relaxed);                        \
        atomic_store_explicit(&(me)->gf, NL_GRANT_WAITING, memory_order_relaxed);              \
        atomic_compare_exchange_strong_explicit((tail), &e_, (me), memory_order_acq_rel,       \
                                                memory_order_relaxed) ? 0 : EBUSY;             \
    })

#endif
