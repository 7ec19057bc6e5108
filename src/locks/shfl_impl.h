/*
 * ShflLock internals shared with the statistics (src/stats.c) and the tests.
 *
 * Shuffles are done by waiters, not by the holder, so a 4-byte lock has no
 * place for their counts: each thread counts the shuffles it did in two
 * thread-local counters, and nl_stats_on_acquire() moves them into the
 * statistics block of the lock it acquires next -- the lock it was waiting
 * for, since a waiter shuffles only inside its own acquire.
 */
#ifndef NL_SHFL_IMPL_H
#define NL_SHFL_IMPL_H

#include "numalock/shfl.h"
#include "../internal.h"

NL_HIDDEN extern NL_TLS uint64_t nl_shfl_tls_shuffles; /* shuffle passes that moved a waiter */
NL_HIDDEN extern NL_TLS uint64_t nl_shfl_tls_moved;    /* waiters moved forward */

/* Test hook (tests/test_shfl.c): one shuffle pass over a queue built by the
 * caller. nodes[0] is the shuffler (the queue head, `head`), nodes[i] is on
 * NUMA node numa[i], linked in array order; afterwards order[] gets the node
 * indexes in queue order. Returns the number of waiters moved. `since_ns`
 * starts the batch that long ago (0: now), so a test can make the fairness
 * rule stop the shuffle. */
NL_HIDDEN unsigned nl_shfl_test_shuffle(const int *numa, unsigned n, uint64_t since_ns, unsigned *order);

#endif
