/*
 * ShflLock: Kashyap, Calciu, Cheng, Min, Kim, "Scalable and Practical
 * Locking with Shuffling", SOSP 2019 (section 4: the shuffling mechanism;
 * 4.1 the NUMA-aware spin lock, 4.2 the blocking mutex). Two registered
 * locks: `shfl` (spinning waiters) and `shfl-block` (waiters park and are
 * woken ahead of their turn).
 *
 * Lock word (32 bits):
 *    byte 0      lock byte (0 or 1): the lock itself
 *    byte 1      steal filter: who may take a free lock without queueing
 *                  0      anybody (a head left an empty queue; the fast
 *                         path alone never writes the filter)
 *                  k+1    while somebody is queued, threads of NUMA node k
 *                         only: the node of the last thread that took the
 *                         lock on its slow path (a queue head, or a thread
 *                         that stole it); ignored while nobody is queued
 *                  0xff   nobody: the queue head ran out of patience (the
 *                         paper's no-stealing flag)
 *    bits 16-17  tail index: nesting level of the tail waiter's node
 *    bits 18-31  tail slot + 1: the tail waiter's thread slot (nl_thread_id)
 * The lock byte is decoupled from the queue, as in the paper: the holder
 * keeps no queue node, so the release is one store of the lock byte by any
 * thread, with no system call. The queue holds waiters only; its head spins
 * on the lock word, takes the lock byte, then hands the head role to its
 * successor (Linux qspinlock's shape). The tail names a node of the table
 * of tail_nodes.h (shared with qspinlock), so the lock is 4 bytes whatever
 * the thread count.
 *
 * Shuffling (paper figure 4, shuffle_waiters): one waiter at a time holds
 * the shuffler role. It walks the queue behind itself and moves the waiters
 * of its own node forward, right behind the group of same-node waiters that
 * already follows it, then passes the role to the last waiter of that group.
 * A queue head that was not placed by a shuffler (batch == 0) starts a new
 * batch and is the shuffler. The shuffler never moves a waiter whose `next`
 * is still NULL (it may be the tail, being linked), and it touches only
 * waiters behind itself: they cannot leave the queue before it does, and
 * the head reads only its own `next`. The holder does nothing.
 *
 * Fairness: a batch may keep the lock on one node while the CNA fairness
 * rule allows it (cna_keep_local() on the batch's start time, inherited by
 * every waiter moved into the batch; nl_cna_set_fairness, default time:1ms).
 * Past it the shuffler stops moving waiters and drops the role, the batch
 * drains, and the first waiter it skipped starts the next batch. Stealing
 * is bounded too: the queue head lets running threads of the holder's node
 * take the free lock (the releaser re-taking it keeps the data in its
 * cache), then after SH_PATIENCE checks (sh_patience: fewer while the
 * process is overloaded) sets the filter to "nobody" and the next release
 * is its.
 * The head itself ignores the filter.
 *
 * Waiting (the places that use the library's waiter):
 *   sh_wait_turn()    a queued waiter until it is the head (both variants)
 *   sh_head_pause()   the head between checks of the lock word
 *   sh_keep_awake()   shfl-block: the head wakes its next SH_AWAKE waiters
 *   sh_grant()        the head role to the successor (nl_grant64)
 *
 * Deviations from the paper: see docs/ALGORITHMS.md, "ShflLock".
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include "shfl_impl.h"
#include "tail_nodes.h"

#define SH_LOCKED 1u
#define SH_LOCK_MASK 0xffu
#define SH_FILTER_SHIFT 8
#define SH_FILTER_MASK 0xff00u
#define SH_NOBODY 0xffu
#define SH_TAIL_MASK NL_TAIL_MASK

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SH_LOW_HALF 0
#define SH_LOCK_BYTE 0
#define SH_FILTER_BYTE 1
#else
#define SH_LOW_HALF 1
#define SH_LOCK_BYTE 3
#define SH_FILTER_BYTE 2
#endif

/* queue-node status (the node's 64-bit grant word c.spin) */
#define SH_WAIT NL_GRANT_WAITING   /* queued, running */
#define SH_HEAD 1u                 /* granted: head of the queue */
#define SH_WOKEN 2u                /* shfl-block: woken early by the head */
#define SH_PARKED NL_GRANT_PARKED  /* asleep on the futex */

