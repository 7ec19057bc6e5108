/*
 * Benchmark framework shared by the workloads of `numalock bench`.
 *
 * A workload declares its own options and a run function. Throughput
 * workloads hand one operation function to bench_throughput(), which runs the
 * threads, pins them to virtual nodes round-robin, skips a warm-up, and
 * fills a record (ops, per-thread ops, fairness factor, hand-over stats).
 * Records are printed as a table and written as JSON (see docs/ARCHITECTURE.md).
 */
#ifndef NL_BENCH_H
#define NL_BENCH_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include "numalock/numalock.h"
#include "numalock/topology.h"
#include "numalock/clock.h"

#define BENCH_MAX_LOCKS 64
#define BENCH_MAX_THREADS_LIST 32
#define BENCH_MAX_THREADS 1024

typedef struct bench_opt {
    const char *name;     /* flag without dashes, e.g. "key-range" */
    const char *defval;
    const char *help;
} bench_opt_t;

typedef struct bench_record {
    char workload[32];
    char lock[48];
    int threads;
    char topology[128];
    double duration_s;
    uint64_t ops;
    double throughput;            /* ops per second */
    uint64_t *per_thread_ops;     /* threads entries (owned) */
    double fairness;              /* NaN: null */
    int has_stats;
    nl_stats_snapshot_t stats;
    double ratio;                 /* to baseline; NaN: absent */
    char baseline[48];
    char extra[1024];             /* extra JSON members: "\"k\": v, \"k2\": v2" or "" */
    char more[512];               /* the runner's members (the simulator's figures), same form */
} bench_record_t;

typedef struct bench_ctx {
    const char *workload;
    const nl_lock_ops_t *locks[BENCH_MAX_LOCKS];
    size_t nlocks;
    int threads[BENCH_MAX_THREADS_LIST];
    size_t nthreads;
    double duration;
    char topology[128];
    const bench_opt_t *opts;
    const char *optval[32];        /* parallel to opts */
    const char *json_path;         /* NULL: none */
    char command[2048];
    bench_record_t *records;
    size_t nrecords, caprecords;
    char err[512];
    int quiet;
    int pin_nodes;                 /* --pin nodes: thread i bound to the CPUs of node i mod nodes */
} bench_ctx_t;

typedef struct bench_workload {
    const char *name;
    const char *description;
    const bench_opt_t *opts;       /* terminated by {NULL} */
    const char *default_locks;     /* "all" or a list; filter applied by workload */
    const char *default_threads;
    const char *default_duration;
    int (*run)(bench_ctx_t *ctx);  /* 0, or errno with ctx->err set */
    const char *const *text_opts;  /* options taking text, checked by run; NULL-terminated;
                                      the others must be non-negative integers */
    int own_table;                 /* run prints its own table: no bench_print_table */
} bench_workload_t;

/* The runner's additions (the simulator's, sim/main.c; the command leaves
 * them NULL): bench_window(1, r) when a record's measured interval starts,
 * bench_window(0, r) when it ends; bench_meta, further members of the JSON
 * file's "meta" object ("\"k\": v, ..."). */
extern void (*bench_window)(int begin, bench_record_t *r);
extern const char *bench_meta;

/* option lookup (value as given or default) */
const char *bench_opt(const bench_ctx_t *c, const char *name);
long bench_opt_long(const bench_ctx_t *c, const char *name);

bench_record_t *bench_new_record(bench_ctx_t *c, const nl_lock_ops_t *ops, int threads);

/* Throughput run: `op` performs one operation (critical section + external
 * work) for thread `tid`; returns 0 or errno. */
typedef void (*bench_op_fn)(void *state, int tid, nl_lock_t *lock);
typedef struct bench_tp_args {
    const nl_lock_ops_t *ops;
    int threads;
    double duration;
    void *state;
    bench_op_fn op;
    void (*thread_init)(void *state, int tid); /* may be NULL */
} bench_tp_args_t;
int bench_throughput(bench_ctx_t *c, const bench_tp_args_t *a, bench_record_t *r);

/* The threads x locks sweep of a throughput workload over a shared data
 * structure: for every thread count and lock, setup() builds the structure
 * (0 or an errno; it cleans up after itself on failure), bench_throughput()
 * runs `op`, describe() writes the record's extra JSON fields, teardown()
 * frees the structure. Ratios are then taken against `baseline`. */
typedef struct {
    int (*setup)(void *state, int threads);
    void (*teardown)(void *state, int threads);
    void (*describe)(const void *state, const nl_lock_ops_t *lock, char *extra, size_t n);
    bench_op_fn op;
    void (*thread_init)(void *state, int tid); /* may be NULL */
    const char *baseline;
} bench_sweep_t;
int bench_sweep(bench_ctx_t *c, const bench_sweep_t *s, void *state);

double bench_fairness(const uint64_t *per_thread, int n);
/* The requested locks, plus `baseline` at the end unless requested: out must
 * hold BENCH_MAX_LOCKS + 1 entries; returns the count. */
/* Make the process multi-threaded (start and join one thread): glibc takes
 * its mutex without atomic instructions while a process has a single thread
 * (__libc_single_threaded, never set again once cleared), and a lock worth
 * measuring lives in a multi-threaded program. */
void bench_become_multithreaded(void);
size_t bench_locks_with(const bench_ctx_t *c, const char *baseline, const nl_lock_ops_t **out);
void bench_ratios(bench_ctx_t *c, const char *baseline);

/* the entry point of `numalock bench` (argv[0] is the workload name) */
int bench_main(int argc, char **argv, const char *command_line);
void bench_list_workloads(FILE *f);
/* The options every workload takes, then the workloads with their own
 * (the body of `numalock bench --help`). */
void bench_usage(FILE *f);
const bench_workload_t *bench_find_workload(const char *name);
const char *bench_workload_names(char *buf, size_t len);

/* workloads */
extern const bench_workload_t bench_kvmap, bench_latency, bench_instructions;
extern const bench_workload_t bench_rwhash, bench_footprint;
extern const bench_workload_t bench_contention;
extern const bench_workload_t bench_delegation;
extern const bench_workload_t bench_futex_hash, bench_futex_wake, bench_futex_wake_parallel, bench_futex_requeue;

/* One shared cache line that a critical section writes. */
typedef struct {
    _Alignas(64) volatile uint64_t v[8];
} bench_line_t;

/* xorshift64* step: the workloads' per-thread pseudo-random numbers. */
static inline uint64_t bench_xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

/* small JSON helpers */
void json_str(FILE *f, const char *s);
void json_num(FILE *f, double v);  /* NaN/inf -> null */
/* the records as a table on stdout (table.c) */
void bench_print_table(const bench_ctx_t *c);

#endif
