/* The generic handle: an ops table, optional statistics, the lock storage. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "stats.h"

/* Read acquisitions are counted in per-thread shards, not in nl_stats_t's
 * shared counter: readers of a read-write lock never write a common line
 * otherwise (cst-rwsem keeps its reader counts per node), and a shared
 * statistics counter made every read acquisition bounce one (9 % of the
 * cycles of rwhash, 10 threads). Exclusive acquisitions keep the shared block:
 * it is written by the holder, under the lock. */
#define NL_READ_SHARDS 16
typedef struct {
    _Alignas(NL_CACHELINE) _Atomic uint64_t n;
} nl_read_shard_t;

typedef struct {
    nl_stats_t s;
    nl_read_shard_t reads[NL_READ_SHARDS];
} nl_stats_block_t;

struct nl_lock {
    const nl_lock_ops_t *ops;
    nl_stats_t *stats;       /* &block->s, or NULL */
    nl_stats_block_t *block;
    void *storage;
    _Alignas(NL_CACHELINE) unsigned char inline_storage[];
};

nl_lock_t *nl_lock_create_ops(const nl_lock_ops_t *ops, const nl_attr_t *attr)
{
    if (!ops) {
        errno = ENOENT;
        return NULL;
    }
    size_t align = ops->align > NL_CACHELINE ? ops->align : NL_CACHELINE;
    size_t head = (sizeof(struct nl_lock) + align - 1) / align * align;
    size_t total = head + (ops->size + align - 1) / align * align;
    nl_lock_t *l = NULL;
    if (posix_memalign((void **)&l, align, total) || !l) {
        errno = ENOMEM;
        return NULL;
    }
    memset(l, 0, total);
    l->ops = ops;
    l->storage = (unsigned char *)l + head;
    if (attr && attr->stats) {
        if (posix_memalign((void **)&l->block, NL_CACHELINE, sizeof *l->block)) {
            free(l);
            errno = ENOMEM;
            return NULL;
        }
        memset(l->block, 0, sizeof *l->block);
        l->stats = &l->block->s;
        nl_stats_init(l->stats);
    }
    if (ops->init) {
        int rc = ops->init(l->storage, attr);
        if (rc) {
            free(l->block);
            free(l);
            errno = rc;
            return NULL;
        }
    }
    return l;
}

nl_lock_t *nl_lock_create(const char *algorithm, const nl_attr_t *attr)
{
    const nl_lock_ops_t *ops = algorithm ? nl_lock_find(algorithm) : NULL;
    if (!ops) {
        errno = ENOENT;
        return NULL;
    }
    return nl_lock_create_ops(ops, attr);
}

void nl_lock_destroy(nl_lock_t *l)
{
    if (!l)
        return;
    if (l->ops->destroy)
        l->ops->destroy(l->storage);
    free(l->block);
    free(l);
}

/* With statistics, the lock is acquired exactly as without: "contended" is
 * read from the thread's waiting counters (the lock's slow path counts
 * itself), not from a trylock first, which would change what is measured.
 * A foreign lock (glibc's) has a slow path the counters do not see: it is
 * contended when it was taken at arrival (one load of its word). */
void nl_lock_acquire(nl_lock_t *l)
{
    if (NL_LIKELY(!l->stats)) {
        l->ops->acquire(l->storage);
        return;
    }
    nl_self_t *s = nl_self();
    nl_wait_counts_t before = s->wc;
    bool taken = (l->ops->props & NL_PROP_FOREIGN) && l->ops->held(l->storage);
    l->ops->acquire(l->storage);
    nl_stats_on_acquire(l->stats, taken || s->wc.slow != before.slow);
    nl_stats_add_waiting(l->stats, &before);
}

int nl_lock_try(nl_lock_t *l)
{
    int rc = l->ops->try_acquire(l->storage);
    if (rc == 0 && l->stats)
        nl_stats_on_acquire(l->stats, false);
    return rc;
}

void nl_lock_release(nl_lock_t *l)
{
    if (NL_LIKELY(!l->stats)) {
        l->ops->release(l->storage);
        return;
    }
    nl_wait_counts_t before = nl_self()->wc;
    l->ops->release(l->storage);
    nl_stats_add_waiting(l->stats, &before);
}

static inline void count_read(nl_lock_t *l)
{
    unsigned shard = (unsigned)nl_self()->id % NL_READ_SHARDS;
    atomic_fetch_add_explicit(&l->block->reads[shard].n, 1, memory_order_relaxed);
}

void nl_lock_read_acquire(nl_lock_t *l)
{
    if (!l->ops->read_acquire) {
        nl_lock_acquire(l);
        return;
    }
    if (!l->stats) {
        l->ops->read_acquire(l->storage);
        return;
    }
    nl_wait_counts_t before = nl_self()->wc;
    l->ops->read_acquire(l->storage);
    count_read(l);
    nl_stats_add_waiting(l->stats, &before);
}

int nl_lock_read_try(nl_lock_t *l)
{
    if (!l->ops->read_try_acquire)
        return nl_lock_try(l);
    int rc = l->ops->read_try_acquire(l->storage);
    if (rc == 0 && l->stats)
        count_read(l);
    return rc;
}

void nl_lock_read_release(nl_lock_t *l)
{
    if (l->ops->read_release)
        l->ops->read_release(l->storage);
    else
        l->ops->release(l->storage);
}

/* A delegation lock's critical section may run on a server thread: the
 * statistics are counted inside it, where the lock is held exclusively. */
typedef struct {
    void *(*fn)(void *);
    void *arg;
    nl_stats_t *stats;
} nl_exec_counted_t;

static void *exec_counted(void *p)
{
    nl_exec_counted_t *c = p;
    nl_stats_on_acquire(c->stats, false);
    return c->fn(c->arg);
}

void *nl_lock_execute(nl_lock_t *l, void *(*fn)(void *), void *arg)
{
    if (l->ops->execute) {
        if (NL_LIKELY(!l->stats))
            return l->ops->execute(l->storage, fn, arg);
        nl_exec_counted_t c = { fn, arg, l->stats };
        return l->ops->execute(l->storage, exec_counted, &c);
    }
    nl_lock_acquire(l);
    void *r = fn(arg);
    nl_lock_release(l);
    return r;
}

const nl_lock_ops_t *nl_lock_ops(const nl_lock_t *l) { return l->ops; }
void *nl_lock_storage(nl_lock_t *l) { return l->storage; }

int nl_lock_stats(const nl_lock_t *l, nl_stats_snapshot_t *out)
{
    if (!l->stats)
        return EINVAL;
    nl_stats_read(l->stats, out);
    for (int i = 0; i < NL_READ_SHARDS; i++)
        out->read_acquisitions += atomic_load_explicit(&l->block->reads[i].n, memory_order_relaxed);
    return 0;
}

size_t nl_lock_footprint(const nl_lock_t *l)
{
    return l->ops->footprint ? l->ops->footprint(l->storage) : l->ops->size;
}
