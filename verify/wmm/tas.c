/* tas (src/locks/tas.c; fast paths in include/numalock/spinlocks.h). */
#include "env.h"
#include "locks/tas.c"
#include "env.c"

#define NL_LOCK_T nl_tas_t
#define NL_INIT(l) ((void)0)
#define NL_ACQUIRE(l) nl_tas_acquire(l)
#define NL_RELEASE(l) nl_tas_release(l)
#include "client.h"
