/* ttas (src/locks/ttas.c; fast paths in include/numalock/spinlocks.h). */
#include "env.h"
#include "locks/ttas.c"
#include "env.c"

#define NL_LOCK_T nl_ttas_t
#define NL_INIT(l) ((void)0)
#define NL_ACQUIRE(l) nl_ttas_acquire(l)
#define NL_RELEASE(l) nl_ttas_release(l)
#include "client.h"
