/*
 * Allocation failure (failalloc.c replaces malloc and its relatives in this
 * program): every lock must work on, report ENOMEM through its API, or stop
 * with one line "numalock: no memory for ...; stopping".
 *
 *   nl_robust_alloc --lock NAME --mode create|sweep|cold|deep [--threads N]
 *
 * create: nl_lock_create with its 1st, 2nd, ... allocation failing: NULL
 *   and errno ENOMEM, or a lock that works (the failure fell elsewhere);
 *   nothing else, and never a crash.
 * sweep: a child process per number N: the lock made, then N threads on two
 *   virtual nodes, whose N-th allocation (counted over the threads) fails,
 *   take it (acquire and try; execute for a delegation lock, reads for a
 *   read-write one) and 10 more of its kind nested (past the queue-node
 *   pool), owner and counters checked; until a run where no allocation
 *   failed. Every run must work on: a single failure is survived.
 * cold: the same with every allocation of the threads failing from their
 *   first lock call (no thread record, no node block, no slot): works on, or
 *   stops with the one line.
 * deep: one thread holds 80 locks of the kind at once while its
 *   allocations fail (the pool, the reserve, then nothing): works, or
 *   stops with the one line.
 * Each run is a child process (the parent only forks and waits), so the
 * structures a lock allocates at first use are new in every run.
 */
#include <signal.h>
#include <sys/wait.h>
#include "failalloc.h"
#include "robust.h"

enum { NEST = 10, DEEP = 80, MAX_T = 16 };

static const nl_lock_ops_t *ops;
static nl_lock_t *L, *nest[NEST];
static rb_guard_t gL, gN[NEST];
static _Atomic long tallyL, tallyN[NEST];
static int nthreads = 4, ops_per_thread = 3000, cold;

static void *section(void *p)
{
    int me = (int)(intptr_t)p;
    rb_enter(&gL, me, "lock");
    rb_leave(&gL, me, "lock");
    return p;
}

static void one_op(int me, int i)
{
    if ((ops->props & NL_PROP_DELEGATE) && i % 4 == 0) {
        if (nl_lock_execute(L, section, (void *)(intptr_t)me) != (void *)(intptr_t)me)
            rb_fail(1, "lock=%s: execute returned another call's result", ops->name);
    } else if ((ops->props & NL_PROP_RW) && i % 4 == 1) {
        nl_lock_read_acquire(L);
        if (gL.owner)
            rb_fail(1, "lock=%s: a reader entered while a writer was inside", ops->name);
        nl_lock_read_release(L);
        return;
    } else if (i % 16 == 2) {
        for (int k = 0; k < NEST; k++) {
            nl_lock_acquire(nest[k]);
            rb_enter(&gN[k], me, "nested lock");
        }
        for (int k = NEST; k-- > 0;) {
            rb_leave(&gN[k], me, "nested lock");
            nl_lock_release(nest[k]);
            atomic_fetch_add(&tallyN[k], 1);
        }
        return;
    } else {
        if (i % 8 != 3 || nl_lock_try(L) != 0)
            nl_lock_acquire(L);
        section((void *)(intptr_t)me);
        nl_lock_release(L);
    }
    atomic_fetch_add(&tallyL, 1);
}

static void *worker(void *p)
{
    int me = (int)(intptr_t)p;
    if (cold)
        rb_nomem = 1;
    else
        rb_counted = 1;
    for (int i = 0; i < ops_per_thread; i++) {
        one_op(me, i);
        atomic_fetch_add_explicit(&rb_progress, 1, memory_order_relaxed);
    }
    rb_nomem = rb_counted = 0;
    return NULL;
}

