/*
 * ShflLock internals shared with the tests.
 *
 * Shuffles are done by waiters, not by the holder: a 4-byte lock has no
 * place for their counts, so each waiter counts the shuffles it did in its
 * thread's waiting counters (the statistics' extra slots SH_EXTRA_SHUFFLES
 * and SH_EXTRA_MOVED), which the generic handle adds to the lock it
 * acquires -- the lock the waiter was waiting for.
 */
#ifndef NL_SHFL_IMPL_H
#define NL_SHFL_IMPL_H

#include "numalock/shfl.h"
#include "../internal.h"

#define SH_EXTRA_SHUFFLES 0 /* shuffle passes that moved a waiter */
#define SH_EXTRA_MOVED 1    /* waiters those passes moved forward */

/* Test hook (tests/test_shfl.c): one shuffle pass over a queue built by the
 * caller. nodes[0] is the shuffler (the queue head, `head`), nodes[i] is on
 * NUMA node numa[i], linked in array order; afterwards order[] gets the node
 * indexes in queue order. Returns the number of waiters moved. `since_ns`
 * starts the batch that long ago (0: now), so a test can make the fairness
 * rule stop the shuffle. */
NL_HIDDEN unsigned nl_shfl_test_shuffle(const int *numa, unsigned n, uint64_t since_ns, unsigned *order);

#endif
