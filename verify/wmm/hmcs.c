/* HMCS (src/locks/hmcs.c): the cohort composition with an MCS lock per
 * node and an MCS lock over the nodes, as cohort.c's check (3 threads on 2
 * nodes, local passes bounded to 2). */
#include "env.h"
#include "locks/hmcs.c"
#include "env.c"

#define NL_LOCK_T nl_hmcs_t
#define NL_INIT(l) hm_init(l, &(nl_attr_t){ .local_passes = 2 })
#define NL_ACQUIRE(l) hm_acquire(l)
#define NL_RELEASE(l) hm_release(l)
#include "client.h"
