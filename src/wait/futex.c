/* The futex calls (futex.h), on the machine's futex (src/core/machine.h);
 * the absolute-deadline wait goes to the kernel itself (FUTEX_WAIT_BITSET
 * takes an absolute time on either clock). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "futex.h"

int nl_futex_wait(void *addr, uint32_t expected)
{
    return nl_machine_futex_wait(addr, expected, 0) ? -1 : 0;
}

int nl_futex_wait_ns(void *addr, uint32_t expected, uint64_t ns)
{
    return nl_machine_futex_wait(addr, expected, ns ? ns : 1) ? -1 : 0;
}

int nl_futex_wait_until(_Atomic uint32_t *w, uint32_t val, const struct timespec *abs, clockid_t clk,
                        int shared)
{
    int op = FUTEX_WAIT_BITSET | (shared ? 0 : FUTEX_PRIVATE_FLAG) |
             (abs && clk == CLOCK_REALTIME ? FUTEX_CLOCK_REALTIME : 0);
    if (abs && abs->tv_sec < 0)
        return ETIMEDOUT;
    long r = syscall(SYS_futex, w, op, val, abs, NULL, FUTEX_BITSET_MATCH_ANY);
    return r == 0 ? 0 : errno;
}

void nl_futex_wake(void *addr, int n) { nl_machine_futex_wake(addr, n, false); }

void nl_futex_wake_shared(_Atomic uint32_t *w, int n) { nl_machine_futex_wake(w, n, true); }
