/* First in every check: the verification build's switches. */
#define NL_VERIFY 1
#define NL_EMIT_INLINE 1
#include <genmc.h>
/* NL_VERIFY_PARK: every waiter's spin budget is spent from the start, so
 * it parks wherever its lock parks (src/wait/wait.h, nl_waiter_init). */
#ifdef NL_VERIFY_PARK
#define NL_VERIFY_DUE 1
#else
#define NL_VERIFY_DUE 0
#endif
