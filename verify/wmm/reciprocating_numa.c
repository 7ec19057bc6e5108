/* reciprocating-numa (src/locks/reciprocating_numa.c), node-free form (the
 * node from the thread's pool). Threads alternate between two nodes, so
 * with 3 threads a segment turn finds a waiter of the holder's node and one
 * of the other: the other is deferred and travels with the lock, or the
 * lock moves. The fairness rule is the random one, each draw a coin the
 * checker chooses (env.c): every turn with another node waiting explores
 * both staying and moving. */
#define NL_VERIFY_COINS 1
#include "env.h"
#include "locks/cna.c"
#define op_acquire rn_op_acquire
#define op_try rn_op_try
#define op_release rn_op_release
#define op_held rn_op_held
#include "locks/reciprocating_numa.c"
#include "env.c"

#define NL_LOCK_T nl_recip_numa_t
#define NL_INIT(l)                                                                    \
    (atomic_store_explicit(&nl_cna_mask, 1, memory_order_relaxed),                    \
     atomic_store_explicit(&nl_cna_mode, NL_CNA_MODE_RANDOM, memory_order_relaxed))
#define NL_ACQUIRE(l) nl_recip_numa_acquire(l)
#define NL_RELEASE(l) nl_recip_numa_release(l)
#include "client.h"
