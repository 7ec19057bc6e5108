/* CST rw-semaphore (src/locks/cst_rwsem.c over the CST mutex of
 * src/locks/cst_mutex.c, checked on its own by cst_mutex.c): writers take
 * the mutex, announce themselves in `writers` and wait for the per-node
 * reader counts to sum to zero; readers count themselves on their node and
 * back out while a writer is announced (the Dekker pair: a reader's count
 * then `writers`, a writer's `writers` then the counts), spin, and with
 * NL_VERIFY_PARK park on their node's reader futex until the last writer
 * wakes one reader per node, which wakes the rest (client_rw.h: thread 0
 * writes, the others read).
 *   CST_VERIFY_WARM=1: node 0's snode exists (main read once there); the
 *     reader of node 1 allocates its node's snode and publishes the
 *     readers' copy of the list head while the writer runs.
 *   CST_VERIFY_WARM=2: both snodes exist (3 threads: readers on both
 *     nodes).
 *   CST_VERIFY_TRY: every thread tries first (a reader's try is its entry
 *     step; a writer's try takes the mutex by its try and backs out, mutex
 *     and announcement, when readers are inside) and blocks only when the
 *     try fails. */
#include "env.h"
/* both files define the operation table's static functions: the mutex's
 * renamed, so that the two compile into one program */
#define op_init cst_mutex_op_init
#define op_destroy cst_mutex_op_destroy
#define op_acquire cst_mutex_op_acquire
#define op_try cst_mutex_op_try
#define op_release cst_mutex_op_release
#define op_footprint cst_mutex_op_footprint
#define op_bytes_at_nodes cst_mutex_op_bytes_at_nodes
#include "locks/cst_mutex.c"
#undef op_init
#undef op_destroy
#undef op_acquire
#undef op_try
#undef op_release
#undef op_footprint
#undef op_bytes_at_nodes
#include "locks/cst_rwsem.c"
#include "env.c"

#ifndef CST_VERIFY_WARM
#define CST_VERIFY_WARM 0
#endif
static void cst_verify_init(nl_cst_rwsem_t *l)
{
    nl_cst_rwsem_init(l, &(nl_attr_t){ .local_passes = 1 });
    for (int n = CST_VERIFY_WARM - 1; n >= 0; n--) {
        nl_verify_set_node(n, n);
        nl_cst_rwsem_down_read(l);
        nl_cst_rwsem_up_read(l);
    }
}

#define NL_RW_T nl_cst_rwsem_t
#define NL_RW_INIT(l) cst_verify_init(l)
#ifdef CST_VERIFY_TRY
/* every thread tries first, and blocks only when the try fails */
#define NL_RDLOCK(l) (nl_cst_rwsem_down_read_trylock(l) == 0 ? (void)0 : nl_cst_rwsem_down_read(l))
#define NL_WRLOCK(l) (nl_cst_rwsem_down_write_trylock(l) == 0 ? (void)0 : nl_cst_rwsem_down_write(l))
#else
#define NL_RDLOCK(l) nl_cst_rwsem_down_read(l)
#define NL_WRLOCK(l) nl_cst_rwsem_down_write(l)
#endif
#define NL_RDUNLOCK(l) nl_cst_rwsem_up_read(l)
#define NL_WRUNLOCK(l) nl_cst_rwsem_up_write(l)
#include "client_rw.h"
