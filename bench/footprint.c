/*
 * Memory footprint of one lock instance after it was used from 1, 2, 4, 8
 * NUMA nodes (CST paper, sections 4.1 and 7.1: CST allocates per-node
 * structures on first use, cohort locks for every node up front).
 *
 * For each lock and each node count N (powers of two up to --max-nodes), a
 * fresh lock is acquired and released by N threads, thread i pinned to
 * virtual node i, one after the other; then bytes = ops->footprint(storage)
 * (ops->size when the lock allocates nothing). The topology becomes
 * virtual:MAX when the current one has fewer nodes.
 *
 * Default locks: cst-mutex, cst-rwsem, c-bo-mcs, c-tkt-tkt, hmcs, cna, those
 * of them that are registered.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"

static const char *const default_names[] = {
    "cst-mutex", "cst-rwsem", "c-bo-mcs", "c-tkt-tkt", "hmcs", "cna",
};

typedef struct {
    nl_lock_t *lock;
    int node;
} fp_arg_t;

static void *use_lock(void *p)
{
    fp_arg_t *a = p;
    nl_thread_set_node(a->node);
    nl_lock_acquire(a->lock);
    nl_lock_release(a->lock);
    if (nl_lock_ops(a->lock)->props & NL_PROP_RW) {
        nl_lock_read_acquire(a->lock);
        nl_lock_read_release(a->lock);
    }
    return NULL;
}

static int fp_run(bench_ctx_t *c)
{
    long max_nodes = bench_opt_long(c, "max-nodes");
    if (max_nodes < 1 || max_nodes > NL_MAX_NODES) {
        snprintf(c->err, sizeof c->err, "bad --max-nodes %ld: expected 1 to %d", max_nodes,
                 NL_MAX_NODES);
        return EINVAL;
    }
    if (nl_topology_nodes() < max_nodes) {
        char spec[32];
        snprintf(spec, sizeof spec, "virtual:%ld", max_nodes);
        if (nl_topology_set(spec, c->err, sizeof c->err))
            return EINVAL;
    }
    if (!strstr(c->command, " --lock")) { /* default: the named locks that exist */
        c->nlocks = 0;
        for (size_t i = 0; i < sizeof default_names / sizeof default_names[0]; i++) {
            const nl_lock_ops_t *ops = nl_lock_find(default_names[i]);
            if (ops)
                c->locks[c->nlocks++] = ops;
        }
        if (!c->nlocks) {
            snprintf(c->err, sizeof c->err, "none of the default locks is registered");
            return ENOENT;
        }
    }
    for (size_t li = 0; li < c->nlocks; li++) {
        for (long nodes = 1; nodes <= max_nodes; nodes *= 2) {
            nl_lock_t *l = nl_lock_create_ops(c->locks[li], NULL);
            if (!l) {
                snprintf(c->err, sizeof c->err, "cannot create lock '%s': %s", c->locks[li]->name,
                         strerror(errno));
                return errno ? errno : ENOMEM;
            }
            for (int i = 0; i < nodes; i++) { /* one thread per node, in turn */
                fp_arg_t a = { l, i };
                pthread_t t;
                int rc = pthread_create(&t, NULL, use_lock, &a);
                if (rc) {
                    snprintf(c->err, sizeof c->err, "cannot create a thread: %s", strerror(rc));
                    nl_lock_destroy(l);
                    return rc;
                }
                pthread_join(t, NULL);
            }
            size_t bytes = nl_lock_footprint(l);
            nl_lock_destroy(l);
            bench_record_t *r = bench_new_record(c, c->locks[li], (int)nodes);
            if (!r)
                return ENOMEM;
            r->throughput = NAN;
            snprintf(r->extra, sizeof r->extra, "\"nodes_used\": %ld, \"bytes\": %zu", nodes, bytes);
        }
    }
    return 0;
}

static const bench_opt_t fp_opts[] = {
    { "max-nodes", "8", "largest node count (1, 2, 4, ... up to it)" },
    { NULL, NULL, NULL },
};

const bench_workload_t bench_footprint = {
    .name = "footprint",
    .description = "bytes used by one lock after use from 1, 2, 4, 8 nodes (CST paper sec. 4.1)",
    .opts = fp_opts,
    .default_locks = "all",
    .default_threads = "1",
    .default_duration = "1",
    .run = fp_run,
};
