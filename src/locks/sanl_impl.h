/*
 * SANL: Scalable Adaptive NUMA-aware Lock (Zhang, Chen, Shen, Guo, Liu, Wang;
 * IEEE TPDS 28(6), 2017). The algorithm, as static functions: sanl.c wraps
 * them into the library; tests/test_delegation.c compiles them a second time
 * with NL_SANL_BROKEN_DROP (a server that drops the requests it finds while
 * downgrading) to show that the harness catches a lost request.
 *
 * Read against the paper:
 *  - sanl_vote():     algorithm 1 (both votes: in-place/delegation on theta_l,
 *                     free/restrictive on theta_f), C_l from equation (1);
 *  - sanl_serve():    algorithm 2 (execute own, walk the request array while
 *                     server_state is UP, RequestDensity counter against L_s,
 *                     walk limit T_s, downgrade);
 *  - sanl_delegate(): algorithm 3 (second vote / NUMA admission, the remote
 *                     queue Q with one waiter per node, send the request,
 *                     wait, after T_w try to become the server, take the
 *                     request back if no server ran it);
 *  - sanl_cond_wait(): section 3.3.2, changed: a request that waits goes
 *                     back to its client, which runs it in place on its own
 *                     thread; the server never blocks in a request.
 *
 * Invariants (checked by the harness and verify/sanl.pml):
 *  I1 every execution of a critical section happens with ll held (in place,
 *     by a server, or by a client that took its request back);
 *  I2 a request's fn is cleared only with ll held, by the one thread that
 *     runs it (server) or takes it back (its client): exactly once;
 *  I3 a published request is either run by a server or taken back: a client
 *     that has not been answered within T_w sleeps on its answer if it saw a
 *     server up after sending (that server's last walk, after server_up = 0,
 *     sees the request), else queues on ll, and with ll held it sees its
 *     request either answered (fn NULL) or still pending.
 */
#ifndef NL_SANL_IMPL_H
#define NL_SANL_IMPL_H

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include "numalock/delegation.h"
#include "../internal.h"
#include "deleg_ids.h"

/* One thread's record in one lock: the request line (shared with the
 * server) and the thread's own voting state (paper: per-thread variables). */
struct nl_sanl_slot {
    _Alignas(NL_CACHELINE) _Atomic(nl_deleg_fn) fn; /* non-NULL: pending */
    void *arg;
    void *result;
    _Atomic uint32_t exec;  /* the paper's cond: a server is running it */
    _Atomic uint32_t done;  /* grant word: 1 when answered */
    /* the thread's own line; `end` has its own declaration, since an
     * alignment specifier applies to every declarator of one */
    _Alignas(NL_CACHELINE) uint64_t begin;
    uint64_t end;           /* previous critical section, cycles */
    uint32_t c_l;           /* contention level, 1/1024 */
    uint32_t tick;          /* critical sections, for sampling C_l */
    int32_t cnt, fcnt;      /* boundary counters of the two votes */
    uint8_t joined, vote, fvote, mode;
    uint8_t contended;      /* this section met another thread (see sanl_execute_impl) */
    _Atomic uint64_t inplace; /* its sections run in place (a lock-wide count would be
                               * one more line moving with every hand-over) */
};

#define SANL_ONE 1024u

/* Delegation mode needs this many threads on the lock: a server pays off
 * only with two clients or more. With one, the server's own thread waits out
 * every round trip, which costs about as much as a hand-over of the in-place
 * lock (figures: docs/ALGORITHMS.md, sanl). A deviation from algorithm 1. */
#define SANL_MIN_JOINED 3

/* One critical section in this many is timed for C_l (a power of two). */
#define SANL_SAMPLE 8u

/* Grant values of a request's done word. */
#define SANL_ANSWERED 1u
#define SANL_RETRY 2u  /* it waited on a condition: run it on your own thread */

/* The request a server is running for another thread, for sanl_cond_wait:
 * a waiting request jumps back to the server's walk (see sanl_run). */
typedef struct sanl_exec {
    nl_sanl_t *l;
    struct sanl_exec *prev;
    sigjmp_buf jb;
} sanl_exec_t;
static NL_TLS sanl_exec_t *sanl_execs;

