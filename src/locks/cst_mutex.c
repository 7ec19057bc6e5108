/*
 * CST-mutex (Kashyap, Min, Kim, USENIX ATC 2017, sections 4 and 5.1):
 * a two-level NUMA-aware blocking mutex.
 *
 *  - Global level: an MCS queue whose nodes are the per-node structures
 *    (snodes); the snode at the head owns the global lock.
 *  - Local level: each snode has a K42/MCS-style waiting list of per-thread
 *    queue nodes (from the thread's node pool). Holding the lock = holding the
 *    local lock of an snode that owns the global lock.
 *  - snodes are allocated on first use by a thread of that node (sec. 4.1):
 *    a bitmap of present nodes (one CAS per node over the lock's life) and a
 *    list of snodes; nothing is allocated for nodes that never use the lock.
 *  - Waiters spin while their state is UW for a budget that depends on the
 *    load (sec. 4.2: the kernel version peeks at the run queue; here the
 *    library's waiter decides, src/wait/wait.h: the process's CPUs, the
 *    machine's runnable tasks, preemption seen by waiters), then park (PW)
 *    on a futex.
 *  - Release (sec. 5.1): pass the local lock to the nearest waiter that still
 *    spins (CAS UW -> L), skipping parked ones, which are taken out of the
 *    waiting list and put on the snode's parking list. When no spinning waiter
 *    remains, up to "cores of a node" parked waiters are woken with R and
 *    re-queue. The global lock stays with the snode for up to local_passes
 *    acquisitions while another node waits, then moves on (cohort release).
 *
 * Deviation (user space, over-subscription): when every waiter of the node is
 * parked, the paper passes the lock to the last one and wakes it. Here the
 * holder takes them all out of the queue, wakes a batch with R, and frees the
 * local lock while the snode keeps the global lock (only when a woken waiter
 * is guaranteed to come back for it): the releasing thread, still running,
 * can take the lock again at once instead of waiting for a wake-up.
 * Further user-space additions: a holder skips a spinning waiter whose
 * heartbeat shows it preempted (CST_SKIP), and a lock used from a single node
 * keeps the global lock idle between uses (revoked when a second node comes).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cst_impl.h"

_Static_assert(sizeof(cst_qnode_t) <= 64, "CST queue node fits a pool slot");
_Static_assert(sizeof(nl_cst_mutex_t) <= 40, "CST mutex fits in a pthread_mutex_t");

#define CST_DEFAULT_PASSES 4096u
/* a spinning waiter whose heartbeat is older than this is taken for preempted
 * (a running spinner beats every few pauses, well under a microsecond) */
#define CST_STALE_NS 5000ull
/* ... unless it has been queued this long: then it gets the lock even if
 * preempted or parked, and parked waiters that have waited this long are
 * woken before the lock passes to a spinner. Without this bound a waiter
 * that kept being preempted was skipped, re-queued and skipped again for
 * whole runs, and a parked one could stay parked while spinners came
 * (docs/ALGORITHMS.md, cst-mutex, starvation bound) */
#define CST_STARVE_NS 2000000ull
#define CST_STALE_TICKS nl_ns_to_ticks(CST_STALE_NS)
#define CST_STARVE_TICKS nl_ns_to_ticks(CST_STARVE_NS)

uint32_t nl_cst_wake_batch(void)
{
    int nodes = nl_topology_nodes();
    int b = nl_cpus_online() / (nodes > 0 ? nodes : 1);
    return b > 0 ? (uint32_t)b : 1u;
}

/* Wait while *word == spin_value: spin until the wait is due to park, then
 * park as PW until the word changes. Returns the new value. */
static uint32_t cst_await(nl_waiter_t *w, _Atomic uint32_t *word, uint32_t spin_value)
{
    uint32_t v;
    while (!nl_wait_due(w)) {
        v = atomic_load_explicit(word, memory_order_acquire);
        if (v != spin_value)
            return v;
        nl_wait_step(w);
    }
    uint32_t expect = spin_value;
    if (!atomic_compare_exchange_strong_explicit(word, &expect, CST_PW, memory_order_acq_rel,
                                                 memory_order_acquire))
        return expect;
    while ((v = atomic_load_explicit(word, memory_order_acquire)) == CST_PW)
        nl_wait_park(w, word, CST_PW);
    return v;
}

