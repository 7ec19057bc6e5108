/*
 * Shared by the delegation locks (sanl.c, fc.c): the process-wide request-slot
 * id manager (SANL paper sec. 3.2: a bitmap, ids recycled at thread exit) and
 * a cycle counter for the time shares of SANL's contention level.
 */
#ifndef NL_DELEG_IDS_H
#define NL_DELEG_IDS_H

#include <stdint.h>
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

static inline uint64_t nl_deleg_cycles(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#else
    return nl_now_ns() * 2; /* about 2 GHz */
#endif
}

#endif
