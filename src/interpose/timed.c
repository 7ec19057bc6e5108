/*
 * The one timed-wait design of the preload library, for the replaced locks
 * that have no timed form of their own (mutexes on any registered lock,
 * NUMALOCK_RWLOCK's algorithms): try; spin a little; then sleep on the
 * object's sequence word in slices of at most 1 ms until the deadline,
 * registered as a sleeper so that a release wakes it (nlp_timed_release in
 * preload.h). The slice bounds the one case a wake can miss: a release that
 * read the sleeper count just before the sleeper registered. The built-in
 * futex-rwlock has its own deadline wait (a futex wait on its word).
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

int nlp_timed_acquire(const nlp_sleep_t *z, int (*try_fn)(void *l, int arg), void *l, int arg, clockid_t clk,
                      const struct timespec *abs)
{
    if (nlp_bad_time(abs))
        return EINVAL;
    for (int i = 0; i < 64; i++) {
        nl_cpu_relax();
        if (try_fn(l, arg) == 0)
            return 0;
    }
    for (;;) {
        int expired;
        atomic_fetch_add(z->sleepers, 1);
        uint32_t seq = atomic_load(z->seq);
        if (try_fn(l, arg) == 0) {
            atomic_fetch_sub(z->sleepers, 1);
            return 0;
        }
        struct timespec t = nlp_until_at_most(clk, abs, 1000000L, &expired);
        if (expired) {
            atomic_fetch_sub(z->sleepers, 1);
            return ETIMEDOUT;
        }
        nl_futex_wait_until(z->seq, seq, &t, clk, 0);
        atomic_fetch_sub(z->sleepers, 1);
        if (try_fn(l, arg) == 0)
            return 0;
    }
}
