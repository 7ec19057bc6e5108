/*
 * What the robustness programs of tests/robust/ share: failing with one
 * line, a watchdog on a progress count, data guarded by a lock (an owner
 * checked on entry and exit, a counter updated with a widened
 * read-delay-write window, as tests/stress.c does), a random generator,
 * and locks placed in one buffer so that chosen ones share a bucket of the
 * waiting design's gate (tests/nl_test_internal.h, NL_TEST_WAIT).
 */
#ifndef NL_ROBUST_H
#define NL_ROBUST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "numalock/numalock.h"
#include "numalock/topology.h"

static const char *rb_prog = "robust";

/* One line on stderr (write(2): also from a signal handler), then exit. */
static void __attribute__((noreturn, format(printf, 2, 3))) rb_fail(int status, const char *fmt, ...)
{
    char line[512];
    int n = snprintf(line, sizeof line, "%s: FAIL ", rb_prog);
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    ssize_t w = write(2, line, (size_t)n);
    (void)w;
    _exit(status);
}

static inline uint64_t rb_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t rb_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

/* ---- watchdog: no progress for `seconds` fails the run (status 3) ------- */
static _Atomic long rb_progress;
static double rb_watchdog_s = 20;
static const char *rb_watchdog_what = "";

static void *rb_watchdog_main(void *p)
{
    (void)p;
    long last = -1;
    double still = 0;
    for (;;) {
        struct timespec ts = { 0, 100000000 };
        nanosleep(&ts, NULL);
        long now = atomic_load_explicit(&rb_progress, memory_order_relaxed);
        if (now != last) {
            last = now;
            still = 0;
        } else if ((still += 0.1) >= rb_watchdog_s) {
            rb_fail(3, "%s: watchdog: no progress for %.0f s (%ld operations done)", rb_watchdog_what, rb_watchdog_s,
                    now);
        }
    }
    return NULL;
}

/* Start the watchdog (NL_STRESS_WATCHDOG_SCALE stretches it, as for the
 * stress harness under an emulator). Signals stay with the other threads. */
static inline void rb_watchdog_start(double seconds, const char *what)
{
    const char *scale = getenv("NL_STRESS_WATCHDOG_SCALE");
    rb_watchdog_s = seconds * (scale && atof(scale) >= 1 ? atof(scale) : 1);
    rb_watchdog_what = what;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_t t;
    if (pthread_create(&t, NULL, rb_watchdog_main, NULL))
        rb_fail(1, "cannot start the watchdog");
    pthread_detach(t);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ---- data guarded by a lock ------------------------------------------------ */
typedef struct {
    _Alignas(64) volatile long count;
    volatile int owner;
} rb_guard_t;

static inline void rb_enter(rb_guard_t *g, int me, const char *what)
{
    if (g->owner != 0)
        rb_fail(1, "%s: mutual exclusion violated: owner %d inside on entry of %d", what, g->owner, me);
    g->owner = me;
}

static inline void rb_leave(rb_guard_t *g, int me, const char *what)
{
    long c = g->count;
    for (int k = 0; k < 20; k++)
        __asm__ __volatile__("" ::: "memory");
    g->count = c + 1;
    if (g->owner != me)
        rb_fail(1, "%s: mutual exclusion violated: owner changed inside (%d, expected %d)", what, g->owner, me);
    g->owner = 0;
}

/* ---- settings ---------------------------------------------------------------- */
static inline void rb_set_topology(const char *spec)
{
    char err[256];
    if (spec && nl_topology_set(spec, err, sizeof err))
        rb_fail(2, "%s", err);
}

static inline void rb_set_policy(const char *spec)
{
    char err[256];
    if (spec && nl_wait_set_policy(spec, err, sizeof err))
        rb_fail(2, "%s", err);
}

static inline const nl_lock_ops_t *rb_find_lock(const char *name)
{
    const nl_lock_ops_t *ops = name ? nl_lock_find(name) : NULL;
    if (!ops) {
        char names[1024];
        rb_fail(2, "unknown lock '%s': valid choices are %s", name ? name : "(none)",
                nl_lock_names(names, sizeof names));
    }
    return ops;
}

/* ---- locks in one buffer ----------------------------------------------------
 * n locks of `ops` in one cache-aligned buffer, one after the other (several
 * in a cache line when they are small); the first `same` of them in one
 * bucket of the gate, found with `bucket` (the library's hash) among the
 * buffer's places. Initialised; rb_locks_free destroys them. */
typedef struct {
    unsigned char *buf;
    void **lock;
    int n;
    const nl_lock_ops_t *ops;
} rb_locks_t;

static inline void rb_locks_init(rb_locks_t *L, const nl_lock_ops_t *ops, int n, int same, uint32_t (*bucket)(const void *))
{
    size_t align = ops->align > 8 ? ops->align : 8;
    size_t stride = (ops->size + align - 1) / align * align;
    size_t places = (size_t)n * 64 + 4096;
    L->ops = ops;
    L->n = n;
    L->lock = calloc((size_t)n, sizeof *L->lock);
    L->buf = aligned_alloc(4096, (places * stride + 4095) / 4096 * 4096);
    if (!L->lock || !L->buf)
        rb_fail(1, "no memory for %d locks", n);
    memset(L->buf, 0, places * stride);
    unsigned char *used = calloc(places, 1);
    int k = 0;
    if (same > 1 && bucket) {
        uint32_t want = bucket(L->buf);
        for (size_t p = 0; p < places && k < same; p++)
            if (bucket(L->buf + p * stride) == want) {
                L->lock[k++] = L->buf + p * stride;
                used[p] = 1;
            }
    }
    for (size_t p = 0; p < places && k < n; p++)
        if (!used[p])
            L->lock[k++] = L->buf + p * stride;
    free(used);
    if (k < n)
        rb_fail(1, "cannot place %d locks", n);
    for (int i = 0; i < n; i++)
        if (ops->init && ops->init(L->lock[i], NULL))
            rb_fail(1, "cannot initialise lock %d of %s", i, ops->name);
}

static inline void rb_locks_free(rb_locks_t *L)
{
    for (int i = 0; i < L->n; i++)
        if (L->ops->destroy)
            L->ops->destroy(L->lock[i]);
    free(L->buf);
    free(L->lock);
}

#endif
