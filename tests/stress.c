/*
 * The shared stress harness: every registered lock must pass it.
 *
 *   stress --lock NAME [--threads N] [--topology SPEC] [--ops TOTAL] [--watchdog SEC]
 *          [--read-pct P] [--execute]
 *
 * Checks:
 *  - mutual exclusion: a non-atomic counter incremented with a widened
 *    read-delay-write window, and an owner field checked on entry and exit;
 *  - trylock semantics: fails while another thread holds the lock, succeeds
 *    when it is free (and for rw locks: readers share, writers exclude);
 *    rw locks: a reader gets in through the blocking path while another
 *    holds the lock for reading;
 *  - the node-free forms under nesting: hand-over-hand (non-LIFO release)
 *    and more locks held at once than the per-thread node pool has;
 *  - both access paths on one lock: the handle API and the ops table on the
 *    lock's storage, mixed across threads;
 *  - progress: a watchdog fails the run when no operation completes for
 *    --watchdog seconds (default 20; times NL_STRESS_WATCHDOG_SCALE where
 *    the programs run under an emulator, make test-arm) instead of letting
 *    it hang;
 *  - rw locks (--read-pct > 0): readers never see a writer inside, and more
 *    than one reader was inside at once at least once (reported).
 *  - --execute: three write sections in four run as a function through
 *    nl_lock_execute (for a delegation lock, possibly on a server thread),
 *    the rest through acquire/release, on the same lock: each call must get
 *    its own function's result back, and both kinds exclude each other.
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
#include <unistd.h>
#include "numalock/numalock.h"
#include "numalock/topology.h"

static const nl_lock_ops_t *ops;
static nl_lock_t *lock;
static int nthreads = 4;
static long total_ops = 20000;
static int read_pct = 0;
static double watchdog_s = 20;
static int use_execute = 0;

/* shared state protected by the lock: deliberately not atomic */
static volatile long counter;
static volatile int owner;
static volatile int writer_inside;
static _Atomic int readers_inside;
static _Atomic int max_readers;
static _Atomic long progress;
static _Atomic long reads_done;
static _Atomic int failed;
static long writes_expected[1024];
static pthread_barrier_t start_barrier;

/* the first failing thread reports and ends the process; any later one waits
 * for that end, so that its _exit cannot cut the report short */
static void fail(const char *what, int tid)
{
    if (atomic_exchange(&failed, 1) != 0)
        for (;;)
            pause();
    fprintf(stderr, "stress: FAIL lock=%s threads=%d: %s (thread %d)\n", ops->name, nthreads, what, tid);
    fflush(stderr);
    _exit(1);
}

/* use the handle or the ops table directly, on the same lock */
static void w_acquire(int direct) { direct ? ops->acquire(nl_lock_storage(lock)) : nl_lock_acquire(lock); }
static int w_try(int direct) { return direct ? ops->try_acquire(nl_lock_storage(lock)) : nl_lock_try(lock); }
static void w_release(int direct) { direct ? ops->release(nl_lock_storage(lock)) : nl_lock_release(lock); }

static void write_section(int tid, long i)
{
    if (owner != 0)
        fail("mutual exclusion violated: owner set on entry", tid);
    if (writer_inside || atomic_load(&readers_inside))
        fail("mutual exclusion violated: writer entered while a reader or writer was inside", tid);
    writer_inside = 1;
    owner = tid + 1;
    long c = counter;
    for (int k = 0; k < 20; k++)
        __asm__ __volatile__("" ::: "memory");
    if ((i & 63) == 0)
        sched_yield(); /* get descheduled while holding the lock now and then */
    counter = c + 1;
    if (owner != tid + 1)
        fail("mutual exclusion violated: owner changed inside", tid);
    owner = 0;
    writer_inside = 0;
}

static void read_section(int tid)
{
    int r = atomic_fetch_add(&readers_inside, 1) + 1;
    int m = atomic_load(&max_readers);
    while (r > m && !atomic_compare_exchange_weak(&max_readers, &m, r))
        ;
    if (writer_inside)
        fail("reader entered while a writer was inside", tid);
    volatile long c = counter;
    (void)c;
    for (int k = 0; k < 50; k++)
        __asm__ __volatile__("" ::: "memory");
    if (writer_inside)
        fail("writer entered while a reader was inside", tid);
    atomic_fetch_sub(&readers_inside, 1);
}

