/*
 * Tests of the CNA family's explicit APIs (include/numalock/cna.h), beyond
 * what the shared stress harness covers through the ops table:
 *   qspin      nl_qspin_* and nl_qspin_cna_*: static initialiser, trylock,
 *              unlock by another thread, mutual exclusion on the public API,
 *              the spin-on-the-word fallback (no queue node), many short-lived
 *              threads (slot recycling reuses the per-slot node blocks)
 *   steal      bounded stealing from the pending waiter: the word rule, and a
 *              waiter that must get in while another thread re-locks at once
 *   cna        nl_cna_lock/unlock with caller-provided nodes on the stack,
 *              nl_cna_opt_unlock, node-free form nested with the paper form
 *   fairness   nl_cna_set_fairness parsing
 *   sizes      cna 8 bytes, qspinlock 4; cohort/hmcs grow with nodes
 *   passes     c-bo-mcs, c-tkt-tkt, hmcs with local_passes 1, 2, 3, 1000
 * Usage: test_cna [qspin|steal|cna|fairness|sizes|passes|all] [--topology SPEC]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "numalock/cna.h"
#include "numalock/topology.h"
#include "nl_test_internal.h"

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "test_cna: FAIL %s:%d: ", \
    __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

/* ---- qspinlock ---------------------------------------------------------- */
static nl_qspinlock_t qlock = NL_QSPINLOCK_INIT;
static int use_cna;
static volatile long qcount;
static volatile int qinside;
static _Atomic int qbad;

static void q_lock(nl_qspinlock_t *l) { use_cna ? nl_qspin_cna_lock(l) : nl_qspin_lock(l); }
static int q_try(nl_qspinlock_t *l) { return use_cna ? nl_qspin_cna_trylock(l) : nl_qspin_trylock(l); }
static void q_unlock(nl_qspinlock_t *l) { use_cna ? nl_qspin_cna_unlock(l) : nl_qspin_unlock(l); }

static void *q_worker(void *p)
{
    long n = (long)(intptr_t)p;
    for (long i = 0; i < n; i++) {
        if ((i & 7) == 0) {
            if (q_try(&qlock) != 0)
                q_lock(&qlock);
        } else {
            q_lock(&qlock);
        }
        if (qinside++)
            atomic_store(&qbad, 1);
        long c = qcount;
        if ((i & 127) == 0)
            sched_yield();
        qcount = c + 1;
        qinside--;
        q_unlock(&qlock);
    }
    return NULL;
}

static void q_hammer(int threads, long per)
{
    pthread_t th[64];
    qcount = 0;
    for (int i = 0; i < threads; i++)
        pthread_create(&th[i], NULL, q_worker, (void *)(intptr_t)per);
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    CHECK(!atomic_load(&qbad), "qspinlock%s: two threads inside", use_cna ? "-cna" : "");
    CHECK(qcount == threads * per, "qspinlock%s: counter %ld, expected %ld", use_cna ? "-cna" : "",
          qcount, threads * per);
    CHECK(atomic_load(&qlock.val) == 0, "qspinlock%s: word 0x%x after all released",
          use_cna ? "-cna" : "", atomic_load(&qlock.val));
}

static void *q_try_other(void *p) { return (void *)(intptr_t)q_try(p); }
static void *q_unlock_other(void *p) { q_unlock(p); return NULL; }

static int q_try_from_thread(nl_qspinlock_t *l)
{
    pthread_t t;
    void *r;
    pthread_create(&t, NULL, q_try_other, l);
    pthread_join(t, &r);
    return (int)(intptr_t)r;
}

static void *q_short(void *p)
{
    (void)p;
    q_lock(&qlock);
    qcount++;
    q_unlock(&qlock);
    return NULL;
}

/* bounded stealing from the pending waiter: the rule on hand-made words, then
 * a waiter that must get the lock while another thread re-takes it with no
 * gap at all (it sets no-steal when its patience runs out) */
