/* First in every check: the verification build's switches. */
#define NL_VERIFY 1
#define NL_EMIT_INLINE 1
/* GenMC has no mixed-size accesses: the qspinlock's unlock clears its
 * locked byte with a word-wide operation (include/numalock/cna.h) */
#define NL_QSPIN_BYTE_UNLOCK 0
#include <genmc.h>
/* NL_VERIFY_PARK: every waiter's spin budget is spent from the start, so
 * it parks wherever its lock parks (src/wait/wait.h, nl_waiter_init). */
#ifdef NL_VERIFY_PARK
#define NL_VERIFY_DUE 1
#else
#define NL_VERIFY_DUE 0
#endif

/* Allocation (posix_memalign then memset to zero, or calloc), at a lock's
 * init or by a thread at its first wait (the qspinlock's tail nodes): a bump
 * allocator over a zeroed static pool, never freed, in 128-byte steps (no
 * lock asks for a larger alignment). A memset the lock does is of fresh,
 * zeroed memory (the pool, or at init the client's zeroed static lock): it
 * is checked to be that and writes nothing (the checker has no byte-wise
 * stores over wider fields). */
#include <stdlib.h>
#include <string.h>
#include <assert.h>
#include <stdatomic.h>
#define NL_VERIFY_POOL_STEP 128
/* its size: a check whose lock allocates more (the delegation locks' chunks
 * of request records) defines NL_VERIFY_POOL_BYTES first */
#ifndef NL_VERIFY_POOL_BYTES
#define NL_VERIFY_POOL_BYTES 8192
#endif
static unsigned char nl_verify_pool[NL_VERIFY_POOL_BYTES] __attribute__((aligned(NL_VERIFY_POOL_STEP)));
static _Atomic size_t nl_verify_used;
static inline int nl_verify_memalign(void **p, size_t align, size_t n)
{
    assert(align <= NL_VERIFY_POOL_STEP);
    n = (n + NL_VERIFY_POOL_STEP - 1) & ~(size_t)(NL_VERIFY_POOL_STEP - 1);
    size_t at = atomic_fetch_add_explicit(&nl_verify_used, n, memory_order_relaxed);
    assert(at + n <= sizeof nl_verify_pool);
    *p = nl_verify_pool + at;
    return 0;
}
static int nl_verify_started; /* the client's threads run: no more init */
static inline void *nl_verify_memset(void *p, int c, size_t n)
{
    /* zeroes for the pool's fresh memory, or, at init, for static memory
     * nobody has written yet (the client's lock) */
    size_t used = atomic_load_explicit(&nl_verify_used, memory_order_relaxed);
    assert(c == 0 && (!nl_verify_started || ((unsigned char *)p >= nl_verify_pool &&
                                              (unsigned char *)p + n <= nl_verify_pool + used)));
    return p;
}
static inline void *nl_verify_calloc(size_t n, size_t size)
{
    void *p;
    nl_verify_memalign(&p, 16, n * size);
    return p;
}
#define posix_memalign nl_verify_memalign
#define calloc nl_verify_calloc
#define memset nl_verify_memset
#define free(p) ((void)(p))
