/* The waiting design (see wait.h): policy, load, short waits, grant words,
 * early wakes and the gate. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

/* NUMALOCK_WAIT is read once, before main (a bad value keeps the default;
 * the command and the preload check it themselves and say so). */
__attribute__((constructor)) void nl_wait_policy_init(void)
{
    const char *env = getenv("NUMALOCK_WAIT");
    if (env && *env)
        (void)nl_wait_set_policy(env, NULL, 0);
}

/* ---- load ------------------------------------------------------------------ */
/* re-sample every ~2.7 ms (8M ticks at 3 GHz): the clock read is the TSC,
 * and /proc/loadavg is read by one waiter per period */
#define NL_LOAD_PERIOD_TICKS 8000000ull

_Atomic uint64_t nl_load_next;
_Atomic uint32_t nl_load_runnable = UINT32_MAX / 2; /* until sampled: overloaded */
_Atomic uint32_t nl_gate_waiters;
static _Atomic int online_cpus;

int nl_cpus_online(void)
{
    int n = atomic_load_explicit(&online_cpus, memory_order_relaxed);
    if (NL_UNLIKELY(n <= 0)) {
        long v = sysconf(_SC_NPROCESSORS_ONLN);
        n = v > 0 ? (int)v : 1;
        atomic_store_explicit(&online_cpus, n, memory_order_relaxed);
    }
    return n;
}

/* runnable tasks now ("R/T" 4th field of /proc/loadavg), -1 if unknown */
static int runnable_tasks(void)
{
    char buf[128];
    int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    char *p = buf;
    for (int field = 0; field < 3; field++) { /* skip the three averages */
        while (*p && *p != ' ')
            p++;
        while (*p == ' ')
            p++;
    }
    if (*p < '0' || *p > '9')
        return -1;
    return (int)strtol(p, NULL, 10);
}

void nl_load_sample(void)
{
    uint64_t now = nl_ticks();
    uint64_t next = atomic_load_explicit(&nl_load_next, memory_order_relaxed);
    if (now < next)
        return;
    /* one thread samples; the others keep the previous answer */
    if (!atomic_compare_exchange_strong_explicit(&nl_load_next, &next, now + NL_LOAD_PERIOD_TICKS,
                                                 memory_order_relaxed, memory_order_relaxed))
        return;
    int r = runnable_tasks();
    /* unknown: say overloaded (parking is the safe answer) */
    atomic_store_explicit(&nl_load_runnable, r < 0 ? (uint32_t)nl_cpus_online() + 1 : (uint32_t)r,
                          memory_order_relaxed);
}

/* ---- short waits ------------------------------------------------------------ */
void nl_spin_yield_slow(nl_spinner_t *s)
{
    uint32_t n = s->n - 1;
    switch (nl_wait_policy.kind) {
    case NL_WAIT_SPIN:
        s->yield_at = UINT32_MAX;
        nl_cpu_relax();
        return;
    case NL_WAIT_YIELD:
    case NL_WAIT_PARK:
        if (n < nl_wait_policy.spins) {
            s->yield_at = nl_wait_policy.spins;
            nl_cpu_relax();
        } else {
            sched_yield();
        }
        return;
    default:
        if (!nl_overloaded()) {
            s->yield_at = n + 256; /* ask again after 256 pauses */
            nl_cpu_relax();
        } else if (n < NL_OVER_PAUSES) {
            s->yield_at = NL_OVER_PAUSES;
            nl_cpu_relax();
        } else {
            s->yield_at = n + 1; /* every later step asks again */
            sched_yield();
        }
    }
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
void nl_wake_parked(void *addr)
{
    nl_self()->wc.wakes++;
    nl_futex_wake(addr, 1);
}

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
    if (woke) { /* else it was granted meanwhile: the grant wakes it */
        nl_self()->wc.wakes++;
        nl_futex_wake(addr, 1);
    }
}

/* ---- grant words -------------------------------------------------------------
 * The slow path of a grant-word wait, for both widths (`wide`: the word is
 * 64 bits and the futex sleeps on its low half, little-endian). Spin (the
 * budget depends on the policy and the load), then move the word from
 * WAITING to PARKED and sleep until it changes: to a grant (return it), or
 * back to WAITING (an early wake: spin again). */
static uint64_t await_slow(void *w, bool wide)
{
    _Atomic uint32_t *w32 = w;
    _Atomic uint64_t *w64 = w;
#define LOAD() (wide ? atomic_load_explicit(w64, memory_order_acquire) \
                     : (uint64_t)atomic_load_explicit(w32, memory_order_acquire))