#define QV_LOCKED NL_TEST_QS_LOCKED
#define QV_PENDING NL_TEST_QS_PENDING
#define QV_NOSTEAL NL_TEST_QS_NOSTEAL
static _Atomic int q_stop, q_waiter_done;
static void *q_greedy(void *p)
{
    long n = 0;
    while (!atomic_load(&q_stop)) {
        q_lock(p);
        n++;
        q_unlock(p);
    }
    return (void *)n;
}
static void *q_one_lock(void *p)
{
    q_lock(p);
    q_unlock(p);
    atomic_store(&q_waiter_done, 1);
    return NULL;
}
static void test_steal(void)
{
    for (use_cna = 0; use_cna < 2; use_cna++) {
        nl_qspinlock_t l;
        atomic_store(&l.val, QV_PENDING); /* a lone pending waiter, lock free */
        CHECK(q_try(&l) == 0, "trylock must overtake a lone pending waiter");
        CHECK(atomic_load(&l.val) == (QV_PENDING | QV_LOCKED), "steal left 0x%x", atomic_load(&l.val));
        atomic_store(&l.val, QV_PENDING);
        q_lock(&l); /* would hang here if lock() did not steal */
        CHECK(atomic_load(&l.val) == (QV_PENDING | QV_LOCKED), "lock steal left 0x%x", atomic_load(&l.val));
        atomic_store(&l.val, QV_PENDING | QV_NOSTEAL);
        CHECK(q_try(&l) == EBUSY, "trylock took the lock from a pending waiter that set no-steal");
        atomic_store(&l.val, QV_PENDING | NL_TEST_QS_TAIL(0, 0));
        CHECK(q_try(&l) == EBUSY, "trylock overtook a pending waiter with a queue behind it");
        atomic_store(&l.val, QV_NOSTEAL | NL_TEST_QS_TAIL(0, 0));
        CHECK(q_try(&l) == EBUSY, "trylock overtook a designated queue head");

        /* a pending waiter that keeps finding the lock held runs out of
         * patience and sets no-steal, so the owner's next re-lock queues */
        nl_qspinlock_t h = NL_QSPINLOCK_INIT;
        pthread_t w;
        atomic_store(&q_waiter_done, 0);
        q_lock(&h);
        pthread_create(&w, NULL, q_one_lock, &h);
        uint32_t v = 0;
        for (int i = 0; i < 2000 && !((v = atomic_load(&h.val)) & QV_NOSTEAL); i++)
            nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
        CHECK(v == (QV_LOCKED | QV_PENDING | QV_NOSTEAL), "pending waiter never set no-steal: 0x%x", v);
        q_unlock(&h);
        pthread_join(w, NULL);
        CHECK(atomic_load(&h.val) == 0, "no-steal left behind: 0x%x", atomic_load(&h.val));

        /* progress: a greedy thread re-locks at once, forever */
        nl_qspinlock_t g = NL_QSPINLOCK_INIT;
        pthread_t a, b;
        atomic_store(&q_stop, 0);
        atomic_store(&q_waiter_done, 0);
        pthread_create(&a, NULL, q_greedy, &g);
        pthread_create(&b, NULL, q_one_lock, &g);
        for (int i = 0; i < 2000 && !atomic_load(&q_waiter_done); i++) /* 20 s at most */
            nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
        int got = atomic_load(&q_waiter_done);
        CHECK(got, "%s: a waiter starved behind a thread re-locking in a loop", use_cna ? "cna" : "mcs");
        atomic_store(&q_stop, 1);
        pthread_join(a, NULL);
        if (got)
            pthread_join(b, NULL);
        else
            pthread_detach(b);
        CHECK(atomic_load(&g.val) == 0, "lock word 0x%x after both left", atomic_load(&g.val));
    }
}

static void test_qspin(void)
{
    for (use_cna = 0; use_cna < 2; use_cna++) {
        nl_qspinlock_t l = NL_QSPINLOCK_INIT;
        CHECK(sizeof l == 4, "nl_qspinlock_t is %zu bytes", sizeof l);
        CHECK(q_try(&l) == 0, "trylock on a zero lock failed");
        CHECK(nl_qspin_is_locked(&l), "locked byte not set");
        CHECK((atomic_load(&l.val) & NL_TEST_QS_LOCKED_MASK) == NL_TEST_QS_LOCKED, "low byte is not the locked byte");
        CHECK(q_try_from_thread(&l) == EBUSY, "trylock by another thread while held");
        /* unlock from another thread (NL_PROP_ANY_UNLOCK) */
        pthread_t t;
        pthread_create(&t, NULL, q_unlock_other, &l);
        pthread_join(t, NULL);
        CHECK(atomic_load(&l.val) == 0, "unlock by another thread left 0x%x", atomic_load(&l.val));
        q_lock(&l);
        q_unlock(&l);
        CHECK(q_try_from_thread(&l) == 0, "trylock failed on a released lock");
        CHECK(nl_qspin_is_locked(&l), "trylock from a thread that exited must leave it held");
        q_unlock(&l);

        /* queue path: 8 and 32 threads */
        q_hammer(8, 6000);
        q_hammer(32, 1000);
        /* fallback path: no queue node at all, everyone spins on the word */
        uint32_t max_nodes = atomic_exchange(&nl_qs_max_nodes, 0);
        q_hammer(8, 3000);
        atomic_store(&nl_qs_max_nodes, max_nodes);
        /* slot recycling: waves of short-lived threads */
        qcount = 0;
        for (int wave = 0; wave < 20; wave++) {
            pthread_t th[16];
            for (int i = 0; i < 16; i++)
                pthread_create(&th[i], NULL, q_short, NULL);
            for (int i = 0; i < 16; i++)
                pthread_join(th[i], NULL);
        }
        CHECK(qcount == 20 * 16, "short-lived threads: %ld of %d", qcount, 20 * 16);
    }
}

