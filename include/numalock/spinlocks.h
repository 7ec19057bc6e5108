/*
 * In-place spin locks: tas, ttas (exponential backoff), ticket, mcs, hbo.
 * All are zero-initialisable. Waiting follows the process waiting policy
 * (nl_wait_set_policy): spin briefly, then yield, and for MCS then park.
 */
#ifndef NUMALOCK_SPINLOCKS_H
#define NUMALOCK_SPINLOCKS_H

#include "numalock.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct { NL_ATOMIC(uint32_t) word; } nl_tas_t;
NL_API void nl_tas_acquire(nl_tas_t *l);
NL_API int  nl_tas_try(nl_tas_t *l);
NL_API void nl_tas_release(nl_tas_t *l);

typedef struct { NL_ATOMIC(uint32_t) word; } nl_ttas_t;
NL_API void nl_ttas_acquire(nl_ttas_t *l);
NL_API int  nl_ttas_try(nl_ttas_t *l);
NL_API void nl_ttas_release(nl_ttas_t *l);

typedef struct { NL_ATOMIC(uint32_t) next; NL_ATOMIC(uint32_t) owner; } nl_ticket_t;
NL_API void nl_ticket_acquire(nl_ticket_t *l);
NL_API int  nl_ticket_try(nl_ticket_t *l);
NL_API void nl_ticket_release(nl_ticket_t *l);

/* MCS (Mellor-Crummey & Scott 1991). The lock is one word: the queue tail. */
typedef struct nl_mcs_node {
    NL_ATOMIC(struct nl_mcs_node *) next;
    NL_ATOMIC(uint32_t) granted;   /* grant word: 0 waiting, 3 parked, 1 granted */
} nl_mcs_node_t;
typedef struct { NL_ATOMIC(nl_mcs_node_t *) tail; } nl_mcs_t;
/* paper form: the caller provides the queue node and keeps it until release */
NL_API void nl_mcs_lock(nl_mcs_t *l, nl_mcs_node_t *me);
NL_API int  nl_mcs_trylock(nl_mcs_t *l, nl_mcs_node_t *me);
NL_API void nl_mcs_unlock(nl_mcs_t *l, nl_mcs_node_t *me);
/* node-free form: the node comes from the calling thread's small pool */
NL_API void nl_mcs_acquire(nl_mcs_t *l);
NL_API int  nl_mcs_try(nl_mcs_t *l);
NL_API void nl_mcs_release(nl_mcs_t *l);

/* HBO (Radovic & Hagersten 2003): one word holding 0 or holder's node + 1;
 * waiters back off briefly when the holder is on their node, long otherwise. */
typedef struct { NL_ATOMIC(uint32_t) word; } nl_hbo_t;
NL_API void nl_hbo_acquire(nl_hbo_t *l);
NL_API int  nl_hbo_try(nl_hbo_t *l);
NL_API void nl_hbo_release(nl_hbo_t *l);

#ifdef __cplusplus
}
#endif
#endif