static inline nl_sanl_slot_t *sanl_slot(nl_sanl_t *l, int id)
{
    unsigned c = (unsigned)id / NL_DELEG_CHUNK;
    nl_sanl_slot_t *chunk = atomic_load_explicit(&l->chunks[c], memory_order_acquire);
    if (NL_UNLIKELY(!chunk) &&
        !(chunk = nl_deleg_chunk_alloc((void *_Atomic *)&l->chunks[c], sizeof *chunk)))
        return NULL;
    nl_sanl_slot_t *s = &chunk[(unsigned)id % NL_DELEG_CHUNK];
    if (NL_UNLIKELY(!s->joined)) {
        s->joined = 1;
        atomic_fetch_add_explicit(&l->joined, 1, memory_order_relaxed);
        /* the high-water mark raised to id + 1, the word loaded at every try
         * (a model checker reads such a loop as a wait for a change, whose
         * end it checks) */
        for (;;) {
            int32_t h = atomic_load_explicit(&l->hwm, memory_order_relaxed);
            if (h >= id + 1 ||
                atomic_compare_exchange_weak_explicit(&l->hwm, &h, id + 1, memory_order_release,
                                                      memory_order_relaxed))
                break;
        }
    }
    return s;
}

/* The lock's fields at init but its parameters (l->cfg, which nl_sanl_init
 * resolves and sets next): zero, and no server's node. */
static inline void sanl_init_impl(nl_sanl_t *l)
{
    memset(l, 0, sizeof *l);
    atomic_store_explicit(&l->server_node, -1, memory_order_relaxed);
}

/* ---- the in-place lock ll: qspinlock-cna -----------------------------------
 * The paper's in-place lock is an MCS-like queue lock; qspinlock-cna was the
 * fastest of the MCS and CNA family in SANL's own workload (figures:
 * docs/ALGORITHMS.md, sanl). One word: free is 0. */
static inline bool sanl_ll_free(nl_sanl_t *l) { return atomic_load_explicit(&l->ll.val, memory_order_relaxed) == 0; }
static inline int sanl_ll_try(nl_sanl_t *l) { return nl_qspin_cna_trylock(&l->ll); }
static inline void sanl_ll_acquire(nl_sanl_t *l) { nl_qspin_cna_lock(&l->ll); }
static inline void sanl_ll_release(nl_sanl_t *l) { nl_qspin_cna_unlock(&l->ll); }

/* ---- algorithm 1: C_l (equation 1, alpha = 1/2) and the two votes -------- */
static inline void sanl_vote(nl_sanl_t *l, nl_sanl_slot_t *s, uint64_t now)
{
    if (NL_LIKELY(s->begin && now > s->begin)) {
        uint64_t in_cs = s->end - s->begin;
        uint64_t ratio = in_cs * SANL_ONE / (now - s->begin);
        if (ratio > SANL_ONE)
            ratio = SANL_ONE;
        s->c_l = (uint32_t)((ratio + s->c_l) / 2);
    }
    int32_t b = (int32_t)l->cfg.boundary;
    if (s->vote) {
        if (s->c_l < l->cfg.theta_l) {
            if (++s->cnt > b) {
                s->vote = 0; /* support in-place mode */
                atomic_fetch_sub_explicit(&l->votes, 1, memory_order_relaxed);
                s->cnt = 0;
            }
        } else if (s->cnt > 0)
            s->cnt--;
    } else {
        if (s->c_l >= l->cfg.theta_l) {
            if (++s->cnt > b) {
                s->vote = 1; /* support delegation mode */
                atomic_fetch_add_explicit(&l->votes, 1, memory_order_relaxed);
                s->cnt = 0;
            }
        } else if (s->cnt > 0)
            s->cnt--;
    }
    /* second vote (sec. 3.3.1): restrictive when C_l is at or above theta_f */
    if (s->fvote) {
        if (s->c_l < l->cfg.theta_f) {
            if (++s->fcnt > b) {
                s->fvote = 0;
                atomic_fetch_sub_explicit(&l->fvotes, 1, memory_order_relaxed);
                s->fcnt = 0;
            }
        } else if (s->fcnt > 0)
            s->fcnt--;
    } else {
        if (s->c_l >= l->cfg.theta_f) {
            if (++s->fcnt > b) {
                s->fvote = 1;
                atomic_fetch_add_explicit(&l->fvotes, 1, memory_order_relaxed);
                s->fcnt = 0;
            }
        } else if (s->fcnt > 0)
            s->fcnt--;
    }
}

