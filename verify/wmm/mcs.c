/* MCS (src/locks/mcs.c, queue of src/locks/mcs_queue.h), paper form: each
 * thread brings its node. */
#include "env.h"
#include "locks/mcs.c"
#include "env.c"

#define NL_LOCK_T nl_mcs_t
#define NL_INIT(l) ((void)0)
static nl_mcs_node_t nodes[NL_VERIFY_MAX_THREADS];
#define NL_ACQUIRE(l) nl_mcs_lock(l, &nodes[tid])
#define NL_RELEASE(l) nl_mcs_unlock(l, &nodes[tid])
#include "client.h"