/* head checks before it stops the stealing (a build may set fewer: the
 * model checks set 1, so that the no-stealing filter is reached) */
#ifndef SH_PATIENCE
#define SH_PATIENCE 64
#endif
#define SH_MIN_PAUSE 4
#define SH_MAX_PAUSE 256
#define SH_WAIT_STEPS 256     /* wait-loop steps before a waiter parks */
#define SH_AWAKE 2            /* shfl-block: waiters behind the head kept awake */
#define SH_NAP_AFTER_NS 200000ull  /* shfl-block head: nap once it waited this long */
#define SH_NAP_MAX_NS 1000000ull

/* the queue node: tail_nodes.h's (c.since: the batch start, the CNA
 * fairness rule's clock; c.numa: the waiter's node) */
typedef nl_tail_node_t sh_node_t;

static inline uint16_t *sh_low(nl_shfl_t *l) { return (uint16_t *)(void *)&l->val + SH_LOW_HALF; }
static inline uint8_t *sh_byte(nl_shfl_t *l, int i) { return (uint8_t *)(void *)&l->val + i; }

static inline sh_node_t *sh_next(sh_node_t *n) { return nl_tail_next(n); }

/* the steal-filter value of a thread on `node` (0: the node has no tag, so
 * a head there lets anybody steal) */
static inline uint32_t sh_tag(int node)
{
    return node >= 0 && node < (int)SH_NOBODY - 1 ? (uint32_t)node + 1 : 0;
}

/* ---- taking the lock byte without queueing ------------------------------ */
/* One CAS on the low half (lock byte + filter), so queueing waiters that
 * change the tail never fail it: free, and the filter lets us in. */
static inline bool sh_cas_low(nl_shfl_t *l, uint16_t expect, uint16_t want)
{
#ifdef NL_VERIFY
    /* the model checker's build (verify/wmm), which has no mixed-size
     * accesses: the same CAS of the low half as a CAS of the word that
     * keeps the tail it finds (retried when only the tail moved) */
    uint32_t w = atomic_load_explicit(&l->val, memory_order_relaxed);
    do {
        if ((w & ~SH_TAIL_MASK) != expect)
            return false;
    } while (!atomic_compare_exchange_weak_explicit(&l->val, &w, (w & SH_TAIL_MASK) | want,
                                                    memory_order_acquire, memory_order_relaxed));
    return true;
#else
    return __atomic_compare_exchange_n(sh_low(l), &expect, want, false, __ATOMIC_ACQUIRE,
                                       __ATOMIC_RELAXED);
#endif
}

/* The steal after a failed fast path: the lock is free and the filter lets
 * our node in -- or nobody is queued, since the filter only protects a
 * waiting queue head (a stale filter must not refuse a free lock to a
 * thread that only ever trylocks). The filter then names our node (the
 * holder's node from now on, so that threads of other nodes queue; the fast
 * path leaves it alone, and does not look up the node). */
static __attribute__((noinline)) int sh_steal_filtered(nl_shfl_t *l)
{
    uint32_t w = atomic_load_explicit(&l->val, memory_order_relaxed);
    uint32_t f = (w >> SH_FILTER_SHIFT) & 0xffu;
    if ((w & SH_LOCK_MASK) || f == SH_NOBODY)
        return EBUSY;
    uint32_t tag = sh_tag(nl_self_node(nl_self()));
    if (f != 0 && f != tag && (w & SH_TAIL_MASK))
        return EBUSY;
    return sh_cas_low(l, (uint16_t)w, (uint16_t)(tag << SH_FILTER_SHIFT | SH_LOCKED)) ? 0 : EBUSY;
}

static inline int sh_trylock(nl_shfl_t *l)
{
    if (NL_LIKELY(sh_cas_low(l, 0, SH_LOCKED)))
        return 0;
    return sh_steal_filtered(l);
}