static inline void sanl_count(_Atomic uint64_t *c)
{
    /* written with ll held: no read-modify-write needed */
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}

/* Run another thread's request. If it waits on a condition
 * (sanl_cond_wait), it comes back here by siglongjmp, before it has changed
 * anything (the documented rule: wait first), and goes back to its client
 * (SANL_RETRY), which runs it in place on its own thread: the server never
 * blocks in a request (paper sec. 3.3.2 blocks the server thread instead). */
static __attribute__((noinline)) uint32_t sanl_run(nl_sanl_t *l, nl_sanl_slot_t *r, nl_deleg_fn f)
{
#ifdef NL_VERIFY
    /* the model checker's build (verify/wmm) has no sigsetjmp; its requests
     * never wait on a condition */
    (void)l;
    r->result = f(r->arg);
    return SANL_ANSWERED;
#endif
    sanl_exec_t ex;
    ex.l = l;
    ex.prev = sanl_execs;
    sanl_execs = &ex;
    if (sigsetjmp(ex.jb, 0)) {
        sanl_execs = ex.prev;
        return SANL_RETRY;
    }
    r->result = f(r->arg);
    sanl_execs = ex.prev;
    return SANL_ANSWERED;
}

/* One walk over the request array (algorithm 2, lines 5-12); ll held.
 * Returns the number of requests run. `final`: the walk after server_state
 * went DOWN (see sanl_serve). */
static inline uint32_t sanl_walk(nl_sanl_t *l, nl_sanl_slot_t *me, int final)
{
    (void)final;
    uint32_t n = 0;
    int32_t hwm = atomic_load_explicit(&l->hwm, memory_order_acquire);
    for (int32_t c = 0; c * NL_DELEG_CHUNK < hwm; c++) {
        nl_sanl_slot_t *chunk = atomic_load_explicit(&l->chunks[c], memory_order_acquire);
        if (!chunk)
            continue;
        int32_t end = hwm - c * NL_DELEG_CHUNK;
        if (end > NL_DELEG_CHUNK)
            end = NL_DELEG_CHUNK;
        for (int32_t i = 0; i < end; i++) {
            nl_sanl_slot_t *r = &chunk[i];
            nl_deleg_fn f = atomic_load_explicit(&r->fn, memory_order_acquire);
            if (!f || r == me || atomic_load_explicit(&r->exec, memory_order_relaxed))
                continue;
#ifdef NL_SANL_BROKEN_DROP
            if (final) { /* BROKEN: answered without being run */
                atomic_store_explicit(&r->fn, NULL, memory_order_relaxed);
                nl_grant32(&r->done, 1);
                continue;
            }
#endif
            atomic_store_explicit(&r->exec, 1, memory_order_relaxed);
            uint32_t answer = sanl_run(l, r, f);
            atomic_store_explicit(&r->exec, 0, memory_order_relaxed);
            atomic_store_explicit(&r->fn, NULL, memory_order_relaxed);
            nl_grant32(&r->done, answer);
            sanl_count(answer == SANL_ANSWERED ? &l->served : &l->handbacks);
            n++;
        }
    }
    return n;
}

/* The server's pause after an empty walk, and a client's pause while it
 * waits within T_w: on the clock's ticks, with a PAUSE only now and then (in
 * a virtual machine, a run of PAUSEs can exit to the hypervisor:
 * microseconds, where an answer takes a few hundred cycles). */
#define SANL_GAP_NS 100
static inline void sanl_gap(void)
{
#ifdef NL_VERIFY
    return; /* the model checker's clock does not advance (src/core/machine.h) */
#endif
    uint64_t t = nl_machine_ticks(), gap = nl_ns_to_ticks(SANL_GAP_NS);
    while (nl_machine_ticks() - t < gap)
        __asm__ __volatile__("" ::: "memory");
}

