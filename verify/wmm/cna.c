/* CNA and cna-opt (src/locks/cna.c, src/locks/cna_impl.h; fast paths in
 * include/numalock/cna.h), paper form. Threads alternate between two nodes,
 * so with 3 threads a waiter of the holder's node can be picked past a
 * remote one, which goes to the secondary queue. The fairness rule is the
 * random one, each draw a coin the checker chooses (env.c): every
 * hand-over explores both keeping the lock local and flushing the
 * secondary queue. With NL_CNA_OPT, cna-opt's release (the shuffle
 * reduction: both the scan and its skip). */
#define NL_VERIFY_COINS 1
#include "env.h"
#include "locks/cna.c"
#include "env.c"

#define NL_LOCK_T nl_cna_t
#define NL_INIT(l)                                                                    \
    (atomic_store_explicit(&nl_cna_mask, 1, memory_order_relaxed),                    \
     atomic_store_explicit(&nl_cna_mode, NL_CNA_MODE_RANDOM, memory_order_relaxed))
static nl_cna_node_t nodes[NL_VERIFY_MAX_THREADS];
#define NL_ACQUIRE(l) nl_cna_lock(l, &nodes[tid])
#ifdef NL_CNA_OPT
#define NL_RELEASE(l) nl_cna_opt_unlock(l, &nodes[tid])
#else
#define NL_RELEASE(l) nl_cna_unlock(l, &nodes[tid])
#endif
#include "client.h"