static void revoke_idle_global(nl_cst_mutex_t *m, cst_snode_t *s0);

/* While a lock has a single snode, the global lock has nobody to exclude: the
 * last holder of that snode may keep it (`global_held`) when it frees the local
 * lock, so that an uncontended acquire+release is one exchange and one CAS.
 * A second node's arrival and such an idle keep must meet: a store-buffering
 * pair on two words. The holder writes the local tail (its CAS to NULL that
 * frees the local lock) and then reads `present` (here); the newcomer writes
 * `present` (its bit, nl_cst_snode_get) and then reads the first snode's tail
 * (revoke_idle_global's CAS). All four are seq_cst, so at least one side
 * sees the other's write: the newcomer finds the local lock free and revokes,
 * or the holder sees two nodes and revokes itself. With release/acquire
 * both may read the old values, and the global lock stays idle with the
 * other node waiting for it for ever (verify/wmm: broken cst-idle-keep).
 * The other writes of the local tail (joining the queue, taking a free local
 * lock) need only acquire/release for this: a revoke that reads such a value
 * fails, and reads before the freeing CAS of that local lock's next holder,
 * which is seq_cst and reads `present` after it (the checks pass with them
 * acq_rel). They are seq_cst all the same, so that every write of the tail is
 * in the one total order of this argument; for a read-modify-write that costs
 * nothing on x86-64 or AArch64 (the same instructions). */
static inline int single_snode(const nl_cst_mutex_t *m)
{
    uint64_t p = atomic_load_explicit(&((nl_cst_mutex_t *)m)->present, memory_order_seq_cst);
    return (p & (p - 1)) == 0;
}

/* ---- snodes (sec. 4.1) ------------------------------------------------- */
/* snodes in the library's data for locks whose first snode cannot be
 * allocated (a node without memory uses another node's snode instead):
 * taken with one atomic step, given back when the lock is destroyed */
#define CST_RESERVE 16
static cst_rsnode_t cst_reserve[CST_RESERVE];
static _Atomic uint32_t cst_reserve_used;

static cst_snode_t *cst_reserve_get(void)
{
    uint32_t used = atomic_load_explicit(&cst_reserve_used, memory_order_relaxed);
    while (used != (1u << CST_RESERVE) - 1) {
        int i = __builtin_ctz(~used);
        if (atomic_compare_exchange_weak_explicit(&cst_reserve_used, &used, used | 1u << i, memory_order_acquire,
                                                  memory_order_relaxed))
            return &cst_reserve[i].m;
    }
    return NULL;
}

static void cst_snode_free(cst_snode_t *s)
{
    uintptr_t i = (uintptr_t)((cst_rsnode_t *)(void *)s - cst_reserve);
    if ((cst_rsnode_t *)(void *)s >= cst_reserve && i < CST_RESERVE)
        atomic_fetch_and_explicit(&cst_reserve_used, ~(1u << i), memory_order_release);
    else
        free(s);
}

