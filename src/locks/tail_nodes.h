/*
 * Queue nodes named by a 16-bit tail (not installed): the one node table of
 * the 4-byte queue locks, qspinlock (and qspinlock-cna) and shfl (and
 * shfl-block), after Linux's per-CPU MCS nodes.
 *
 * A lock word keeps the tail of its queue in its upper half-word: (thread
 * slot + 1) in bits 18-31, the slot's node index in bits 16-17; 0 is "no
 * tail". Each thread slot owns a block of NL_TAIL_NODES cache-line nodes,
 * allocated the first time the slot queues and kept for the process's life
 * (a recycled slot reuses its block), so any thread finds a node from a tail
 * value and a lock needs no per-thread storage.
 *
 * Invariants: only the thread that holds a slot allocates its block and
 * takes or returns its nodes (`count`, in LIFO order: a thread's queue waits
 * nest); a node is in use from nl_tail_get until nl_tail_put, and other
 * threads reach it only through a tail value or a `next` link published
 * while it is in use.
 */
#ifndef NL_TAIL_NODES_H
#define NL_TAIL_NODES_H

#include "cna_impl.h"

#define NL_TAIL_NODES 4
#define NL_TAIL_IDX_SHIFT 16
#define NL_TAIL_SLOT_SHIFT 18
#define NL_TAIL_MASK 0xffff0000u

_Static_assert(NL_MAX_THREADS + 1 <= (1 << (32 - NL_TAIL_SLOT_SHIFT)), "thread slot fits the tail");

typedef struct nl_tail_node {
    nl_cna_node_t c;            /* queue link, grant word; CNA and shfl use the rest */
    _Atomic uint32_t shuffler;  /* shfl: the shuffler role was passed to this waiter */
    uint32_t batch;             /* shfl: 0 not placed by a shuffler, else its rank */
    uint32_t code;              /* this node's tail value */
} __attribute__((aligned(64))) nl_tail_node_t;

typedef struct nl_tail_block {
    nl_tail_node_t node[NL_TAIL_NODES];
    uint32_t count;             /* nodes in use (owner thread only) */
} nl_tail_block_t;

NL_HIDDEN extern _Atomic(nl_tail_block_t *) nl_tail_blocks[NL_MAX_THREADS];
NL_HIDDEN nl_tail_block_t *nl_tail_block_slow(int slot);
/* nodes a thread may use at once (tests lower it to 0 to drive every
 * contended acquisition through the locks' spin-on-the-word fallback) */
NL_HIDDEN extern _Atomic uint32_t nl_qs_max_nodes;

static inline uint32_t nl_tail_encode(int slot, uint32_t idx)
{
    return ((uint32_t)(slot + 1) << NL_TAIL_SLOT_SHIFT) | (idx << NL_TAIL_IDX_SHIFT);
}

static inline nl_tail_node_t *nl_tail_decode(uint32_t tail)
{
    uint32_t slot = (tail >> NL_TAIL_SLOT_SHIFT) - 1;
    uint32_t idx = (tail >> NL_TAIL_IDX_SHIFT) & (NL_TAIL_NODES - 1);
    nl_tail_block_t *b = atomic_load_explicit(&nl_tail_blocks[slot], memory_order_acquire);
    return &b->node[idx];
}

/* A node for the calling thread's next queue wait, its `code` set; NULL when
 * the thread has no slot or nests deeper than the limit (the caller then
 * spins on the lock word, as Linux does past its 4 levels). */
static inline nl_tail_node_t *nl_tail_get(nl_self_t *s)
{
    if (NL_UNLIKELY(s->id < 0))
        return NULL;
    nl_tail_block_t *b = atomic_load_explicit(&nl_tail_blocks[s->id], memory_order_acquire);
    if (NL_UNLIKELY(!b) && !(b = nl_tail_block_slow(s->id)))
        return NULL;
    if (NL_UNLIKELY(b->count >= atomic_load_explicit(&nl_qs_max_nodes, memory_order_relaxed)))
        return NULL;
    return &b->node[b->count++];
}

/* Give back the node of the calling thread's innermost queue wait. */
static inline void nl_tail_put(nl_self_t *s)
{
    atomic_load_explicit(&nl_tail_blocks[s->id], memory_order_relaxed)->count--;
}

static inline nl_tail_node_t *nl_tail_next(nl_tail_node_t *n)
{
    return (nl_tail_node_t *)atomic_load_explicit(&n->c.next, memory_order_acquire);
}

/* Swap our tail into the word's upper half-word, keeping the lower half
 * (lock byte and flags) as it is: one exchange, as Linux's xchg_tail (a CAS
 * loop on the whole word can fail for as long as others change the lower
 * half). Returns the previous tail (upper half, in place). */
static inline uint32_t nl_tail_xchg(_Atomic uint32_t *word, uint32_t tail)
{
#if defined(NL_VERIFY)
    /* the model checker's build (verify/wmm), which has no mixed-size
     * accesses: the same exchange of the upper half as a CAS loop on the
     * word (what the kernel's qspinlock does where the tail has no half-word
     * of its own) */
    uint32_t old = atomic_load_explicit(word, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(word, &old, (old & ~NL_TAIL_MASK) | (tail & NL_TAIL_MASK),
                                                  memory_order_acq_rel, memory_order_relaxed))
        ;
    return old & NL_TAIL_MASK;
#else
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint16_t *half = (uint16_t *)(void *)word + 1;
#else
    uint16_t *half = (uint16_t *)(void *)word;
#endif
    return (uint32_t)__atomic_exchange_n(half, (uint16_t)(tail >> 16), __ATOMIC_ACQ_REL) << 16;
#endif
}

#endif