static inline uint32_t sanl_ls(const nl_sanl_t *l, uint32_t c_l)
{
#ifdef NL_VERIFY
    /* the model checker's build (verify/wmm): GenMC 0.9 cannot interpret
     * what its jump threading makes of the clamps below (a freeze); its
     * servers stop after t_s walks anyway */
    (void)l, (void)c_l;
    return 1;
#endif
    uint64_t ls = (uint64_t)l->cfg.ls_k * SANL_ONE / (c_l > 8 ? c_l : 8);
    return ls < 1 ? 1 : ls > 1000 ? 1000 : (uint32_t)ls;
}

/* Algorithm 2: ll held. Run our own critical section (if any), then serve
 * until the request density stays low for more than L_s walks or T_s walks
 * are done; downgrade and release ll. */
static void *sanl_serve(nl_sanl_t *l, nl_sanl_slot_t *me, nl_deleg_fn fn, void *arg, int node)
{
    void *res = NULL;
    if (fn) {
        res = fn(arg);
        sanl_count(&l->own);
    }
    sanl_count(&l->terms);
    atomic_store_explicit(&l->server_node, node, memory_order_relaxed);
    /* UP: no store-load pair needs it sequentially consistent (a client
     * that reads UP relies on this server's last walk, ordered by the DOWN
     * store and the fence below; the checks pass with it relaxed); seq_cst
     * once per term costs nothing measurable */
    atomic_store_explicit(&l->server_up, 1, memory_order_seq_cst);
    uint32_t ls = sanl_ls(l, me ? me->c_l : SANL_ONE), low = 0, any = 0;
    for (uint32_t walks = 1;; walks++) {
        uint32_t n = sanl_walk(l, me, 0);
        any |= n;
        if (n == 0) {
            low++; /* RequestDensity <= 0 */
            sanl_gap();
        } else if (low > 0)
            low--;
        if (low > ls || walks >= l->cfg.t_s)
            break;
    }
    /* server_state = DOWN, then one more walk: a client that published before
     * it saw DOWN is answered here; one that saw DOWN takes ll and its request
     * back. A Dekker pair: the client stores fn then loads server_up (both
     * seq_cst, sanl_delegate), the server stores server_up = 0 then loads each
     * fn; one of the two loads must see the other's store, or the client,
     * having read UP, sleeps on an answer this walk does not give. The walk's
     * loads are acquire, so the fence orders them after the store (without it
     * C11 allows both loads to read the old values, as POWER and ARMv8's
     * LDAPR do; the check verify/wmm/sanl.c with NL_SANL_VERIFY_TW finds the
     * lost request). With the fence, the store itself needs no more than
     * relaxed (the checks pass so); it stays seq_cst, once per term. */
    atomic_store_explicit(&l->server_up, 0, memory_order_seq_cst);
    atomic_thread_fence(memory_order_seq_cst);
    any |= sanl_walk(l, me, 1);
    if (any && me)
        me->contended = 1; /* it served other threads */
    sanl_ll_release(l);
    return res;
}

/* The clock's ticks since `since`; a sending client looks at it every
 * SANL_TW_LOOK + 1 polls of its answer. The model checker's clock does not
 * advance (src/core/machine.h): its check of the paths after T_w
 * (verify/wmm/sanl.c with NL_SANL_VERIFY_TW) has T_w over at the first poll. */
#if defined(NL_VERIFY) && defined(NL_SANL_VERIFY_TW)
#define SANL_TW_LOOK 0u
static inline uint64_t sanl_elapsed(uint64_t since) { (void)since; return UINT64_MAX; }
#else
#define SANL_TW_LOOK 15u
static inline uint64_t sanl_elapsed(uint64_t since) { return nl_machine_ticks() - since; }
#endif

/* serving-first / distance-first admission of a client to the current server */
static inline int sanl_admitted(const nl_sanl_t *l, const nl_sanl_slot_t *s, int node)
{
    if (l->cfg.policy == NL_SANL_NO_NUMA)
        return 1;
    if (atomic_load_explicit(&l->server_node, memory_order_relaxed) == node)
        return 1;
    if (l->cfg.policy == NL_SANL_DISTANCE_FIRST)
        return 0;
    int32_t joined = atomic_load_explicit(&l->joined, memory_order_relaxed);
    int restrictive = 2 * atomic_load_explicit(&l->fvotes, memory_order_relaxed) > joined;
    return !restrictive || s->c_l < l->cfg.theta_f; /* free mode, or a light remote client */
}