cst_snode_t *nl_cst_snode_get(nl_cst_mutex_t *m, int node, size_t size)
{
    uint64_t bit = 1ull << (node & 63);
    nl_waiter_t w;
    bool waited = false; /* the waiter is set up only when we wait */
    uint32_t naps = 0;
    for (;;) {
        cst_snode_t *head = atomic_load_explicit(&m->snodes, memory_order_acquire);
        for (cst_snode_t *s = head; s; s = s->next)
            if (s->node == node)
                return s;
        uint64_t present = atomic_load_explicit(&m->present, memory_order_acquire);
        if (present & bit) { /* another thread of this node is allocating it */
#ifndef NL_VERIFY
            if (!waited) {
                nl_waiter_init(&w);
                waited = true;
            }
            nl_wait_step(&w);
#else
            /* the model checker's build (verify/wmm): the same wait as a poll
             * loop of loads only, which it reads as an await (this loop, with
             * its stores, it cannot): until the list or the claim changes */
            (void)waited;
            while (atomic_load_explicit(&m->snodes, memory_order_relaxed) == head &&
                   (atomic_load_explicit(&m->present, memory_order_relaxed) & bit))
                ;
#endif
            continue;
        }
        /* seq_cst: the newcomer's write of the idle-keep pair (single_snode) */
        if (atomic_fetch_or_explicit(&m->present, bit, memory_order_seq_cst) & bit)
            continue;
        cst_snode_t *s = NULL;
        if (posix_memalign((void **)&s, NL_CACHELINE, size) || !s) {
            /* no memory: give the claim back and use any other node's snode
             * (correct, only not local); with none, a reserve snode; with
             * the reserve taken, wait for memory */
            s = NULL;
            head = atomic_load_explicit(&m->snodes, memory_order_acquire);
            if (head || !(s = cst_reserve_get())) {
                atomic_fetch_and_explicit(&m->present, ~bit, memory_order_acq_rel);
                if (head)
                    return head;
                if (++naps > 1000) /* a second without memory or a reserve snode */
                    nl_no_memory("the first per-node structure of a CST lock (the 16 in reserve are taken)");
                struct timespec ts = { 0, 1000000 };
                nl_nap_uncancellable(&ts); /* not a cancellation point inside a lock's wait */
                continue;
            }
        }
        memset(s, 0, size); /* first touch by a thread of this node */
        s->node = node;
        /* seq_cst: release publishes the snode's node and link; the rest is
         * for the rw-semaphore (cst_rwsem.c, SO): a reader counts itself on
         * an snode only once it is published here, and a writer that
         * announced itself and then walks the list must find it */
        void *h = atomic_load_explicit(&m->snodes, memory_order_relaxed);
        do {
            s->next = h;
        } while (!atomic_compare_exchange_weak_explicit(&m->snodes, &h, s, memory_order_seq_cst,
                                                        memory_order_relaxed));
        if (h) { /* a second node: the first snode may keep the global lock idle */
            cst_snode_t *first = h;
            while (first->next)
                first = first->next;
            revoke_idle_global(m, first);
        }
        return s;
    }
}

size_t nl_cst_snode_count(const nl_cst_mutex_t *m)
{
    size_t n = 0;
    for (cst_snode_t *s = atomic_load_explicit(&((nl_cst_mutex_t *)m)->snodes, memory_order_acquire);
         s; s = s->next)
        n++;
    return n;
}

/* ---- global lock: MCS over snodes --------------------------------------- */
/* The global lock is an MCS queue of snodes (their gq nodes; gtail names the
 * last one): the socket leader joins it, waits, and once granted never
 * re-queues (sec. 5.1); release grants the next leader (UW -> L, or L and a
 * wake-up if it parked). */
static void global_acquire(nl_cst_mutex_t *m, cst_snode_t *s, nl_waiter_t *w)
{
    nl_mcsq_join((nl_mcsq_tail_t *)&m->gtail, &s->gq, w);
}

static void global_release(nl_cst_mutex_t *m, cst_snode_t *s)
{
    nl_mcsq_leave((nl_mcsq_tail_t *)&m->gtail, &s->gq, 1);
}

/* ---- acquire ------------------------------------------------------------ */
static inline void after_local(nl_cst_mutex_t *m, cst_snode_t *s, nl_waiter_t *w)
{
    if (s->global_held) {
        s->passes++; /* the global lock was kept for this node */
        return;
    }
    global_acquire(m, s, w);
    s->global_held = 1;
    s->passes = 0;
}

/* A queued waiter: spin while UW, beating its heartbeat so that the holder
 * knows it is on a CPU; park after the budget. Returns CST_L or CST_R. */
