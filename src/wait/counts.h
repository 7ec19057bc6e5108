/*
 * The process-wide counts of the waiting code and the load's verdict (not
 * installed): the part of the load sampler's state that the waiter's inline
 * paths (wait.h) read and write. Defined in load.c, whose evidence
 * (load.h) reads them; declarations only, so that wait.h need not include
 * load.h.
 */
#ifndef NL_WAIT_COUNTS_H
#define NL_WAIT_COUNTS_H

#include <stdbool.h>
#include <stdint.h>
#include "../core/self.h"

NL_HIDDEN extern _Atomic uint32_t nl_count_spinners; /* 1: threads outnumber the budget */
NL_HIDDEN extern _Atomic uint32_t nl_spinning;      /* waiters not parked, when counted */
NL_HIDDEN extern _Atomic uint32_t nl_parked;        /* waiters asleep in a lock, when counted */
NL_HIDDEN extern _Atomic uint32_t nl_gate_waiters;  /* this process's passive waiters */

/* The machine's online CPUs (read once). */
NL_HIDDEN int nl_cpus_online(void);

/* Overloaded: some thread that wants a CPU has none, so a spinning waiter
 * would keep another thread (perhaps the holder) off a CPU (load.h: the
 * evidence and the rule; this counts passive waiters as wanting a CPU, as
 * the gate's decisions do). */
NL_HIDDEN bool nl_overloaded(void);

#endif
