/*
 * A program that leans on futexes through glibc's condition variables (or
 * the preload's): --threads threads in pairs, each pair with its share of
 * the --condvars slots (a mutex, a condition variable, the step it holds).
 * The two threads of a pair take turns: at step k the thread whose turn it
 * is waits on slot k until the slot holds k, then writes k + 1 into slot
 * k + 1 and signals it, where its partner waits. So every step wakes a
 * partner that mostly sleeps (8 threads on fewer CPUs), each time on
 * another condition variable's futex, the pairs' futexes spread over
 * --condvars addresses.
 *
 *   futex_cond [--threads N] [--condvars N] [--seconds S] [--expect-slots N]
 *
 * Prints one JSON line: the hand-overs per second, and the slots of the
 * process's private futex hash (prctl PR_FUTEX_HASH; -1 where the kernel
 * has none). --expect-slots N: exit 1 unless the hash has N slots.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    pthread_mutex_t m;
    pthread_cond_t c;
    long step;
    char pad[64 - sizeof(long)];
} slot_t;

static slot_t *slots;
static int nthreads = 8, ncond = 4096;
static _Atomic int stop;
static _Atomic long passes;

/* thread 2p + r: pair p, steps r, r + 2, ... over the pair's slots */
static void *runner(void *arg)
{
    int me = (int)(long)arg, per = ncond / (nthreads / 2);
    slot_t *mine = &slots[(me / 2) * per];
    long n = 0;
    for (long k = me % 2; !atomic_load_explicit(&stop, memory_order_relaxed); k += 2) {
        slot_t *s = &mine[k % per], *next = &mine[(k + 1) % per];
        pthread_mutex_lock(&s->m);
        while (s->step != k && !atomic_load_explicit(&stop, memory_order_relaxed))
            pthread_cond_wait(&s->c, &s->m);
        pthread_mutex_unlock(&s->m);
        pthread_mutex_lock(&next->m);
        next->step = k + 1;
        pthread_cond_signal(&next->c);
        pthread_mutex_unlock(&next->m);
        n++;
    }
    atomic_fetch_add(&passes, n);
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double seconds = 2;
    int expect = -2;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--threads")) nthreads = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--condvars")) ncond = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--seconds")) seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--expect-slots")) expect = atoi(argv[i + 1]);
        else { fprintf(stderr, "futex_cond: unknown option '%s': valid options are --threads, --condvars, "
                       "--seconds, --expect-slots\n", argv[i]); return 2; }
    }
    if (nthreads < 2 || nthreads > 256 || nthreads % 2 || ncond < nthreads || !(seconds > 0)) {
        fprintf(stderr, "futex_cond: --threads an even number from 2 to 256, --condvars at least --threads, "
                        "--seconds above 0\n");
        return 2;
    }
    slots = aligned_alloc(64, (size_t)ncond * sizeof *slots);
    for (int i = 0; i < ncond; i++) {
        pthread_mutex_init(&slots[i].m, NULL);
        pthread_cond_init(&slots[i].c, NULL);
        slots[i].step = i % (ncond / (nthreads / 2)) == 0 ? 0 : -1; /* each pair's first slot holds step 0 */
    }
    pthread_t *th = malloc((size_t)nthreads * sizeof *th);
    double t0 = now_s();
    for (int t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, runner, (void *)(long)t);
    struct timespec run = { (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9) };
    nanosleep(&run, NULL);
    atomic_store(&stop, 1);
    for (int i = 0; i < ncond; i++) { /* wake every sleeper: they see stop */
        pthread_mutex_lock(&slots[i].m);
        pthread_cond_broadcast(&slots[i].c);
        pthread_mutex_unlock(&slots[i].m);
    }
    double t1 = now_s();
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    int got = prctl(78 /* PR_FUTEX_HASH */, 2 /* GET_SLOTS */, 0ul, 0ul, 0ul);
    printf("{\"threads\": %d, \"condvars\": %d, \"seconds\": %.3f, \"passes\": %ld, \"passes_per_s\": %.0f, "
           "\"slots\": %d}\n", nthreads, ncond, t1 - t0, atomic_load(&passes),
           (double)atomic_load(&passes) / (t1 - t0), got);
    if (expect != -2 && got != expect) {
        fprintf(stderr, "futex_cond: the private futex hash has %d slots, %d expected\n", got, expect);
        return 1;
    }
    return 0;
}