static uint32_t local_wait(cst_qnode_t *me, nl_waiter_t *w)
{
    uint32_t v;
    for (uint32_t i = 0; !nl_wait_due(w); i++) {
        v = atomic_load_explicit(&me->status, memory_order_acquire);
        if (v != CST_UW)
            goto done;
#ifndef NL_VERIFY
        if ((i & 7) == 0)
            atomic_store_explicit(&me->beat, nl_machine_ticks(), memory_order_relaxed);
#else
        /* the model checker's build (verify/wmm): its clock never advances,
         * so the beat stored before linking stays current; a poll loop with
         * a store in it would not be read as an await */
        (void)i;
#endif
        nl_wait_step(w);
    }
    uint32_t expect = CST_UW;
    if (!atomic_compare_exchange_strong_explicit(&me->status, &expect, CST_PW,
                                                 memory_order_acq_rel, memory_order_acquire)) {
        v = expect;
        goto done;
    }
    while ((v = atomic_load_explicit(&me->status, memory_order_acquire)) == CST_PW)
        nl_wait_park(w, &me->status, CST_PW);
done:
    if (v == CST_SKIP) /* skipped while off the CPU: wait for the R */
        v = cst_await(w, &me->status, CST_SKIP);
    return v;
}

/* This thread's snode: the newest one when it is ours (the common case: one
 * node, or this node came last), else the list walk that allocates. */
static inline cst_snode_t *snode_of(nl_cst_mutex_t *m, size_t snode_size)
{
    int node = nl_self_node(nl_self());
    cst_snode_t *s = atomic_load_explicit(&m->snodes, memory_order_acquire);
    if (NL_LIKELY(s && s->node == node))
        return s;
    return nl_cst_snode_get(m, node, snode_size);
}

/* The local queue from `pred` on: link, wait, re-queue after an R. */
static __attribute__((noinline)) void cst_lock_queued(nl_cst_mutex_t *m, cst_qnode_t *me,
                                                      cst_snode_t *s, cst_qnode_t *pred,
                                                      nl_waiter_t *w)
{
    me->since = nl_machine_ticks();
    for (;;) {
        /* the heartbeat is read by the holder only after it sees this link */
        atomic_store_explicit(&me->beat, nl_machine_ticks(), memory_order_relaxed);
        atomic_store_explicit(&pred->next, me, memory_order_release);
        if (local_wait(me, w) == CST_L)
            break;
        me->requeued = 1; /* CST_R: skipped while parked, taken out, woken */
        atomic_store_explicit(&me->next, NULL, memory_order_relaxed);
        atomic_store_explicit(&me->status, CST_UW, memory_order_relaxed);
        /* seq_cst: a write of the local tail (single_snode) */
        pred = atomic_exchange_explicit(&s->tail, me, memory_order_seq_cst);
        /* back in the queue: no longer counted as coming */
        atomic_fetch_sub_explicit(&s->inflight, 1, memory_order_relaxed);
        if (!pred)
            break; /* the local lock was free */
    }
    after_local(m, s, w);
}

/* taken: some node's local lock is held or waited for (the gate's test;
 * the global lock alone may be kept idle by a single node) */
static bool cst_busy(const void *p)
{
    const nl_cst_mutex_t *m = p;
    for (cst_snode_t *s = atomic_load_explicit(&((nl_cst_mutex_t *)m)->snodes, memory_order_acquire);
         s; s = s->next)
        if (atomic_load_explicit(&s->tail, memory_order_relaxed))
            return true;
    return false;
}

/* The lock is taken (our local lock, or the global lock by another node):
 * a saturated wait (as MCS: the tails do not tell), then queue. */
static __attribute__((noinline)) void cst_lock_slow(nl_cst_mutex_t *m, cst_qnode_t *me,
                                                    cst_snode_t *s)
{
    nl_waiter_t w;
    nl_wait_begin(&w, m, cst_busy, true);
    /* seq_cst: a write of the local tail (single_snode) */
    cst_qnode_t *pred = atomic_exchange_explicit(&s->tail, me, memory_order_seq_cst);
    if (!pred)
        after_local(m, s, &w); /* the local lock was free */
    else
        cst_lock_queued(m, me, s, pred, &w);
    nl_wait_end(&w);
}

