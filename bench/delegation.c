/*
 * The RCL / SANL microbenchmark (Lozi et al., USENIX ATC 2012, sec. 4.1; SANL
 * paper sec. 4.2): every thread repeatedly runs a critical section that
 * increments a counter in each of --lines shared cache lines, then does
 * --interval cycles of local work (a busy loop on nl_clock_ticks(): the
 * time-stamp counter on x86); the shorter the interval, the higher the contention. Every lock runs the
 * critical section as a function through nl_lock_execute: a delegation lock
 * may ship it to a server, an in-place lock acquires, calls and releases.
 *
 * Extra JSON per record: interval_cycles, lines, cycles_per_cs (the machine's
 * wall time per critical section, in cycles: the paper's execution time),
 * server_share (critical sections a server ran for another thread),
 * mode_switches and server_terms (sanl, fc), over the whole run including the
 * warm-up. The ratio is to mcs at the same thread count and interval.
 */
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bench.h"
#include "numalock/delegation.h"

#define DL_MAX_LINES 5

typedef struct {
    bench_line_t lines[DL_MAX_LINES];   /* the shared data, under the lock */
    int nlines;
    uint64_t interval;
    const nl_lock_ops_t *ops;
    /* lock counters, copied by thread 0 now and then (last copy wins) */
    _Alignas(64) uint64_t served, total, switches, terms;
    int has_counters;
} dl_state_t;

static void *dl_cs(void *p)
{
    dl_state_t *st = p;
    for (int i = 0; i < st->nlines; i++)
        st->lines[i].v[0]++;
    return p;
}

static void dl_counters(dl_state_t *st, nl_lock_t *lock)
{
    void *storage = nl_lock_storage(lock);
    if (!strcmp(st->ops->name, "sanl")) {
        nl_sanl_stats_t s;
        nl_sanl_stats(storage, &s);
        st->served = s.served;
        st->total = s.served + s.own + s.inplace;
        st->switches = s.switches;
        st->terms = s.terms;
        st->has_counters = 1;
    } else if (!strcmp(st->ops->name, "fc")) {
        nl_fc_stats_t s;
        nl_fc_stats(storage, &s);
        st->served = s.served;
        st->total = s.served + s.own;
        st->switches = 0;
        st->terms = s.terms;
        st->has_counters = 1;
    }
}

typedef struct {
    _Alignas(64) uint64_t n;
} dl_thread_t;
static dl_thread_t dl_threads[BENCH_MAX_THREADS];

static void dl_op(void *state, int tid, nl_lock_t *lock)
{
    dl_state_t *st = state;
    if (nl_lock_execute(lock, dl_cs, st) != st)
        abort(); /* the caller must get its own result */
    if (tid == 0 && (++dl_threads[0].n & 255) == 0)
        dl_counters(st, lock);
    uint64_t t0 = nl_clock_ticks();
    while (nl_clock_ticks() - t0 < st->interval)
        ;
}

static double tsc_hz;

static double measure_tsc_hz(void)
{
    uint64_t n0 = nl_clock_ns(), c0 = nl_clock_ticks();
    usleep(50000);
    uint64_t n1 = nl_clock_ns(), c1 = nl_clock_ticks();
    return n1 > n0 ? (double)(c1 - c0) * 1e9 / (double)(n1 - n0) : 2e9;
}

static int dl_run(bench_ctx_t *c)
{
    static dl_state_t st; /* large and aligned: not on the stack */
    long lines = bench_opt_long(c, "lines");
    long interval = bench_opt_long(c, "interval");
    if (lines < 1 || lines > DL_MAX_LINES || interval > 100000000) {
        snprintf(c->err, sizeof c->err,
                 "bad delegation parameters: --lines must be 1..%d and --interval at most 100000000 cycles",
                 DL_MAX_LINES);
        return EINVAL;
    }
    if (tsc_hz == 0)
        tsc_hz = measure_tsc_hz();
    size_t first = c->nrecords;
    for (size_t ti = 0; ti < c->nthreads; ti++) {
        for (size_t li = 0; li < c->nlocks; li++) {
            int T = c->threads[ti];
            memset(&st, 0, sizeof st);
            memset(dl_threads, 0, sizeof dl_threads);
            st.nlines = (int)lines;
            st.interval = (uint64_t)interval;
            st.ops = c->locks[li];
            bench_record_t *r = bench_new_record(c, c->locks[li], T);
            if (!r)
                return ENOMEM;
            bench_tp_args_t a = { c->locks[li], T, c->duration, &st, dl_op, NULL };
            int rc = bench_throughput(c, &a, r);
            if (rc)
                return rc;
            /* every critical section ran exactly once: the counters agree */
            for (int i = 1; i < st.nlines; i++)
                if (st.lines[i].v[0] != st.lines[0].v[0]) {
                    snprintf(c->err, sizeof c->err, "lock '%s': shared lines disagree (%llu vs %llu)",
                             c->locks[li]->name, (unsigned long long)st.lines[i].v[0],
                             (unsigned long long)st.lines[0].v[0]);
                    return EIO;
                }
            double cyc = r->ops ? r->duration_s * tsc_hz / (double)r->ops : NAN;
            int off = snprintf(r->extra, sizeof r->extra,
                               "\"interval_cycles\": %ld, \"lines\": %ld, \"cycles_per_cs\": %.1f", interval,
                               lines, cyc);
            if (st.has_counters && st.total)
                snprintf(r->extra + off, sizeof r->extra - (size_t)off,
                         ", \"server_share\": %.4f, \"mode_switches\": %llu, \"server_terms\": %llu",
                         (double)st.served / (double)st.total, (unsigned long long)st.switches,
                         (unsigned long long)st.terms);
        }
    }
    /* ratio to mcs at the same thread count (one interval per run) */
    for (size_t i = first; i < c->nrecords; i++)
        for (size_t j = first; j < c->nrecords; j++)
            if (!strcmp(c->records[j].lock, "mcs") && c->records[j].threads == c->records[i].threads &&
                c->records[j].throughput > 0) {
                c->records[i].ratio = c->records[i].throughput / c->records[j].throughput;
                snprintf(c->records[i].baseline, sizeof c->records[i].baseline, "mcs");
            }
    return 0;
}

static const bench_opt_t dl_opts[] = {
    { .name = "lines", .defval = "1", .help = "shared cache lines the critical section writes (1..5)" },
    { .name = "interval", .defval = "1000",
      .help = "cycles of local work between critical sections (paper: 100 .. 2,000,000)" },
    { .name = NULL },
};

const bench_workload_t bench_delegation = {
    .name = "delegation",
    .description = "RCL/SANL microbenchmark: critical section as a function (nl_lock_execute)",
    .opts = dl_opts,
    .default_locks = "sanl,fc,mcs,pthread",
    .default_threads = "2",
    .default_duration = "1",
    .run = dl_run,
};
