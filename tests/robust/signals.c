/*
 * Signals at threads that wait for locks (tests/robust/robust.cmake runs it
 * for every registered lock).
 *
 *   nl_robust_signals --lock NAME [--mode storm|eintr|nest] [--threads N]
 *       [--seconds S] [--rate HZ] [--depth D] [--policy P] [--topology T]
 *       [--watchdog S]
 *
 * storm: N threads take lock M in a loop while a storm thread sends SIGUSR1
 *   and SIGUSR2 at them, HZ of each per second. The SIGUSR1 handler takes
 *   1, 2, ... D locks of the same kind at once (H[0..d), d cycling up to
 *   D) and the SIGUSR2 handler, which may interrupt it, two more (G[0..2)):
 *   a thread that waits in M's queue holds up to 1 + D + 2 queue nodes, past
 *   the queue-node pool (8) and the 4-byte locks' tail nodes (4). M, H[0]
 *   and G[0] share a bucket of the gate. Every lock guards its own data
 *   (owner, counter); the counts must match the acquisitions.
 * eintr: one thread holds M for 2 ms at a time while N - 1 wait (policy
 *   park:0:0 unless --policy: they sleep at once) and get SIGUSR1 at HZ
 *   from a handler installed without SA_RESTART, so that their futex sleeps
 *   end with EINTR: each waiter must go on waiting and enter only when M is
 *   free.
 * nest: no signals: half the threads take M then X (one gate bucket), the
 *   others X alone, while the process has more threads than CPUs (the gate
 *   is open): a thread that holds M and waits for X must not sleep behind a
 *   thread that waits for M.
 * Order: M, then H[0..D), then G[0..2): no thread waits for a lock below
 * one it holds, so any hang is the library's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "core/self.h"
#include <signal.h>
#define NL_TEST_WAIT
#include "../nl_test_internal.h"
#include "robust.h"

enum { MAX_DEPTH = 32, MAX_THREADS = 64, NG = 2 };

static const nl_lock_ops_t *ops;
static rb_locks_t locks; /* [0] M, [1] X (nest) or H[0..D), then G[0..NG) */
static void *M, *X, *H[MAX_DEPTH], *G[NG];
static rb_guard_t gM, gX, gH[MAX_DEPTH], gG[NG];
static _Atomic long tallyM, tallyX, tallyH[MAX_DEPTH], tallyG[NG];
static int depth = 12, nthreads = 6;
static double seconds = 2, rate = 5000;
static _Atomic int stop;
static _Atomic long handled, while_waiting, sent;
static __thread volatile int waiting; /* the thread is inside an acquisition of M */
static __thread int me;               /* 1 + the worker's index */

static void take(void *l, rb_guard_t *g, int who, const char *what)
{
    ops->acquire(l);
    rb_enter(g, who, what);
}
static void give(void *l, rb_guard_t *g, int who, const char *what)
{
    rb_leave(g, who, what);
    ops->release(l);
}

static void on_usr1(int sig)
{
    (void)sig;
    int saved = errno;
    if (waiting)
        atomic_fetch_add_explicit(&while_waiting, 1, memory_order_relaxed);
    int d = 1 + (int)(atomic_fetch_add_explicit(&handled, 1, memory_order_relaxed) % (unsigned)depth);
    for (int k = 0; k < d; k++)
        take(H[k], &gH[k], me, "handler lock H");
    for (int k = d; k-- > 0;) {
        give(H[k], &gH[k], me, "handler lock H");
        atomic_fetch_add_explicit(&tallyH[k], 1, memory_order_relaxed);
    }
    atomic_fetch_add_explicit(&rb_progress, 1, memory_order_relaxed);
    errno = saved;
}

static void on_usr2(int sig)
{
    (void)sig;
    int saved = errno;
    atomic_fetch_add_explicit(&handled, 1, memory_order_relaxed);
    for (int k = 0; k < NG; k++)
        take(G[k], &gG[k], me, "nested handler lock G");
    for (int k = NG; k-- > 0;) {
        give(G[k], &gG[k], me, "nested handler lock G");
        atomic_fetch_add_explicit(&tallyG[k], 1, memory_order_relaxed);
    }
    errno = saved;
}

/* eintr: the handler only counts */
static void on_usr1_count(int sig)
{
    (void)sig;
    atomic_fetch_add_explicit(&handled, 1, memory_order_relaxed);
    if (waiting)
        atomic_fetch_add_explicit(&while_waiting, 1, memory_order_relaxed);
}

static void handle(int sig, void (*fn)(int), int restart, int also_block)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sa.sa_flags = restart ? SA_RESTART : 0;
    sigemptyset(&sa.sa_mask);
    if (also_block)
        sigaddset(&sa.sa_mask, also_block);
    if (sigaction(sig, &sa, NULL))
        rb_fail(1, "sigaction: %s", strerror(errno));
}

