/* The cohort composition (src/locks/cohort.h) as c-bo-mcs (src/locks/
 * cohort.c: a test-and-set global lock, an MCS lock per node), or with
 * NL_COHORT_TKT as c-tkt-tkt (ticket locks at both levels). Threads
 * alternate between two nodes; a node's lock may pass the global lock
 * within the node at most twice before it must release it, so both the
 * local pass and the global release are explored. */
#include "env.h"
#include "locks/cohort.c"
#include "env.c"

#ifdef NL_COHORT_TKT
#define NL_LOCK_T nl_ctkttkt_t
#define NL_INIT(l) ct_init(l, &(nl_attr_t){ .local_passes = 2 })
#define NL_ACQUIRE(l) ct_acquire(l)
#define NL_RELEASE(l) ct_release(l)
#else
#define NL_LOCK_T nl_cbomcs_t
#define NL_INIT(l) cb_init(l, &(nl_attr_t){ .local_passes = 2 })
#define NL_ACQUIRE(l) cb_acquire(l)
#define NL_RELEASE(l) cb_release(l)
#endif
#include "client.h"