/* ---- CNA, paper form ---------------------------------------------------- */
static nl_cna_t clock_ = NL_CNA_INIT;
static nl_cna_t inner = NL_CNA_INIT;
static volatile long ccount;
static volatile int cinside;
static _Atomic int cbad;

static void *c_worker(void *p)
{
    long n = (long)(intptr_t)p;
    for (long i = 0; i < n; i++) {
        nl_cna_node_t me; /* on the stack, as the paper allows */
        if ((i & 15) == 0) {
            if (nl_cna_trylock(&clock_, &me) != 0)
                nl_cna_lock(&clock_, &me);
        } else {
            nl_cna_lock(&clock_, &me);
        }
        if (cinside++)
            atomic_store(&cbad, 1);
        if ((i & 3) == 0) { /* node-free form nested inside the paper form */
            nl_cna_acquire(&inner);
            ccount++;
            nl_cna_release(&inner);
        } else {
            ccount++;
        }
        if ((i & 127) == 0)
            sched_yield();
        cinside--;
        if (i & 1)
            nl_cna_unlock(&clock_, &me);
        else
            nl_cna_opt_unlock(&clock_, &me);
    }
    return NULL;
}

static void test_cna(void)
{
    CHECK(sizeof(nl_cna_t) == sizeof(void *), "nl_cna_t is %zu bytes", sizeof(nl_cna_t));
    ccount = 0;
    pthread_t th[32];
    int T = 16;
    long per = 3000;
    for (int i = 0; i < T; i++)
        pthread_create(&th[i], NULL, c_worker, (void *)(intptr_t)per);
    for (int i = 0; i < T; i++)
        pthread_join(th[i], NULL);
    CHECK(!atomic_load(&cbad), "cna: two threads inside");
    CHECK(ccount == T * per, "cna: counter %ld, expected %ld", ccount, T * per);
    CHECK(atomic_load(&clock_.tail) == NULL, "cna: tail not empty at the end");
    CHECK(atomic_load(&inner.tail) == NULL, "cna: inner tail not empty at the end");
}

static void test_fairness(void)
{
    char err[256];
    const char *good[] = { "time:1ms", "time:500us", "time:200000ns", "time:1s", "random:2",
                           "random:65536" };
    const char *bad[] = { "", "time:", "time:0ms", "time:5", "time:1h", "random:3", "random:1",
                          "random:", "fast", "time:-1ms" };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        CHECK(nl_cna_set_fairness(good[i], err, sizeof err) == 0, "rejected '%s'", good[i]);
    CHECK(!strcmp(nl_cna_fairness(), "random:65536"), "fairness now '%s'", nl_cna_fairness());
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = 0;
        CHECK(nl_cna_set_fairness(bad[i], err, sizeof err) == EINVAL && strstr(err, "valid forms"),
              "accepted '%s'", bad[i]);
    }
    CHECK(!strcmp(nl_cna_fairness(), "random:65536"), "a rejected rule changed the setting");
    /* the random rule must still hand over correctly */
    test_cna();
    nl_cna_set_fairness("time:1ms", NULL, 0);
}

