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
 * is no longer PARKED, so neither a grant nor a nudge is lost. A two-word
 * grant word's node half is written by its waiter only while the word is
 * WAITING, so every wake after a PARKED reads the node of that sleep.
 */
#include "wait.h"
#include "futex.h"

/* the forms of a grant word (nl_wait_grant_slow, nl_nudge_slow) */
enum { GW_32 = 0, GW_64 = 1, GW_32N = 2 };

/* Sleep while *word == val, on a plain futex or (node) a two-word one. */
static void park(nl_waiter_t *w, _Atomic uint32_t *word, uint32_t val, bool node)
{
    bool counted = w->counted;
    nl_wait_uncount(w);
    if (counted)
        atomic_fetch_add_explicit(&nl_parked, 1, memory_order_relaxed);
    w->self->wc.parks++;
    if (node)
        nl_futex_wait_node(word, val);
    else
        nl_futex_wait(word, val);
    if (counted)
        atomic_fetch_sub_explicit(&nl_parked, 1, memory_order_relaxed);
    nl_wait_count(w);
    w->slept = 1;
    w->parked = 1;
    nl_wait_renew(w); /* a fresh spin budget after the wake-up */
}

void nl_wait_park(nl_waiter_t *w, _Atomic uint32_t *word, uint32_t val) { park(w, word, val, false); }

/* a lock's wake: counted, with the sleepers it woke */
static void wake(void *word, int n, bool node)
{
    nl_wait_counts_t *wc = &nl_self()->wc;
    wc->wakes++;
    wc->woken += (uint64_t)(node ? nl_futex_wake_node(word, n) : nl_futex_wake(word, n));
}

void nl_wait_wake(void *word, int n) { wake(word, n, false); }

/* a grant found its waiter parked (the waiter counts the hand-over) */
void nl_wake_parked(void *addr) { wake(addr, 1, false); }
void nl_wake_parked_node(void *addr) { wake(addr, 1, true); }

/* a lock's own condition variable: no waiter, nothing counted */
void nl_wait_cond_sleep(_Atomic uint32_t *word, uint32_t val) { nl_futex_wait(word, val); }

void nl_wait_cond_wake(_Atomic uint32_t *word, int n) { nl_futex_wake(word, n); }

/* PARKED -> WAITING, then a wake. Acquire: a two-word word's node half,
 * written before the waiter's PARKED, must be the one this wake reads. */
void nl_nudge_slow(void *addr, int form)
{
    bool woke;
    if (form == GW_64) {
        uint64_t expect = NL_GRANT_PARKED;
        woke = atomic_compare_exchange_strong_explicit((_Atomic uint64_t *)addr, &expect,
                                                       NL_GRANT_WAITING, memory_order_acquire,
                                                       memory_order_relaxed);
    } else {
        uint32_t expect = NL_GRANT_PARKED;
        woke = atomic_compare_exchange_strong_explicit((_Atomic uint32_t *)addr, &expect,
                                                       NL_GRANT_WAITING, memory_order_acquire,
                                                       memory_order_relaxed);
    }
    if (woke) /* else it was granted meanwhile: the grant wakes it */
        wake(form == GW_64 ? nl_futex64(addr) : addr, 1, form == GW_32N);
}

/* WAITING -> PARKED (true also when the word is PARKED already, by this
 * waiter's earlier park). A two-word word gets the waiter's node first,
 * only while it is WAITING: no waker reads it then, and once it is PARKED
 * its waker reads the node this waiter sleeps with. */
static bool announce(void *word, int form)
{
    if (form == GW_64) {
        uint64_t expect = NL_GRANT_WAITING;
        return atomic_compare_exchange_strong_explicit((_Atomic uint64_t *)word, &expect, NL_GRANT_PARKED,
                                                       memory_order_acq_rel, memory_order_acquire) ||
               expect == NL_GRANT_PARKED;
    }
    _Atomic uint32_t *w32 = word;
    if (form == GW_32N && atomic_load_explicit(w32, memory_order_relaxed) == NL_GRANT_WAITING)
        nl_futex_node_claim(w32);
    uint32_t expect = NL_GRANT_WAITING;
    return atomic_compare_exchange_strong_explicit(w32, &expect, NL_GRANT_PARKED, memory_order_acq_rel,
                                                   memory_order_acquire) ||
           expect == NL_GRANT_PARKED;
}

/* ---- grant words -------------------------------------------------------------
 * The slow path of a grant-word wait, for every form (`form`: GW_64, the
 * word is 64 bits and the futex is its low half; GW_32N, a two-word futex).
 * Step until granted or the spin budget is spent, then move the word from
 * WAITING to PARKED and sleep until it changes: to a grant (return it), or
 * back to WAITING (an early wake: spin again). */
uint64_t nl_wait_grant_slow(nl_waiter_t *w, void *word, int form)
{
    _Atomic uint32_t *w32 = word;
    _Atomic uint64_t *w64 = word;
#define LOAD() (form == GW_64 ? atomic_load_explicit(w64, memory_order_acquire) \
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
            if (announce(word, form))
                park(w, form == GW_64 ? nl_futex64(w64) : w32, NL_GRANT_PARKED, form == GW_32N);
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
