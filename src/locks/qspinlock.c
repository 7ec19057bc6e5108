/*
 * qspinlock: the Linux kernel's 4-byte queued spin lock (Waiman Long 2013;
 * CNA paper section 3), with an MCS slow path (`qspinlock`) or a CNA slow
 * path (`qspinlock-cna`, CNA paper section 5 "integrated in the kernel's
 * qspinlock": only the slow path changes; fast path and unlock stay).
 *
 * Lock word (32 bits, little-endian byte 0 = locked byte):
 *    bits  0- 7  locked byte (0 or 1)
 *    bit   8     pending: the one waiter that waits on the lock word itself
 *    bit   9     no-steal: a queue head is designated and waits for the lock
 *                  (trylock fails); set by the owner that hands the head on,
 *                  or by a head that found the queue empty, cleared (or
 *                  handed on) by the head when it takes the locked byte
 *    bits 16-17  tail index: nesting level of the tail waiter's node
 *    bits 18-31  tail slot + 1: the tail waiter's thread slot (nl_thread_id)
 * Zero is unlocked. The tail names a node of the table of tail_nodes.h
 * (shared with shfl): a lock is 4 bytes whatever the thread count, and any
 * thread finds a node from a tail value.
 *
 * Paths (Linux queued_spin_lock_slowpath):
 *   fast:    CAS 0 -> locked.
 *   pending: no tail and no pending: set pending, wait for the locked byte to
 *            clear, then clear pending and set locked in one CAS.
 *   gate:    while the process is overloaded, a passive wait first
 *            (src/wait/wait.h), then the paths below.
 *   queue:   take a node, swap our tail in, link behind the old tail, wait on
 *            our node's grant word (src/wait: spin while we have a CPU, park
 *            when the wait is long; a waiter that parked wakes its successor
 *            once it is the head); as queue head, wait
 *            for locked and pending to clear (spin then yield), take the
 *            locked byte (and clear the tail if we are the last), then grant
 *            the head to our successor -- MCS: the next node; CNA: chosen by
 *            cna_pass() (cna_impl.h), the secondary queue travelling in the
 *            node's grant word.
 * Unlock: one release store of 0 into the locked byte, from any thread.
 *
 * qspinlock-cna keeps the pending path, as the kernel patch does: it is used
 * only while nobody queues, so CNA still chooses every queued hand-over.
 *
 * Differences from Linux, all for user space: trylock does not test the whole
 * word (Linux fails it whenever anybody queues) but the locked byte and the
 * two bits of a waiter entitled to the lock next: pending, and no-steal,
 * which is set while a designated queue head waits for the owner (ShflLock's
 * no-stealing flag). So a queued tail alone does not fail a trylock, and
 * trylocks cannot starve the queue (the generic handle with statistics tries
 * before it queues: a barging trylock turned the queue into test-and-set). Because a trylock may still get in first,
 * the pending waiter and the queue head take the lock with a CAS that fails
 * if the locked byte is set (Linux sets the byte with a plain store). Threads
 * without a slot (more than NL_MAX_THREADS alive) or nested deeper than
 * NL_TAIL_NODES queue waits spin on the lock word with trylock, as Linux does past
 * 4 nesting levels.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "tail_nodes.h"

#define QS_LOCKED 1u
#define QS_LOCKED_MASK 0xffu
#define QS_PENDING (1u << 8)
#define QS_NOSTEAL (1u << 9)
#define QS_TAIL_MASK NL_TAIL_MASK
#define QS_PENDING_MIN_PAUSE 4
#define QS_PENDING_MAX_PAUSE 256
static uint32_t qs_pending_patience = 64;

/* ---- trylock and unlock ------------------------------------------------- */
/* A newcomer may take the lock when the locked byte is clear and no waiter is
 * entitled to it: no-steal (a designated queue head, or a pending waiter out
 * of patience) is clear, and a pending waiter is only overtaken while nobody
 * queues behind it. */
static inline bool qs_available(uint32_t v)
{
    if (v & (QS_LOCKED_MASK | QS_NOSTEAL))
        return false;
    return !(v & QS_PENDING) || !(v & QS_TAIL_MASK);
}

/* the lock slow path steals only from a lone pending waiter: the word is 0
 * or the pending bit alone (free, no no-steal, nobody queued) */
static inline bool qs_stealable(uint32_t v)
{
    return (v & ~QS_PENDING) == 0;
}

/* One attempt (as Linux's): a retry per available value seen could go on
 * forever while the word keeps changing (verify/qspinlock.pml, ONE_TRY). A
 * failed CAS means another thread changed the word: it is taking the lock or
 * queueing for it, and EBUSY is a fair answer. */
static inline int qs_trylock(nl_qspinlock_t *l)
{
    uint32_t v = atomic_load_explicit(&l->val, memory_order_relaxed);
    if (qs_available(v) &&
        atomic_compare_exchange_strong_explicit(&l->val, &v, v | QS_LOCKED, memory_order_acquire,
                                                memory_order_relaxed))
        return 0;
    return EBUSY;
}