typedef struct { int tid; long i; } exec_arg_t;

static void *exec_section(void *p)
{
    exec_arg_t *a = p;
    write_section(a->tid, a->i);
    return (void *)((uintptr_t)a->tid << 32 | (uintptr_t)a->i); /* distinct per call */
}

typedef struct { int tid; long ops; } targ_t;

static void *worker(void *p)
{
    targ_t *a = p;
    int tid = a->tid;
    int direct = tid & 1;
    uint64_t rng = 0x9E3779B97F4A7C15ull * (uint64_t)(tid + 7);
    long writes = 0;
    pthread_barrier_wait(&start_barrier);
    for (long i = 0; i < a->ops; i++) {
        rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
        if (read_pct && (int)(rng % 100) < read_pct) {
            if ((rng >> 20) % 8 == 0 && nl_lock_read_try(lock) == 0) {
                read_section(tid);
                nl_lock_read_release(lock);
            } else {
                nl_lock_read_acquire(lock);
                read_section(tid);
                nl_lock_read_release(lock);
            }
            atomic_fetch_add(&reads_done, 1);
        } else if (use_execute && (rng >> 24) % 4 != 0) {
            exec_arg_t ea = { tid, i };
            void *r = nl_lock_execute(lock, exec_section, &ea);
            if (r != (void *)((uintptr_t)tid << 32 | (uintptr_t)i))
                fail("nl_lock_execute returned another call's result", tid);
            writes++;
        } else if ((rng >> 20) % 8 == 0) {
            if (w_try(direct) == 0) {
                write_section(tid, i);
                w_release(direct);
            } else {
                w_acquire(direct);
                write_section(tid, i);
                w_release(direct);
            }
            writes++;
        } else {
            w_acquire(direct);
            write_section(tid, i);
            w_release(direct);
            writes++;
        }
        atomic_fetch_add_explicit(&progress, 1, memory_order_relaxed);
    }
    writes_expected[tid] = writes;
    return NULL;
}

static void *watchdog(void *p)
{
    (void)p;
    long last = -1;
    struct timespec ts = { 0, 100000000 };
    double still = 0;
    for (;;) {
        nanosleep(&ts, NULL);
        long now = atomic_load(&progress);
        if (now == last) {
            still += 0.1;
            if (still >= watchdog_s) {
                fprintf(stderr, "stress: FAIL lock=%s threads=%d: watchdog: no progress for %.0f s "
                        "(%ld of %ld operations done)\n", ops->name, nthreads, watchdog_s, now, total_ops);
                fflush(stderr);
                _exit(3);
            }
        } else {
            still = 0;
            last = now;
        }
    }
    return NULL;
}

/* ---- single-purpose checks ------------------------------------------- */
typedef struct { nl_lock_t *l; int expect_busy; int read; int result; } tryarg_t;

static void *try_from_other(void *p)
{
    tryarg_t *a = p;
    a->result = a->read ? nl_lock_read_try(a->l) : nl_lock_try(a->l);
    if (a->result == 0) {
        if (a->read)
            nl_lock_read_release(a->l);
        else
            nl_lock_release(a->l);
    }
    return NULL;
}

static int try_other(nl_lock_t *l, int read)
{
    pthread_t t;
    tryarg_t a = { l, 0, read, -1 };
    pthread_create(&t, NULL, try_from_other, &a);
    pthread_join(t, NULL);
    return a.result;
}

/* A reader that takes the lock through the blocking path while the main
 * thread holds it for reading: it must get in without waiting for that
 * reader (a lock that serialised its readers would make it wait; the main
 * thread gives it 10 s). */
static _Atomic int shared_reader_in, shared_reader_go;
static void *blocking_reader(void *p)
{
    nl_lock_t *l = p;
    nl_lock_read_acquire(l);
    atomic_store(&shared_reader_in, 1);
    while (!atomic_load(&shared_reader_go))
        sched_yield();
    nl_lock_read_release(l);
    return NULL;
}

static void check_readers_share(nl_lock_t *l)
{
    atomic_store(&shared_reader_in, 0);
    atomic_store(&shared_reader_go, 0);
    nl_lock_read_acquire(l);
    pthread_t t;
    pthread_create(&t, NULL, blocking_reader, l);
    struct timespec ms = { 0, 1000000 };
    for (int i = 0; i < 10000 && !atomic_load(&shared_reader_in); i++)
        nanosleep(&ms, NULL);
    int shared = atomic_load(&shared_reader_in);
    atomic_store(&shared_reader_go, 1);
    nl_lock_read_release(l);
    pthread_join(t, NULL);
    if (!shared)
        fail("readers do not share: a blocking read_acquire waited 10 s for another reader", -1);
}

