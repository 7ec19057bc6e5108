/* CST mutex (src/locks/cst_mutex.c): per-node snodes allocated lazily (the
 * pool allocator of env.h), published on the snode list and in the
 * `present` bitmask; an MCS queue of snodes for the global lock
 * (src/locks/mcs_queue.h); per snode a queue of waiters, passed to a
 * spinning waiter (UW -> L), with NL_VERIFY_PARK skipping a parked one (PW),
 * which is taken out of the queue and woken to re-queue (R). One round per
 * thread, local_passes 1 (the second holder of a node's tenure releases the
 * global lock first when the other node waits). Where the run starts from
 * (CST_VERIFY_WARM: main takes and releases the lock on that many nodes
 * first, the last on node 0, so that node's snode keeps the global lock idle
 * while it is the only one):
 *   CST_VERIFY_WARM=1: node 0's snode exists and keeps the global lock idle;
 *     a thread of node 1 allocates and publishes the second snode, and it or
 *     the releasing holder of node 0 revokes the idle global lock (the
 *     `present`/local-tail Dekker pair), then the global hand-over.
 *   CST_VERIFY_WARM=2, 3 threads: both snodes exist; two threads of node 0
 *     and one of node 1: the local pass, the cohort release, the global
 *     queue.
 *   CST_VERIFY_ONE_NODE (every thread on node 0), from no snode: two threads
 *     race to allocate the node's snode (one waits for the other's claim in
 *     `present`), then the local queue alone with its idle keep; with
 *     NL_VERIFY_PARK the waiter parks, is skipped, woken with R and
 *     re-queues.
 *   CST_VERIFY_TRY (with CST_VERIFY_WARM=2): every thread tries first
 *     (nl_cst_mutex_trylock: the local tail, then the global queue's, giving
 *     the local lock back when the global one is taken) and blocks only when
 *     the try fails.
 * The clock of the verification build never advances: the heartbeat and
 * starvation rules (CST_SKIP, the pass to a parked waiter, the early wake of
 * the parked list) are not explored. */
#include "env.h"
#include "locks/cst_mutex.c"
#include "env.c"

#ifndef CST_VERIFY_WARM
#define CST_VERIFY_WARM 0
#endif
static void cst_verify_init(nl_cst_mutex_t *l)
{
    nl_cst_mutex_init(l, &(nl_attr_t){ .local_passes = 1 });
    for (int n = CST_VERIFY_WARM - 1; n >= 0; n--) {
        nl_verify_set_node(n, n);
        nl_cst_mutex_lock(l);
        nl_cst_mutex_unlock(l);
    }
}

#ifdef CST_VERIFY_ONE_NODE
#define NL_NODE_OF(tid) 0
#endif
#define NL_LOCK_T nl_cst_mutex_t
#define NL_INIT(l) cst_verify_init(l)
#ifdef CST_VERIFY_TRY
/* every thread tries first, and blocks only when the try fails */
#define NL_ACQUIRE(l) (nl_cst_mutex_trylock(l) == 0 ? (void)0 : nl_cst_mutex_lock(l))
#else
#define NL_ACQUIRE(l) nl_cst_mutex_lock(l)
#endif
#define NL_RELEASE(l) nl_cst_mutex_unlock(l)
#include "client.h"
