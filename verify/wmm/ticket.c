/* ticket (src/locks/ticket.c, src/locks/ticket_impl.h; fast paths in
 * include/numalock/spinlocks.h). */
#include "env.h"
#include "locks/ticket.c"
#include "env.c"

#define NL_LOCK_T nl_ticket_t
#define NL_INIT(l) ((void)0)
#define NL_ACQUIRE(l) nl_ticket_acquire(l)
#define NL_RELEASE(l) nl_ticket_release(l)
#include "client.h"
