/*
 * CST-rwsem (Kashyap, Min, Kim, USENIX ATC 2017, section 5.2): a
 * writer-preferred read-write semaphore on top of the CST mutex.
 *
 *  - Writers take the CST mutex (so they wait, spin and park exactly as in
 *    cst_mutex.c, per node), then announce themselves (`writers`), which
 *    stops new readers, and wait, spinning without parking (the paper: a
 *    writer that holds the mutex is the next one in), until every snode's
 *    active-reader count is zero.
 *  - Readers find their node's snode (the mutex's snodes, extended by a reader
 *    cache line), wait while any writer is announced, then increment their
 *    node's active-reader count and check again for a writer (Dekker-style,
 *    sequentially consistent on both sides): the reader count is per node, so
 *    readers of different nodes never share a written cache line.
 *  - A reader leaves by decrementing the count of the node it is on then
 *    (usually the same; it may have moved), so it need not remember where it
 *    entered. Node counts can go negative; the writer waits for their sum
 *    (mod 2^32) to be zero. That sum never misses a reader inside: such a
 *    reader's increment precedes the writer's announcement (else the reader
 *    sees it and backs out on the same node), so every read of the counts
 *    after the announcement sees the increment, and a decrement somewhere
 *    else only ever follows its own increment.
 *  - Waiting readers spin for the load-dependent budget, then park on their
 *    node's reader futex (the per-node reader parking list); writers park in
 *    the mutex's per-node queues (the writer parking list).
 *  - The last writer out wakes one parked reader on each node with parked
 *    readers; that reader wakes the rest of its node (distributed wake-up).
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include "cst_impl.h"

/* The reader/writer handshake is a store-buffering pair on two words: a
 * reader writes its node's count and then reads `writers` (read_enter); a
 * writer writes `writers` and then reads the counts, and the snode list that
 * leads to them (nl_cst_rwsem_down_write). With release/acquire both may
 * read the old values: the reader enters and the writer sees no reader
 * (verify/wmm: broken cst-reader). Those six accesses, and the publication
 * of an snode on the list (nl_cst_snode_get's CAS, seq_cst), are SO: in the
 * single total order at least one side sees the other. Everything else
 * orders by release/acquire (the comments at each). */
#define SO memory_order_seq_cst
/* `writers`: the count of writers in (0 or 1: they hold the mutex) and a bit
 * that parked readers set, so that a leaving writer looks at the per-node
 * parking only when some reader parked */
#define RW_COUNT 0x7fffffffu
#define RW_PARKED 0x80000000u

/* Readers look their snode up from a copy of the list head kept on the
 * readers' line, so that they never read the line of the mutex's global
 * queue word, which every writer writes. */
static __attribute__((noinline)) cst_rsnode_t *rsnode_get_slow(nl_cst_rwsem_t *l, int node)
{
    for (cst_snode_t *s = atomic_load_explicit(&l->rhead, memory_order_acquire); s; s = s->next)
        if (s->node == node)
            return (cst_rsnode_t *)s;
    cst_snode_t *s = nl_cst_snode_get(&l->wlock, node, sizeof(cst_rsnode_t));
    atomic_store_explicit(&l->rhead, atomic_load_explicit(&l->wlock.snodes, memory_order_acquire),
                          memory_order_release);
    return (cst_rsnode_t *)s;
}

static inline cst_rsnode_t *rsnode_get(nl_cst_rwsem_t *l)
{
    int node = nl_self_node(nl_self());
    cst_snode_t *s = atomic_load_explicit(&l->rhead, memory_order_acquire);
    if (NL_LIKELY(s && s->node == node))
        return (cst_rsnode_t *)s;
    return rsnode_get_slow(l, node);
}

/* SO: the writer's read of the handshake: an snode a reader counted itself
 * on must be on the list the writer walks (it was published seq_cst before
 * the reader's increment) */
static cst_rsnode_t *rs_first(nl_cst_rwsem_t *l)
{
    return (cst_rsnode_t *)atomic_load_explicit(&l->wlock.snodes, SO);
}
static cst_rsnode_t *rs_next(cst_rsnode_t *rs) { return (cst_rsnode_t *)rs->m.next; }

