/*
 * Uncontended cost: nanoseconds per acquire+release pair on one thread,
 * measured through the generic API for every lock in the same run, rounds
 * interleaved across locks, the median round kept; ratio to `pthread`.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>
#include "bench.h"

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int lat_run(bench_ctx_t *c)
{
    long rounds = bench_opt_long(c, "rounds");
    long pairs = bench_opt_long(c, "pairs");
    if (rounds < 1 || pairs < 1) {
        snprintf(c->err, sizeof c->err, "bad latency parameters: --rounds and --pairs must be at least 1");
        return EINVAL;
    }
    bench_become_multithreaded();
    /* pthread is always measured: the ratios are against it */
    const nl_lock_ops_t *locks[BENCH_MAX_LOCKS + 1];
    size_t n = bench_locks_with(c, "pthread", locks);
    nl_lock_t *h[BENCH_MAX_LOCKS + 1];
    double *ns = calloc(n * (size_t)rounds, sizeof *ns);
    if (!ns)
        return ENOMEM;
    for (size_t i = 0; i < n; i++) {
        if (!(h[i] = nl_lock_create_ops(locks[i], NULL))) {
            snprintf(c->err, sizeof c->err, "cannot create lock '%s': %s", locks[i]->name, strerror(errno));
            return errno;
        }
        for (long k = 0; k < pairs / 10 + 1; k++) { /* warm up */
            nl_lock_acquire(h[i]);
            nl_lock_release(h[i]);
        }
    }
    for (long r = 0; r < rounds; r++) {
        for (size_t j = 0; j < n; j++) {
            size_t i = (j + (size_t)r) % n; /* rotate the order each round */
            uint64_t t0 = nl_clock_ns();
            for (long k = 0; k < pairs; k++) {
                nl_lock_acquire(h[i]);
                nl_lock_release(h[i]);
            }
            ns[i * (size_t)rounds + (size_t)r] = (double)(nl_clock_ns() - t0) / (double)pairs;
        }
    }
    /* ratio to pthread per round (both measured moments apart), median kept:
     * steadier than a ratio of medians when the machine is busy */
    size_t bi = 0;
    for (size_t i = 0; i < n; i++)
        if (!strcmp(locks[i]->name, "pthread"))
            bi = i;
    double med[BENCH_MAX_LOCKS + 1], ratio[BENCH_MAX_LOCKS + 1];
    double *tmp = calloc((size_t)rounds, sizeof *tmp);
    if (!tmp)
        return ENOMEM;
    for (size_t i = 0; i < n; i++) {
        for (long r = 0; r < rounds; r++)
            tmp[r] = ns[i * (size_t)rounds + (size_t)r] / ns[bi * (size_t)rounds + (size_t)r];
        qsort(tmp, (size_t)rounds, sizeof *tmp, cmp_d);
        ratio[i] = tmp[rounds / 2];
    }
    free(tmp);
    for (size_t i = 0; i < n; i++) {
        qsort(ns + i * (size_t)rounds, (size_t)rounds, sizeof *ns, cmp_d);
        med[i] = ns[i * (size_t)rounds + (size_t)rounds / 2];
    }
    for (size_t i = 0; i < n; i++) {
        bench_record_t *rec = bench_new_record(c, locks[i], 1);
        if (!rec)
            return ENOMEM;
        rec->duration_s = med[i] * (double)pairs * (double)rounds / 1e9;
        rec->ops = (uint64_t)pairs * (uint64_t)rounds;
        rec->throughput = 1e9 / med[i];
        rec->per_thread_ops = malloc(sizeof(uint64_t));
        if (rec->per_thread_ops)
            rec->per_thread_ops[0] = rec->ops;
        rec->ratio = 1.0 / ratio[i]; /* throughput ratio, as for other workloads */
        snprintf(rec->baseline, sizeof rec->baseline, "pthread");
        snprintf(rec->extra, sizeof rec->extra, "\"ns_per_pair\": %.3f, \"rounds\": %ld, \"pairs_per_round\": %ld",
                 med[i], rounds, pairs);
        nl_lock_destroy(h[i]);
    }
    free(ns);
    return 0;
}

static const bench_opt_t lat_opts[] = {
    { "rounds", "31", "measurement rounds (median kept), interleaved across locks" },
    { "pairs", "100000", "acquire+release pairs per round" },
    { NULL, NULL, NULL },
};

const bench_workload_t bench_latency = {
    .name = "latency",
    .description = "uncontended acquire+release cost, ratio to pthread in the same run",
    .opts = lat_opts,
    .default_locks = "all",
    .default_threads = "1",
    .default_duration = "1",
    .run = lat_run,
};