static void signals_mask(int how)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    sigaddset(&s, SIGUSR2);
    pthread_sigmask(how, &s, NULL);
}

/* Before the storm, each thread takes every lock once: its record, a lock's
 * structures for its node (cst) and for its slot (delegation) are
 * allocated, with malloc, outside a handler (docs/ARCHITECTURE.md "Faults") */
static pthread_barrier_t warmed;
static void warm_up(void)
{
    void *all[1 + MAX_DEPTH + NG];
    int n = 0;
    all[n++] = M;
    for (int k = 0; k < depth && H[k]; k++)
        all[n++] = H[k];
    for (int k = 0; k < NG && G[k]; k++)
        all[n++] = G[k];
    for (int i = 0; i < n; i++) {
        ops->acquire(all[i]);
        ops->release(all[i]);
    }
    (void)nl_self(); /* the record: a lock whose fast path took it made none */
    pthread_barrier_wait(&warmed);
    signals_mask(SIG_UNBLOCK); /* created with them blocked */
}

/* Before the thread ends: its record is freed by a destructor at its exit,
 * and a handler's lock call would allocate one again */
static void *finish(void)
{
    signals_mask(SIG_BLOCK);
    return NULL;
}

static void *worker(void *p)
{
    me = (int)(intptr_t)p;
    warm_up();
    uint64_t rng = 0x9E3779B97F4A7C15ull * (uint64_t)me;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        waiting = 1;
        if (rb_rand(&rng) % 8 == 0 && ops->try_acquire(M) == 0)
            ;
        else
            ops->acquire(M);
        waiting = 0;
        rb_enter(&gM, me, "lock M");
        rb_leave(&gM, me, "lock M");
        ops->release(M);
        atomic_fetch_add_explicit(&tallyM, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&rb_progress, 1, memory_order_relaxed);
    }
    return finish();
}

/* eintr: worker 1 holds M for 2 ms at a time, the others wait for it */
static void *holder(void *p)
{
    me = (int)(intptr_t)p;
    warm_up();
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        ops->acquire(M);
        rb_enter(&gM, me, "lock M");
        struct timespec ts = { 0, 2000000 };
        while (nanosleep(&ts, &ts) && errno == EINTR)
            ;
        rb_leave(&gM, me, "lock M");
        ops->release(M);
        atomic_fetch_add_explicit(&tallyM, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&rb_progress, 1, memory_order_relaxed);
        sched_yield();
    }
    return finish();
}

/* nest: even workers take M then X, odd ones X */
static void *nester(void *p)
{
    me = (int)(intptr_t)p;
    warm_up();
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        int both = me % 2 == 0;
        if (both)
            take(M, &gM, me, "lock M");
        take(X, &gX, me, "lock X");
        give(X, &gX, me, "lock X");
        atomic_fetch_add_explicit(&tallyX, 1, memory_order_relaxed);
        if (both) {
            give(M, &gM, me, "lock M");
            atomic_fetch_add_explicit(&tallyM, 1, memory_order_relaxed);
        }
        atomic_fetch_add_explicit(&rb_progress, 1, memory_order_relaxed);
    }
    return finish();
}

static pthread_t th[MAX_THREADS];

/* SIGUSR1 (and every fourth time SIGUSR2) at `rate` per second each, at
 * workers first..nthreads-1 chosen at random, until the time is up */
static void storm(int first, int usr2)
{
    uint64_t rng = 0x2545F4914F6CDD1Dull, start = rb_now_ns(), end = start + (uint64_t)(seconds * 1e9);
    double period = 1e9 / rate;
    uint64_t n = 0;
    for (uint64_t now = start; now < end; now = rb_now_ns()) {
        uint64_t due = (uint64_t)((double)(now - start) / period);
        for (; n < due; n++) { /* catch up in bursts: nanosleep is coarser than 100 us */
            int t = first + (int)(rb_rand(&rng) % (uint64_t)(nthreads - first));
            pthread_kill(th[t], SIGUSR1);
            if (usr2 && n % 4 == 0)
                pthread_kill(th[first + (int)(rb_rand(&rng) % (uint64_t)(nthreads - first))], SIGUSR2);
            atomic_fetch_add_explicit(&sent, 1, memory_order_relaxed);
        }
        struct timespec ts = { 0, 50000 };
        nanosleep(&ts, NULL);
    }
}

static void check(const char *what, rb_guard_t *g, _Atomic long *tally)
{
    if (g->count != atomic_load(tally))
        rb_fail(1, "lock=%s: %s counted %ld, acquired %ld times (lost updates)", ops->name, what, g->count,
                atomic_load(tally));
}

