/* glibc's pthread mutex through the numalock interface: the baseline. */
#include <errno.h>
#include <pthread.h>
#include "../internal.h"

static int op_init(void *l, const nl_attr_t *a)
{
    (void)a;
    return pthread_mutex_init(l, NULL);
}
static void op_destroy(void *l) { pthread_mutex_destroy(l); }
/* glibc's slow path is not visible from here (NL_PROP_FOREIGN): with
 * statistics the handle counts an acquisition contended when `held` says
 * the mutex was taken at arrival, not by a trylock first, which would change
 * the baseline's cost */
static void op_acquire(void *l) { pthread_mutex_lock(l); }
static int op_try(void *l) { return pthread_mutex_trylock(l) ? EBUSY : 0; }
static void op_release(void *l) { pthread_mutex_unlock(l); }
static int op_held(const void *l) { return __atomic_load_n(&((const pthread_mutex_t *)l)->__data.__lock, __ATOMIC_RELAXED) != 0; }

NL_HIDDEN const nl_lock_ops_t nl_ops_pthread = {
    .name = "pthread",
    .description = "glibc pthread_mutex_t (normal type), the baseline",
    .paper = "-",
    .size = sizeof(pthread_mutex_t), .align = 8,
    .props = NL_PROP_BLOCKING | NL_PROP_ZERO_INIT | NL_PROP_ANY_UNLOCK | NL_PROP_FREE_RELEASE | NL_PROP_FOREIGN,
    .init = op_init, .destroy = op_destroy,
    .acquire = op_acquire, .try_acquire = op_try, .release = op_release,
    .held = op_held,
};
