/*
 * Shared by the delegation locks (sanl.c, fc.c): the process-wide request-slot
 * id manager (SANL paper sec. 3.2: a bitmap, ids recycled at thread exit) and
 * a cycle counter for the time shares of SANL's contention level.
 */
#ifndef NL_DELEG_IDS_H
#define NL_DELEG_IDS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../internal.h"

/* The calling thread's request slot, 0..NL_DELEG_MAX_SLOTS-1, taken at its
 * first call and given back when it exits; -1 while every slot is taken. */
NL_HIDDEN int nl_deleg_slot_slow(void);
NL_HIDDEN extern NL_TLS int nl_deleg_slot_tls; /* slot + 1, 0: none yet */

static inline int nl_deleg_slot(void)
{
    int s = nl_deleg_slot_tls;
    return NL_LIKELY(s > 0) ? s - 1 : nl_deleg_slot_slow();
}

/* Threads holding a slot now (the Id Manager's count of contending threads). */
NL_HIDDEN int nl_deleg_slots_in_use(void);

/* First use of one of a lock's chunks of per-slot records: NL_DELEG_CHUNK
 * zeroed, cache-line aligned elements of `size` bytes, published in *cell,
 * or the ones another thread published first; NULL without memory. */
static inline void *nl_deleg_chunk_alloc(void *_Atomic *cell, size_t size)
{
    void *fresh = NULL, *expect = NULL;
    if (posix_memalign(&fresh, NL_CACHELINE, NL_DELEG_CHUNK * size) || !fresh)
        return NULL;
    memset(fresh, 0, NL_DELEG_CHUNK * size);
    if (atomic_compare_exchange_strong_explicit(cell, &expect, fresh, memory_order_acq_rel,
                                                memory_order_acquire))
        return fresh;
    free(fresh);
    return expect;
}

#endif
