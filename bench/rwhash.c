/*
 * Read-write hash table microbenchmark (CST paper, section 7.3: an in-kernel
 * hash table protected by one lock, 90 % reads / 10 % writes, threads up to
 * 5x the cores). Chained buckets under one read-write lock; lookups take the
 * read side, inserts and removes (half each) the write side; keys uniform in
 * [0, key-range); the table starts about half full.
 *
 * Default locks: the read-write ones (NL_PROP_RW). A lock without a read side
 * given with --lock runs lookups exclusively (nl_lock_read_acquire falls back
 * to acquire). Ratios are against pthread-rwlock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"

typedef struct hnode {
    struct hnode *next;
    long key, val;
} hnode_t;

typedef struct {
    _Alignas(64) uint64_t rng;
    hnode_t *spare;
    long sink;
} rw_thread_t;

typedef struct {
    hnode_t **buckets;
    long nbuckets;
    long key_range;
    unsigned read_pct;
    rw_thread_t *t;
} rw_state_t;

static inline long bucket_of(const rw_state_t *st, long key)
{
    return (long)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> 20) % st->nbuckets;
}

static void rw_thread_init(void *state, int tid)
{
    rw_state_t *st = state;
    st->t[tid].rng = 0x9E3779B97F4A7C15ull * (uint64_t)(tid + 1) + 777;
}

static void rw_op(void *state, int tid, nl_lock_t *lock)
{
    rw_state_t *st = state;
    rw_thread_t *me = &st->t[tid];
    uint64_t r = bench_xorshift(&me->rng);
    long key = (long)(r % (uint64_t)st->key_range);
    unsigned pick = (unsigned)((r >> 32) % 100);
    hnode_t **b = &st->buckets[bucket_of(st, key)];
    if (pick < st->read_pct) {
        nl_lock_read_acquire(lock);
        for (hnode_t *n = *b; n; n = n->next)
            if (n->key == key) {
                me->sink += n->val;
                break;
            }
        nl_lock_read_release(lock);
    } else if (pick & 1) { /* insert unless present */
        if (!me->spare && !(me->spare = malloc(sizeof(hnode_t))))
            abort();
        me->spare->key = key;
        me->spare->val = key;
        int used = 1;
        nl_lock_acquire(lock);
        for (hnode_t *n = *b; n; n = n->next)
            if (n->key == key) {
                used = 0;
                break;
            }
        if (used) {
            me->spare->next = *b;
            *b = me->spare;
        }
        nl_lock_release(lock);
        if (used)
            me->spare = NULL;
    } else { /* remove */
        hnode_t *gone = NULL;
        nl_lock_acquire(lock);
        for (hnode_t **p = b; *p; p = &(*p)->next)
            if ((*p)->key == key) {
                gone = *p;
                *p = gone->next;
                break;
            }
        nl_lock_release(lock);
        if (gone) {
            if (!me->spare)
                me->spare = gone;
            else
                free(gone);
        }
    }
}

static void table_free(rw_state_t *st)
{
    for (long i = 0; i < st->nbuckets; i++) {
        hnode_t *n = st->buckets[i];
        while (n) {
            hnode_t *x = n->next;
            free(n);
            n = x;
        }
    }
    free(st->buckets);
}

/* one (threads, lock) run: a table about half full, per-thread records */
static int rw_setup(void *state, int T)
{
    rw_state_t *st = state;
    st->t = aligned_alloc(64, (size_t)T * sizeof(rw_thread_t));
    st->buckets = calloc((size_t)st->nbuckets, sizeof *st->buckets);
    if (!st->t || !st->buckets) {
        free(st->t);
        free(st->buckets);
        return ENOMEM;
    }
    memset(st->t, 0, (size_t)T * sizeof(rw_thread_t));
    uint64_t seed = 4242;
    for (long i = 0; i < st->key_range / 2; i++) {
        long key = (long)(bench_xorshift(&seed) % (uint64_t)st->key_range);
        hnode_t **b = &st->buckets[bucket_of(st, key)];
        int dup = 0;
        for (hnode_t *n = *b; n; n = n->next)
            dup |= n->key == key;
        if (dup)
            continue;
        hnode_t *n = malloc(sizeof *n);
        if (!n) {
            table_free(st);
            free(st->t);
            return ENOMEM;
        }
        n->key = n->val = key;
        n->next = *b;
        *b = n;
    }
    return 0;
}

static void rw_teardown(void *state, int T)
{
    rw_state_t *st = state;
    for (int i = 0; i < T; i++)
        free(st->t[i].spare);
    free(st->t);
    table_free(st);
}

static void rw_describe(const void *state, const nl_lock_ops_t *lock, char *extra, size_t n)
{
    const rw_state_t *st = state;
    snprintf(extra, n, "\"read_pct\": %u, \"key_range\": %ld, \"buckets\": %ld, \"rw_lock\": %s",
             st->read_pct, st->key_range, st->nbuckets, (lock->props & NL_PROP_RW) ? "true" : "false");
}

static int rw_run(bench_ctx_t *c)
{
    rw_state_t st = {0};
    st.key_range = bench_opt_long(c, "key-range");
    st.nbuckets = bench_opt_long(c, "buckets");
    st.read_pct = (unsigned)bench_opt_long(c, "read-pct");
    if (st.key_range < 1 || st.nbuckets < 1 || st.read_pct > 100) {
        snprintf(c->err, sizeof c->err,
                 "bad rwhash parameters: --key-range and --buckets must be at least 1 and "
                 "--read-pct at most 100");
        return EINVAL;
    }
    /* default lock list: the read-write locks (an explicit --lock is kept) */
    if (!strstr(c->command, " --lock")) {
        size_t n = 0;
        for (size_t i = 0; i < c->nlocks; i++)
            if (c->locks[i]->props & NL_PROP_RW)
                c->locks[n++] = c->locks[i];
        c->nlocks = n;
        if (!n) {
            snprintf(c->err, sizeof c->err, "no read-write lock is registered");
            return ENOENT;
        }
    }
    static const bench_sweep_t sweep = { rw_setup, rw_teardown, rw_describe, rw_op, rw_thread_init,
                                         "pthread-rwlock" };
    return bench_sweep(c, &sweep, &st);
}

static const bench_opt_t rw_opts[] = {
    { "read-pct", "90", "share of operations that are lookups under the read lock" },
    { "key-range", "4096", "keys are drawn from [0, key-range); the table starts half full" },
    { "buckets", "1024", "hash buckets (chained)" },
    { NULL, NULL, NULL },
};

const bench_workload_t bench_rwhash = {
    .name = "rwhash",
    .description = "hash table under one read-write lock, lookups read (CST paper sec. 7.3)",
    .opts = rw_opts,
    .default_locks = "all",
    .default_threads = "1,2,4,10",
    .default_duration = "1",
    .run = rw_run,
};
