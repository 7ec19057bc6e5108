/*
 * C11 <threads.h> mutexes and condition variables. glibc implements them with
 * its internal pthread functions, which an interposer cannot see: replaced
 * here on top of mutex.c and cond.c. mtx_t and cnd_t have the sizes of
 * pthread_mutex_t and pthread_cond_t.
 */
#include <errno.h>
#include <threads.h>
#include "preload.h"

_Static_assert(sizeof(mtx_t) == sizeof(pthread_mutex_t), "mtx_t");
_Static_assert(sizeof(cnd_t) == sizeof(pthread_cond_t), "cnd_t");

static int thrd_rc(int rc)
{
    return rc == 0 ? thrd_success : rc == EBUSY ? thrd_busy : rc == ETIMEDOUT ? thrd_timedout
           : rc == ENOMEM ? thrd_nomem : thrd_error;
}

EXPORT int nlp_mtx_init(mtx_t *m, int type)
{
    pthread_mutexattr_t a;
    if (type != mtx_plain && type != mtx_timed && type != (mtx_plain | mtx_recursive) &&
        type != (mtx_timed | mtx_recursive))
        return thrd_error;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, (type & mtx_recursive) ? PTHREAD_MUTEX_RECURSIVE : PTHREAD_MUTEX_NORMAL);
    int rc = pthread_mutex_init((pthread_mutex_t *)m, &a);
    pthread_mutexattr_destroy(&a);
    return thrd_rc(rc);
}
EXPORT void nlp_mtx_destroy(mtx_t *m) { pthread_mutex_destroy((pthread_mutex_t *)m); }
EXPORT int nlp_mtx_lock(mtx_t *m) { return thrd_rc(nlp_mutex_lock_slow((nlp_mutex_t *)m, __builtin_return_address(0))); }
EXPORT int nlp_mtx_trylock(mtx_t *m)
{
    return thrd_rc(nlp_mutex_trylock_impl((pthread_mutex_t *)m, __builtin_return_address(0)));
}
EXPORT int nlp_mtx_timedlock(mtx_t *restrict m, const struct timespec *restrict abs)
{
    return thrd_rc(nlp_mutex_clocklock_impl((pthread_mutex_t *)m, CLOCK_REALTIME, abs, __builtin_return_address(0)));
}
EXPORT int nlp_mtx_unlock(mtx_t *m) { return thrd_rc(nlp_mutex_unlock_slow((nlp_mutex_t *)m)); }
EXPORT int nlp_cnd_init(cnd_t *c) { return thrd_rc(pthread_cond_init((pthread_cond_t *)c, NULL)); }
EXPORT void nlp_cnd_destroy(cnd_t *c) { pthread_cond_destroy((pthread_cond_t *)c); }
EXPORT int nlp_cnd_signal(cnd_t *c) { return thrd_rc(pthread_cond_signal((pthread_cond_t *)c)); }
EXPORT int nlp_cnd_broadcast(cnd_t *c) { return thrd_rc(pthread_cond_broadcast((pthread_cond_t *)c)); }
EXPORT int nlp_cnd_wait(cnd_t *c, mtx_t *m)
{
    nlp_ensure_init();
    if (nlp_g.mode == NLP_MODE_GLIBC)
        return thrd_rc(nlp_real.cond_wait((pthread_cond_t *)c, (pthread_mutex_t *)m));
    return thrd_rc(nlp_cond_wait_impl((pthread_cond_t *)c, (pthread_mutex_t *)m, CLOCK_REALTIME, NULL,
                                      __builtin_return_address(0)));
}
EXPORT int nlp_cnd_timedwait(cnd_t *restrict c, mtx_t *restrict m, const struct timespec *restrict abs)
{
    nlp_ensure_init();
    if (nlp_g.mode == NLP_MODE_GLIBC)
        return thrd_rc(nlp_real.cond_timedwait((pthread_cond_t *)c, (pthread_mutex_t *)m, abs));
    return thrd_rc(nlp_cond_wait_impl((pthread_cond_t *)c, (pthread_mutex_t *)m, CLOCK_REALTIME, abs,
                                      __builtin_return_address(0)));
}
NLP_TWO_VERSIONS(nlp_mtx_init, mtx_init, "GLIBC_2.28", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_mtx_destroy, mtx_destroy, "GLIBC_2.28", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_mtx_lock, mtx_lock, "GLIBC_2.28", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_mtx_trylock, mtx_trylock, "GLIBC_2.28", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_mtx_timedlock, mtx_timedlock, "GLIBC_2.28", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_mtx_unlock, mtx_unlock, "GLIBC_2.28", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_cnd_init, cnd_init, "GLIBC_2.28", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_cnd_destroy, cnd_destroy, "GLIBC_2.28", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_cnd_signal, cnd_signal, "GLIBC_2.28", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_cnd_broadcast, cnd_broadcast, "GLIBC_2.28", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_cnd_wait, cnd_wait, "GLIBC_2.28", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_cnd_timedwait, cnd_timedwait, "GLIBC_2.28", "GLIBC_2.34");
