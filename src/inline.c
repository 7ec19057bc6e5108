/* The one external copy of each inline fast path of the explicit APIs
 * (NL_INLINE in the headers of include/numalock/), for callers that do not inline them:
 * other languages, function pointers, builds without optimisation. */
#define NL_EMIT_INLINE
#include "numalock/spinlocks.h"
#include "numalock/qspinlock.h"
#include "numalock/cna.h"
#include "numalock/clock.h"
