/*
 * pthread_cancel of threads waiting in condition variables, run the same
 * with glibc and under the preload library (tests/robust/robust.cmake: every
 * interposable lock). Each check prints "ok NAME"; a failure prints one line
 * and exits 1, a hang ends at the watchdog (status 3).
 *
 *  - contended: 6 waiters in pthread_cond_wait, pthread_cond_timedwait and
 *    pthread_cond_clockwait (CLOCK_MONOTONIC), on normal, recursive and
 *    error-checking mutexes, are cancelled one by one while 3 threads take
 *    and release the same mutex in a loop: each cleanup handler must run
 *    with the mutex held again (it writes the guarded data: owner checked
 *    across a yield, counter exact at the end; its unlock returns 0, a
 *    second one EPERM for the typed mutexes). (A recursive mutex held twice
 *    is left out: glibc's wait releases one level and deadlocks);
 *  - signal: a waiter woken by pthread_cond_signal and cancelled at once
 *    must not take the signal with it while another waits (POSIX: "shall
 *    not consume any condition signal ... if there are other threads
 *    blocked"): the other one gets the token within 2 s, 40 rounds;
 *  - c11: a thread in cnd_wait on an mtx_t is cancelled; its cleanup holds
 *    the mutex.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <threads.h>
#include "robust.h"

static pthread_mutex_t mx;
static pthread_cond_t cv;
static rb_guard_t guard;
static _Atomic long tally, waiting_now;
static _Atomic int hammer_stop;
static int mtype;

enum { WAIT_PLAIN, WAIT_TIMED, WAIT_CLOCK };

static void locked_section(int me)
{
    rb_enter(&guard, me, "cancel");
    sched_yield(); /* a thread that does not hold the mutex would get in here */
    rb_leave(&guard, me, "cancel");
    atomic_fetch_add(&tally, 1);
}