#define GRANTED(v) ((v) != NL_GRANT_WAITING && (v) != NL_GRANT_PARKED)
    nl_self_t *self = nl_self();
    uint64_t v;
    for (;;) {
        if (nl_wait_policy.kind == NL_WAIT_ADAPTIVE) {
            uint64_t start = nl_ticks();
            bool over = nl_overloaded();
            uint64_t budget = over ? NL_OVER_SPIN_TICKS : NL_SPIN_TICKS;
            for (uint32_t i = 1;; i++) {
                v = LOAD();
                if (GRANTED(v))
                    return v;
                if (!over || i <= NL_OVER_PAUSES)
                    nl_cpu_relax();
                else
                    sched_yield();
                if ((i & 63) == 0) {
                    uint64_t t = nl_ticks() - start;
                    if (t > budget)
                        break;
                    if ((i & 1023) == 0 && over != nl_overloaded()) {
                        over = !over;
                        budget = over ? NL_OVER_SPIN_TICKS : NL_SPIN_TICKS;
                    }
                }
            }
        } else {
            nl_spinner_t sp = NL_SPINNER_INIT;
            uint32_t budget = nl_wait_policy.spins;
            if (nl_wait_policy.kind == NL_WAIT_PARK && budget != UINT32_MAX)
                budget += nl_wait_policy.yields;
            for (uint32_t i = 0; nl_wait_policy.kind != NL_WAIT_PARK || i < budget; i++) {
                v = LOAD();
                if (GRANTED(v))
                    return v;
                nl_spin_once(&sp);
            }
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
            if (parked) {
                self->wc.parks++;
                self->parked_last = true;
                nl_futex_wait(w, NL_GRANT_PARKED);
            }
            v = LOAD();
            if (GRANTED(v)) {
                if (parked)
                    self->wc.to_parked++; /* the lock came while we slept */
                return v;
            }
            if (v == NL_GRANT_WAITING)
                break; /* nudged: the lock is near, spin again */
        }
    }
#undef GRANTED
#undef LOAD
}

uint32_t nl_await32_slow(_Atomic uint32_t *w) { return (uint32_t)await_slow(w, false); }
uint64_t nl_await64_slow(_Atomic uint64_t *w) { return await_slow(w, true); }

/* ---- the gate ----------------------------------------------------------------
 * Passive waiters sleep on a bucket chosen by the lock's address for a time
 * that grows with the number of passive waiters (so the process wakes about
 * once per NL_GATE_STEP_NS whatever their number), then queue. A bucket
 * remembers the node of the last thread that left it for the lock: a waiter
 * of another node sleeps again unless that node has been preferred for
 * NL_GATE_STAY_TICKS, or it has waited NL_GATE_MAX_ROUNDS rounds. */
#define NL_GATE_BUCKETS 256u
/* Each hand-over between batches moves the lock's data to another core (on
 * kvmap, 16 threads on 2 cores, one every ~200 us cost 20 % of the
 * throughput against glibc's mutex, which hands over a few hundred times a
 * second): the passive waiters of a process wake about once per 100 us
 * together, and stay off a node that keeps the lock for ~10 ms. */
#define NL_GATE_STEP_NS 100000ull     /* 100 us per passive waiter         */
#define NL_GATE_MIN_NS 100000ull      /* 100 us                            */
#define NL_GATE_MAX_NS 5000000ull     /* 5 ms                              */
#define NL_GATE_STAY_TICKS 25000000ull /* ~10 ms on one node               */
#define NL_GATE_MAX_ROUNDS 32u

typedef struct {
    _Alignas(NL_CACHELINE) _Atomic uint32_t seq; /* futex word (never woken: timed sleeps) */
    _Atomic int32_t node;                        /* node preferred, -1 none */
    _Atomic uint64_t since;                      /* preferred since (ticks) */
} gate_bucket_t;

static gate_bucket_t gate[NL_GATE_BUCKETS];

void nl_gate_slow(const void *lock)
{
    nl_self_t *s = nl_self();
    uintptr_t a = (uintptr_t)lock;
    gate_bucket_t *b = &gate[((a >> 6) ^ (a >> 14)) % NL_GATE_BUCKETS];
    int node = nl_self_node(s);
    uint32_t n = atomic_fetch_add_explicit(&nl_gate_waiters, 1, memory_order_relaxed) + 1;
    for (uint32_t round = 1;; round++) {
        uint64_t ns = NL_GATE_STEP_NS * n;
        ns = ns < NL_GATE_MIN_NS ? NL_GATE_MIN_NS : ns > NL_GATE_MAX_NS ? NL_GATE_MAX_NS : ns;
        s->wc.gate_parks++;
        nl_futex_wait_ns(&b->seq, atomic_load_explicit(&b->seq, memory_order_relaxed), ns);
        int pref = atomic_load_explicit(&b->node, memory_order_relaxed);
        if (pref == node)
            break;
        uint64_t now = nl_ticks();
        if (pref < 0 || round >= NL_GATE_MAX_ROUNDS ||
            now - atomic_load_explicit(&b->since, memory_order_relaxed) > NL_GATE_STAY_TICKS) {
            atomic_store_explicit(&b->since, now, memory_order_relaxed);
            atomic_store_explicit(&b->node, node, memory_order_relaxed);
            break;
        }
        n = atomic_load_explicit(&nl_gate_waiters, memory_order_relaxed);
    }
    atomic_fetch_sub_explicit(&nl_gate_waiters, 1, memory_order_relaxed);
}