static inline void sh_unlock(nl_shfl_t *l)
{
    /* one store of the lock byte; the filter and the tail are not ours;
     * release: the section reaches the next taker's acquire CAS */
#ifdef NL_VERIFY
    /* the model checker's build (no mixed-size accesses): the byte cleared
     * by a word-wide RMW, as qspinlock's unlock there (cna.h) */
    atomic_fetch_and_explicit(&l->val, ~SH_LOCK_MASK, memory_order_release);
#else
    __atomic_store_n(sh_byte(l, SH_LOCK_BYTE), 0, __ATOMIC_RELEASE);
#endif
}

static inline void sh_set_filter(nl_shfl_t *l, uint32_t f)
{
#ifdef NL_VERIFY
    /* the model checker's build (no mixed-size accesses): the filter byte
     * replaced by a word-wide CAS loop that keeps the other bytes */
    uint32_t w = atomic_load_explicit(&l->val, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&l->val, &w,
                                                  (w & ~SH_FILTER_MASK) | (f & 0xffu) << SH_FILTER_SHIFT,
                                                  memory_order_relaxed, memory_order_relaxed))
        ;
#else
    __atomic_store_n(sh_byte(l, SH_FILTER_BYTE), (uint8_t)f, __ATOMIC_RELAXED);
#endif
}

/* ---- waiting: the named places ------------------------------------------ */
static inline void sh_count(unsigned moved)
{
    if (moved) {
        nl_wait_counts_t *wc = &nl_self()->wc;
        wc->extra[SH_EXTRA_SHUFFLES]++;
        wc->extra[SH_EXTRA_MOVED] += moved;
    }
}

/* shfl-block: make sure waiter `n` is running or about to: a parked one is
 * woken (its status goes PARKED -> WOKEN), a spinning one is marked WOKEN so
 * that it keeps its CPU a while longer. */
static inline void sh_wake(sh_node_t *n)
{
    uint64_t st = atomic_load_explicit(&n->c.spin, memory_order_relaxed);
    while (st == SH_WAIT || st == SH_PARKED) {
        if (atomic_compare_exchange_weak_explicit(&n->c.spin, &st, SH_WOKEN, memory_order_relaxed,
                                                  memory_order_relaxed)) {
            if (st == SH_PARKED)
                nl_wait_wake(nl_futex64(&n->c.spin), 1);
            return;
        }
    }
}

/* shfl-block: the head keeps its next SH_AWAKE waiters awake (paper 4.2:
 * the waiters about to get the lock are woken ahead of their turn, so the
 * release finds a running successor and the holder makes no system call) */
static inline void sh_keep_awake(sh_node_t *me)
{
    sh_node_t *n = me;
    for (int i = 0; i < SH_AWAKE && (n = sh_next(n)); i++)
        sh_wake(n);
}

/* shfl: a successor parked in the library's grant-word wait spins again
 * (nl_nudge64: PARKED -> WAITING and a futex wake; nothing if it runs) */
static inline void sh_nudge_next(sh_node_t *me)
{
    sh_node_t *next = sh_next(me);
    if (next)
        nl_nudge64(&next->c.spin);
}

/* the head role to the successor (a system call only if it parked) */
static inline void sh_grant(sh_node_t *next) { nl_grant64(&next->c.spin, SH_HEAD); }

static unsigned sh_shuffle(nl_shfl_t *l, sh_node_t *me, bool head);

/* shfl-block while the process is overloaded (nl_wait_short: the waiter saw
 * more threads wanting a CPU than there are): a waiter behind the head parks
 * instead of yielding, and the head does not keep its successors awake. A
 * spinning waiter would take turns on a CPU with the holder and the head,
 * and its yields are context switches the holder pays for (figures:
 * docs/ALGORITHMS.md, shfl deviation (g)); the successor is woken by its
 * grant instead, while running threads of the holder's node may take the
 * lock meanwhile. */

/* The head's patience: checks of the lock word during which running
 * threads of the holder's node may take the free lock. While the process
 * is overloaded, NL_OVER_PAUSES checks, not SH_PATIENCE: each check then
 * yields the CPU (nl_wait_step), and 64 yields let stealers keep the lock
 * for many time slices (longer waits, more hand-overs across nodes and a
 * less fair lock: docs/ALGORITHMS.md, shfl deviation (g)). */
