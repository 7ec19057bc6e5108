/* Registry: algorithm name -> operations table and properties.
 * A lock is listed here only once it passes the stress harness and TSan
 * (tests/CMakeLists.txt keeps the same list; a test checks they agree). */
#include <stdio.h>
#include <string.h>
#include "internal.h"

extern const nl_lock_ops_t nl_ops_tas, nl_ops_ttas, nl_ops_ticket, nl_ops_mcs, nl_ops_hbo,
    nl_ops_pthread;
extern const nl_lock_ops_t nl_ops_cna, nl_ops_cna_opt, nl_ops_qspinlock, nl_ops_qspinlock_cna;
extern const nl_lock_ops_t nl_ops_c_bo_mcs, nl_ops_c_tkt_tkt, nl_ops_hmcs, nl_ops_hmcs_n, nl_ops_c_tkt_n;
extern const nl_lock_ops_t nl_ops_cst_mutex, nl_ops_cst_rwsem, nl_ops_pthread_rwlock;
extern const nl_lock_ops_t nl_ops_sanl, nl_ops_fc;
extern const nl_lock_ops_t nl_ops_futex_rwlock;
extern const nl_lock_ops_t nl_ops_shfl, nl_ops_shfl_block;

static const nl_lock_ops_t *const registry[] = {
    &nl_ops_pthread,
    &nl_ops_tas,
    &nl_ops_ttas,
    &nl_ops_ticket,
    &nl_ops_mcs,
    &nl_ops_hbo,
    &nl_ops_cna,
    &nl_ops_cna_opt,
    &nl_ops_qspinlock,
    &nl_ops_qspinlock_cna,
    &nl_ops_shfl,
    &nl_ops_shfl_block,
    &nl_ops_c_bo_mcs,
    &nl_ops_c_tkt_tkt,
    &nl_ops_hmcs,
    &nl_ops_hmcs_n,
    &nl_ops_c_tkt_n,
    &nl_ops_cst_mutex,
    &nl_ops_cst_rwsem,
    &nl_ops_pthread_rwlock,
    &nl_ops_futex_rwlock,
    &nl_ops_sanl,
    &nl_ops_fc,
};

#define N_LOCKS (sizeof registry / sizeof registry[0])

size_t nl_lock_count(void) { return N_LOCKS; }

const nl_lock_ops_t *nl_lock_at(size_t i) { return i < N_LOCKS ? registry[i] : NULL; }

const nl_lock_ops_t *nl_lock_find(const char *name)
{
    if (!name)
        return NULL;
    for (size_t i = 0; i < N_LOCKS; i++)
        if (!strcmp(registry[i]->name, name))
            return registry[i];
    return NULL;
}

const char *nl_lock_names(char *buf, size_t len)
{
    size_t off = 0;
    if (!len)
        return buf;
    buf[0] = 0;
    for (size_t i = 0; i < N_LOCKS && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", registry[i]->name);
    return buf;
}

size_t nl_lock_bytes_at_nodes(const nl_lock_ops_t *ops, unsigned nodes)
{
    return ops->bytes_at_nodes ? ops->bytes_at_nodes(nodes) : ops->size;
}
