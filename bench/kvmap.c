/*
 * Key-value map microbenchmark (CNA paper, section 7.1.1): an AVL tree under
 * one lock; operations drawn uniformly from lookups and updates (updates split
 * evenly between inserts and removes), keys uniform in [0, key-range); the map
 * starts roughly half full; optional external (non-critical) work between
 * operations, a pseudo-random number loop.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"

typedef struct avl {
    struct avl *l, *r;
    long key, val;
    int h;
} avl_t;

static int h(avl_t *n) { return n ? n->h : 0; }
static void fix(avl_t *n) { n->h = 1 + (h(n->l) > h(n->r) ? h(n->l) : h(n->r)); }
static avl_t *rot_r(avl_t *n) { avl_t *l = n->l; n->l = l->r; l->r = n; fix(n); fix(l); return l; }
static avl_t *rot_l(avl_t *n) { avl_t *r = n->r; n->r = r->l; r->l = n; fix(n); fix(r); return r; }

static avl_t *balance(avl_t *n)
{
    fix(n);
    int b = h(n->l) - h(n->r);
    if (b > 1) {
        if (h(n->l->l) < h(n->l->r))
            n->l = rot_l(n->l);
        return rot_r(n);
    }
    if (b < -1) {
        if (h(n->r->r) < h(n->r->l))
            n->r = rot_r(n->r);
        return rot_l(n);
    }
    return n;
}

/* insert `fresh` unless key exists (then *used = 0) */
static avl_t *avl_insert(avl_t *n, avl_t *fresh, int *used)
{
    if (!n) {
        *used = 1;
        return fresh;
    }
    if (fresh->key < n->key)
        n->l = avl_insert(n->l, fresh, used);
    else if (fresh->key > n->key)
        n->r = avl_insert(n->r, fresh, used);
    else
        return n;
    return balance(n);
}

static avl_t *avl_pop_min(avl_t *n, avl_t **min)
{
    if (!n->l) {
        *min = n;
        return n->r;
    }
    n->l = avl_pop_min(n->l, min);
    return balance(n);
}

static avl_t *avl_remove(avl_t *n, long key, avl_t **gone)
{
    if (!n)
        return NULL;
    if (key < n->key)
        n->l = avl_remove(n->l, key, gone);
    else if (key > n->key)
        n->r = avl_remove(n->r, key, gone);
    else {
        *gone = n;
        if (!n->l)
            return n->r;
        if (!n->r)
            return n->l;
        avl_t *m;
        avl_t *r = avl_pop_min(n->r, &m);
        m->l = n->l;
        m->r = r;
        return balance(m);
    }
    return balance(n);
}

static avl_t *avl_find(avl_t *n, long key)
{
    while (n && n->key != key)
        n = key < n->key ? n->l : n->r;
    return n;
}

static void avl_free(avl_t *n)
{
    if (!n)
        return;
    avl_free(n->l);
    avl_free(n->r);
    free(n);
}

typedef struct {
    _Alignas(64) uint64_t rng;
    avl_t *spare;     /* one node kept for the next insert */
    long sink;
} kv_thread_t;

typedef struct {
    avl_t *root;
    long key_range;
    unsigned update_pct;
    unsigned external;
    int execute;      /* --execute 1: critical sections as functions (nl_lock_execute) */
    kv_thread_t *t;
} kv_state_t;

static void kv_thread_init(void *state, int tid)
{
    kv_state_t *st = state;
    st->t[tid].rng = 0x9E3779B97F4A7C15ull * (uint64_t)(tid + 1) + 12345;
}

/* --execute: the three critical sections as functions, so that a delegation
 * lock can run them on a server (an in-place lock acquires, calls, releases) */
typedef struct {
    kv_state_t *st;
    avl_t *node;   /* insert: the new node; remove: the removed one, or NULL */
    long key;
    int used;
} kv_call_t;

static void *kv_insert_cs(void *p)
{
    kv_call_t *c = p;
    c->st->root = avl_insert(c->st->root, c->node, &c->used);
    return p;
}

static void *kv_remove_cs(void *p)
{
    kv_call_t *c = p;
    c->st->root = avl_remove(c->st->root, c->key, &c->node);
    return p;
}

static void *kv_find_cs(void *p)
{
    kv_call_t *c = p;
    avl_t *n = avl_find(c->st->root, c->key);
    return (void *)(intptr_t)(n ? n->val : 0);
}

static void kv_op_execute(kv_state_t *st, kv_thread_t *me, nl_lock_t *lock, long key, unsigned pick)
{
    kv_call_t c = { st, NULL, key, 0 };
    if (pick < st->update_pct && pick % 2 == 0) {
        if (!me->spare && !(me->spare = malloc(sizeof(avl_t))))
            abort();
        me->spare->l = me->spare->r = NULL;
        me->spare->key = key;
        me->spare->val = key;
        me->spare->h = 1;
        c.node = me->spare;
        nl_lock_execute(lock, kv_insert_cs, &c);
        if (c.used)
            me->spare = NULL;
    } else if (pick < st->update_pct) {
        nl_lock_execute(lock, kv_remove_cs, &c);
        if (c.node) {
            if (!me->spare)
                me->spare = c.node;
            else
                free(c.node);
        }
    } else {
        me->sink += (long)(intptr_t)nl_lock_execute(lock, kv_find_cs, &c);
    }
}

