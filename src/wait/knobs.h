/*
 * Test knobs and probes of the waiting code (not installed): settings a
 * test changes (the gate's patience, how often the load sample reads the
 * cgroup files) and state it looks at (the gate's passive waiters per
 * bucket). Only the files of src/wait and the tests include it
 * (tests/nl_test_internal.h); the locks never see it.
 */
#ifndef NL_WAIT_KNOBS_H
#define NL_WAIT_KNOBS_H

#include <stdbool.h>
#include <stdint.h>
#include "../core/self.h"

/* gate.c: the preferred head's turns before it queues on the lock however
 * taken (NL_GATE_FORCE), and how long a node's FIFO stays preferred while
 * another's waits (NL_GATE_STAY_NS); a test that needs the head to stay at
 * the gate while a lock is held for a while raises them. */
NL_HIDDEN extern uint32_t nl_gate_force_turns;
NL_HIDDEN extern uint64_t nl_gate_stay_ns;

/* gate.c: locks are hashed into NL_GATE_BUCKETS buckets; a lock's bucket,
 * the passive waiters of each bucket, and whether a lock's bucket has any. */
#define NL_GATE_BUCKETS 256u
NL_HIDDEN extern _Atomic uint32_t nl_gate_passive[NL_GATE_BUCKETS];
NL_HIDDEN uint32_t nl_gate_bucket(const void *lock);
NL_HIDDEN bool nl_gate_crowded(const void *lock);

/* gate.c: set the calling thread's received time at a lock's bucket (the
 * CPU time it got while let in, which weighs the gate's node stays) before
 * it waits there; the FIFO a lock's bucket prefers now. */
NL_HIDDEN void nl_gate_set_received(const void *lock, uint64_t ns);
NL_HIDDEN uint32_t nl_gate_preferred(const void *lock);

/* load.c: samples between two reads of the cgroup files (tests: 1). */
NL_HIDDEN extern uint32_t nl_cgroup_every;

#endif