/* The pending waiter: the only waiter, nobody queued. It lets the owner (or
 * any newcomer) re-take the lock ahead of it for a bounded time, checking the
 * word with exponential backoff: with two threads the releaser then runs
 * several critical sections with the lock and data cache lines at home
 * instead of handing them over each time (strict alternation costs a cache
 * line transfer per section: docs/ALGORITHMS.md, qspinlock). Past its
 * patience it sets no-steal and the next release is its. */
static __attribute__((noinline)) void qs_pending_wait(nl_qspinlock_t *l, nl_waiter_t *w)
{
    nl_backoff_t b = NL_BACKOFF_INIT(QS_PENDING_MIN_PAUSE, w);
    uint32_t rounds = 0;
    bool no_steal = false;
    for (;;) {
        uint32_t val = atomic_load_explicit(&l->val, memory_order_acquire);
        if (!(val & QS_LOCKED_MASK)) {
            /* no-steal with no queue is ours: clear it as we take the lock */
            uint32_t want = (val & ~QS_PENDING) | QS_LOCKED;
            if (!(val & QS_TAIL_MASK))
                want &= ~QS_NOSTEAL;
            if (atomic_compare_exchange_strong_explicit(&l->val, &val, want, memory_order_acquire,
                                                        memory_order_relaxed))
                return;
            /* lost the claim to a thief: that counts against the patience
             * too, or "see it free, lose the CAS" could repeat forever with
             * no-steal never set (verify/qspinlock.pml, COUNT_LOST_CLAIM) */
        }
        if (!no_steal && ++rounds > qs_pending_patience) {
            atomic_fetch_or_explicit(&l->val, QS_NOSTEAL, memory_order_relaxed);
            no_steal = true;
        }
        if (no_steal)
            nl_wait_step(w);
        else
            nl_backoff(&b, QS_PENDING_MAX_PAUSE);
    }
}

/* ---- the slow path, compiled once for MCS and once for CNA -------------- */
static bool qs_busy(const void *l)
{
    return atomic_load_explicit(&((const nl_qspinlock_t *)l)->val, memory_order_relaxed) != 0;
}

static inline __attribute__((always_inline)) void qs_queue(nl_qspinlock_t *l, nl_waiter_t *w,
                                                           const bool cna);

static inline __attribute__((always_inline)) void qs_slowpath(nl_qspinlock_t *l, uint32_t val,
                                                              const bool cna)
{
    nl_waiter_t w;
    /* saturated when a pending waiter or a queue is there already: while
     * overloaded, wait passively at the gate first (src/wait/wait.h), so
     * pending waiter and queue hold running threads */
    if (nl_wait_begin(&w, l, qs_busy, (val & ~QS_LOCKED_MASK) != 0))
        val = atomic_load_explicit(&l->val, memory_order_relaxed);

    /* only a pending waiter, no queue, lock free: take it (bounded stealing,
     * see qs_pending_wait) */
    if (qs_stealable(val) &&
        atomic_compare_exchange_strong_explicit(&l->val, &val, val | QS_LOCKED, memory_order_acquire,
                                                memory_order_relaxed)) {
        nl_wait_end(&w); /* one attempt, as trylock */
        return;
    }
    if (!(val & ~QS_LOCKED_MASK)) {
        /* no pending waiter, nobody queued: become the pending waiter */
        val = atomic_fetch_or_explicit(&l->val, QS_PENDING, memory_order_acquire);
        if (!(val & ~QS_LOCKED_MASK)) {
            qs_pending_wait(l, &w);
            nl_wait_end(&w);
            return;
        }
        /* somebody else is pending or queued: undo our bit if we set it */
        if (!(val & QS_PENDING))
            atomic_fetch_and_explicit(&l->val, ~QS_PENDING, memory_order_relaxed);
    }
    qs_queue(l, &w, cna);
    nl_wait_end(&w);
}