static void kv_op(void *state, int tid, nl_lock_t *lock)
{
    kv_state_t *st = state;
    kv_thread_t *me = &st->t[tid];
    uint64_t r = bench_xorshift(&me->rng);
    long key = (long)(r % (uint64_t)st->key_range);
    unsigned pick = (unsigned)((r >> 32) % 100);
    if (st->execute)
        kv_op_execute(st, me, lock, key, pick);
    else if (pick < st->update_pct) {
        if (pick % 2 == 0) { /* insert */
            if (!me->spare && !(me->spare = malloc(sizeof(avl_t))))
                abort();
            me->spare->l = me->spare->r = NULL;
            me->spare->key = key;
            me->spare->val = key;
            me->spare->h = 1;
            int used = 0;
            nl_lock_acquire(lock);
            st->root = avl_insert(st->root, me->spare, &used);
            nl_lock_release(lock);
            if (used)
                me->spare = NULL;
        } else { /* remove */
            avl_t *gone = NULL;
            nl_lock_acquire(lock);
            st->root = avl_remove(st->root, key, &gone);
            nl_lock_release(lock);
            if (gone) {
                if (!me->spare)
                    me->spare = gone;
                else
                    free(gone);
            }
        }
    } else {
        nl_lock_acquire(lock);
        avl_t *n = avl_find(st->root, key);
        me->sink += n ? n->val : 0;
        nl_lock_release(lock);
    }
    /* external work: a pseudo-random number loop outside the lock */
    for (unsigned i = 0; i < st->external; i++)
        me->sink += (long)bench_xorshift(&me->rng) & 1;
}

/* one (threads, lock) run: a map about half full, per-thread records */
static int kv_setup(void *state, int T)
{
    kv_state_t *st = state;
    st->t = aligned_alloc(64, (size_t)T * sizeof(kv_thread_t));
    if (!st->t)
        return ENOMEM;
    memset(st->t, 0, (size_t)T * sizeof(kv_thread_t));
    uint64_t seed = 42;
    st->root = NULL;
    for (long i = 0; i < st->key_range / 2; i++) {
        avl_t *n = calloc(1, sizeof *n);
        if (!n) {
            avl_free(st->root);
            free(st->t);
            return ENOMEM;
        }
        n->key = (long)(bench_xorshift(&seed) % (uint64_t)st->key_range);
        n->val = n->key;
        n->h = 1;
        int used = 0;
        st->root = avl_insert(st->root, n, &used);
        if (!used)
            free(n);
    }
    return 0;
}

static void kv_teardown(void *state, int T)
{
    kv_state_t *st = state;
    for (int i = 0; i < T; i++)
        free(st->t[i].spare);
    free(st->t);
    avl_free(st->root);
}

static void kv_describe(const void *state, const nl_lock_ops_t *lock, char *extra, size_t n)
{
    const kv_state_t *st = state;
    (void)lock;
    snprintf(extra, n, "\"key_range\": %ld, \"update_pct\": %u, \"external_work\": %u, \"execute\": %s",
             st->key_range, st->update_pct, st->external, st->execute ? "true" : "false");
}

static int kv_run(bench_ctx_t *c)
{
    kv_state_t st = {0};
    st.key_range = bench_opt_long(c, "key-range");
    st.update_pct = (unsigned)bench_opt_long(c, "update-pct");
    st.external = (unsigned)bench_opt_long(c, "external-work");
    st.execute = (int)bench_opt_long(c, "execute");
    if (st.key_range < 1 || st.update_pct > 100 || st.execute > 1) {
        snprintf(c->err, sizeof c->err,
                 "bad kvmap parameters: --key-range must be at least 1, --update-pct at most 100 and "
                 "--execute 0 or 1");
        return EINVAL;
    }
    static const bench_sweep_t sweep = { kv_setup, kv_teardown, kv_describe, kv_op, kv_thread_init,
                                         "pthread" };
    return bench_sweep(c, &sweep, &st);
}

static const bench_opt_t kv_opts[] = {
    { "key-range", "1024", "keys are drawn from [0, key-range); the map starts half full" },
    { "update-pct", "20", "share of operations that update (half insert, half remove)" },
    { "external-work", "0", "iterations of pseudo-random work outside the lock per operation" },
    { "execute", "0", "1: critical sections as functions through nl_lock_execute (delegation locks)" },
    { NULL, NULL, NULL },
};

const bench_workload_t bench_kvmap = {
    .name = "kvmap",
    .description = "AVL-tree key-value map under one lock (CNA paper sec. 7.1.1)",
    .opts = kv_opts,
    .default_locks = "all",
    .default_threads = "1,2,4,8",
    .default_duration = "1",
    .run = kv_run,
};