static inline uint32_t sh_patience(const nl_waiter_t *w)
{
    return nl_wait_short(w) ? NL_OVER_PAUSES : SH_PATIENCE;
}

/* A queued waiter has taken its steps: it waits on its grant word (shfl)
 * or parks (shfl-block). */
static inline bool sh_spun(const nl_waiter_t *w, const bool blocking)
{
#ifdef NL_VERIFY
    /* the model checker's build (verify/wmm): steps count nothing
     * (nl_wait_step), so the budget is the waiter's `due`: spent from the
     * start when waiters park, renewed by a wake-up */
    (void)blocking;
    return nl_wait_due(w);
#else
    return w->n >= SH_WAIT_STEPS || (blocking && w->n >= NL_OVER_PAUSES && nl_wait_short(w));
#endif
}

/* A queued waiter, until it is granted the head role. While it runs it
 * shuffles whenever it holds the shuffler role and somebody queued since
 * its last pass. shfl: SH_WAIT_STEPS steps, then the library's grant-word
 * wait (nl_wait_grant64: spin, park, as the policy says).
 * shfl-block: the same steps (NL_OVER_PAUSES while overloaded), then park;
 * a waiter woken early (WOKEN) gets another round of steps before it may
 * park again. */
static inline void sh_wait_turn(nl_shfl_t *l, sh_node_t *me, nl_waiter_t *w, const bool blocking)
{
    uint32_t walked = 0;
    bool woken = false;
    for (;;) {
        /* acquire, pairing with the grant (sh_grant): the queue as the
         * previous head left it */
        uint64_t st = atomic_load_explicit(&me->c.spin, memory_order_acquire);
        if (st == SH_HEAD)
            return;
        if (atomic_load_explicit(&me->shuffler, memory_order_acquire)) {
            uint32_t t = atomic_load_explicit(&l->val, memory_order_relaxed) & SH_TAIL_MASK;
            if (t != walked) {
                walked = t;
                sh_count(sh_shuffle(l, me, false));
                continue;
            }
        }
        if (blocking && st == SH_WOKEN && !woken) {
            woken = true; /* the head wants us running: a fresh round */
            nl_wait_renew(w);
        }
        if (!sh_spun(w, blocking)) {
            nl_wait_step(w);
            continue;
        }
        if (!blocking) {
            /* with the early wake (shfl-block's head does it for its next
             * SH_AWAKE waiters instead) */
            NL_QUEUE_AWAIT(w, &me->c, spin);
            return;
        }
        /* park: WAIT or WOKEN -> PARKED, sleep until the word changes */
        if (st == SH_PARKED ||
            atomic_compare_exchange_strong_explicit(&me->c.spin, &st, SH_PARKED, memory_order_acq_rel,
                                                    memory_order_acquire)) {
            nl_wait_park(w, nl_futex64(&me->c.spin), SH_PARKED);
            woken = false; /* woken (WOKEN or HEAD) or spurious: look again */
        }
    }
}

/* The head between checks of the lock word: exponential backoff while it
 * lets running threads steal (the releaser re-takes the lock with its data
 * in cache), then a step of the spinner (which yields when the machine is
 * overloaded); shfl-block's head naps when the holder keeps the lock for
 * long, since the release wakes nobody. */
static inline void sh_head_pause(nl_waiter_t *w, uint32_t *pause, bool stealing, const bool blocking,
                                 uint64_t *t0)
{
    if (stealing) {
        for (uint32_t i = 0; i < *pause; i++)
            nl_cpu_relax();
        if (*pause < SH_MAX_PAUSE)
            *pause <<= 1;
    }
    if (blocking && w->n >= SH_WAIT_STEPS) {
        uint64_t now = nl_machine_ns();
        if (!*t0) {
            *t0 = now;
        } else if (now - *t0 > SH_NAP_AFTER_NS) {
            /* at most 1/8 of the time waited so far, at most 1 ms */
            uint64_t ns = (now - *t0) / 8;
            if (ns > SH_NAP_MAX_NS)
                ns = SH_NAP_MAX_NS;
            /* not a cancellation point inside a lock's wait */
            struct timespec ts = { 0, (long)ns };
            nl_nap_uncancellable(&ts);
            return;
        }
    }
    nl_wait_step(w);
}

