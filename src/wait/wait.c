/* Waiting policies: spin, spin-then-yield, spin-then-yield-then-park (futex). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "../core/internal.h"

/* Defaults: ~100 pauses (a few microseconds), a few yields, then park. With
 * more threads than cores, a waiter that keeps spinning only steals the CPU
 * from the thread it waits for. */
#define NL_DEFAULT_SPINS 100u
#define NL_DEFAULT_YIELDS 4u

nl_wait_policy_t nl_wait_policy = { NL_WAIT_PARK, NL_DEFAULT_SPINS, NL_DEFAULT_YIELDS };
static char policy_name[48] = "park";

static int parse_u32(const char *s, uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || v > 1000000000ul || *s == '-')
        return -1;
    *out = (uint32_t)v;
    return 0;
}

int nl_wait_set_policy(const char *spec, char *err, size_t errlen)
{
    nl_wait_policy_t p;
    if (!spec)
        spec = "park";
    if (!strcmp(spec, "spin")) {
        p = (nl_wait_policy_t){ NL_WAIT_SPIN, UINT32_MAX, 0 };
    } else if (!strcmp(spec, "yield")) {
        p = (nl_wait_policy_t){ NL_WAIT_YIELD, NL_DEFAULT_SPINS, 0 };
    } else if (!strcmp(spec, "park")) {
        p = (nl_wait_policy_t){ NL_WAIT_PARK, NL_DEFAULT_SPINS, NL_DEFAULT_YIELDS };
    } else if (!strncmp(spec, "park:", 5)) {
        char buf[64];
        snprintf(buf, sizeof buf, "%s", spec + 5);
        char *colon = strchr(buf, ':');
        if (!colon)
            goto bad;
        *colon = 0;
        p.kind = NL_WAIT_PARK;
        if (parse_u32(buf, &p.spins) || parse_u32(colon + 1, &p.yields))
            goto bad;
    } else {
        goto bad;
    }
    nl_wait_policy = p;
    snprintf(policy_name, sizeof policy_name, "%s", spec);
    return 0;
bad:
    if (err && errlen)
        snprintf(err, errlen,
                 "unknown waiting policy '%s': valid choices are spin, yield, park, park:SPINS:YIELDS",
                 spec);
    return EINVAL;
}

const char *nl_wait_policy_name(void) { return policy_name; }

void nl_wait_policy_init(void)
{
    const char *env = getenv("NUMALOCK_WAIT");
    if (env && *env)
        (void)nl_wait_set_policy(env, NULL, 0); /* bad value: keep the default */
}

int nl_futex_wait(void *addr, uint32_t expected)
{
    return (int)syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

void nl_futex_wake(void *addr, int n)
{
    syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

/* The slow path of a grant-word wait, for both widths (`wide`: the word is
 * 64 bits and the futex sleeps on its low half, little-endian). Spin, yield,
 * then move the word from WAITING to PARKED and sleep until it changes. */
static uint64_t await_slow(void *w, bool wide)
{
    _Atomic uint32_t *w32 = w;
    _Atomic uint64_t *w64 = w;
#define LOAD() (wide ? atomic_load_explicit(w64, memory_order_acquire) \
                     : (uint64_t)atomic_load_explicit(w32, memory_order_acquire))
    uint64_t v;
    nl_spinner_t sp = NL_SPINNER_INIT;
    uint32_t budget = nl_wait_policy.spins;
    if (nl_wait_policy.kind == NL_WAIT_PARK && budget != UINT32_MAX)
        budget += nl_wait_policy.yields;
    for (uint32_t i = 0; nl_wait_policy.kind != NL_WAIT_PARK || i < budget; i++) {
        v = LOAD();
        if (v != NL_GRANT_WAITING && v != NL_GRANT_PARKED)
            return v;
        nl_spin_once(&sp);
    }
    for (;;) {
        bool parked;
        if (wide) {
            uint64_t expect = NL_GRANT_WAITING;
            parked = atomic_compare_exchange_strong_explicit(w64, &expect, NL_GRANT_PARKED,
                                                             memory_order_acq_rel, memory_order_acquire) ||
                     expect == NL_GRANT_PARKED;
        } else {
            uint32_t expect = NL_GRANT_WAITING;
            parked = atomic_compare_exchange_strong_explicit(w32, &expect, NL_GRANT_PARKED,
                                                             memory_order_acq_rel, memory_order_acquire) ||
                     expect == NL_GRANT_PARKED;
        }
        if (parked)
            nl_futex_wait(w, NL_GRANT_PARKED);
        v = LOAD();
        if (v != NL_GRANT_WAITING && v != NL_GRANT_PARKED)
            return v;
    }
#undef LOAD
}

uint32_t nl_await32_slow(_Atomic uint32_t *w) { return (uint32_t)await_slow(w, false); }
uint64_t nl_await64_slow(_Atomic uint64_t *w) { return await_slow(w, true); }

uint64_t nl_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