/* Algorithm 3 (a thread in delegation mode). */
static void *sanl_delegate(nl_sanl_t *l, nl_sanl_slot_t *s, nl_deleg_fn fn, void *arg, int node)
{
    nl_waiter_t w;
    nl_waiter_init(&w);
    uint64_t t0 = nl_machine_ticks(), t_w = nl_ns_to_ticks(l->cfg.t_w_ns);
    /* become the server by trylock, or wait until we may send to the server */
    for (;;) {
        if (sanl_ll_free(l) && sanl_ll_try(l) == 0)
            return sanl_serve(l, s, fn, arg, node);
        if (!atomic_load_explicit(&l->server_up, memory_order_acquire) || sanl_admitted(l, s, node))
            break;
        /* a remote server that does not admit us: after T_w, queue for ll
         * unless a thread of this node is queued already (Q, one per node) */
        if (sanl_elapsed(t0) > t_w && !atomic_load_explicit(&l->q_node[node], memory_order_relaxed)) {
            uint8_t expect = 0;
            if (atomic_compare_exchange_strong_explicit(&l->q_node[node], &expect, 1, memory_order_acquire,
                                                        memory_order_relaxed)) {
                s->contended = 1;
                sanl_ll_acquire(l);
                atomic_store_explicit(&l->q_node[node], 0, memory_order_release);
                return sanl_serve(l, s, fn, arg, node);
            }
        }
        nl_wait_step(&w);
    }
    /* send the request */
    s->contended = 1;
    s->arg = arg;
    atomic_store_explicit(&s->done, NL_GRANT_WAITING, memory_order_relaxed);
    /* publication (release: arg and done for whoever runs it) and the first
     * half of the Dekker pair with the server's DOWN: this store, then the
     * seq_cst loads of server_up below, against the server's DOWN store, its
     * fence and its last walk's load of fn (sanl_serve). Release alone loses
     * a request (verify/wmm/sanl.c, NL_SANL_VERIFY_TW). */
    atomic_store_explicit(&s->fn, fn, memory_order_seq_cst);
    t0 = nl_machine_ticks();
    for (uint32_t n = 0;;) {
        uint32_t d = atomic_load_explicit(&s->done, memory_order_acquire);
        if (d == SANL_ANSWERED)
            return s->result;
        if (d == SANL_RETRY) {
            sanl_ll_acquire(l);
            return sanl_serve(l, s, fn, arg, node);
        }
        /* no server and a free lock: become the server (and take the request
         * back). seq_cst: the second half of the Dekker pair with the fn
         * store above; the client's last look at server_up before it
         * sleeps may be this one (the one after T_w reads the same or a
         * newer value): if it read UP, that server's last walk sees fn */
        if (!atomic_load_explicit(&l->server_up, memory_order_seq_cst) &&
            sanl_ll_free(l) && sanl_ll_try(l) == 0)
            goto holding;
        if ((++n & SANL_TW_LOOK) == 0) {
            if (sanl_elapsed(t0) > t_w)
                break;
            nl_cpu_relax();
        }
    }
    /* waited T_w. A server that is up (or runs the request now) answers it:
     * sleep on the answer. The request was sent before server_up was read
     * as 1, so that server's last walk (after it stores 0) sees it, unless
     * another server answers first. No server: queue on ll, which the
     * in-place holder or the next server hands on. */
    atomic_fetch_add_explicit(&l->timeouts, 1, memory_order_relaxed);
    /* server_up seq_cst: the Dekker pair's load, as in the loop above (one
     * of the two must be seq_cst: the check fails with both acquire) */
    if (atomic_load_explicit(&s->exec, memory_order_relaxed) ||
        atomic_load_explicit(&l->server_up, memory_order_seq_cst)) {
        nl_wait_renew(&w);
        if (nl_wait_grant32(&w, &s->done) == SANL_ANSWERED)
            return s->result;
        sanl_ll_acquire(l);
        return sanl_serve(l, s, fn, arg, node); /* it waits: run it here */
    }
    sanl_ll_acquire(l);
holding:
    /* exec is 0 here: a server sets and clears it within one hold of ll */
    if (atomic_load_explicit(&s->fn, memory_order_relaxed) == NULL) {
        if (atomic_load_explicit(&s->done, memory_order_relaxed) == SANL_RETRY)
            return sanl_serve(l, s, fn, arg, node); /* handed back: run it here */
        void *res = s->result; /* answered before we got ll */
        sanl_serve(l, s, NULL, NULL, node);
        return res;
    }
    atomic_store_explicit(&s->fn, NULL, memory_order_relaxed); /* take it back */
    sanl_count(&l->takeovers);
    return sanl_serve(l, s, fn, arg, node);
}