static void usage_fail(const char *arg)
{
    rb_fail(2, "unknown option '%s': valid options are --lock NAME, --mode storm|eintr|nest, --threads 2..%d, "
            "--seconds S, --rate HZ, --depth 1..%d, --policy P, --topology T, --watchdog S", arg, MAX_THREADS,
            MAX_DEPTH);
}

int main(int argc, char **argv)
{
    const char *name = NULL, *mode = "storm", *policy = NULL, *topo = NULL;
    double wd = 20;
    rb_prog = "nl_robust_signals";
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            usage_fail(argv[i]);
        if (!strcmp(argv[i], "--lock")) name = argv[++i];
        else if (!strcmp(argv[i], "--mode")) mode = argv[++i];
        else if (!strcmp(argv[i], "--threads")) nthreads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seconds")) seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--rate")) rate = atof(argv[++i]);
        else if (!strcmp(argv[i], "--depth")) depth = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--policy")) policy = argv[++i];
        else if (!strcmp(argv[i], "--topology")) topo = argv[++i];
        else if (!strcmp(argv[i], "--watchdog")) wd = atof(argv[++i]);
        else usage_fail(argv[i]);
    }
    int m_storm = !strcmp(mode, "storm"), m_eintr = !strcmp(mode, "eintr"), m_nest = !strcmp(mode, "nest");
    if (!m_storm && !m_eintr && !m_nest)
        rb_fail(2, "unknown mode '%s': valid choices are storm, eintr, nest", mode);
    if (nthreads < 2 || nthreads > MAX_THREADS || depth < 1 || depth > MAX_DEPTH || rate <= 0 || seconds <= 0)
        rb_fail(2, "--threads must be 2..%d, --depth 1..%d, --rate and --seconds above 0", MAX_THREADS, MAX_DEPTH);
    ops = rb_find_lock(name);
    rb_set_topology(topo);
    rb_set_policy(policy ? policy : m_eintr ? "park:0:0" : NULL);

    int nlocks = m_storm ? 1 + depth + NG : 2;
    rb_locks_init(&locks, ops, nlocks, 3, nl_gate_bucket);
    /* the first three share a bucket: M, H[0] (or X) and G[0] */
    M = locks.lock[0];
    X = locks.lock[1];
    if (m_storm) {
        H[0] = locks.lock[1];
        G[0] = locks.lock[2];
        for (int k = 1; k < depth; k++)
            H[k] = locks.lock[2 + k];
        G[1] = locks.lock[2 + depth];
        handle(SIGUSR1, on_usr1, 1, 0);
        handle(SIGUSR2, on_usr2, 1, SIGUSR1); /* may interrupt SIGUSR1's handler, not the other way */
    } else if (m_eintr) {
        handle(SIGUSR1, on_usr1_count, 0, 0);
    }
    rb_watchdog_start(wd, mode);
    /* the main thread sends: it takes no signal itself */
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGUSR1);
    sigaddset(&s, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &s, NULL);
    pthread_barrier_init(&warmed, NULL, (unsigned)nthreads + 1);
    for (int t = 0; t < nthreads; t++) {
        void *(*fn)(void *) = m_nest ? nester : m_eintr && t == 0 ? holder : worker;
        int rc = pthread_create(&th[t], NULL, fn, (void *)(intptr_t)(t + 1)); /* signals blocked */
        if (rc)
            rb_fail(1, "cannot create thread %d: %s", t, strerror(rc));
    }
    pthread_barrier_wait(&warmed);
    if (m_nest) {
        struct timespec ts = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };
        nanosleep(&ts, NULL);
    } else {
        storm(m_eintr ? 1 : 0, m_storm);
    }
    atomic_store(&stop, 1);
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);

    check("lock M", &gM, &tallyM);
    if (m_nest)
        check("lock X", &gX, &tallyX);
    for (int k = 0; m_storm && k < depth; k++)
        check("handler lock H", &gH[k], &tallyH[k]);
    for (int k = 0; m_storm && k < NG; k++)
        check("nested handler lock G", &gG[k], &tallyG[k]);
    if (!m_nest && atomic_load(&handled) == 0)
        rb_fail(1, "lock=%s: no signal was handled (%ld sent)", ops->name, atomic_load(&sent));
    printf("%s: PASS lock=%s mode=%s threads=%d M=%ld X=%ld signals=%ld handled=%ld while_waiting=%ld depth=%d\n",
           rb_prog, ops->name, mode, nthreads, atomic_load(&tallyM), atomic_load(&tallyX), atomic_load(&sent),
           atomic_load(&handled), atomic_load(&while_waiting), m_storm ? 1 + depth + NG : 1);
    rb_locks_free(&locks);
    return 0;
}
