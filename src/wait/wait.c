/* The waiting design (see wait.h): the policy and a waiter's steps; parking
 * and grant words are in grant.c, the evidence of overload in load.c, the
 * gate in gate.c, the futex calls in futex.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "wait.h"
#include "load.h"

/* ---- policy --------------------------------------------------------------- */
/* the fixed "park" policy of earlier versions: ~100 pauses, 4 yields, park */
#define NL_PARK_SPINS 100u
#define NL_PARK_YIELDS 4u

nl_wait_policy_t nl_wait_policy = { NL_WAIT_ADAPTIVE, 0, 0 };
static char policy_name[48] = "adaptive";

static int parse_u32(const char *s, uint32_t *out)
{
    char *end;
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v > 1000000000ul)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

int nl_wait_set_policy(const char *spec, char *err, size_t errlen)
{
    nl_wait_policy_t p;
    if (!spec)
        spec = "adaptive";
    if (!strcmp(spec, "adaptive")) {
        p = (nl_wait_policy_t){ NL_WAIT_ADAPTIVE, 0, 0 };
    } else if (!strcmp(spec, "spin")) {
        p = (nl_wait_policy_t){ NL_WAIT_SPIN, UINT32_MAX, 0 };
    } else if (!strcmp(spec, "yield")) {
        p = (nl_wait_policy_t){ NL_WAIT_YIELD, NL_PARK_SPINS, 0 };
    } else if (!strcmp(spec, "park")) {
        p = (nl_wait_policy_t){ NL_WAIT_PARK, NL_PARK_SPINS, NL_PARK_YIELDS };
    } else if (!strncmp(spec, "park:", 5) && strlen(spec) < 40) {
        char buf[48];
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
                 "unknown waiting policy '%s': valid choices are adaptive, spin, yield, park, "
                 "park:SPINS:YIELDS (whole numbers)",
                 spec);
    return EINVAL;
}

const char *nl_wait_policy_name(void) { return policy_name; }

/* A child of fork() starts with the forking thread alone: no waiter spins
 * there (and none waits at the gate: gate.c forgets its own). */
static void wait_atfork_child(void)
{
    atomic_store_explicit(&nl_spinning, 0, memory_order_relaxed);
    atomic_store_explicit(&nl_parked, 0, memory_order_relaxed);
}

/* NUMALOCK_WAIT is read once, before main (a bad value keeps the default;
 * the command and the preload check it themselves and say so). */
__attribute__((constructor)) void nl_wait_policy_init(void)
{
    pthread_atfork(NULL, NULL, wait_atfork_child);
    const char *env = getenv("NUMALOCK_WAIT");
    if (env && *env)
        (void)nl_wait_set_policy(env, NULL, 0);
}

/* ---- steps -------------------------------------------------------------------- */
void nl_wait_step_slow(nl_waiter_t *w)
{
    uint32_t n = w->n - 1;
    switch (nl_wait_policy.kind) {
    case NL_WAIT_SPIN:
        w->look_at = UINT32_MAX;
        nl_cpu_relax();
        return;
    case NL_WAIT_YIELD:
        if (n < nl_wait_policy.spins) {
            w->look_at = nl_wait_policy.spins;
            nl_cpu_relax();
        } else {
            nl_machine_yield();
        }
        return;
    case NL_WAIT_PARK:
        if (n < nl_wait_policy.spins) {
            w->look_at = nl_wait_policy.spins;
            nl_cpu_relax();
        } else {
            w->look_at = n + 1;
            if (n >= nl_wait_policy.spins + nl_wait_policy.yields)
                w->due = 1;
            nl_machine_yield();
        }
        return;
    default:
        break;
    }
    /* adaptive: look at the clock and the load */
    uint64_t now = nl_machine_ticks();
    if (!w->since)
        w->since = now;
    else if (!w->over && now - w->mark > nl_ns_to_ticks(NL_GAP_NS))
        nl_note_preempted(); /* we were off the CPU while we meant to spin */
    w->mark = now;
    w->over = (uint8_t)nl_load_level(false);
    /* the process's threads outnumber its CPUs: a few pauses, then give the
     * CPU away (park where the lock can, else yield) at every step; a busy
     * machine: spin a short while (the holder probably runs elsewhere), then
     * the same; otherwise spin up to NL_SPIN_NS */
    uint64_t budget = w->over == NL_LOAD_OWN ? 0 : w->over ? NL_SHARED_SPIN_NS : NL_SPIN_NS;
    if (n >= NL_OVER_PAUSES && now - w->since >= nl_ns_to_ticks(budget))
        w->due = 1;
    if (!w->due) {
        w->look_at = n + (w->over == NL_LOAD_OWN ? 1 : w->over ? 16 : 64);
        nl_cpu_relax();
    } else {
        w->look_at = n + 1; /* every later step looks again */
        nl_machine_yield();
    }
}