/* the child of one run: 0 when every count is right */
static int run_threads(long fail_at)
{
    rb_set_topology("virtual:2");
    rb_watchdog_start(20, "allocation failure");
    nl_attr_t attr = { .stats = true };
    if (!(L = nl_lock_create_ops(ops, &attr)))
        rb_fail(1, "lock=%s: cannot create the lock", ops->name);
    for (int k = 0; k < NEST; k++)
        if (!(nest[k] = nl_lock_create_ops(ops, NULL)))
            rb_fail(1, "lock=%s: cannot create the nested locks", ops->name);
    atomic_store(&rb_fail_at, fail_at);
    pthread_t th[MAX_T];
    for (int t = 0; t < nthreads; t++)
        if (pthread_create(&th[t], NULL, worker, (void *)(intptr_t)(t + 1)))
            rb_fail(1, "cannot create thread %d", t);
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    atomic_store(&rb_fail_at, -1);
    if (gL.count != atomic_load(&tallyL))
        rb_fail(1, "lock=%s: counted %ld, acquired %ld (lost updates)", ops->name, gL.count, atomic_load(&tallyL));
    for (int k = 0; k < NEST; k++)
        if (gN[k].count != atomic_load(&tallyN[k]))
            rb_fail(1, "lock=%s: nested lock %d counted %ld, acquired %ld", ops->name, k, gN[k].count,
                    atomic_load(&tallyN[k]));
    /* whether a failure was injected: the exit status tells the parent */
    return atomic_load(&rb_failed) ? 10 : 0;
}

static int run_deep(void)
{
    rb_watchdog_start(20, "deep nesting without memory");
    nl_lock_t *d[DEEP];
    for (int k = 0; k < DEEP; k++)
        if (!(d[k] = nl_lock_create_ops(ops, NULL)))
            rb_fail(1, "lock=%s: cannot create %d locks", ops->name, DEEP);
    for (int round = 0; round < 3; round++) {
        rb_nomem = 1;
        for (int k = 0; k < DEEP; k++)
            nl_lock_acquire(d[k]);
        for (int k = 0; k < DEEP; k++)
            if (nl_lock_try(d[k]) == 0)
                rb_fail(1, "lock=%s: nested lock %d free while held", ops->name, k);
        for (int k = DEEP; k-- > 0;)
            nl_lock_release(d[k]);
        rb_nomem = 0;
    }
    for (int k = 0; k < DEEP; k++) {
        if (nl_lock_try(d[k]))
            rb_fail(1, "lock=%s: nested lock %d held after release", ops->name, k);
        nl_lock_release(d[k]);
        nl_lock_destroy(d[k]);
    }
    return 0;
}

/* ---- the parent: a child per run, its stderr read back ---------------------- */
typedef struct {
    int status;     /* exit status, or 128 + signal */
    char err[1024]; /* its stderr, the first part */
} outcome_t;

static outcome_t in_child(int (*fn)(long), long arg)
{
    outcome_t o = { 0, "" };
    int fd[2];
    if (pipe(fd))
        rb_fail(1, "pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        rb_fail(1, "fork: %s", strerror(errno));
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], 2);
        _exit(fn(arg));
    }
    close(fd[1]);
    size_t n = 0;
    ssize_t r;
    char sink[256];
    while ((r = read(fd[0], n < sizeof o.err - 1 ? o.err + n : sink,
                     n < sizeof o.err - 1 ? sizeof o.err - 1 - n : sizeof sink)) > 0)
        if (n < sizeof o.err - 1)
            n += (size_t)r;
    o.err[n] = 0;
    close(fd[0]);
    int st;
    waitpid(pid, &st, 0);
    o.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return o;
}

static int child_threads(long fail_at) { return run_threads(fail_at); }
static int child_deep(long unused) { return (void)unused, run_deep(); }

/* a stop is allowed only as abort() after the library's one line */
static int stopped_with_line(outcome_t *o)
{
    /* qemu-user (make test-arm) adds its own line about the signal: not ours */
    char *q = strstr(o->err, "qemu: uncaught target signal");
    if (q && (q == o->err || q[-1] == '\n'))
        *q = 0;
    return o->status == 128 + SIGABRT && strstr(o->err, "numalock: no memory for ") &&
           strchr(strstr(o->err, "numalock: no memory for "), '\n') ==
               strrchr(o->err, '\n'); /* one line, the last */
}

