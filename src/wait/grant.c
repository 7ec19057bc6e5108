/*
 * Parking and grant words (see wait.h): the waiter's side (park, wait for a
 * grant) and the waker's (wake, nudge); and a lock's own condition
 * variable's sleep and wake. The protocol the queue locks build
 * their hand-overs on, kept apart from the policy and the futex calls
 * (wait.c) so that the model checks of verify/wmm compile it unchanged with
 * a model of the futex.
 *
 * Invariants: a grant word moves WAITING -> PARKED only by its waiter (a CAS,
 * before it sleeps), PARKED -> WAITING only by a nudge (a CAS, then a wake),
 * and to a grant value only by the granter (an exchange that wakes the
 * waiter when it found PARKED); the futex sleep returns as soon as the word
 * is no longer PARKED, so neither a grant nor a nudge is lost.
 */
#include "wait.h"
#include "futex.h"

void nl_wait_park(nl_waiter_t *w, _Atomic uint32_t *word, uint32_t val)
{
    bool counted = w->counted;
    nl_wait_uncount(w);
    if (counted)
        atomic_fetch_add_explicit(&nl_parked, 1, memory_order_relaxed);
    w->self->wc.parks++;
    nl_futex_wait(word, val);
    if (counted)
        atomic_fetch_sub_explicit(&nl_parked, 1, memory_order_relaxed);
    nl_wait_count(w);
    w->slept = 1;
    w->parked = 1;
    nl_wait_renew(w); /* a fresh spin budget after the wake-up */
}

void nl_wait_wake(void *word, int n)
{
    nl_self()->wc.wakes++;
    nl_futex_wake(word, n);
}

/* a grant found its waiter parked (the waiter counts the hand-over) */
void nl_wake_parked(void *addr) { nl_wait_wake(addr, 1); }

/* a lock's own condition variable: no waiter, nothing counted */
void nl_wait_cond_sleep(_Atomic uint32_t *word, uint32_t val) { nl_futex_wait(word, val); }

void nl_wait_cond_wake(_Atomic uint32_t *word, int n) { nl_futex_wake(word, n); }

void nl_nudge_slow(void *addr, bool wide)
{
    bool woke;
    if (wide) {
        uint64_t expect = NL_GRANT_PARKED;
        woke = atomic_compare_exchange_strong_explicit((_Atomic uint64_t *)addr, &expect,
                                                       NL_GRANT_WAITING, memory_order_relaxed,
                                                       memory_order_relaxed);
    } else {
        uint32_t expect = NL_GRANT_PARKED;
        woke = atomic_compare_exchange_strong_explicit((_Atomic uint32_t *)addr, &expect,
                                                       NL_GRANT_WAITING, memory_order_relaxed,
                                                       memory_order_relaxed);
    }
    if (woke) /* else it was granted meanwhile: the grant wakes it */
        nl_wait_wake(wide ? nl_futex64(addr) : addr, 1);
}

/* ---- grant words -------------------------------------------------------------
 * The slow path of a grant-word wait, for both widths (`wide`: the word is
 * 64 bits and the futex is its low half). Step until granted or the spin
 * budget is spent, then move the word from WAITING to PARKED and sleep
 * until it changes: to a grant (return it), or back to WAITING (an early
 * wake: spin again). */
uint64_t nl_wait_grant_slow(nl_waiter_t *w, void *word, bool wide)
{
    _Atomic uint32_t *w32 = word;
    _Atomic uint64_t *w64 = word;
#define LOAD() (wide ? atomic_load_explicit(w64, memory_order_acquire) \
                     : (uint64_t)atomic_load_explicit(w32, memory_order_acquire))
#define GRANTED(v) ((v) != NL_GRANT_WAITING && (v) != NL_GRANT_PARKED)
    uint64_t v;
    for (;;) {
        while (!nl_wait_due(w)) {
            v = LOAD();
            if (GRANTED(v))
                return v;
            nl_wait_step(w);
        }
        /* park until granted or nudged */
        for (;;) {
            bool parked;
            if (wide) {
                uint64_t expect = NL_GRANT_WAITING;
                parked = atomic_compare_exchange_strong_explicit(w64, &expect, NL_GRANT_PARKED,
                                                                 memory_order_acq_rel,
                                                                 memory_order_acquire) ||
                         expect == NL_GRANT_PARKED;
            } else {
                uint32_t expect = NL_GRANT_WAITING;
                parked = atomic_compare_exchange_strong_explicit(w32, &expect, NL_GRANT_PARKED,
                                                                 memory_order_acq_rel,
                                                                 memory_order_acquire) ||
                         expect == NL_GRANT_PARKED;
            }
            if (parked)
                nl_wait_park(w, wide ? nl_futex64(w64) : w32, NL_GRANT_PARKED);
            v = LOAD();
            if (GRANTED(v))
                return v;
            if (v == NL_GRANT_WAITING)
                break; /* nudged: the lock is near, spin again */
        }
    }
#undef GRANTED
#undef LOAD
}