static inline void cst_lock(nl_cst_mutex_t *m, cst_qnode_t *me, size_t snode_size)
{
    cst_snode_t *s = snode_of(m, snode_size);
    me->snode = s;
    me->requeued = 0;
    atomic_store_explicit(&me->next, NULL, memory_order_relaxed);
    atomic_store_explicit(&me->status, CST_UW, memory_order_relaxed);
    cst_qnode_t *pred = NULL;
    void *g = atomic_load_explicit(&m->gtail, memory_order_relaxed);
    /* free, and nobody waits passively for it unless we are the thread the
     * gate let in (a thread that lost the lock at the gate must not take it
     * back between two sections of the running one); seq_cst: a write of the
     * local tail (single_snode) */
    if (NL_LIKELY((!g || g == (void *)&s->gq) && !nl_gate_behind(m) &&
                  atomic_compare_exchange_strong_explicit(&s->tail, &pred, me, memory_order_seq_cst,
                                                          memory_order_relaxed))) {
        /* the local lock was free; the global one may be another node's */
        nl_waiter_t w;
        w.self = NULL; /* lazy: set up where it first waits */
        if (!s->global_held && atomic_load_explicit(&m->gtail, memory_order_relaxed))
            nl_wait_begin(&w, m, NULL, false); /* contended; we hold our local lock: no gate */
        after_local(m, s, &w);
        nl_wait_end(&w);
        return;
    }
    cst_lock_slow(m, me, s);
}

static void cst_unlock(nl_cst_mutex_t *m, cst_qnode_t *me);

static int cst_trylock(nl_cst_mutex_t *m, cst_qnode_t *me, size_t snode_size)
{
    cst_snode_t *s = snode_of(m, snode_size);
    /* bound to fail, decided without writing anything: our node's lock is
     * held, or another node holds or awaits the global lock (taking the local
     * lock first would mean giving it back through a full release) */
    if (atomic_load_explicit(&s->tail, memory_order_relaxed))
        return EBUSY;
    void *g = atomic_load_explicit(&m->gtail, memory_order_relaxed);
    if (g && g != (void *)&s->gq)
        return EBUSY;
    me->snode = s;
    me->requeued = 0;
    atomic_store_explicit(&me->next, NULL, memory_order_relaxed);
    atomic_store_explicit(&me->status, CST_UW, memory_order_relaxed);
    cst_qnode_t *expect = NULL;
    /* seq_cst: a write of the local tail (single_snode) */
    if (!atomic_compare_exchange_strong_explicit(&s->tail, &expect, me, memory_order_seq_cst,
                                                 memory_order_relaxed))
        return EBUSY;
    if (s->global_held) {
        s->passes++;
        return 0;
    }
    if (nl_mcsq_try((nl_mcsq_tail_t *)&m->gtail, &s->gq) == 0) {
        s->global_held = 1;
        s->passes = 0;
        return 0;
    }
    cst_unlock(m, me); /* give the local lock back (global not held) */
    return EBUSY;
}

/* ---- release ------------------------------------------------------------ */
/* The parking list (holder of the local lock only) is FIFO: the oldest parked
 * waiter is woken first. */
static inline void park_append(cst_snode_t *s, cst_qnode_t *n)
{
    n->pnext = NULL;
    if (s->parked_tail)
        s->parked_tail->pnext = n;
    else
        s->parked = n;
    s->parked_tail = n;
    s->nparked++;
}

/* Take up to `want` of the oldest parked waiters into a list (oldest first). */
static inline cst_qnode_t *park_take(cst_snode_t *s, uint32_t want, uint32_t *nb, cst_qnode_t **last)
{
    cst_qnode_t *first = s->parked, *n = NULL;
    uint32_t k = 0;
    for (cst_qnode_t *c = first; c && k < want; c = c->pnext, k++)
        n = c;
    if (!k)
        return NULL;
    s->parked = n->pnext;
    if (!s->parked)
        s->parked_tail = NULL;
    s->nparked -= k;
    n->pnext = NULL;
    *nb = k;
    *last = n;
    return first;
}

/* Put a list taken by park_take back in front. */
static inline void park_untake(cst_snode_t *s, cst_qnode_t *first, cst_qnode_t *last, uint32_t nb)
{
    last->pnext = s->parked;
    if (!s->parked)
        s->parked_tail = last;
    s->parked = first;
    s->nparked += nb;
}

