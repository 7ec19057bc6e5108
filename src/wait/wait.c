/* The waiting design (see wait.h): policy, steps, parking, grant words and
 * early wakes. The evidence of overload is in load.c, the gate in gate.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "wait.h"

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
 * and none waits at the gate there. */
static void wait_atfork_child(void)
{
    nl_gate_forget();
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
            sched_yield();
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
            sched_yield();
        }
        return;
    default:
        break;
    }
    /* adaptive: look at the clock and the load */
    uint64_t now = nl_clock_ticks();
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
        sched_yield();
    }
}

void nl_wait_park(nl_waiter_t *w, _Atomic uint32_t *word, uint32_t val)
{
    bool counted = w->counted;
    nl_wait_uncount(w);
    if (counted)
        atomic_fetch_add_explicit(&nl_parked, 1, memory_order_relaxed);
    w->self->wc.parks++;
    nl_futex_wait(word, val);
    if (counted)
        atomic_fetch_sub_explicit(&nl_parked, 1, memory_order_relaxed);
    nl_wait_count(w);
    w->slept = 1;
    w->parked = 1;
    nl_wait_renew(w); /* a fresh spin budget after the wake-up */
}

void nl_wait_wake(void *word, int n)
{
    nl_self()->wc.wakes++;
    nl_futex_wake(word, n);
}

/* ---- futexes ---------------------------------------------------------------- */
int nl_futex_wait(void *addr, uint32_t expected)
{
    return (int)syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

int nl_futex_wait_ns(void *addr, uint32_t expected, uint64_t ns)
{
    struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
    return (int)syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, expected, &ts, NULL, 0);
}

int nl_futex_wait_until(_Atomic uint32_t *w, uint32_t val, const struct timespec *abs, clockid_t clk,
                        int shared)
{
    /* FUTEX_WAIT_BITSET takes an absolute timeout, on either clock */
    int op = FUTEX_WAIT_BITSET | (shared ? 0 : FUTEX_PRIVATE_FLAG) |
             (abs && clk == CLOCK_REALTIME ? FUTEX_CLOCK_REALTIME : 0);
    if (abs && abs->tv_sec < 0)
        return ETIMEDOUT;
    long r = syscall(SYS_futex, w, op, val, abs, NULL, FUTEX_BITSET_MATCH_ANY);
    return r == 0 ? 0 : errno;
}

void nl_futex_wake_shared(_Atomic uint32_t *w, int n) { syscall(SYS_futex, w, FUTEX_WAKE, n, NULL, NULL, 0); }

void nl_futex_wake(void *addr, int n)
{
    syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

/* a grant found its waiter parked (the waiter counts the hand-over) */
void nl_wake_parked(void *addr) { nl_wait_wake(addr, 1); }

void nl_nudge_slow(void *addr, bool wide)
{
    bool woke;
    if (wide) {
        uint64_t expect = NL_GRANT_PARKED;
        woke = atomic_compare_exchange_strong_explicit((_Atomic uint64_t *)addr, &expect,
                                                       NL_GRANT_WAITING, memory_order_relaxed,
                                                       memory_order_relaxed);
    } else {
        uint32_t expect = NL_GRANT_PARKED;
        woke = atomic_compare_exchange_strong_explicit((_Atomic uint32_t *)addr, &expect,
                                                       NL_GRANT_WAITING, memory_order_relaxed,
                                                       memory_order_relaxed);
    }
    if (woke) /* else it was granted meanwhile: the grant wakes it */
        nl_wait_wake(wide ? nl_futex64(addr) : addr, 1);
}

/* ---- grant words -------------------------------------------------------------
 * The slow path of a grant-word wait, for both widths (`wide`: the word is
 * 64 bits and the futex is its low half). Step until granted or the spin
 * budget is spent, then move the word from WAITING to PARKED and sleep
 * until it changes: to a grant (return it), or back to WAITING (an early
 * wake: spin again). */
uint64_t nl_wait_grant_slow(nl_waiter_t *w, void *word, bool wide)
{
    _Atomic uint32_t *w32 = word;
    _Atomic uint64_t *w64 = word;
#define LOAD() (wide ? atomic_load_explicit(w64, memory_order_acquire) \
                     : (uint64_t)atomic_load_explicit(w32, memory_order_acquire))
#define GRANTED(v) ((v) != NL_GRANT_WAITING && (v) != NL_GRANT_PARKED)
    uint64_t v;
    for (;;) {
        while (!nl_wait_due(w)) {
            v = LOAD();
            if (GRANTED(v))
                return v;
            nl_wait_step(w);
        }
        /* park until granted or nudged */
        for (;;) {
            bool parked;
            if (wide) {
                uint64_t expect = NL_GRANT_WAITING;
                parked = atomic_compare_exchange_strong_explicit(w64, &expect, NL_GRANT_PARKED,
                                                                 memory_order_acq_rel,
                                                                 memory_order_acquire) ||
                         expect == NL_GRANT_PARKED;
            } else {
                uint32_t expect = NL_GRANT_WAITING;
                parked = atomic_compare_exchange_strong_explicit(w32, &expect, NL_GRANT_PARKED,
                                                                 memory_order_acq_rel,
                                                                 memory_order_acquire) ||
                         expect == NL_GRANT_PARKED;
            }
            if (parked)
                nl_wait_park(w, wide ? nl_futex64(w64) : w32, NL_GRANT_PARKED);
            v = LOAD();
            if (GRANTED(v))
                return v;
            if (v == NL_GRANT_WAITING)
                break; /* nudged: the lock is near, spin again */
        }
    }
#undef GRANTED
#undef LOAD
}
