/*
 * The real glibc functions behind the interposer, found with
 * dlvsym(RTLD_NEXT, name, version) at the version a program built here binds
 * to (dlsym as a fallback), for the objects left to glibc: process-shared,
 * robust and priority mutexes, process-shared rwlocks and spin locks, and
 * every object under --lock pthread.
 *
 * Exported versions: every replaced function is exported under each symbol
 * version a program may have bound it to (GLIBC_2.2.5, 2.3.2, 2.28, 2.30,
 * 2.34; preload.map), with NLP_TWO_VERSIONS (preload.h) where there are two.
 */
#include <dlfcn.h>
#include "preload.h"

nlp_real_t nlp_real;

static void *resolve(const char *name, const char *version)
{
    void *p = dlvsym(RTLD_NEXT, name, version);
    return p ? p : dlsym(RTLD_NEXT, name);
}

void nlp_resolve_real(void)
{
#define R(field, name, ver) *(void **)&nlp_real.field = resolve(name, ver)
    R(mutex_init, "pthread_mutex_init", NLP_GLIBC_BASE);
    R(mutex_destroy, "pthread_mutex_destroy", NLP_GLIBC_BASE);
    R(mutex_lock, "pthread_mutex_lock", NLP_GLIBC_BASE);
    R(mutex_trylock, "pthread_mutex_trylock", "GLIBC_2.34");
    R(mutex_timedlock, "pthread_mutex_timedlock", "GLIBC_2.34");
    R(mutex_clocklock, "pthread_mutex_clocklock", "GLIBC_2.34");
    R(mutex_unlock, "pthread_mutex_unlock", NLP_GLIBC_BASE);
    R(cond_init, "pthread_cond_init", NLP_GLIBC_COND);
    R(cond_destroy, "pthread_cond_destroy", NLP_GLIBC_COND);
    R(cond_wait, "pthread_cond_wait", NLP_GLIBC_COND);
    R(cond_timedwait, "pthread_cond_timedwait", NLP_GLIBC_COND);
    R(cond_clockwait, "pthread_cond_clockwait", "GLIBC_2.34");
    R(cond_signal, "pthread_cond_signal", NLP_GLIBC_COND);
    R(cond_broadcast, "pthread_cond_broadcast", NLP_GLIBC_COND);
    R(rw_init, "pthread_rwlock_init", "GLIBC_2.34");
    R(rw_destroy, "pthread_rwlock_destroy", "GLIBC_2.34");
    R(rw_rdlock, "pthread_rwlock_rdlock", "GLIBC_2.34");
    R(rw_tryrdlock, "pthread_rwlock_tryrdlock", "GLIBC_2.34");
    R(rw_timedrdlock, "pthread_rwlock_timedrdlock", "GLIBC_2.34");
    R(rw_clockrdlock, "pthread_rwlock_clockrdlock", "GLIBC_2.34");
    R(rw_wrlock, "pthread_rwlock_wrlock", "GLIBC_2.34");
    R(rw_trywrlock, "pthread_rwlock_trywrlock", "GLIBC_2.34");
    R(rw_timedwrlock, "pthread_rwlock_timedwrlock", "GLIBC_2.34");
    R(rw_clockwrlock, "pthread_rwlock_clockwrlock", "GLIBC_2.34");
    R(rw_unlock, "pthread_rwlock_unlock", "GLIBC_2.34");
    R(spin_init, "pthread_spin_init", "GLIBC_2.34");
    R(spin_destroy, "pthread_spin_destroy", "GLIBC_2.34");
    R(spin_lock, "pthread_spin_lock", "GLIBC_2.34");
    R(spin_trylock, "pthread_spin_trylock", "GLIBC_2.34");
    R(spin_unlock, "pthread_spin_unlock", "GLIBC_2.34");
#undef R
}