static void *hammer(void *p)
{
    int me = (int)(intptr_t)p;
    while (!atomic_load(&hammer_stop)) {
        pthread_mutex_lock(&mx);
        locked_section(me);
        pthread_mutex_unlock(&mx);
        /* a pause between sections: with an unfair lock (tas) and 2 CPUs
         * the hammers would otherwise starve the re-locking waiters */
        struct timespec ts = { 0, 20000 };
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void cleanup(void *p)
{
    int me = (int)(intptr_t)p;
    locked_section(me); /* the mutex is held again here */
    int rc = pthread_mutex_unlock(&mx);
    if (rc)
        rb_fail(1, "cleanup of a cancelled waiter (type %d): unlock returned %d", mtype, rc);
    if (mtype != PTHREAD_MUTEX_NORMAL && pthread_mutex_unlock(&mx) != EPERM)
        rb_fail(1, "cleanup (type %d): the mutex was held more often than locked", mtype);
}

static void *waiter(void *p)
{
    int me = (int)(intptr_t)p;
    volatile int how = me % 3;
    pthread_mutex_lock(&mx);
    pthread_cleanup_push(cleanup, p);
    atomic_fetch_add(&waiting_now, 1);
    for (;;) { /* the predicate never holds: only the cancellation ends it */
        struct timespec t;
        clock_gettime(how == WAIT_CLOCK ? CLOCK_MONOTONIC : CLOCK_REALTIME, &t);
        t.tv_sec += 600;
        if (how == WAIT_PLAIN)
            pthread_cond_wait(&cv, &mx);
        else if (how == WAIT_TIMED)
            pthread_cond_timedwait(&cv, &mx, &t);
        else
            pthread_cond_clockwait(&cv, &mx, CLOCK_MONOTONIC, &t);
    }
    pthread_cleanup_pop(0);
    return NULL;
}

static void check_contended(int type, const char *name)
{
    enum { H = 3, W = 6 };
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, type);
    pthread_mutex_init(&mx, &a);
    pthread_cond_init(&cv, NULL);
    mtype = type;
    guard.count = 0;
    atomic_store(&tally, 0);
    atomic_store(&hammer_stop, 0);
    atomic_store(&waiting_now, 0);
    pthread_t h[H], w[W];
    for (int i = 0; i < W; i++)
        pthread_create(&w[i], NULL, waiter, (void *)(intptr_t)(100 + i));
    while (atomic_load(&waiting_now) < W)
        sched_yield();
    for (int i = 0; i < H; i++)
        pthread_create(&h[i], NULL, hammer, (void *)(intptr_t)(1 + i));
    uint64_t rng = 0x9E3779B97F4A7C15ull ^ (uint64_t)type;
    for (int i = 0; i < W; i++) {
        struct timespec d = { 0, (long)(1000000 + rb_rand(&rng) % 4000000) };
        nanosleep(&d, NULL);
        if (i % 2) /* now and then a broadcast just before: the waiters are between wake and re-lock */
            pthread_cond_broadcast(&cv);
        pthread_cancel(w[i]);
        void *r;
        pthread_join(w[i], &r);
        if (r != PTHREAD_CANCELED)
            rb_fail(1, "%s: a waiter ended without being cancelled", name);
        atomic_fetch_add_explicit(&rb_progress, 1, memory_order_relaxed);
    }
    atomic_store(&hammer_stop, 1);
    for (int i = 0; i < H; i++)
        pthread_join(h[i], NULL);
    if (guard.count != atomic_load(&tally))
        rb_fail(1, "%s: counted %ld, %ld sections (lost updates)", name, guard.count, atomic_load(&tally));
    if (pthread_mutex_trylock(&mx) != 0)
        rb_fail(1, "%s: the mutex is not free at the end", name);
    pthread_mutex_unlock(&mx);
    pthread_cond_destroy(&cv);
    pthread_mutex_destroy(&mx);
    pthread_mutexattr_destroy(&a);
    printf("ok cancel-contended-%s\n", name);
}

/* ---- a cancelled waiter does not take a signal with it -------------------- */
static pthread_mutex_t sm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sc = PTHREAD_COND_INITIALIZER;
static int tokens, in_wait;

static void unlock_sm(void *p)
{
    (void)p;
    pthread_mutex_unlock(&sm);
}

static void *token_waiter(void *p)
{
    pthread_mutex_lock(&sm);
    pthread_cleanup_push(unlock_sm, NULL);
    in_wait++;
    while (tokens == 0)
        pthread_cond_wait(&sc, &sm);
    tokens--;
    in_wait--;
    pthread_cleanup_pop(1);
    return p;
}

/* until `n` waiters are in the condition wait (at most about a second) */
static void await_in_wait(int n)
{
    for (int i = 0; i < 2000; i++) {
        pthread_mutex_lock(&sm);
        int now = in_wait;
        pthread_mutex_unlock(&sm);
        if (now == n)
            return;
        usleep(500);
    }
}

static void check_signal(void)
{
    for (int round = 0; round < 40; round++) {
        pthread_t a, b;
        tokens = in_wait = 0;
        pthread_create(&a, NULL, token_waiter, NULL);
        await_in_wait(1); /* a first, so that a signal wakes a */
        pthread_create(&b, NULL, token_waiter, NULL);
        await_in_wait(2);
        usleep(2000); /* both asleep in the wait */
        pthread_mutex_lock(&sm);
        tokens = 1;
        pthread_cond_signal(&sc);
        pthread_cancel(a);
        pthread_mutex_unlock(&sm);
        void *ra;
        pthread_join(a, &ra);
        /* a took the token (then b waits on) or was cancelled (then b must get it) */
        int got = 0;
        for (int i = 0; i < 400 && !got; i++) {
            pthread_mutex_lock(&sm);
            got = tokens == 0;
            pthread_mutex_unlock(&sm);
            if (!got)
                usleep(5000);
        }
        if (!got)
            rb_fail(1, "round %d: the waiter woken by the signal was cancelled and the other one was not woken "
                    "(the signal was lost)", round);
        pthread_cancel(b); /* gone already, or waiting on */
        pthread_join(b, NULL);
        atomic_fetch_add_explicit(&rb_progress, 1, memory_order_relaxed);
    }
    printf("ok cancel-signal-not-consumed\n");
}

/* ---- C11 ------------------------------------------------------------------ */
static mtx_t cm;
static cnd_t cc;
static _Atomic int c11_in, c11_held;
static void c11_cleanup(void *p)
{
    (void)p;
    /* held again: another thread's trylock fails meanwhile (checked by main) */
    atomic_store(&c11_held, 1);
    while (atomic_load(&c11_held) == 1)
        sched_yield();
    mtx_unlock(&cm);
}
static void *c11_waiter(void *p)
{
    mtx_lock(&cm);
    pthread_cleanup_push(c11_cleanup, NULL);
    atomic_store(&c11_in, 1);
    for (;;)
        cnd_wait(&cc, &cm);
    pthread_cleanup_pop(0);
    return p;
}
static void check_c11(void)
{
    mtx_init(&cm, mtx_plain);
    cnd_init(&cc);
    pthread_t t;
    pthread_create(&t, NULL, c11_waiter, NULL);
    while (!atomic_load(&c11_in))
        sched_yield();
    mtx_lock(&cm); /* the waiter is inside cnd_wait */
    mtx_unlock(&cm);
    pthread_cancel(t);
    while (!atomic_load(&c11_held))
        sched_yield();
    int busy = mtx_trylock(&cm) == thrd_busy;
    atomic_store(&c11_held, 2);
    pthread_join(t, NULL);
    if (!busy)
        rb_fail(1, "c11: the cleanup of a thread cancelled in cnd_wait ran without the mutex");
    if (mtx_trylock(&cm) != thrd_success)
        rb_fail(1, "c11: the mutex is not free after the cleanup");
    mtx_unlock(&cm);
    printf("ok cancel-c11-cnd_wait\n");
}

int main(void)
{
    rb_prog = "nl_robust_cancel";
    setvbuf(stdout, NULL, _IOLBF, 0);
    rb_watchdog_start(30, "cancellation");
    check_contended(PTHREAD_MUTEX_NORMAL, "normal");
    check_contended(PTHREAD_MUTEX_RECURSIVE, "recursive");
    check_contended(PTHREAD_MUTEX_ERRORCHECK, "errorcheck");
    check_signal();
    check_c11();
    printf("%s: PASS\n", rb_prog);
    return 0;
}
