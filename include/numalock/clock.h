/*
 * The one clock of the library's users, its benchmarks and tools (the
 * library reads the same through src/core/machine.h, which a model checker
 * or the simulator replaces).
 *
 *   nl_clock_ns()     monotonic nanoseconds (CLOCK_MONOTONIC): what every
 *                     interface takes and reports (waiting budgets, SANL's
 *                     wait bound, statistics).
 *   nl_clock_ticks()  the fast path for measuring short intervals: the CPU's
 *                     counter where user space has one that is constant-rate
 *                     (x86: the time-stamp counter; aarch64: the virtual
 *                     counter CNTVCT_EL0), else nanoseconds. The library
 *                     converts with a rate it measures against nl_clock_ns().
 *   nl_clock_ticks_to_ns(), nl_clock_ns_to_ticks()   that conversion (until
 *                     the rate is measured: 2.5 ticks per ns on x86, the
 *                     counter's stated frequency on aarch64, 1 otherwise).
 */
#ifndef NUMALOCK_CLOCK_H
#define NUMALOCK_CLOCK_H

#include <stdint.h>
#include "numalock.h"

#ifdef __cplusplus
extern "C" {
#endif

NL_API uint64_t nl_clock_ns(void);
NL_API uint64_t nl_clock_ticks_to_ns(uint64_t ticks);
NL_API uint64_t nl_clock_ns_to_ticks(uint64_t ns);

NL_INLINE uint64_t nl_clock_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#elif defined(__aarch64__)
    uint64_t v;
    __asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v) : : "memory");
    return v;
#else
    return nl_clock_ns();
#endif
}

#ifdef __cplusplus
}
#endif
#endif
