/* hmcs-n, or with NL_TKT_N c-tkt-n (src/locks/hmcs.c): the cohort
 * composition over every level of the topology, here two (NL_VERIFY_LEVELS
 * in env.c): a lock per node, one for the domain holding both nodes, the
 * root. Threads alternate between the nodes, so 2 threads meet at the
 * domain lock (passed there with the root still held, and the root
 * released by a thread other than the one that took it); with NL_ONE_NODE
 * every thread is on node 0 and they meet at its lock (passed within the
 * node, the levels above held). With 3 threads two share a node and the
 * third meets them above. Passes are bounded to 2 at every level, so both
 * the pass and the release are explored. */
#define NL_VERIFY_LEVELS 2
/* with the root taken alone (NL_HN_ALONE, as built): thread 0 comes twice,
 * so that whichever thread took the root alone meets one that climbs, and
 * two climbers meet below the root */
#if !defined(NL_HN_ALONE) || NL_HN_ALONE
#define NL_ROUNDS_OF(tid) ((tid) == 0 ? 2 : 1)
#endif
#ifdef NL_ONE_NODE
#define NL_NODE_OF(tid) 0
#endif
#include "env.h"
#include "locks/hmcs.c"
#include "env.c"

#define NL_LOCK_T nl_hmcs_t
#define NL_INIT(l) hn_init(l, &(nl_attr_t){ .local_passes = 2 })
#ifdef NL_TKT_N
#define NL_ACQUIRE(l) tn_acquire(l)
#define NL_RELEASE(l) tn_release(l)
#else
#define NL_ACQUIRE(l) hn_acquire(l)
#define NL_RELEASE(l) hn_release(l)
#endif
#include "client.h"
