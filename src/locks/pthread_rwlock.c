/* glibc's pthread_rwlock_t (default attributes) through the numalock
 * interface: the baseline of the read-write locks. */
#include <errno.h>
#include <pthread.h>
#include "../internal.h"

static int op_init(void *l, const nl_attr_t *a)
{
    (void)a;
    return pthread_rwlock_init(l, NULL);
}
static void op_destroy(void *l) { pthread_rwlock_destroy(l); }
static void op_acquire(void *l) { pthread_rwlock_wrlock(l); }
static int op_try(void *l) { return pthread_rwlock_trywrlock(l) ? EBUSY : 0; }
static void op_release(void *l) { pthread_rwlock_unlock(l); }
static void op_read_acquire(void *l) { pthread_rwlock_rdlock(l); }
static int op_read_try(void *l) { return pthread_rwlock_tryrdlock(l) ? EBUSY : 0; }
/* taken by a writer (glibc's __readers bit 1, WRLOCKED) or by readers (the
 * count above bit 3): what NL_PROP_FOREIGN's statistics read at arrival */
static int op_held(const void *l)
{
    unsigned r = __atomic_load_n(&((const pthread_rwlock_t *)l)->__data.__readers, __ATOMIC_RELAXED);
    return (r & 2u) || (r >> 3);
}

NL_HIDDEN const nl_lock_ops_t nl_ops_pthread_rwlock = {
    .name = "pthread-rwlock",
    .description = "glibc pthread_rwlock_t (default attributes), the read-write baseline",
    .paper = "-",
    .size = sizeof(pthread_rwlock_t), .align = 8,
    .props = NL_PROP_RW | NL_PROP_BLOCKING | NL_PROP_ZERO_INIT | NL_PROP_FOREIGN,
    .init = op_init, .destroy = op_destroy,
    .acquire = op_acquire, .try_acquire = op_try, .release = op_release,
    .read_acquire = op_read_acquire, .read_try_acquire = op_read_try, .read_release = op_release,
    .held = op_held,
};