/* ---- shuffling ------------------------------------------------------------ */
/* One pass of the shuffler `me` (paper figure 4): moves the waiters of
 * me's node that are behind it forward, to the end of the group of
 * same-node waiters right behind me, and passes the role to the group's
 * last waiter (me again when the group is empty). Stops early once `me`
 * should take the lock (head: the lock byte is clear; otherwise: granted).
 * Drops the role, moving nobody, once the batch has used its time (the CNA
 * rule). Returns the number of waiters moved. */
static unsigned sh_shuffle(nl_shfl_t *l, sh_node_t *me, bool head)
{
    atomic_store_explicit(&me->shuffler, 0, memory_order_relaxed);
    if (me->batch == 0) { /* a new batch starts with us */
        me->batch = 1;
        me->c.since = 0;
    }
    uint64_t now;
    if (!cna_keep_local(&me->c, &now))
        return 0; /* the batch is over: the waiters we skipped go next */
    int numa = me->c.numa;
    uint32_t rank = me->batch;
    sh_node_t *last = me, *prev = me, *cur;
    unsigned moved = 0;
    while ((cur = sh_next(prev))) {
        if (cur->c.numa == numa) {
            if (prev == last) {
                /* already right behind the group: it joins the batch */
                last = prev = cur;
            } else {
                /* cur's successor has linked itself: nobody but the
                 * shuffler writes cur->next (or prev's, or last's) now */
                sh_node_t *after = sh_next(cur);
                if (!after)
                    break; /* cur may be the tail, being linked behind */
                atomic_store_explicit(&prev->c.next, &after->c, memory_order_release);
                atomic_store_explicit(&cur->c.next, atomic_load_explicit(&last->c.next, memory_order_relaxed),
                                      memory_order_release);
                atomic_store_explicit(&last->c.next, &cur->c, memory_order_release);
                last = cur;
                moved++;
            }
            cur->batch = ++rank;
            cur->c.since = me->c.since;
        } else {
            prev = cur;
        }
        if (head ? !(atomic_load_explicit(&l->val, memory_order_relaxed) & SH_LOCK_MASK)
                 : atomic_load_explicit(&me->c.spin, memory_order_relaxed) == SH_HEAD)
            break;
    }
    /* release, pairing with the acquire loads of `shuffler`: the next
     * shuffler walks the links and reads the batch fields written here */
    atomic_store_explicit(&last->shuffler, 1, memory_order_release);
    return moved;
}

/* ---- the slow path, compiled once per variant ---------------------------- */
static bool sh_busy(const void *l)
{
    return atomic_load_explicit(&((const nl_shfl_t *)l)->val, memory_order_relaxed) &
           (SH_LOCK_MASK | SH_TAIL_MASK);
}

static inline __attribute__((always_inline)) void sh_queue(nl_shfl_t *l, nl_waiter_t *w,
                                                           const bool blocking);

static inline __attribute__((always_inline)) void sh_slowpath(nl_shfl_t *l, const bool blocking)
{
    if (sh_trylock(l) == 0)
        return;
    nl_waiter_t w;
    /* saturated once somebody queued (until then a running thread may take
     * the lock byte): the gate while overloaded (src/wait/wait.h) */
    nl_wait_begin(&w, l, sh_busy,
                  (atomic_load_explicit(&l->val, memory_order_relaxed) & SH_TAIL_MASK) != 0);
    sh_queue(l, &w, blocking);
    nl_wait_end(&w);
}

