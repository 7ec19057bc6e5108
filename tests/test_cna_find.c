/* Lookup used by `stress_cna`: the CNA-family locks by name, registered or
 * not yet (the stress harness compiled with nl_lock_find -> cna_test_find),
 * so a lock can be put through the harness before it enters the registry. */
#undef nl_lock_find /* this file calls the real registry */
#include <string.h>
#include "numalock/numalock.h"
#include "nl_test_internal.h"

const nl_lock_ops_t *cna_test_find(const char *name);
const nl_lock_ops_t *cna_test_find(const char *name)
{
    static const nl_lock_ops_t *const mine[] = {
        &nl_ops_cna, &nl_ops_cna_opt, &nl_ops_qspinlock, &nl_ops_qspinlock_cna,
        &nl_ops_c_bo_mcs, &nl_ops_c_tkt_tkt, &nl_ops_hmcs,
    };
    for (size_t i = 0; name && i < sizeof mine / sizeof mine[0]; i++)
        if (!strcmp(mine[i]->name, name))
            return mine[i];
    return nl_lock_find(name);
}
