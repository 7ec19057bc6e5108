/* nl_on_roomy_stack (roomy.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include "roomy.h"

/* Bytes of the calling thread's stack below this frame; SIZE_MAX when
 * unknown (then the caller's stack is trusted). */
static size_t stack_left(void)
{
    pthread_attr_t a;
    void *lo = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &a))
        return SIZE_MAX;
    int rc = pthread_attr_getstack(&a, &lo, &size);
    pthread_attr_destroy(&a);
    uintptr_t here = (uintptr_t)__builtin_frame_address(0), base = (uintptr_t)lo;
    if (rc || !lo || here < base || here - base > size)
        return SIZE_MAX;
    return here - base;
}

static void *run(void *fn)
{
    ((void (*)(void))fn)();
    return NULL;
}

void nl_on_roomy_stack(void (*fn)(void))
{
    if (stack_left() >= NL_ROOMY_BYTES) {
        fn();
        return;
    }
    pthread_attr_t a;
    pthread_t t;
    if (pthread_attr_init(&a)) {
        fn(); /* no thread to be had: the caller's stack, as before */
        return;
    }
    int rc = pthread_attr_setstacksize(&a, 4 * (size_t)NL_ROOMY_BYTES);
    if (!rc)
        rc = pthread_create(&t, &a, run, (void *)fn);
    pthread_attr_destroy(&a);
    if (!rc)
        pthread_join(t, NULL);
    else
        fn();
}
