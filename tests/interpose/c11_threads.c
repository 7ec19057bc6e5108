/*
 * C11 <threads.h>: mtx_plain with cnd_wait (a bounded queue), mtx_recursive,
 * mtx_timed with mtx_timedlock timing out, cnd_timedwait timing out.
 * Prints the totals; exits non-zero on a wrong result.
 */
#include <stdio.h>
#include <stdatomic.h>
#include <threads.h>
#include <time.h>

#define ITEMS 20000
static mtx_t m, rec, timed;
static cnd_t not_empty, not_full;
static int len, done_producers;
static long sum;

static int producer(void *arg)
{
    for (long i = 1; i <= ITEMS; i++) {
        mtx_lock(&m);
        while (len == 8)
            cnd_wait(&not_full, &m);
        len++;
        sum += i;
        cnd_signal(&not_empty);
        mtx_unlock(&m);
    }
    mtx_lock(&m);
    done_producers++;
    cnd_broadcast(&not_empty);
    mtx_unlock(&m);
    return (int)(long)arg;
}

static int consumer(void *arg)
{
    long taken = 0;
    for (;;) {
        mtx_lock(&m);
        while (len == 0 && done_producers < 2)
            cnd_wait(&not_empty, &m);
        if (len == 0) {
            mtx_unlock(&m);
            break;
        }
        len--;
        taken++;
        cnd_signal(&not_full);
        mtx_unlock(&m);
        mtx_lock(&rec);
        mtx_lock(&rec);
        mtx_unlock(&rec);
        mtx_unlock(&rec);
    }
    return (int)taken + (int)(long)arg;
}

/* holds `timed` from the moment it says so until main has seen trylock and
 * timedlock fail (no sleep decides it: the test holds on a loaded machine) */
static atomic_int timed_held, timed_done;
static int hold_timed(void *arg)
{
    mtx_lock(&timed);
    atomic_store(&timed_held, 1);
    while (!atomic_load(&timed_done))
        thrd_yield();
    mtx_unlock(&timed);
    return (int)(long)arg;
}

int main(void)
{
    if (mtx_init(&m, mtx_plain) != thrd_success || mtx_init(&rec, mtx_plain | mtx_recursive) != thrd_success ||
        mtx_init(&timed, mtx_timed) != thrd_success || cnd_init(&not_empty) != thrd_success ||
        cnd_init(&not_full) != thrd_success)
        return 2;
    thrd_t p[2], c[3];
    for (int i = 0; i < 2; i++)
        thrd_create(&p[i], producer, NULL);
    for (int i = 0; i < 3; i++)
        thrd_create(&c[i], consumer, NULL);
    int taken = 0, r;
    for (int i = 0; i < 2; i++)
        thrd_join(p[i], &r);
    for (int i = 0; i < 3; i++) {
        thrd_join(c[i], &r);
        taken += r;
    }
    thrd_t h;
    thrd_create(&h, hold_timed, NULL);
    struct timespec t;
    while (!atomic_load(&timed_held))
        thrd_yield();
    timespec_get(&t, TIME_UTC);
    t.tv_nsec += 20000000;
    if (t.tv_nsec >= 1000000000) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000;
    }
    int busy = mtx_trylock(&timed), timedout = mtx_timedlock(&timed, &t);
    atomic_store(&timed_done, 1);
    thrd_join(h, &r);
    mtx_lock(&m);
    timespec_get(&t, TIME_UTC);
    t.tv_nsec += 10000000;
    if (t.tv_nsec >= 1000000000) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000;
    }
    int cwait = cnd_timedwait(&not_empty, &m, &t);
    mtx_unlock(&m);
    int ok = taken == 2 * ITEMS && sum == 2L * ITEMS * (ITEMS + 1) / 2 && busy == thrd_busy &&
             timedout == thrd_timedout && cwait == thrd_timedout;
    printf("c11 threads: %d items, sum %ld, trylock %s, timedlock %s, cnd_timedwait %s\n", taken, sum,
           busy == thrd_busy ? "busy" : "?", timedout == thrd_timedout ? "timed out" : "?",
           cwait == thrd_timedout ? "timed out" : "?");
    mtx_destroy(&m);
    mtx_destroy(&rec);
    mtx_destroy(&timed);
    cnd_destroy(&not_empty);
    cnd_destroy(&not_full);
    return ok ? 0 : 1;
}