static void wake_requeue(cst_qnode_t *list)
{
    while (list) {
        cst_qnode_t *n = list;
        list = n->pnext; /* read before the owner can run again */
        if (atomic_exchange_explicit(&n->status, CST_R, memory_order_acq_rel) == CST_PW)
            nl_wait_wake(&n->status, 1);
    }
}

static void cst_unlock(nl_cst_mutex_t *m, cst_qnode_t *me)
{
    cst_snode_t *s = me->snode;
    uint32_t limit = m->local_passes ? m->local_passes : CST_DEFAULT_PASSES;
    if (s->global_held && s->passes >= limit &&
        atomic_load_explicit(&m->gtail, memory_order_relaxed) != (void *)&s->gq) {
        /* batching threshold reached and another node waits: release the
         * global lock first, then the local one (cohort release) */
        global_release(m, s);
        s->global_held = 0;
    }
    /* long-term fairness: parked waiters that have waited CST_STARVE_NS
     * are woken (they re-queue, and are passed the lock at once if they
     * park again before their turn) before the lock goes to a spinner */
    if (s->parked && !atomic_load_explicit(&s->inflight, memory_order_relaxed) &&
        nl_machine_ticks() - s->parked->since > CST_STARVE_TICKS) {
        uint32_t nb = 0;
        cst_qnode_t *last, *old = park_take(s, nl_cst_wake_batch(), &nb, &last);
        atomic_fetch_add_explicit(&s->inflight, nb, memory_order_relaxed);
        wake_requeue(old);
    }
    nl_waiter_t w;
    bool waited = false; /* the waiter is set up only when we wait */
    cst_qnode_t *prev = me; /* walked so far; prev != me: a skipped parked waiter */
    for (;;) {
        cst_qnode_t *next = atomic_load_explicit(&prev->next, memory_order_acquire);
        if (next) {
            if (prev != me) { /* leaving prev behind: out of the queue now */
                uint32_t skipped = CST_SKIP;
                atomic_fetch_add_explicit(&s->inflight, 1, memory_order_relaxed);
                if (!atomic_compare_exchange_strong_explicit(&prev->status, &skipped, CST_R,
                                                             memory_order_acq_rel,
                                                             memory_order_relaxed)) {
                    /* parked: onto the parking list, woken later in a batch */
                    atomic_fetch_sub_explicit(&s->inflight, 1, memory_order_relaxed);
                    park_append(s, prev);
                } /* else: skipped while preempted and not asleep: it re-queues
                     itself when it runs again (no wake-up needed) */
            }
            /* pass to the nearest waiter still spinning (UW -> L); one whose
             * heartbeat stopped (preempted while spinning) is skipped like a
             * parked one (UW -> SKIP): handing it the lock would leave the
             * lock idle until the scheduler runs it again */
            uint32_t expect = CST_UW;
            uint64_t beat = atomic_load_explicit(&next->beat, memory_order_relaxed);
            uint64_t now = nl_machine_ticks();
            uint32_t to = (now - beat < CST_STALE_TICKS || now - next->since > CST_STARVE_TICKS)
                              ? CST_L : CST_SKIP;
            if (atomic_compare_exchange_strong_explicit(&next->status, &expect, to,
                                                        memory_order_acq_rel, memory_order_acquire)) {
                if (to == CST_L)
                    return; /* passed; global_held tells the new holder the rest */
            } else if (expect == CST_PW && now - next->since > CST_STARVE_TICKS &&
                       atomic_compare_exchange_strong_explicit(&next->status, &expect, CST_L,
                                                               memory_order_acq_rel,
                                                               memory_order_acquire)) {
                /* parked for too long: it gets the lock now (the paper's
                 * pass to a parked waiter), whatever the spinners behind */
                nl_wait_wake(&next->status, 1);
                return;
            }
            prev = next; /* parked (PW) or skipped: leave it behind */
            continue;
        }
        if (atomic_load_explicit(&s->tail, memory_order_acquire) != prev) {
#ifndef NL_VERIFY
            if (!waited) {
                nl_waiter_init(&w);
                waited = true;
            }
            nl_wait_step(&w); /* a newcomer is linking itself behind prev */
#else
            /* the model checker's build (verify/wmm): the same wait as a poll
             * loop of loads only, which it reads as an await (this loop, with
             * its stores, it cannot); the tail never comes back to prev */
            (void)waited;
            while (!atomic_load_explicit(&prev->next, memory_order_relaxed))
                ;
#endif
            continue;
        }
        /* No spinning waiter left: everything behind me is parked. Wake a
         * batch (unless woken ones are already on their way), keep the global
         * lock only if someone is sure to come for it, and free the local lock. */
        uint32_t prev_parked = prev != me;
        uint32_t inflight = atomic_load_explicit(&s->inflight, memory_order_relaxed);
        cst_qnode_t *batch = NULL, *batch_last = NULL;
        uint32_t nb = 0;
        if (inflight == 0 && (s->parked || prev_parked)) {
            uint32_t want = nl_cst_wake_batch();
            if (want > prev_parked)
                batch = park_take(s, want - prev_parked, &nb, &batch_last);
        }
        uint32_t coming = inflight + nb + prev_parked;
        /* idle keep: nobody is coming, but no other node can want the lock */
        int idle_keep = s->global_held && !coming && single_snode(m);
        if (s->global_held && !coming && !idle_keep) {
            global_release(m, s);
            s->global_held = 0;
        }
        if (nb + prev_parked)
            atomic_fetch_add_explicit(&s->inflight, nb + prev_parked, memory_order_relaxed);
        cst_qnode_t *expect = prev;
        /* seq_cst: frees the local lock, the holder's write of the idle-keep
         * pair (single_snode) before its read of `present` below */
        if (atomic_compare_exchange_strong_explicit(&s->tail, &expect, NULL, memory_order_seq_cst,
                                                    memory_order_relaxed)) {
            if (prev_parked) {
                prev->pnext = batch;
                batch = prev;
            }
            wake_requeue(batch); /* all of them are out of the queue now */
            if (idle_keep && !single_snode(m))
                revoke_idle_global(m, s); /* a second node came meanwhile */
            return;
        }
        /* a newcomer arrived behind prev after all: undo and go on walking */
        if (nb + prev_parked)
            atomic_fetch_sub_explicit(&s->inflight, nb + prev_parked, memory_order_relaxed);
        if (batch)
            park_untake(s, batch, batch_last, nb);
    }
}