/* ---- readers ------------------------------------------------------------ */
static inline int read_enter(nl_cst_rwsem_t *l, cst_rsnode_t *rs)
{
    if (atomic_load_explicit(&l->writers, memory_order_relaxed) & RW_COUNT)
        return EBUSY;
    /* SO, SO: the reader's write and read of the handshake */
    atomic_fetch_add_explicit(&rs->readers, 1, SO);
    if (!(atomic_load_explicit(&l->writers, SO) & RW_COUNT))
        return 0; /* acquire: after the last writer's section */
    /* a writer came first: back out (release: after the increment, which the
     * writer then sees if it sees this) */
    atomic_fetch_sub_explicit(&rs->readers, 1, memory_order_release);
    return EBUSY;
}

/* until no writer is in or waiting: spin, then park on this node's reader
 * list until the last writer leaves */
static void read_wait(nl_cst_rwsem_t *l, cst_rsnode_t *rs, nl_waiter_t *w)
{
    while (!nl_wait_due(w)) {
        if (!(atomic_load_explicit(&l->writers, memory_order_relaxed) & RW_COUNT))
            return;
        nl_wait_step(w);
    }
    /* Parking needs no total order: `writers` changes by read-modify-writes
     * only, so this reader's RW_PARKED (release: after its count in
     * rparked and its read of rseq) is either before the last writer's
     * decrement, which then sees it (acquire), reads rparked and wakes this
     * node, or after it, and the read of `writers` below sees no writer
     * (or a later writer, whose decrement sees RW_PARKED). The rseq read
     * (program order before the release) happens before the increment of
     * any wake-up this reader needs: the futex wait finds rseq changed or
     * is woken. */
    uint32_t seq = atomic_load_explicit(&rs->rseq, memory_order_relaxed);
    atomic_fetch_add_explicit(&rs->rparked, 1, memory_order_relaxed);
    atomic_fetch_or_explicit(&l->writers, RW_PARKED, memory_order_acq_rel);
    if (atomic_load_explicit(&l->writers, memory_order_acquire) & RW_COUNT)
        nl_wait_park(w, &rs->rseq, seq);
    atomic_fetch_sub_explicit(&rs->rparked, 1, memory_order_relaxed);
    /* the reader a writer woke wakes the rest of its node */
    if (atomic_load_explicit(&rs->rwake, memory_order_relaxed) &&
        atomic_exchange_explicit(&rs->rwake, 0, memory_order_acq_rel))
        nl_wait_wake(&rs->rseq, INT_MAX);
}

static __attribute__((noinline)) void read_slow(nl_cst_rwsem_t *l, cst_rsnode_t *rs)
{
    nl_waiter_t w;
    nl_wait_begin(&w, l, NULL, false); /* readers do not queue: no gate */
    do
        read_wait(l, rs, &w);
    while (read_enter(l, rs) != 0);
    nl_wait_end(&w);
}

void nl_cst_rwsem_down_read(nl_cst_rwsem_t *l)
{
    cst_rsnode_t *rs = rsnode_get(l);
    if (NL_UNLIKELY(read_enter(l, rs) != 0))
        read_slow(l, rs);
}

int nl_cst_rwsem_down_read_trylock(nl_cst_rwsem_t *l)
{
    cst_rsnode_t *rs = rsnode_get(l);
    return read_enter(l, rs);
}

void nl_cst_rwsem_up_read(nl_cst_rwsem_t *l)
{
    /* the node we are on now: the writer sums the counts of all nodes
     * (release: the section before the writer that sees the count drop) */
    atomic_fetch_sub_explicit(&rsnode_get(l)->readers, 1, memory_order_release);
}

/* ---- writers ------------------------------------------------------------ */
static int readers_inside(nl_cst_rwsem_t *l)
{
    uint32_t sum = 0; /* mod 2^32: node counts may be negative, see the top */
    /* SO: the writer's read of the handshake (and acquire: after the
     * sections of the readers it sees gone) */
    for (cst_rsnode_t *rs = rs_first(l); rs; rs = rs_next(rs))
        sum += (uint32_t)atomic_load_explicit(&rs->readers, SO);
    return sum != 0;
}

static void wake_readers(nl_cst_rwsem_t *l)
{
    /* after the acquire of writer_leave's decrement: every reader whose
     * RW_PARKED it saw is counted in rparked (read_wait) */
    for (cst_rsnode_t *rs = rs_first(l); rs; rs = rs_next(rs)) {
        if (atomic_load_explicit(&rs->rparked, memory_order_relaxed) == 0)
            continue;
        atomic_store_explicit(&rs->rwake, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&rs->rseq, 1, memory_order_release);
        nl_wait_wake(&rs->rseq, 1); /* the first one; it wakes its node */
    }
}

