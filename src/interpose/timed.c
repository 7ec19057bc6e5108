/*
 * Deadlines for the timed and clock waits of the preload library: the next
 * wake-up time of a sliced wait. The futex waits themselves (untimed, with
 * an absolute deadline on either clock, private or process-shared) are the
 * library's (src/wait/wait.c).
 */
#include <errno.h>
#include <unistd.h>
#include "preload.h"

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