/* The global lock kept idle by a single snode must go when a second node
 * arrives. The thread that published the second snode, and a holder that kept
 * the lock idle and then sees a second node, try to take s0's local lock (queue
 * node on the stack, never waiting): if that works, they release the global
 * lock and the local one; if s0's local lock is busy, its holder reads
 * `present` after having taken it, sees two nodes, and does not keep the
 * global lock idle. */
static void revoke_idle_global(nl_cst_mutex_t *m, cst_snode_t *s0)
{
    cst_qnode_t q;
    q.snode = s0;
    q.requeued = 0;
    q.pnext = NULL;
    atomic_store_explicit(&q.beat, 0, memory_order_relaxed);
    atomic_store_explicit(&q.next, NULL, memory_order_relaxed);
    atomic_store_explicit(&q.status, CST_UW, memory_order_relaxed);
    cst_qnode_t *expect = NULL;
    /* seq_cst: the newcomer's read of the idle-keep pair (single_snode) */
    if (!atomic_compare_exchange_strong_explicit(&s0->tail, &expect, &q, memory_order_seq_cst,
                                                 memory_order_relaxed))
        return;
    if (s0->global_held) {
        global_release(m, s0);
        s0->global_held = 0;
    }
    cst_unlock(m, &q);
}

/* ---- public API ----------------------------------------------------------- */
void nl_cst_lock_sz(nl_cst_mutex_t *m, size_t snode_size)
{
    cst_lock(m, nl_qnode_get(m), snode_size);
}

int nl_cst_trylock_sz(nl_cst_mutex_t *m, size_t snode_size)
{
    cst_qnode_t *me = nl_qnode_get(m);
    if (cst_trylock(m, me, snode_size) == 0)
        return 0;
    nl_qnode_put(me);
    return EBUSY;
}

