/*
 * Deadlines for the timed and clock waits of the preload library: a futex
 * wait until an absolute time on either clock (FUTEX_WAIT_BITSET, which takes
 * an absolute timeout), on a private or a process-shared word. The library's
 * nl_futex_wait / nl_futex_wake (src/wait/wait.c) serve every untimed private
 * wait and wake; this file holds only what they do not offer.
 */
#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "preload.h"

int nlp_futex_wait_until(_Atomic uint32_t *w, uint32_t val, const struct timespec *abs, clockid_t clk, int shared)
{
    int op = FUTEX_WAIT_BITSET | (shared ? 0 : FUTEX_PRIVATE_FLAG) |
             (abs && clk == CLOCK_REALTIME ? FUTEX_CLOCK_REALTIME : 0);
    if (abs && abs->tv_sec < 0)
        return ETIMEDOUT;
    long r = syscall(SYS_futex, w, op, val, abs, NULL, FUTEX_BITSET_MATCH_ANY);
    return r == 0 ? 0 : errno;
}

void nlp_futex_wake_shared(_Atomic uint32_t *w, int n) { syscall(SYS_futex, w, FUTEX_WAKE, n, NULL, NULL, 0); }

struct timespec nlp_until_at_most(clockid_t clk, const struct timespec *abs, long ns, int *expired)
{
    struct timespec now, t;
    clock_gettime(clk, &now);
    *expired = now.tv_sec > abs->tv_sec || (now.tv_sec == abs->tv_sec && now.tv_nsec >= abs->tv_nsec);
    t.tv_sec = now.tv_sec;
    t.tv_nsec = now.tv_nsec + ns;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    if (t.tv_sec > abs->tv_sec || (t.tv_sec == abs->tv_sec && t.tv_nsec > abs->tv_nsec))
        t = *abs;
    return t;
}
