/* The switch of failalloc.c, the allocation-failure tests' allocator. */
#ifndef NL_FAILALLOC_H
#define NL_FAILALLOC_H

#include <stdatomic.h>

extern __thread int rb_nomem;      /* every allocation of this thread fails */
extern __thread int rb_counted;    /* this thread's allocations are numbered ... */
extern _Atomic long rb_fail_at;    /* ... and this one fails (-1: none) */
extern _Atomic long rb_alloc_calls; /* numbered allocations so far */
extern _Atomic long rb_failed;      /* failures injected so far */

#endif
