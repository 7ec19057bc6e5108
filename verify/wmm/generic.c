/* Any registered lock through its operations table, for a lock that has no
 * check of its own in checks.sh yet (run.sh finds such locks in the
 * registry, src/locks/registry.def, and gives NL_GENERIC_FILE, the lock's
 * source file, and NL_GENERIC_OPS, its table): the client's mutual exclusion,
 * ordering and progress, as every check has, through acquire and release. */
#include "env.h"
#include NL_GENERIC_FILE
#include "env.c"

static unsigned char generic_lock[4096] __attribute__((aligned(128)));
#define NL_LOCK_T char
#define NL_INIT(l) ((void)(NL_GENERIC_OPS.init ? NL_GENERIC_OPS.init(generic_lock, NULL) : 0))
#define NL_ACQUIRE(l) NL_GENERIC_OPS.acquire(generic_lock)
#define NL_RELEASE(l) NL_GENERIC_OPS.release(generic_lock)
#include "client.h"