/* ---- the queue ---- */
static inline __attribute__((always_inline)) void qs_queue(nl_qspinlock_t *l, nl_waiter_t *w,
                                                           const bool cna)
{
    nl_self_t *s = w->self;
    uint32_t val;
    nl_tail_node_t *node = nl_tail_get(s);
    if (NL_UNLIKELY(!node)) {
        /* no slot or nested too deep: spin on the lock word (Linux does
         * the same past its 4 nesting levels) */
        while (qs_trylock(l))
            nl_wait_step(w);
        return;
    }
    uint32_t tail = node->code;
    nl_cna_node_t *me = &node->c;
    atomic_store_explicit(&me->next, NULL, memory_order_relaxed);
    atomic_store_explicit(&me->spin, NL_GRANT_WAITING, memory_order_relaxed);
    me->numa = -1;
    me->since = 0;

    /* publish our tail, keeping the locked byte and the bits */
    uint32_t old = nl_tail_xchg(&l->val, tail);
    if (old & QS_TAIL_MASK) {
        nl_tail_node_t *prev = nl_tail_decode(old);
        if (cna) {
            me->numa = nl_self_node(s);
            me->leaf = s->leaf;
        }
        atomic_store_explicit(&prev->c.next, me, memory_order_release);
        NL_QUEUE_AWAIT(w, me, spin);
    }

    /* head of the queue: wait for the owner and the pending waiter to go */
    nl_cna_node_t *sec;
    bool no_steal = false;
    for (;;) {
        while ((val = atomic_load_explicit(&l->val, memory_order_acquire)) &
               (QS_LOCKED_MASK | QS_PENDING)) {
            if (!no_steal && !(val & QS_NOSTEAL)) { /* keep trylocks out until we have it */
                atomic_fetch_or_explicit(&l->val, QS_NOSTEAL, memory_order_relaxed);
                no_steal = true;
            }
            nl_wait_step(w);
        }
        sec = cna ? cna_sec_head(me) : NULL;
        uint32_t want;
        /* take the locked byte; no-steal stays set iff a new head will wait */
        if ((val & QS_TAIL_MASK) == tail) /* we are the last: clear the tail, or
                                           * hand the queue over to the secondary */
            want = QS_LOCKED | (sec ? ((nl_tail_node_t *)sec->sec_tail)->code | QS_NOSTEAL : 0);
        else
            want = val | QS_LOCKED | QS_NOSTEAL;
        if (atomic_compare_exchange_strong_explicit(&l->val, &val, want, memory_order_acq_rel,
                                                    memory_order_relaxed))
            break;
        /* lost the free lock to a trylock or thief: keep them out from now on,
         * or they could win every such race (verify/qspinlock.pml,
         * HEAD_LOST_CLAIM_NOSTEAL) */
        if (!no_steal) {
            atomic_fetch_or_explicit(&l->val, QS_NOSTEAL, memory_order_relaxed);
            no_steal = true;
        }
    }
    if ((val & QS_TAIL_MASK) == tail) {
        if (sec) {
            sec->since = 0;
            nl_grant64(&sec->spin, NL_CNA_GRANTED);
        }
        nl_tail_put(s);
        return;
    }
    /* somebody queued behind us: make it (or, CNA, the chosen one) the head */
    nl_cna_node_t *next = NL_QUEUE_NEXT(w, me);
    if (cna)
        cna_pass(me, next, false);
    else
        nl_grant64(&next->spin, NL_CNA_GRANTED);
    nl_tail_put(s);
}

/* The fast paths are inline (include/numalock/qspinlock.h): lock = CAS 0 -> locked,
 * unlock = a store of 0 into the locked byte. */
void nl_qspin_lock_slow(nl_qspinlock_t *l, uint32_t val) { qs_slowpath(l, val, false); }
void nl_qspin_cna_lock_slow(nl_qspinlock_t *l, uint32_t val) { qs_slowpath(l, val, true); }

int nl_qspin_trylock(nl_qspinlock_t *l) { return qs_trylock(l); }
int nl_qspin_cna_trylock(nl_qspinlock_t *l) { return qs_trylock(l); }

bool nl_qspin_is_locked(const nl_qspinlock_t *l)
{
    return (atomic_load_explicit(&((nl_qspinlock_t *)l)->val, memory_order_relaxed) & QS_LOCKED_MASK) != 0;
}

static void op_acquire(void *l) { nl_qspin_lock(l); }
static void op_cna_acquire(void *l) { nl_qspin_cna_lock(l); }
static int op_try(void *l) { return qs_trylock(l); }
static void op_release(void *l) { nl_qspin_unlock(l); }
/* the unlock clears only the locked byte: on a free lock it changes nothing */
static int op_held(const void *l) { return nl_qspin_is_locked(l); }

NL_HIDDEN const nl_lock_ops_t nl_ops_qspinlock = {
    .name = "qspinlock",
    .description = "Linux 4-byte queued spin lock: test-and-set, pending bit, MCS queue",
    .paper = "Long 2013 (Linux qspinlock); CNA paper sec. 3",
    .size = sizeof(nl_qspinlock_t), .align = 4,
    .props = NL_PROP_FAIR | NL_PROP_ZERO_INIT | NL_PROP_ANY_UNLOCK | NL_PROP_FREE_RELEASE,
    .acquire = op_acquire, .try_acquire = op_try, .release = op_release,
    .held = op_held,
};

NL_HIDDEN const nl_lock_ops_t nl_ops_qspinlock_cna = {
    .name = "qspinlock-cna",
    .description = "4-byte qspinlock whose queued slow path is CNA",
    .paper = "Dice & Kogan 2019 (CNA) sec. 3, 5, 7.2",
    .size = sizeof(nl_qspinlock_t), .align = 4,
    .props = NL_PROP_NUMA_AWARE | NL_PROP_ZERO_INIT | NL_PROP_ANY_UNLOCK | NL_PROP_FREE_RELEASE,
    .acquire = op_cna_acquire, .try_acquire = op_try, .release = op_release,
    .held = op_held,
};