static void mode_create(void)
{
    int enomem = 0;
    /* what is made once per process and per thread (the topology, this
     * thread's record) before the count: the count then numbers the
     * allocations of create itself, the same in every round */
    nl_topology_current();
    (void)nl_thread_id();
    for (long n = 0;; n++) {
        atomic_store(&rb_alloc_calls, 0);
        atomic_store(&rb_failed, 0);
        atomic_store(&rb_fail_at, n);
        rb_counted = 1;
        errno = 0;
        nl_attr_t attr = { .stats = true };
        nl_lock_t *l = nl_lock_create_ops(ops, &attr);
        int e = errno;
        rb_counted = 0;
        atomic_store(&rb_fail_at, -1);
        long failed = atomic_load(&rb_failed);
        if (!l) {
            if (e != ENOMEM)
                rb_fail(1, "lock=%s: create with allocation %ld failing returned NULL with errno %d, not ENOMEM",
                        ops->name, n, e);
            enomem++;
            continue;
        }
        nl_lock_acquire(l);
        if (nl_lock_try(l) == 0)
            rb_fail(1, "lock=%s: a lock made with allocation %ld failing is free while held", ops->name, n);
        nl_lock_release(l);
        nl_lock_destroy(l);
        if (!failed) {
            printf("%s: PASS lock=%s mode=create allocations=%ld enomem=%d\n", rb_prog, ops->name, n, enomem);
            return;
        }
    }
}

static void mode_sweep(void)
{
    for (long n = 0;; n++) {
        outcome_t o = in_child(child_threads, n);
        if (o.status != 0 && o.status != 10)
            rb_fail(1, "lock=%s: with allocation %ld of its threads failing: status %d: %s", ops->name, n, o.status,
                    o.err[0] ? o.err : "(nothing on stderr)\n");
        if (o.status == 0) {
            printf("%s: PASS lock=%s mode=sweep runs=%ld (each survived its failed allocation)\n", rb_prog, ops->name,
                   n);
            return;
        }
    }
}

static void mode_once(int (*fn)(long), const char *mode)
{
    outcome_t o = in_child(fn, 0);
    if (o.status == 0 || o.status == 10) {
        printf("%s: PASS lock=%s mode=%s outcome=works\n", rb_prog, ops->name, mode);
        return;
    }
    if (!stopped_with_line(&o))
        rb_fail(1, "lock=%s mode=%s: status %d without the one line: %s", ops->name, mode, o.status,
                o.err[0] ? o.err : "(nothing on stderr)\n");
    char *line = strstr(o.err, "numalock: no memory for ");
    *strchr(line, '\n') = 0;
    printf("%s: PASS lock=%s mode=%s outcome=stops (%s)\n", rb_prog, ops->name, mode, line);
}

int main(int argc, char **argv)
{
    const char *name = NULL, *mode = NULL;
    rb_prog = "nl_robust_alloc";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--lock")) name = argv[i + 1];
        else if (!strcmp(argv[i], "--mode")) mode = argv[i + 1];
        else if (!strcmp(argv[i], "--threads")) nthreads = atoi(argv[i + 1]);
        else rb_fail(2, "unknown option '%s': valid options are --lock NAME, --mode create|sweep|cold|deep, "
                     "--threads 1..%d", argv[i], MAX_T);
    }
    if (argc % 2 == 0 || nthreads < 1 || nthreads > MAX_T)
        rb_fail(2, "usage: --lock NAME --mode create|sweep|cold|deep [--threads 1..%d]", MAX_T);
    ops = rb_find_lock(name);
    if (!mode || !strcmp(mode, "create"))
        mode_create();
    else if (!strcmp(mode, "sweep"))
        mode_sweep();
    else if (!strcmp(mode, "cold")) {
        cold = 1;
        mode_once(child_threads, "cold");
    } else if (!strcmp(mode, "deep"))
        mode_once(child_deep, "deep");
    else
        rb_fail(2, "unknown mode '%s': valid choices are create, sweep, cold, deep", mode);
    return 0;
}