static void check_trylock(void)
{
    nl_lock_t *l = nl_lock_create_ops(ops, NULL);
    if (!l)
        fail("cannot create a second lock", -1);
    if (try_other(l, 0) != 0)
        fail("trylock failed on a free lock", -1);
    nl_lock_acquire(l);
    if (try_other(l, 0) != EBUSY)
        fail("trylock by another thread succeeded (or returned other than EBUSY) while held", -1);
    nl_lock_release(l);
    if (try_other(l, 0) != 0)
        fail("trylock failed after release", -1);
    if (nl_lock_try(l) != 0)
        fail("own trylock failed on a free lock", -1);
    nl_lock_release(l);
    if (ops->props & NL_PROP_RW) {
        check_readers_share(l);
        nl_lock_read_acquire(l);
        if (try_other(l, 1) != 0)
            fail("read trylock failed while only a reader holds the lock", -1);
        if (try_other(l, 0) != EBUSY)
            fail("write trylock succeeded while a reader holds the lock", -1);
        nl_lock_read_release(l);
        nl_lock_acquire(l);
        if (try_other(l, 1) != EBUSY)
            fail("read trylock succeeded while a writer holds the lock", -1);
        nl_lock_release(l);
    }
    nl_lock_destroy(l);
}

/* more locks held at once than the per-thread node pool, released FIFO */
static void check_nesting(void)
{
    enum { N = 12 };
    nl_lock_t *ls[N];
    for (int i = 0; i < N; i++)
        if (!(ls[i] = nl_lock_create_ops(ops, NULL)))
            fail("cannot create nested locks", -1);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++)
            nl_lock_acquire(ls[i]);
        for (int i = 0; i < N; i++) {
            if (try_other(ls[i], 0) != EBUSY)
                fail("nested lock not held", -1);
            nl_lock_release(ls[i]);
        }
        /* hand-over-hand */
        nl_lock_acquire(ls[0]);
        for (int i = 1; i < N; i++) {
            nl_lock_acquire(ls[i]);
            nl_lock_release(ls[i - 1]);
        }
        nl_lock_release(ls[N - 1]);
    }
    for (int i = 0; i < N; i++) {
        if (try_other(ls[i], 0) != 0)
            fail("nested lock not free after release", -1);
        nl_lock_destroy(ls[i]);
    }
}

/* Self-test locks, never registered: the harness must catch them. */
static void broken_acquire(void *l) { (void)l; }
static int broken_try(void *l) { (void)l; return 0; }
static void broken_release(void *l) { (void)l; }
static const nl_lock_ops_t broken_ops = {
    .name = "selftest-broken", .description = "no mutual exclusion", .size = 8, .align = 8,
    .acquire = broken_acquire, .try_acquire = broken_try, .release = broken_release,
};
static _Atomic int stuck_word;
static void stuck_acquire(void *l)
{
    (void)l;
    int expect = 0;
    /* the first acquisition succeeds and is never released: everybody else waits */
    while (!atomic_compare_exchange_weak(&stuck_word, &expect, 1)) {
        expect = 0;
        sched_yield();
    }
}
static int stuck_try(void *l) { (void)l; return EBUSY; }
static void stuck_release(void *l) { (void)l; }
static const nl_lock_ops_t stuck_ops = {
    .name = "selftest-stuck", .description = "never released", .size = 8, .align = 8,
    .acquire = stuck_acquire, .try_acquire = stuck_try, .release = stuck_release,
};

/* a "read-write" lock whose readers exclude each other: a mutex behind both sides */
static int serial_init(void *l, const nl_attr_t *a) { (void)a; return pthread_mutex_init(l, NULL); }
static void serial_destroy(void *l) { pthread_mutex_destroy(l); }
static void serial_acquire(void *l) { pthread_mutex_lock(l); }
static int serial_try(void *l) { return pthread_mutex_trylock(l) ? EBUSY : 0; }
static void serial_release(void *l) { pthread_mutex_unlock(l); }
static const nl_lock_ops_t serial_ops = {
    .name = "selftest-serial-readers", .description = "readers serialised", .size = sizeof(pthread_mutex_t),
    .align = 8, .props = NL_PROP_RW, .init = serial_init, .destroy = serial_destroy,
    .acquire = serial_acquire, .try_acquire = serial_try, .release = serial_release,
    .read_acquire = serial_acquire, .read_try_acquire = serial_try, .read_release = serial_release,
};

