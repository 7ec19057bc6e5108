/* qspinlock (src/locks/qspinlock.c, the tail nodes of
 * src/locks/tail_nodes.h; fast paths in include/numalock/cna.h): the
 * locked byte, the pending bit and the tail in one word. With NL_QS_CNA,
 * qspinlock-cna (the queue's hand-over is CNA's, as cna.c). The mixed-size
 * steps (the locked byte's store, the tail's half-word exchange) are checked
 * in their word-wide forms (NL_VERIFY). */
#ifdef NL_QS_CNA
#define NL_VERIFY_COINS 1
#endif
#include "env.h"
#include "locks/qspinlock.c"
#include "locks/tail_nodes.c"
#include "env.c"

/* CNA's fairness rule (its settings live in cna.c, whose operation tables
 * would clash with qspinlock.c's in one translation unit): the random rule,
 * each draw a coin the checker chooses, as in cna.c's check */
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
