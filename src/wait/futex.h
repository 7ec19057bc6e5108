/*
 * The futex calls (futex.c; not installed): sleep while a word holds a
 * value, wake its sleepers. Layer: the bottom of src/wait, on the machine's
 * futex (src/core/machine.h); used by the waiting code (grant.c, gate.c)
 * and by the preload's condition variables and timed waits. The locks do
 * not include it: they park and wake through wait.h.
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
/* Wake up to n sleepers of a private word, or of a process-shared one. */
NL_HIDDEN void nl_futex_wake(void *addr, int n);
NL_HIDDEN void nl_futex_wake_shared(_Atomic uint32_t *w, int n);

#endif