static void writer_leave(nl_cst_rwsem_t *l)
{
    /* release: the section before a reader that sees no writer; acquire:
     * after the rparked counts of the readers whose RW_PARKED it sees */
    uint32_t old = atomic_fetch_sub_explicit(&l->writers, 1, memory_order_acq_rel);
    if ((old & RW_COUNT) == 1 && (old & RW_PARKED)) {
        atomic_fetch_and_explicit(&l->writers, ~RW_PARKED, memory_order_acq_rel);
        wake_readers(l);
    }
}

void nl_cst_rwsem_down_write(nl_cst_rwsem_t *l)
{
    nl_cst_lock_sz(&l->wlock, sizeof(cst_rsnode_t));
    /* SO: the writer's write of the handshake; new readers wait from now on */
    atomic_fetch_add_explicit(&l->writers, 1, SO);
    /* readers already inside drain; the writer does not park here */
    if (NL_LIKELY(!readers_inside(l)))
        return;
    nl_waiter_t w;
    nl_waiter_init(&w);
    while (readers_inside(l))
        nl_wait_step(&w);
}

int nl_cst_rwsem_down_write_trylock(nl_cst_rwsem_t *l)
{
    if ((atomic_load_explicit(&l->writers, memory_order_relaxed) & RW_COUNT) || readers_inside(l))
        return EBUSY; /* cheap checks first: no lock traffic for a try bound to fail */
    if (nl_cst_trylock_sz(&l->wlock, sizeof(cst_rsnode_t)) != 0)
        return EBUSY;
    atomic_fetch_add_explicit(&l->writers, 1, SO); /* SO: as in down_write */
    if (!readers_inside(l))
        return 0;
    nl_cst_mutex_unlock(&l->wlock);
    writer_leave(l);
    return EBUSY;
}

void nl_cst_rwsem_up_write(nl_cst_rwsem_t *l)
{
    nl_cst_mutex_unlock(&l->wlock);
    writer_leave(l);
}

int nl_cst_rwsem_init(nl_cst_rwsem_t *l, const nl_attr_t *attr)
{
    memset(l, 0, sizeof *l);
    return nl_cst_mutex_init(&l->wlock, attr);
}

void nl_cst_rwsem_destroy(nl_cst_rwsem_t *l)
{
    atomic_store_explicit(&l->rhead, NULL, memory_order_relaxed);
    nl_cst_mutex_destroy(&l->wlock);
}

size_t nl_cst_rwsem_footprint(const nl_cst_rwsem_t *l)
{
    return sizeof *l + nl_cst_snode_count(&l->wlock) * sizeof(cst_rsnode_t);
}

static int op_init(void *l, const nl_attr_t *a) { return nl_cst_rwsem_init(l, a); }
static void op_destroy(void *l) { nl_cst_rwsem_destroy(l); }
static void op_acquire(void *l) { nl_cst_rwsem_down_write(l); }
static int op_try(void *l) { return nl_cst_rwsem_down_write_trylock(l); }
static void op_release(void *l) { nl_cst_rwsem_up_write(l); }
static void op_read_acquire(void *l) { nl_cst_rwsem_down_read(l); }
static int op_read_try(void *l) { return nl_cst_rwsem_down_read_trylock(l); }
static void op_read_release(void *l) { nl_cst_rwsem_up_read(l); }
static size_t op_footprint(const void *l) { return nl_cst_rwsem_footprint(l); }
static size_t op_bytes_at_nodes(unsigned nodes)
{
    return sizeof(nl_cst_rwsem_t) + (size_t)nodes * sizeof(cst_rsnode_t);
}

NL_HIDDEN const nl_lock_ops_t nl_ops_cst_rwsem = {
    .name = "cst-rwsem",
    .description = "CST writer-preferred NUMA-aware read-write semaphore, per-node readers and parking",
    .paper = "Kashyap et al. ATC'17 (CST) sec. 4, 5.2",
    .size = sizeof(nl_cst_rwsem_t), .align = _Alignof(nl_cst_rwsem_t),
    .props = NL_PROP_RW | NL_PROP_BLOCKING | NL_PROP_NUMA_AWARE | NL_PROP_ZERO_INIT |
             NL_PROP_NEEDS_DESTROY,
    .init = op_init, .destroy = op_destroy,
    .acquire = op_acquire, .try_acquire = op_try, .release = op_release,
    .read_acquire = op_read_acquire, .read_try_acquire = op_read_try,
    .read_release = op_read_release,
    .footprint = op_footprint, .bytes_at_nodes = op_bytes_at_nodes,
};
