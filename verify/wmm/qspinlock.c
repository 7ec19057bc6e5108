/* qspinlock (src/locks/qspinlock.c, the tail nodes of
 * src/locks/tail_nodes.h; fast paths in include/numalock/cna.h): the
 * locked byte, the pending bit and the tail in one word. With NL_QS_CNA,
 * qspinlock-cna (the queue's hand-over is CNA's, as cna.c). The mixed-size
 * steps (the locked byte's store, the tail's half-word exchange) are checked
 * in their word-wide forms (NL_VERIFY). */
#include "env.h"
#include "locks/qspinlock.c"
#include "env.c"

/* The tail nodes' table (tail_nodes.c allocates each thread's block; here
 * they are static, so zeroed without a memset the checker cannot follow). */
_Atomic(nl_tail_block_t *) nl_tail_blocks[NL_MAX_THREADS];
_Atomic uint32_t nl_qs_max_nodes = NL_TAIL_NODES;
static nl_tail_block_t verify_blocks[NL_VERIFY_MAX_THREADS];
nl_tail_block_t *nl_tail_block_slow(int slot)
{
    nl_tail_block_t *b = &verify_blocks[slot];
    for (uint32_t i = 0; i < NL_TAIL_NODES; i++)
        b->node[i].code = nl_tail_encode(slot, i);
    atomic_store_explicit(&nl_tail_blocks[slot], b, memory_order_release);
    return b;
}

/* CNA's fairness rule (its settings live in cna.c, whose operation tables
 * would clash with qspinlock.c's in one translation unit): the random rule
 * with an arbitrary draw, as in cna.c's check */
_Atomic int nl_cna_mode = NL_CNA_MODE_RANDOM;
_Atomic uint64_t nl_cna_limit_ns, nl_cna_mask = 1;
int nl_cna_fairness_init(void) { return NL_CNA_MODE_RANDOM; }

#define NL_LOCK_T nl_qspinlock_t
/* the pending waiter lets thieves in for one look, then sets no-steal */
#define NL_INIT(l) (qs_pending_patience = 1)
#ifdef NL_QS_CNA
#define NL_ACQUIRE(l) nl_qspin_cna_lock(l)
#define NL_RELEASE(l) nl_qspin_cna_unlock(l)
#else
#define NL_ACQUIRE(l) nl_qspin_lock(l)
#define NL_RELEASE(l) nl_qspin_unlock(l)
#endif
#include "client.h"