static inline __attribute__((always_inline)) void sh_queue(nl_shfl_t *l, nl_waiter_t *w,
                                                           const bool blocking)
{
    nl_self_t *s = w->self;
    int node = nl_self_node(s);
    uint32_t tag = sh_tag(node);
    sh_node_t *me = nl_tail_get(s);
    if (NL_UNLIKELY(!me)) {
        /* no slot or nested too deep: spin on the lock word (as qspinlock) */
        while (sh_trylock(l))
            nl_wait_step(w);
        return;
    }
    uint32_t tail = me->code;
    atomic_store_explicit(&me->c.next, NULL, memory_order_relaxed);
    atomic_store_explicit(&me->c.spin, SH_WAIT, memory_order_relaxed);
    atomic_store_explicit(&me->shuffler, 0, memory_order_relaxed);
    me->c.numa = node;
    me->c.since = 0;
    me->batch = 0;

    /* publish our tail: one exchange of the tail half-word */
    uint32_t old = nl_tail_xchg(&l->val, tail);
    if (old) {
        sh_node_t *prev = nl_tail_decode(old);
        /* release: our node's reset fields reach whoever follows the link
         * (the head granting us, a shuffler walking past us) */
        atomic_store_explicit(&prev->c.next, &me->c, memory_order_release);
        sh_wait_turn(l, me, w, blocking);
    }

    /* head of the queue: shuffle, keep the next waiters awake, let running
     * threads of our node steal for a while, then take the lock byte */
    bool stealing = true;
    uint32_t rounds = 0, pause = SH_MIN_PAUSE, walked = 0;
    uint64_t t0 = 0;
    bool role = me->batch == 0 || atomic_load_explicit(&me->shuffler, memory_order_acquire);
    uint32_t val;
    nl_wait_renew(w);
    for (;;) {
        val = atomic_load_explicit(&l->val, memory_order_acquire);
        if (!(val & SH_LOCK_MASK)) {
            /* take the lock byte; the filter becomes our node's (a waiter
             * behind us is likely of it), or 0 when the queue empties */
            uint32_t want = (val & SH_TAIL_MASK) == tail ? SH_LOCKED
                          : (val & SH_TAIL_MASK) | (tag << SH_FILTER_SHIFT) | SH_LOCKED;
            /* acquire, pairing with the unlock's release: the section */
            if (atomic_compare_exchange_strong_explicit(&l->val, &val, want, memory_order_acquire,
                                                        memory_order_relaxed))
                break;
            continue;
        }
        /* the filter keeps naming the holder's node (set by the head that
         * took the lock, kept by the stealers) until we run out of patience */
        if (stealing && ++rounds > sh_patience(w)) {
            stealing = false;
            sh_set_filter(l, SH_NOBODY);
        } else if (!stealing && ((val >> SH_FILTER_SHIFT) & 0xffu) != SH_NOBODY) {
            sh_set_filter(l, SH_NOBODY);
        }
        if (!role)
            role = atomic_load_explicit(&me->shuffler, memory_order_acquire);
        if (role && (val & SH_TAIL_MASK) != walked) {
            /* walk again only when somebody queued since the last walk */
            walked = val & SH_TAIL_MASK;
            role = false;
            sh_count(sh_shuffle(l, me, true));
            continue;
        }
        if (blocking) {
            if (!nl_wait_short(w))
                sh_keep_awake(me);
        } else {
            /* the successor may have parked while we waited (the waiting
             * design parks after its spin budget): running again by the
             * time it becomes the head */
            sh_nudge_next(me);
        }
        sh_head_pause(w, &pause, stealing, blocking, &t0);
    }

    /* we hold the lock: leave the queue, hand the head role on */
    if ((val & SH_TAIL_MASK) != tail) {
        sh_node_t *next = (sh_node_t *)NL_QUEUE_NEXT(w, &me->c);
        if (role || atomic_load_explicit(&me->shuffler, memory_order_relaxed))
            atomic_store_explicit(&next->shuffler, 1, memory_order_relaxed);
        sh_grant(next);
    }
    nl_tail_put(s);
}

static __attribute__((noinline)) void sh_slowpath_spin(nl_shfl_t *l) { sh_slowpath(l, false); }
static __attribute__((noinline)) void sh_slowpath_block(nl_shfl_t *l) { sh_slowpath(l, true); }