static void *sanl_execute_impl(nl_sanl_t *l, nl_deleg_fn fn, void *arg)
{
    int id = nl_deleg_slot();
    nl_sanl_slot_t *s = id >= 0 ? sanl_slot(l, id) : NULL;
    if (NL_UNLIKELY(!s)) { /* no slot: in place */
        sanl_ll_acquire(l);
        void *r = fn(arg);
        sanl_count(&l->inplace);
        sanl_ll_release(l);
        return r;
    }
    /* C_l is sampled (paper sec. 3.1 allows it): one section in SANL_SAMPLE
     * is timed, and the next one's start closes its ratio and votes; a
     * cycle counter read costs 12-55 ns in this project's virtual machines */
    uint32_t k = ++s->tick & (SANL_SAMPLE - 1);
    uint64_t now = k == SANL_SAMPLE - 1 || k == 0 ? nl_machine_ticks() : 0;
    if (k == 0)
        sanl_vote(l, s, now);
    int delegate, mode = __atomic_load_n(&l->cfg.mode, __ATOMIC_RELAXED); /* tests flip it */
    if (mode == NL_SANL_ADAPTIVE) {
        /* in place while the process is overloaded (the waiting design's
         * test), whatever the votes: a server serves only while it runs,
         * and its clients spin on answers meanwhile (figures:
         * docs/ALGORITHMS.md, sanl). A deviation from algorithm 1, which
         * assumes a CPU per thread. */
        int32_t joined = atomic_load_explicit(&l->joined, memory_order_relaxed);
        delegate = joined >= SANL_MIN_JOINED &&
                   2 * atomic_load_explicit(&l->votes, memory_order_relaxed) > joined &&
                   !nl_wait_restricting();
    }
    else
        delegate = mode == NL_SANL_DELEGATE;
    if (NL_UNLIKELY(delegate != s->mode)) {
        s->mode = (uint8_t)delegate;
        atomic_fetch_add_explicit(&l->switches, 1, memory_order_relaxed);
    }
    void *r;
    s->contended = 0;
    if (!delegate) {
        if (sanl_ll_try(l)) {
            s->contended = 1;
            sanl_ll_acquire(l);
        }
        r = fn(arg);
        sanl_count(&s->inplace);
        sanl_ll_release(l);
    } else {
        r = sanl_delegate(l, s, fn, arg, nl_self_node(nl_self()));
    }
    if (k == SANL_SAMPLE - 1) {
        /* C_l counts the time of sections that met another thread (a lock
         * that was taken, a request sent, requests served): a section that
         * ran alone is no contention, however short the interval after it
         * (the paper counts every section's time: with intervals of a few
         * hundred cycles that reads as contention on an idle lock, and on a
         * machine whose threads share a CPU it chose a server that nobody
         * sends to) */
        s->begin = now;
        s->end = s->contended ? nl_machine_ticks() : now;
    }
    return r;
}

/* Inside a request a server runs for another thread: back to the server's
 * walk (the request goes back to its client). Otherwise the caller holds ll
 * itself (in place, or its own section before it serves): release ll, sleep
 * until signalled, take ll again. */
static void sanl_cond_wait_impl(nl_sanl_t *l, nl_sanl_cond_t *c)
{
    if (sanl_execs && sanl_execs->l == l)
        siglongjmp(sanl_execs->jb, 1);
    uint32_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
    sanl_ll_release(l);
    nl_wait_cond_sleep(&c->seq, seq);
    sanl_ll_acquire(l);
}

#endif
