/*
 * Per-lock statistics, the library's side (stats.c; not installed; the
 * counters themselves are nl_stats_t, include/numalock/numalock.h): what the
 * generic handle (lock.c) and the preload's profile add to them.
 */
#ifndef NL_STATS_H
#define NL_STATS_H

#include "core/self.h"

/* Add what the calling thread's waiting counters moved by since `before` to
 * a lock's statistics. */
NL_HIDDEN void nl_stats_add_waiting(nl_stats_t *s, const nl_wait_counts_t *before);

#endif