/* ---- test hook ------------------------------------------------------------ */
unsigned nl_shfl_test_shuffle(const int *numa, unsigned n, uint64_t since_ns, unsigned *order)
{
    sh_node_t *nodes = NULL;
    if (!n || posix_memalign((void **)&nodes, NL_CACHELINE, n * sizeof *nodes))
        return 0;
    memset(nodes, 0, n * sizeof *nodes);
    for (unsigned i = 0; i < n; i++) {
        nodes[i].c.numa = numa[i];
        nodes[i].code = i;
        atomic_store(&nodes[i].c.next, i + 1 < n ? &nodes[i + 1].c : NULL);
    }
    nl_shfl_t l = { SH_LOCKED }; /* held: the head's pass runs to the end */
    nodes[0].batch = 1;
    nodes[0].c.since = since_ns ? nl_machine_ns() - since_ns : 0;
    if (!nodes[0].c.since)
        nodes[0].batch = 0;
    unsigned moved = sh_shuffle(&l, &nodes[0], true);
    unsigned k = 0;
    for (sh_node_t *p = &nodes[0]; p && k < n; p = sh_next(p))
        order[k++] = p->code;
    free(nodes);
    return moved;
}

/* ---- public API ----------------------------------------------------------- */
void nl_shfl_lock(nl_shfl_t *l)
{
    if (NL_LIKELY(sh_cas_low(l, 0, SH_LOCKED)))
        return;
    sh_slowpath_spin(l);
}

void nl_shfl_block_lock(nl_shfl_t *l)
{
    if (NL_LIKELY(sh_cas_low(l, 0, SH_LOCKED)))
        return;
    sh_slowpath_block(l);
}

int nl_shfl_trylock(nl_shfl_t *l) { return sh_trylock(l); }
int nl_shfl_block_trylock(nl_shfl_t *l) { return sh_trylock(l); }
void nl_shfl_unlock(nl_shfl_t *l) { sh_unlock(l); }
void nl_shfl_block_unlock(nl_shfl_t *l) { sh_unlock(l); }

bool nl_shfl_is_locked(const nl_shfl_t *l)
{
    return (atomic_load_explicit(&((nl_shfl_t *)l)->val, memory_order_relaxed) & SH_LOCK_MASK) != 0;
}

static void op_acquire(void *l) { nl_shfl_lock(l); }
static void op_block_acquire(void *l) { nl_shfl_block_lock(l); }
static int op_try(void *l) { return sh_trylock(l); }
static void op_release(void *l) { sh_unlock(l); }
static int op_held(const void *l) { return nl_shfl_is_locked(l); }

NL_HIDDEN const nl_lock_ops_t nl_ops_shfl = {
    .name = "shfl",
    .description = "ShflLock: test-and-set byte + waiter queue that waiters shuffle by node; any-thread unlock",
    .paper = "Kashyap et al., SOSP 2019 (ShflLock) sec. 4.1",
    .size = sizeof(nl_shfl_t), .align = 4,
    .props = NL_PROP_NUMA_AWARE | NL_PROP_ZERO_INIT | NL_PROP_ANY_UNLOCK | NL_PROP_FREE_RELEASE,
    .acquire = op_acquire, .try_acquire = op_try, .release = op_release,
    .held = op_held,
    .extra_names = { [SH_EXTRA_SHUFFLES] = "shuffles", [SH_EXTRA_MOVED] = "moved_waiters" },
};

NL_HIDDEN const nl_lock_ops_t nl_ops_shfl_block = {
    .name = "shfl-block",
    .description = "blocking ShflLock: waiters park, the head wakes the next ones early; one-store unlock",
    .paper = "Kashyap et al., SOSP 2019 (ShflLock) sec. 4.2",
    .size = sizeof(nl_shfl_t), .align = 4,
    .props = NL_PROP_BLOCKING | NL_PROP_NUMA_AWARE | NL_PROP_ZERO_INIT | NL_PROP_ANY_UNLOCK | NL_PROP_FREE_RELEASE,
    .acquire = op_block_acquire, .try_acquire = op_try, .release = op_release,
    .held = op_held,
    .extra_names = { [SH_EXTRA_SHUFFLES] = "shuffles", [SH_EXTRA_MOVED] = "moved_waiters" },
};