int nl_cst_mutex_init(nl_cst_mutex_t *m, const nl_attr_t *attr)
{
    memset(m, 0, sizeof *m);
    if (attr)
        m->local_passes = attr->local_passes;
    return 0;
}

void nl_cst_mutex_destroy(nl_cst_mutex_t *m)
{
    cst_snode_t *s = atomic_load_explicit(&m->snodes, memory_order_acquire);
    while (s) {
        cst_snode_t *n = s->next;
        cst_snode_free(s);
        s = n;
    }
    uint32_t passes = m->local_passes;
    memset(m, 0, sizeof *m);
    m->local_passes = passes; /* usable again, as after init */
}

void nl_cst_mutex_lock(nl_cst_mutex_t *m) { nl_cst_lock_sz(m, sizeof(cst_snode_t)); }

int nl_cst_mutex_trylock(nl_cst_mutex_t *m) { return nl_cst_trylock_sz(m, sizeof(cst_snode_t)); }

/* Release, fast path first: nobody behind us, nobody parked or on the way,
 * one snode keeping the global lock idle -- exactly the case in which
 * cst_unlock() ends in its idle keep and frees the local lock with one CAS. */
static inline void cst_unlock_fast(nl_cst_mutex_t *m, cst_qnode_t *me)
{
    cst_snode_t *s = me->snode;
    if (NL_LIKELY(!atomic_load_explicit(&me->next, memory_order_acquire) && s->global_held &&
                  !s->parked && !atomic_load_explicit(&s->inflight, memory_order_relaxed) &&
                  single_snode(m))) {
        cst_qnode_t *expect = me;
        /* seq_cst: the holder's write of the idle-keep pair (single_snode),
         * before its read of `present` below */
        if (NL_LIKELY(atomic_compare_exchange_strong_explicit(&s->tail, &expect, NULL,
                                                              memory_order_seq_cst,
                                                              memory_order_relaxed))) {
            if (NL_UNLIKELY(!single_snode(m)))
                revoke_idle_global(m, s); /* a second node came meanwhile */
            return;
        }
    }
    cst_unlock(m, me);
}

void nl_cst_mutex_unlock(nl_cst_mutex_t *m)
{
    cst_qnode_t *me = nl_qnode_find(m);
    cst_unlock_fast(m, me);
    nl_qnode_put(me);
}

size_t nl_cst_mutex_footprint(const nl_cst_mutex_t *m)
{
    return sizeof *m + nl_cst_snode_count(m) * sizeof(cst_snode_t);
}

static int op_init(void *l, const nl_attr_t *a) { return nl_cst_mutex_init(l, a); }
static void op_destroy(void *l) { nl_cst_mutex_destroy(l); }
static void op_acquire(void *l) { nl_cst_mutex_lock(l); }
static int op_try(void *l) { return nl_cst_mutex_trylock(l); }
static void op_release(void *l) { nl_cst_mutex_unlock(l); }
static size_t op_footprint(const void *l) { return nl_cst_mutex_footprint(l); }
static size_t op_bytes_at_nodes(unsigned nodes)
{
    return sizeof(nl_cst_mutex_t) + (size_t)nodes * sizeof(cst_snode_t);
}

NL_HIDDEN const nl_lock_ops_t nl_ops_cst_mutex = {
    .name = "cst-mutex",
    .description = "CST two-level NUMA-aware blocking mutex, snodes allocated per node on use",
    .paper = "Kashyap et al. ATC'17 (CST) sec. 4, 5.1",
    .size = sizeof(nl_cst_mutex_t), .align = 8,
    .props = NL_PROP_BLOCKING | NL_PROP_NUMA_AWARE | NL_PROP_ZERO_INIT | NL_PROP_NEEDS_DESTROY,
    .init = op_init, .destroy = op_destroy,
    .acquire = op_acquire, .try_acquire = op_try, .release = op_release,
    .footprint = op_footprint, .bytes_at_nodes = op_bytes_at_nodes,
};
