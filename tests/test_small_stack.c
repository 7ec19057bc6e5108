/* Every registered lock on the smallest thread stacks glibc allows
 * (PTHREAD_STACK_MIN: 16 KiB on x86-64), through the library's generic
 * handle: contended acquisitions that spin, park and wait at the gate, and
 * the load sample with its cgroup read forced at every sample, all on those
 * stacks. A path that needs more stack than that overflows into the guard
 * page (SIGSEGV) or into the next thread's stack, which the harness's
 * counter and owner checks catch.
 *
 *   test_small_stack [LOCK...]      exit 0 = pass (default: every registered lock)
 *
 * tests/interpose/small_stack.c does the same through the preload library;
 * tests/stack_usage.py checks the frames statically. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define NL_TEST_WAIT
#include "nl_test_internal.h"
#include "numalock/topology.h"

#define ITERS 3000
#define SAMPLE_EVERY 64 /* iterations between forced load samples */

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; \
    fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); \
    fputc('\n', stderr); } } while (0)

typedef struct shared {
    nl_lock_t *lock;
    unsigned props;
    long counter;         /* guarded by the lock: plain, so a lost update shows */
    _Atomic int owner;    /* the holder's index + 1, 0 when free */
    _Atomic int broken;   /* mutual exclusion failed */
    _Atomic uint64_t slow, parks, gate;
} shared_t;

typedef struct worker {
    shared_t *s;
    int id;
} worker_t;

static void enter(shared_t *s, int id)
{
    int free_ = 0;
    if (!atomic_compare_exchange_strong(&s->owner, &free_, id + 1))
        atomic_store(&s->broken, 1);
    s->counter++;
}

static void leave(shared_t *s, int id)
{
    int me = id + 1;
    if (!atomic_compare_exchange_strong(&s->owner, &me, 0))
        atomic_store(&s->broken, 1);
}

static void *section(void *arg)
{
    worker_t *w = arg;
    enter(w->s, w->id);
    leave(w->s, w->id);
    return NULL;
}

static void *work(void *arg)
{
    worker_t *w = arg;
    shared_t *s = w->s;
    for (int i = 0; i < ITERS; i++) {
        if (i % SAMPLE_EVERY == 0) { /* the load sample, with its cgroup read, on this stack */
            atomic_store(&nl_load_next, 0);
            nl_load_sample();
        }
        if (s->props & NL_PROP_DELEGATE) {
            nl_lock_execute(s->lock, section, w);
        } else if ((s->props & NL_PROP_RW) && i % 3 == 0) {
            nl_lock_read_acquire(s->lock); /* readers only read: no counter */
            nl_lock_read_release(s->lock);
        } else {
            nl_lock_acquire(s->lock);
            enter(s, w->id);
            leave(s, w->id);
            nl_lock_release(s->lock);
        }
    }
    nl_self_t *me = nl_self();
    atomic_fetch_add(&s->slow, me->wc.slow);
    atomic_fetch_add(&s->parks, me->wc.parks);
    atomic_fetch_add(&s->gate, me->wc.gate_parks);
    return NULL;
}

/* One round: `threads` threads on PTHREAD_STACK_MIN stacks, waiting policy
 * `policy`. Adds the round's parks and gate waits to the totals. */
static void round_of(const nl_lock_ops_t *ops, const char *policy, int threads, uint64_t *parks, uint64_t *gate)
{
    char err[256];
    if (nl_wait_set_policy(policy, err, sizeof err)) {
        CHECK(0, "policy %s: %s", policy, err);
        return;
    }
    shared_t s = { .lock = nl_lock_create(ops->name, NULL), .props = ops->props };
    if (!s.lock) {
        CHECK(0, "%s: nl_lock_create failed", ops->name);
        return;
    }
    size_t stack = (size_t)sysconf(_SC_THREAD_STACK_MIN);
    pthread_attr_t a;
    pthread_attr_init(&a);
    CHECK(pthread_attr_setstacksize(&a, stack) == 0, "stack size %zu refused", stack);
    pthread_t t[16];
    worker_t w[16];
    int started = 0;
    for (int i = 0; i < threads && i < 16; i++) {
        w[i] = (worker_t){ &s, i };
        if (pthread_create(&t[i], &a, work, &w[i]) == 0)
            started++;
        else
            break;
    }
    CHECK(started == threads, "%s: %d of %d threads started", ops->name, started, threads);
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    pthread_attr_destroy(&a);
    long want = 0;
    for (int i = 0; i < ITERS; i++)
        want += (s.props & NL_PROP_RW) && !(s.props & NL_PROP_DELEGATE) && i % 3 == 0 ? 0 : 1;
    CHECK(!atomic_load(&s.broken) && s.counter == want * started,
          "%s (%s, %d threads): counter %ld of %ld, exclusion %s", ops->name, policy, started, s.counter,
          want * started, atomic_load(&s.broken) ? "broken" : "kept");
    *parks += atomic_load(&s.parks);
    *gate += atomic_load(&s.gate);
    nl_lock_destroy(s.lock);
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "FAIL: test_small_stack hung (watchdog)\n";
    if (write(2, msg, sizeof msg - 1) < 0)
        _exit(3);
    _exit(2);
}

int main(int argc, char **argv)
{
    signal(SIGALRM, on_alarm);
    alarm(600);
    char err[256];
    if (nl_topology_set("virtual:2", err, sizeof err)) {
        fprintf(stderr, "virtual:2: %s\n", err);
        return 1;
    }
    nl_cgroup_every = 1; /* every sample reads the cgroup files */
    uint64_t parks = 0, gate = 0;
    int locks = 0;
    for (size_t i = 0; i < nl_lock_count(); i++) {
        const nl_lock_ops_t *ops = nl_lock_at(i);
        int chosen = argc < 2;
        for (int k = 1; k < argc; k++)
            chosen |= !strcmp(argv[k], ops->name);
        if (!chosen)
            continue;
        locks++;
        round_of(ops, "spin", 2, &parks, &gate);
        round_of(ops, "park:0:0", 4, &parks, &gate);    /* park at once */
        round_of(ops, "adaptive", 8, &parks, &gate);    /* 8 threads on fewer CPUs: the gate */
        printf("%-16s ok\n", ops->name);
        fflush(stdout);
    }
    CHECK(locks > 0, "no lock named on the command line is registered");
    /* the rounds reached what they are for (over all locks: a lock that
     * never parks is possible, all of them would mean a dead test). While
     * the machine is overloaded by other processes, the waiters of every
     * lock sleep at the gate instead of in the lock: either sleep counts */
    CHECK(parks + gate > 0, "no waiter parked in any lock or at the gate");
    if (argc < 2 && sysconf(_SC_NPROCESSORS_ONLN) < 8)
        CHECK(gate > 0, "no waiter waited at the gate with 8 threads on %ld CPUs",
              sysconf(_SC_NPROCESSORS_ONLN));
    printf("test_small_stack: %d locks on %ld-byte stacks, %llu parks, %llu gate waits: %s\n", locks,
           sysconf(_SC_THREAD_STACK_MIN), (unsigned long long)parks, (unsigned long long)gate,
           failures ? "FAIL" : "ok");
    return failures ? 1 : 0;
}
