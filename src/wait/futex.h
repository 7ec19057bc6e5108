/*
 * The futex calls (futex.c; not installed): sleep while a word holds a
 * value, wake its sleepers. Layer: the bottom of src/wait, on the machine's
 * futex (src/core/machine.h), which goes through the classic futex(2) or
 * through futex_wait/futex_wake with FUTEX2_NUMA where the kernel has them
 * (NUMALOCK_FUTEX, nl_futex_set_path); used by the waiting code (grant.c,
 * gate.c) and by the preload's condition variables and timed waits. The
 * locks do not include it: they park and wake through wait.h.
 */
#ifndef NL_WAIT_FUTEX_H
#define NL_WAIT_FUTEX_H

#include <stdint.h>
#include <time.h>
#include "../core/self.h"

/* Sleep while *addr == expected (no timeout; ns: at most ns nanoseconds):
 * 0 when woken, -1 otherwise (the word differed, the time ran out, a
 * signal came). */
NL_HIDDEN int nl_futex_wait(void *addr, uint32_t expected);
NL_HIDDEN int nl_futex_wait_ns(void *addr, uint32_t expected, uint64_t ns);
/* until an absolute time on CLOCK_MONOTONIC or CLOCK_REALTIME (abs NULL: no
 * deadline), on a private or a process-shared word; 0 or an errno value */
NL_HIDDEN int nl_futex_wait_until(_Atomic uint32_t *w, uint32_t val, const struct timespec *abs,
                                  clockid_t clk, int shared);
/* Wake up to n sleepers of a private word, or of a process-shared one: how
 * many woke. */
NL_HIDDEN int nl_futex_wake(void *addr, int n);
NL_HIDDEN int nl_futex_wake_shared(_Atomic uint32_t *w, int n);

/* A two-word futex (NL_FUTEX_NODE, machine.h): the value at addr, 8-byte
 * aligned, and its node half beside it, which only these calls write. The
 * waiter claims the node half (writes its node there) before it publishes,
 * with a release, that it will sleep; a waker that saw that publication
 * with an acquire wakes through the same node. Where the kernel lacks
 * FUTEX2_NUMA (or the classic path is forced) they are the calls above. */
NL_HIDDEN void nl_futex_node_claim(void *addr);
NL_HIDDEN int nl_futex_wait_node(void *addr, uint32_t expected);
NL_HIDDEN int nl_futex_wake_node(void *addr, int n);

/* Wake system calls the calling thread made, every kind (tests: a run in
 * which nobody sleeps makes none). */
NL_HIDDEN uint64_t nl_futex_thread_wakes(void);

#endif