static void test_sizes(void)
{
    const char *four[] = { "qspinlock", "qspinlock-cna" };
    for (int i = 0; i < 2; i++) {
        const nl_lock_ops_t *o = nl_lock_find(four[i]);
        CHECK(o && o->size == 4 && nl_lock_bytes_at_nodes(o, 8) == 4, "%s is not 4 bytes", four[i]);
    }
    const char *word[] = { "cna", "cna-opt" };
    for (int i = 0; i < 2; i++) {
        const nl_lock_ops_t *o = nl_lock_find(word[i]);
        CHECK(o && o->size == 8 && nl_lock_bytes_at_nodes(o, 8) == 8, "%s is not 8 bytes", word[i]);
    }
    const char *hier[] = { "c-bo-mcs", "c-tkt-tkt", "hmcs" };
    for (int i = 0; i < 3; i++) {
        const nl_lock_ops_t *o = nl_lock_find(hier[i]);
        CHECK(o != NULL, "%s not registered", hier[i]);
        if (!o)
            continue;
        size_t b2 = nl_lock_bytes_at_nodes(o, 2), b4 = nl_lock_bytes_at_nodes(o, 4),
               b8 = nl_lock_bytes_at_nodes(o, 8);
        CHECK(b2 > o->size && b4 > b2 && b8 > b4, "%s: %zu/%zu/%zu bytes at 2/4/8 nodes", hier[i], b2, b4, b8);
        nl_lock_t *h = nl_lock_create(hier[i], NULL);
        CHECK(h && nl_lock_footprint(h) == nl_lock_bytes_at_nodes(o, (unsigned)nl_topology_nodes()),
              "%s: footprint differs from bytes_at_nodes(current nodes)", hier[i]);
        nl_attr_t a = { .local_passes = 3 };
        nl_lock_t *h3 = nl_lock_create(hier[i], &a);
        CHECK(h3 != NULL, "%s: cannot create with local_passes", hier[i]);
        nl_lock_destroy(h);
        nl_lock_destroy(h3);
    }
}

/* ---- cohort / hmcs with small and large local-pass bounds --------------- */
static nl_lock_t *hlock;
static volatile long hcount;
static volatile int hinside;
static _Atomic int hbad;

static void *h_worker(void *p)
{
    long n = (long)(intptr_t)p;
    for (long i = 0; i < n; i++) {
        if ((i & 7) == 0) {
            if (nl_lock_try(hlock) != 0)
                nl_lock_acquire(hlock);
        } else {
            nl_lock_acquire(hlock);
        }
        if (hinside++)
            atomic_store(&hbad, 1);
        long c = hcount;
        if ((i & 63) == 0)
            sched_yield();
        hcount = c + 1;
        hinside--;
        nl_lock_release(hlock);
    }
    return NULL;
}

static void test_passes(void)
{
    const char *names[] = { "c-bo-mcs", "c-tkt-tkt", "hmcs" };
    uint32_t passes[] = { 1, 2, 3, 1000 };
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < 4; k++) {
            nl_attr_t a = { .stats = true, .local_passes = passes[k] };
            hlock = nl_lock_create(names[i], &a);
            CHECK(hlock != NULL, "%s: cannot create", names[i]);
            if (!hlock)
                continue;
            pthread_t th[8];
            hcount = 0;
            for (int t = 0; t < 8; t++)
                pthread_create(&th[t], NULL, h_worker, (void *)(intptr_t)2000);
            for (int t = 0; t < 8; t++)
                pthread_join(th[t], NULL);
            CHECK(!atomic_load(&hbad), "%s passes=%u: two threads inside", names[i], passes[k]);
            CHECK(hcount == 8 * 2000, "%s passes=%u: counter %ld", names[i], passes[k], hcount);
            nl_lock_destroy(hlock);
        }
    }
}

int main(int argc, char **argv)
{
    const char *what = "all";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--topology") && i + 1 < argc) {
            char err[256];
            if (nl_topology_set(argv[++i], err, sizeof err)) {
                fprintf(stderr, "test_cna: %s\n", err);
                return 2;
            }
        } else {
            what = argv[i];
        }
    }
    int all = !strcmp(what, "all");
    if (all || !strcmp(what, "sizes")) test_sizes();
    if (all || !strcmp(what, "qspin")) test_qspin();
    if (all || !strcmp(what, "steal")) test_steal();
    if (all || !strcmp(what, "cna")) test_cna();
    if (all || !strcmp(what, "fairness")) test_fairness();
    if (all || !strcmp(what, "passes")) test_passes();
    if (failures) {
        fprintf(stderr, "test_cna: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_cna: PASS %s (topology %s)\n", what, nl_topology_current()->spec);
    return 0;
}
