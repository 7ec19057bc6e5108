/* The futex calls (futex.h), on the machine's futex (src/core/machine.h),
 * and the path they take (nl_futex_set_path, NUMALOCK_FUTEX: read once,
 * before main). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "futex.h"

static NL_TLS uint64_t wake_calls; /* this thread's wake system calls */

int nl_futex_wait(void *addr, uint32_t expected)
{
    return nl_machine_futex_wait(addr, expected, 0, 0) ? -1 : 0;
}

int nl_futex_wait_ns(void *addr, uint32_t expected, uint64_t ns)
{
    return nl_machine_futex_wait(addr, expected, ns ? ns : 1, 0) ? -1 : 0;
}

int nl_futex_wait_until(_Atomic uint32_t *w, uint32_t val, const struct timespec *abs, clockid_t clk,
                        int shared)
{
    if (abs && abs->tv_sec < 0)
        return ETIMEDOUT;
    return nl_machine_futex_wait_abs(w, val, abs, clk, shared ? NL_FUTEX_SHARED : 0);
}

int nl_futex_wake(void *addr, int n)
{
    wake_calls++;
    return nl_machine_futex_wake(addr, n, 0);
}

int nl_futex_wake_shared(_Atomic uint32_t *w, int n)
{
    wake_calls++;
    return nl_machine_futex_wake(w, n, NL_FUTEX_SHARED);
}

void nl_futex_node_claim(void *addr)
{
    atomic_store_explicit((_Atomic uint32_t *)addr + 1, nl_machine_futex_node(), memory_order_relaxed);
}

int nl_futex_wait_node(void *addr, uint32_t expected)
{
    return nl_machine_futex_wait(addr, expected, 0, NL_FUTEX_NODE) ? -1 : 0;
}

int nl_futex_wake_node(void *addr, int n)
{
    wake_calls++;
    return nl_machine_futex_wake(addr, n, NL_FUTEX_NODE);
}

uint64_t nl_futex_thread_wakes(void) { return wake_calls; }

/* ---- the path ------------------------------------------------------------------ */
int nl_futex_set_path(const char *spec, char *err, size_t errlen)
{
    int mode = !spec || !strcmp(spec, "auto") ? NL_FUTEX_AUTO
               : !strcmp(spec, "classic")     ? NL_FUTEX_CLASSIC
               : !strcmp(spec, "futex2")      ? NL_FUTEX_FUTEX2
                                              : -1;
    if (mode < 0) {
        if (err && errlen)
            snprintf(err, errlen, "unknown futex path '%s': valid choices are auto, classic, futex2", spec);
        return EINVAL;
    }
    if (nl_machine_futex_use(mode)) {
        if (err && errlen)
            snprintf(err, errlen,
                     "futex path 'futex2' is not available: this kernel has no futex_wait/futex_wake "
                     "system calls; valid choices here are auto, classic");
        return ENOSYS;
    }
    return 0;
}

const char *nl_futex_path_name(void)
{
    int p = nl_machine_futex_path();
    return !(p & NL_FUTEX_FUTEX2) ? "classic" : (p & NL_FUTEX_NUMA_ON) ? "futex2+numa" : "futex2";
}

/* NUMALOCK_FUTEX is read once, before main (a bad value keeps auto; the
 * command and the preload check it themselves and say so). */
__attribute__((constructor)) static void nl_futex_path_init(void)
{
    const char *env = getenv("NUMALOCK_FUTEX");
    if (env && *env)
        (void)nl_futex_set_path(env, NULL, 0);
}
