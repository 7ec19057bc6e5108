/* Flat combining (src/locks/fc.c): each thread executes requests whose
 * function is the critical section (client_deleg.h); the combiner lock is
 * the library's MCS lock, its node from the thread's pool. The process-wide
 * id manager (sanl.c: a bitmap under a spin lock, pthread keys) is not part
 * of the lock's protocol: here each thread's slot is its index
 * (deleg_env.h). A waiter never runs out of patience (the verification
 * clock does not advance), so it combines only after a try on a free
 * combiner lock, and never parks: the runs with NL_VERIFY_PARK are the same.
 * Settings (checks.sh): FC_CLEAN_EVERY and FC_AGE small, so that sessions
 * unlink idle records and a thread pushes its record again; NL_ROUNDS and
 * NL_ROUNDS_OF(tid), a second request; NL_DELEG_PREALLOC, the records' chunk
 * published at init instead of by its first user; FC_PASSES, walks per
 * session. */
/* a chunk of 64 records per thread that finds none published yet */
#define NL_VERIFY_POOL_BYTES (4 * 64 * 64)
#include "env.h"
/* mcs.c's registry entry uses the same static names as fc.c's */
#define op_acquire mcs_op_acquire
#define op_try mcs_op_try
#define op_release mcs_op_release
#include "locks/mcs.c"
#undef op_acquire
#undef op_try
#undef op_release
#include "locks/fc.c"
#include "env.c"
#include "deleg_env.h"

#define NL_DELEG_T nl_fc_t
/* NL_DELEG_PREALLOC: the records' chunk published before the threads start
 * (a run with more requests; the chunk's first-use race is in the others) */
#ifdef NL_DELEG_PREALLOC
#define NL_DELEG_INIT(l) (nl_fc_init(l), (void)fc_rec(l, 0))
#else
#define NL_DELEG_INIT(l) nl_fc_init(l)
#endif
#define NL_EXECUTE(l, fn, arg) nl_fc_execute(l, fn, arg)
#include "client_deleg.h"