int main(int argc, char **argv)
{
    const char *name = NULL, *topo = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--lock") && v) name = argv[++i];
        else if (!strcmp(argv[i], "--threads") && v) nthreads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--topology") && v) topo = argv[++i];
        else if (!strcmp(argv[i], "--ops") && v) total_ops = atol(argv[++i]);
        else if (!strcmp(argv[i], "--watchdog") && v) watchdog_s = atof(argv[++i]);
        else if (!strcmp(argv[i], "--read-pct") && v) read_pct = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--execute")) use_execute = 1;
        else {
            fprintf(stderr, "stress: unknown option '%s': valid options are --lock, --threads, "
                    "--topology, --ops, --watchdog, --read-pct, --execute\n", argv[i]);
            return 2;
        }
    }
    char names[1024];
    if (name && !strcmp(name, "selftest-broken"))
        ops = &broken_ops;
    else if (name && !strcmp(name, "selftest-stuck"))
        ops = &stuck_ops;
    else if (name && !strcmp(name, "selftest-serial-readers"))
        ops = &serial_ops;
    else if (!name || !(ops = nl_lock_find(name))) {
        fprintf(stderr, "stress: unknown lock '%s': valid choices are %s\n", name ? name : "(none)",
                nl_lock_names(names, sizeof names));
        return 2;
    }
    if (nthreads < 1 || nthreads > 1024 || total_ops < 1) {
        fprintf(stderr, "stress: --threads must be 1..1024 and --ops at least 1\n");
        return 2;
    }
    if (topo) {
        char err[512];
        if (nl_topology_set(topo, err, sizeof err)) {
            fprintf(stderr, "stress: %s\n", err);
            return 2;
        }
    }
    if (read_pct && !(ops->props & NL_PROP_RW))
        read_pct = 0;
    pthread_t wd;
    const char *scale = getenv("NL_STRESS_WATCHDOG_SCALE");
    if (scale && atof(scale) >= 1)
        watchdog_s *= atof(scale);
    pthread_create(&wd, NULL, watchdog, NULL);

    if (ops != &broken_ops && ops != &stuck_ops) {
        check_trylock();
        check_nesting();
    }

    nl_attr_t attr = { .stats = true };
    lock = nl_lock_create_ops(ops, &attr);
    if (!lock)
        fail("cannot create the lock", -1);
    pthread_barrier_init(&start_barrier, NULL, (unsigned)nthreads);
    pthread_t *th = calloc((size_t)nthreads, sizeof *th);
    targ_t *args = calloc((size_t)nthreads, sizeof *args);
    for (int t = 0; t < nthreads; t++) {
        args[t].tid = t;
        args[t].ops = total_ops / nthreads + (t < total_ops % nthreads);
        if (pthread_create(&th[t], NULL, worker, &args[t])) {
            fprintf(stderr, "stress: cannot create thread %d\n", t);
            return 1;
        }
    }
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    long expect = 0;
    for (int t = 0; t < nthreads; t++)
        expect += writes_expected[t];
    if (counter != expect) {
        fprintf(stderr, "stress: FAIL lock=%s threads=%d: counter %ld, expected %ld (lost updates)\n",
                name, nthreads, counter, expect);
        return 1;
    }
    nl_stats_snapshot_t st;
    nl_lock_stats(lock, &st);
    if (st.acquisitions == 0 && expect > 0) {
        fprintf(stderr, "stress: FAIL lock=%s: statistics counted no acquisitions\n", name);
        return 1;
    }
    nl_lock_destroy(lock);
    printf("stress: PASS lock=%s threads=%d topology=%s ops=%ld writes=%ld reads=%ld max_readers=%d "
           "handovers=%llu remote=%llu\n", name, nthreads, nl_topology_current()->spec, total_ops,
           expect, atomic_load(&reads_done), atomic_load(&max_readers),
           (unsigned long long)st.handovers, (unsigned long long)st.remote_handovers);
    free(th);
    free(args);
    return 0;
}
