/* hbo (src/locks/hbo.c; fast paths in include/numalock/spinlocks.h). */
#include "env.h"
#include "locks/hbo.c"
#include "env.c"

#define NL_LOCK_T nl_hbo_t
#define NL_INIT(l) ((void)0)
#define NL_ACQUIRE(l) nl_hbo_acquire(l)
#define NL_RELEASE(l) nl_hbo_release(l)
#include "client.h"
