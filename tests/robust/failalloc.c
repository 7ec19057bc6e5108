/*
 * The allocator of the allocation-failure tests: glibc's (its __libc_*
 * entry points), behind a switch a test sets. Linked into a test program,
 * these definitions replace malloc and its relatives for the whole process,
 * the library's calls and the preload library's included.
 *   rb_nomem      (per thread) every allocation of the thread fails;
 *   rb_counted    (per thread) the thread's allocations are numbered, and
 *   rb_fail_at    the one numbered so (0, 1, ...) fails; -1: none.
 * Not for ThreadSanitizer, which brings its own allocator.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include "failalloc.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);
extern void __libc_free(void *);

__thread int rb_nomem;
__thread int rb_counted;
_Atomic long rb_fail_at = -1;
_Atomic long rb_alloc_calls;
_Atomic long rb_failed;

static int fail_now(void)
{
    int f = rb_nomem;
    if (!f && rb_counted)
        f = atomic_fetch_add_explicit(&rb_alloc_calls, 1, memory_order_relaxed) ==
            atomic_load_explicit(&rb_fail_at, memory_order_relaxed);
    if (f)
        atomic_fetch_add_explicit(&rb_failed, 1, memory_order_relaxed);
    return f;
}

#define FAIL_NULL()            \
    do {                       \
        if (fail_now()) {      \
            errno = ENOMEM;    \
            return NULL;       \
        }                      \
    } while (0)

void *malloc(size_t n)
{
    FAIL_NULL();
    return __libc_malloc(n);
}
void *calloc(size_t n, size_t m)
{
    FAIL_NULL();
    return __libc_calloc(n, m);
}
void *realloc(void *p, size_t n)
{
    if (p && !n)
        return __libc_realloc(p, n);
    FAIL_NULL();
    return __libc_realloc(p, n);
}
void *memalign(size_t a, size_t n)
{
    FAIL_NULL();
    return __libc_memalign(a, n);
}
void *aligned_alloc(size_t a, size_t n)
{
    FAIL_NULL();
    return __libc_memalign(a, n);
}
void *valloc(size_t n)
{
    FAIL_NULL();
    return __libc_valloc(n);
}
void *pvalloc(size_t n)
{
    FAIL_NULL();
    return __libc_pvalloc(n);
}
int posix_memalign(void **out, size_t a, size_t n)
{
    if (a < sizeof(void *) || (a & (a - 1)))
        return EINVAL;
    if (fail_now())
        return ENOMEM;
    void *p = __libc_memalign(a, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}
void free(void *p) { __libc_free(p); }
