/*
 * The futex experiments of `perf bench futex` (Bueso & Norton, "An Overview
 * of Kernel Lock Improvements", LinuxCon 2014: "Futexes", "perf-bench
 * futex"), with the kernel's later answers to the slides as axes:
 *
 *   futex-hash           each thread waits on each of its --futexes futexes
 *                        with a value the futex does not hold: every call
 *                        hashes the futex and takes its bucket's lock, and
 *                        nothing sleeps. Operations per second per thread
 *                        (mean, spread as perf prints it) and in total.
 *   futex-wake           the threads sleep on one futex, woken --nwakes at a
 *                        time: the time to wake them all.
 *   futex-wake-parallel  the same, woken by --wakers threads at once, each
 *                        its share in one call: the wakers' mean time.
 *   futex-requeue        the threads sleep on one futex and are moved to a
 *                        second --nrequeue at a time: the time to move all.
 *
 * Axes beside the threads: --hash, the process's private futex hash
 * (default: the kernel's choice; global: the system's shared table; N: N
 * slots, a power of two), set with prctl(PR_FUTEX_HASH) before any thread
 * starts; --call: futex, the classic futex call as perf makes it; futex2,
 * futex_wait/futex_wake/futex_requeue (Linux 6.7) on the same words;
 * futex2-numa, the same with FUTEX2_NUMA on two-word futexes (value, node;
 * the node ~0, so that the first waiter's kernel writes its node in and the
 * futex lives in that node's table, past any private hash).
 * Each measurement runs in a child process of its own (a process whose hash
 * went global cannot get a private one again); --repeat rounds, interleaved
 * over the configurations, keep the median with its minimum and maximum.
 * Threads are pinned round-robin over the CPUs this process may use, as
 * perf pins them.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/futex.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench.h"

/* The kernel's ABI where this system's headers predate it. */
#ifndef PR_FUTEX_HASH
#define PR_FUTEX_HASH 78
#define PR_FUTEX_HASH_SET_SLOTS 1
#define PR_FUTEX_HASH_GET_SLOTS 2
#endif
#ifndef SYS_futex_wake
#define SYS_futex_wake 454
#define SYS_futex_wait 455
#define SYS_futex_requeue 456
#endif
#ifndef FUTEX2_SIZE_U32
#define FUTEX2_SIZE_U32 0x02
#endif
#ifndef FUTEX2_NUMA
#define FUTEX2_NUMA 0x04
#endif
#ifndef FUTEX2_PRIVATE
#define FUTEX2_PRIVATE FUTEX_PRIVATE_FLAG
#endif
#define FX_F2 (FUTEX2_SIZE_U32 | FUTEX2_PRIVATE)
/* the calls (--call) */
enum { FX_FUTEX = 0, FX_FUTEX2 = 1, FX_NUMA = 2 };
static const char *const fx_call_name[] = { "futex", "futex2", "futex2-numa" };
#define FX_FLAGS(call) (FX_F2 | ((call) == FX_NUMA ? FUTEX2_NUMA : 0))
#define FX_ANY 0xffffffffu

#define FX_MAX_LIST 16
#define FX_MAX_ROUNDS 99
#define FX_MAX_THREADS 1024

/* ---- the calls ------------------------------------------------------------------ */
/* a futex: its value, and (numa) its node half beside it */
typedef struct {
    _Alignas(8) _Atomic uint32_t v;
    uint32_t node;
} fx_pair_t;

static long fx_wait(_Atomic uint32_t *w, uint32_t val, int call)
{
    if (call)
        return syscall(SYS_futex_wait, w, (unsigned long)val, (unsigned long)FX_ANY, FX_FLAGS(call), NULL,
                       CLOCK_MONOTONIC);
    return syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static long fx_wake(_Atomic uint32_t *w, int n, int call)
{
    long r = call ? syscall(SYS_futex_wake, w, (unsigned long)FX_ANY, n, FX_FLAGS(call))
                  : syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
    return r > 0 ? r : 0;
}

/* move up to n sleepers of `from` (holding val) to `to`: how many moved */
static long fx_requeue(_Atomic uint32_t *from, _Atomic uint32_t *to, int n, uint32_t val, int call)
{
    long r;
    if (call) {
        struct futex_waitv v[2] = { { val, (uintptr_t)from, FX_FLAGS(call), 0 },
                                    { 0, (uintptr_t)to, FX_FLAGS(call), 0 } };
        r = syscall(SYS_futex_requeue, v, 0u, 0, n);
    } else {
        r = syscall(SYS_futex, from, FUTEX_CMP_REQUEUE_PRIVATE, 0, (long)n, to, val);
    }
    return r > 0 ? r : 0;
}

/* ---- a configuration, its child process, its rounds --------------------------- */
typedef struct {
    int threads, futexes, hash, call; /* hash: -1 the kernel's default, 0 global, N slots */
} fx_conf_t;

/* what a child reports (shared memory) */
typedef struct {
    int ok, slots;
    char err[256];
    double value;                    /* the round's figure */
    double per_thread[FX_MAX_THREADS]; /* futex-hash: each thread's ops/s */
} fx_out_t;

typedef struct fx_work fx_work_t;
struct fx_work {
    const char *what;                 /* the figure: "total_ops_per_s", "wake_all_ms", ... */
    int (*measure)(const fx_work_t *wk, const fx_conf_t *f, fx_out_t *o);
    double duration;
    int nwakes, wakers, iterations;
};

static void fx_pin(int i)
{
    cpu_set_t may, one;
    if (sched_getaffinity(0, sizeof may, &may) || !CPU_COUNT(&may))
        return;
    int k = i % CPU_COUNT(&may), cpu = 0;
    for (; cpu < CPU_SETSIZE; cpu++)
        if (CPU_ISSET(cpu, &may) && k-- == 0)
            break;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    sched_setaffinity(0, sizeof one, &one);
}

/* the child: the hash first (no thread exists yet), then the measurement */
static void fx_child(const fx_work_t *wk, const fx_conf_t *f, fx_out_t *o)
{
    if (f->hash >= 0 && prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, (unsigned long)f->hash, 0ul, 0ul)) {
        snprintf(o->err, sizeof o->err, "prctl(PR_FUTEX_HASH, SET_SLOTS, %d) failed: %s", f->hash, strerror(errno));
        _exit(1);
    }
    if (wk->measure(wk, f, o) == 0) {
        int s = prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_GET_SLOTS, 0ul, 0ul, 0ul);
        o->slots = s < 0 ? -1 : s;
        o->ok = 1;
    }
    _exit(0);
}

/* one round of one configuration, in a fresh process */
static int fx_round(bench_ctx_t *c, const fx_work_t *wk, const fx_conf_t *f, fx_out_t *o)
{
    memset(o, 0, sizeof *o);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(c->err, sizeof c->err, "fork failed: %s", strerror(errno));
        return errno;
    }
    if (pid == 0)
        fx_child(wk, f, o);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (!o->ok) {
        snprintf(c->err, sizeof c->err, "%s: %s", c->workload,
                 o->err[0] ? o->err : "the measuring process failed");
        return EIO;
    }
    return 0;
}

/* ---- waiting until the sleepers sleep ---------------------------------------------- */
/* the thread's state in /proc: 'S' once it sleeps in the kernel */
static char fx_state(pid_t tid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return '?';
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    fclose(fp);
    buf[n] = 0;
    const char *p = strrchr(buf, ')');
    return p && p[1] == ' ' ? p[2] : '?';
}

typedef struct {
    _Atomic uint32_t *word;
    int call, n;
    _Atomic int phase, arrived, left;
    _Atomic pid_t tid[FX_MAX_THREADS];
} fx_sleepers_t;

typedef struct {
    fx_sleepers_t *s;
    int i;
} fx_sleeper_arg_t;

/* A sleeper: at each phase, arrive and sleep on the word (holding 0) until
 * a wake (or a requeue and a wake) lets it go; phase -1 ends it. */
static void *fx_sleeper(void *p)
{
    fx_sleeper_arg_t *a = p;
    fx_sleepers_t *s = a->s;
    fx_pin(a->i);
    atomic_store(&s->tid[a->i], (pid_t)syscall(SYS_gettid));
    for (int seen = 0;;) {
        int ph;
        while ((ph = atomic_load(&s->phase)) == seen)
            sched_yield();
        if (ph < 0)
            return NULL;
        seen = ph;
        atomic_fetch_add(&s->arrived, 1);
        while (fx_wait(s->word, 0, s->call) && errno == EINTR)
            ;
        atomic_fetch_add(&s->left, 1);
    }
}

/* Start a phase and return once every sleeper sleeps in the kernel. */
static void fx_phase(fx_sleepers_t *s, int ph)
{
    atomic_store(&s->arrived, 0);
    atomic_store(&s->left, 0);
    atomic_store(&s->phase, ph);
    while (atomic_load(&s->arrived) < s->n)
        sched_yield();
    for (int i = 0; i < s->n; i++)
        while (fx_state(atomic_load(&s->tid[i])) != 'S')
            sched_yield();
}

static int fx_start(fx_sleepers_t *s, pthread_t *th, fx_sleeper_arg_t *args, fx_out_t *o)
{
    for (int i = 0; i < s->n; i++) {
        args[i] = (fx_sleeper_arg_t){ s, i };
        if (pthread_create(&th[i], NULL, fx_sleeper, &args[i])) {
            snprintf(o->err, sizeof o->err, "cannot create sleeper %d", i);
            s->n = i;
            return -1;
        }
    }
    return 0;
}

static void fx_stop(fx_sleepers_t *s, pthread_t *th)
{
    atomic_store(&s->phase, -1);
    for (int i = 0; i < s->n; i++)
        pthread_join(th[i], NULL);
}

/* ---- futex-hash ------------------------------------------------------------------- */
typedef struct {
    const fx_conf_t *f;
    int i;
    _Atomic int *ready, *stop;
    _Alignas(64) _Atomic uint64_t ops;
} fx_hasher_t;

static void *fx_hasher(void *p)
{
    fx_hasher_t *h = p;
    int F = h->f->futexes, numa = h->f->call == FX_NUMA, call = h->f->call;
    fx_pin(h->i);
    fx_pair_t *pair = numa ? aligned_alloc(64, ((size_t)F * sizeof *pair + 63) / 64 * 64) : NULL;
    _Atomic uint32_t *word = numa ? NULL : aligned_alloc(64, ((size_t)F * 4 + 63) / 64 * 64);
    for (int i = 0; i < F; i++) {
        if (numa)
            pair[i] = (fx_pair_t){ 0, FX_ANY };
        else
            atomic_init(&word[i], 0);
    }
    atomic_fetch_add(h->ready, 1);
    uint64_t n = 0;
    while (!atomic_load_explicit(h->stop, memory_order_relaxed)) {
        for (int i = 0; i < F; i++) {
            fx_wait(numa ? &pair[i].v : &word[i], 1234, call); /* EAGAIN: the value differs */
            if ((++n & 255) == 0) {
                atomic_store_explicit(&h->ops, n, memory_order_relaxed);
                if (atomic_load_explicit(h->stop, memory_order_relaxed))
                    break;
            }
        }
    }
    free(pair);
    free((void *)word);
    return NULL;
}

static int fx_hash_measure(const fx_work_t *wk, const fx_conf_t *f, fx_out_t *o)
{
    int T = f->threads;
    _Atomic int ready = 0, stop = 0;
    fx_hasher_t *h = aligned_alloc(64, (size_t)T * sizeof *h);
    pthread_t *th = malloc((size_t)T * sizeof *th);
    uint64_t *start = malloc((size_t)T * sizeof *start);
    if (!h || !th || !start)
        return snprintf(o->err, sizeof o->err, "out of memory"), -1;
    for (int i = 0; i < T; i++) {
        h[i] = (fx_hasher_t){ .f = f, .i = i, .ready = &ready, .stop = &stop };
        if (pthread_create(&th[i], NULL, fx_hasher, &h[i]))
            return snprintf(o->err, sizeof o->err, "cannot create thread %d of %d", i + 1, T), -1;
    }
    while (atomic_load(&ready) < T)
        sched_yield();
    struct timespec warm = { 0, 100000000 }, run = { (time_t)wk->duration,
                                                       (long)((wk->duration - (double)(time_t)wk->duration) * 1e9) };
    nanosleep(&warm, NULL);
    for (int i = 0; i < T; i++)
        start[i] = atomic_load(&h[i].ops);
    uint64_t t0 = nl_clock_ns();
    nanosleep(&run, NULL);
    double secs = (double)(nl_clock_ns() - t0) / 1e9;
    o->value = 0;
    for (int i = 0; i < T; i++) {
        o->per_thread[i] = (double)(atomic_load(&h[i].ops) - start[i]) / secs;
        o->value += o->per_thread[i];
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < T; i++)
        pthread_join(th[i], NULL);
    free(h), free(th), free(start);
    return 0;
}

/* ---- futex-wake, futex-wake-parallel, futex-requeue -------------------------------- */
static int fx_sleepers_measure(const fx_work_t *wk, const fx_conf_t *f, fx_out_t *o,
                               double (*cycle)(const fx_work_t *, fx_sleepers_t *, fx_pair_t *))
{
    static fx_pair_t w[2] = { { 0, FX_ANY }, { 0, FX_ANY } }; /* the futex, the requeue's target */
    static fx_sleepers_t s;
    static pthread_t th[FX_MAX_THREADS];
    static fx_sleeper_arg_t args[FX_MAX_THREADS];
    memset(&s, 0, sizeof s);
    s.word = &w[0].v;
    s.call = f->call;
    s.n = f->threads;
    if (fx_start(&s, th, args, o))
        return fx_stop(&s, th), -1;
    double sum = 0;
    for (int it = 1; it <= wk->iterations; it++) {
        fx_phase(&s, it);
        sum += cycle(wk, &s, w);
        while (atomic_load(&s.left) < s.n) /* every sleeper left: the next phase starts clean */
            sched_yield();
    }
    fx_stop(&s, th);
    o->value = sum / wk->iterations;
    return 0;
}

/* wake them all, nwakes at a time: milliseconds */
static double fx_wake_cycle(const fx_work_t *wk, fx_sleepers_t *s, fx_pair_t *w)
{
    uint64_t t0 = nl_clock_ns();
    for (int woken = 0; woken < s->n;)
        woken += (int)fx_wake(&w[0].v, wk->nwakes, s->call);
    return (double)(nl_clock_ns() - t0) / 1e6;
}

/* move them all to the second futex, nwakes at a time (milliseconds), then
 * wake them there */
static double fx_requeue_cycle(const fx_work_t *wk, fx_sleepers_t *s, fx_pair_t *w)
{
    uint64_t t0 = nl_clock_ns();
    for (int moved = 0; moved < s->n;)
        moved += (int)fx_requeue(&w[0].v, &w[1].v, wk->nwakes, 0, s->call);
    double ms = (double)(nl_clock_ns() - t0) / 1e6;
    for (int woken = 0; woken < s->n;)
        woken += (int)fx_wake(&w[1].v, s->n, s->call);
    return ms;
}

/* the parallel wakers: each wakes its share in one call; microseconds */
typedef struct {
    fx_sleepers_t *s;
    int share, i;
    _Atomic int *go;
    double us;
    long woken;
} fx_waker_t;

static void *fx_waker(void *p)
{
    fx_waker_t *k = p;
    fx_pin(k->s->n + k->i);
    while (!atomic_load(k->go))
        ;
    uint64_t t0 = nl_clock_ns();
    k->woken = fx_wake(k->s->word, k->share, k->s->call);
    k->us = (double)(nl_clock_ns() - t0) / 1e3;
    return NULL;
}

static double fx_parallel_cycle(const fx_work_t *wk, fx_sleepers_t *s, fx_pair_t *w)
{
    fx_waker_t k[64];
    pthread_t th[64];
    _Atomic int go = 0;
    int W = wk->wakers, created = 0;
    long woken = 0;
    double sum = 0;
    for (int i = 0; i < W; i++) {
        k[i] = (fx_waker_t){ .s = s, .share = s->n / W, .i = i, .go = &go };
        created += pthread_create(&th[i], NULL, fx_waker, &k[i]) == 0;
    }
    atomic_store(&go, 1);
    for (int i = 0; i < created; i++) {
        pthread_join(th[i], NULL);
        sum += k[i].us;
        woken += k[i].woken;
    }
    while (woken < s->n) /* what the shares left (a share rounded down) */
        woken += fx_wake(&w[0].v, s->n, s->call);
    return created ? sum / created : NAN;
}

static int fx_wake_measure(const fx_work_t *wk, const fx_conf_t *f, fx_out_t *o)
{
    return fx_sleepers_measure(wk, f, o, fx_wake_cycle);
}
static int fx_parallel_measure(const fx_work_t *wk, const fx_conf_t *f, fx_out_t *o)
{
    return fx_sleepers_measure(wk, f, o, fx_parallel_cycle);
}
static int fx_requeue_measure(const fx_work_t *wk, const fx_conf_t *f, fx_out_t *o)
{
    return fx_sleepers_measure(wk, f, o, fx_requeue_cycle);
}

/* ---- options ------------------------------------------------------------------ */
typedef struct {
    int futexes[FX_MAX_LIST], nfutexes;
    int hash[FX_MAX_LIST], nhash;
    int call[FX_MAX_LIST], ncall;
    int repeat;
} fx_axes_t;

/* "a,b,c" through one parser of an item; the count, or -1 with c->err set */
static int fx_list(bench_ctx_t *c, const char *opt, int *out, int (*item)(const char *, int *), const char *valid)
{
    char buf[512];
    int n = 0;
    snprintf(buf, sizeof buf, "%s", bench_opt(c, opt));
    for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == FX_MAX_LIST || item(tok, &out[n])) {
            snprintf(c->err, sizeof c->err, "bad value '%s' for --%s: %s", n == FX_MAX_LIST ? bench_opt(c, opt) : tok,
                     opt, valid);
            return -1;
        }
        n++;
    }
    if (!n)
        snprintf(c->err, sizeof c->err, "empty --%s: %s", opt, valid);
    return n ? n : -1;
}

static int fx_int(const char *s, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}
static int fx_futexes_item(const char *s, int *out) { return fx_int(s, 1, 1 << 20, out); }
static int fx_hash_item(const char *s, int *out)
{
    if (!strcmp(s, "default"))
        return *out = -1, 0;
    if (!strcmp(s, "global"))
        return *out = 0, 0;
    return fx_int(s, 2, 1 << 20, out) || (*out & (*out - 1)) ? -1 : 0;
}
static int fx_call_item(const char *s, int *out)
{
    for (*out = 0; *out < 3; ++*out)
        if (!strcmp(s, fx_call_name[*out]))
            return 0;
    return -1;
}

/* Does this kernel have what the axes ask for? 0, or EINVAL with a sentence. */
static int fx_kernel_check(bench_ctx_t *c, const fx_axes_t *a)
{
    for (int i = 0; i < a->nhash; i++)
        if (a->hash[i] >= 0 && prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_GET_SLOTS, 0ul, 0ul, 0ul) < 0) {
            snprintf(c->err, sizeof c->err,
                     "--hash %s: this kernel has no private futex hash (prctl PR_FUTEX_HASH: %s); valid here: default",
                     bench_opt(c, "hash"), strerror(errno));
            return EINVAL;
        }
    for (int i = 0; i < a->ncall; i++)
        if (a->call[i]) {
            fx_pair_t p = { 0, 0 };
            if (fx_wait(&p.v, 1, a->call[i]) == 0 || errno != EAGAIN) {
                snprintf(c->err, sizeof c->err, "--call %s: this kernel does not take it (futex_wait: %s); valid "
                         "here: futex%s", fx_call_name[a->call[i]], strerror(errno), a->call[i] == FX_NUMA &&
                         fx_wait(&p.v, 1, FX_FUTEX2) && errno == EAGAIN ? ", futex2" : "");
                return EINVAL;
            }
        }
    return 0;
}

static int fx_axes(bench_ctx_t *c, fx_axes_t *a, int with_futexes)
{
    const char *pow2 = "default, global, or a power of two from 2 to 1048576 (slots), comma-separated";
    if ((with_futexes &&
         (a->nfutexes = fx_list(c, "futexes", a->futexes, fx_futexes_item, "futexes per thread, 1 to 1048576, "
                                                                            "comma-separated")) < 0) ||
        (a->nhash = fx_list(c, "hash", a->hash, fx_hash_item, pow2)) < 0 ||
        (a->ncall = fx_list(c, "call", a->call, fx_call_item, "futex, futex2, futex2-numa (comma-separated)")) < 0)
        return EINVAL;
    if (!with_futexes)
        a->futexes[0] = 1, a->nfutexes = 1;
    long r = bench_opt_long(c, "repeat");
    if (r < 1 || r > FX_MAX_ROUNDS) {
        snprintf(c->err, sizeof c->err, "bad value '%s' for --repeat: 1 to %d rounds", bench_opt(c, "repeat"),
                 FX_MAX_ROUNDS);
        return EINVAL;
    }
    a->repeat = (int)r;
    for (size_t i = 0; i < c->nthreads; i++)
        if (c->threads[i] > FX_MAX_THREADS) {
            snprintf(c->err, sizeof c->err, "--threads %d: at most %d", c->threads[i], FX_MAX_THREADS);
            return EINVAL;
        }
    return fx_kernel_check(c, a);
}

/* ---- the sweep and its records ------------------------------------------------------ */
static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* the record of one configuration from its rounds (the median round's
 * threads for futex-hash) */
static int fx_record(bench_ctx_t *c, const fx_work_t *wk, const fx_conf_t *f, const fx_axes_t *a,
                     fx_out_t *rounds)
{
    bench_record_t *r = bench_new_record(c, NULL, f->threads);
    if (!r)
        return ENOMEM;
    double v[FX_MAX_ROUNDS];
    for (int i = 0; i < a->repeat; i++)
        v[i] = rounds[i].value;
    qsort(v, (size_t)a->repeat, sizeof *v, cmp_double);
    double med = v[a->repeat / 2];
    int mr = 0; /* the round that gave the median */
    while (mr < a->repeat - 1 && rounds[mr].value != med)
        mr++;
    char hash[16], list[FX_MAX_ROUNDS * 16] = "";
    snprintf(hash, sizeof hash, "%s", f->hash < 0 ? "default" : f->hash ? "" : "global");
    if (f->hash > 0)
        snprintf(hash, sizeof hash, "%d", f->hash);
    for (int i = 0, off = 0; i < a->repeat; i++)
        off += snprintf(list + off, sizeof list - (size_t)off, "%s%.6g", i ? ", " : "", rounds[i].value);
    size_t off = (size_t)snprintf(r->extra, sizeof r->extra,
                                  "\"hash\": \"%s\", \"slots\": %d, \"call\": \"%s\", \"metric\": \"%s\", "
                                  "\"median\": %.6g, \"min\": %.6g, \"max\": %.6g, \"rounds\": [%s]",
                                  hash, rounds[mr].slots, fx_call_name[f->call], wk->what, med, v[0],
                                  v[a->repeat - 1], list);
    if (wk->measure == fx_hash_measure) {
        r->per_thread_ops = calloc((size_t)f->threads, sizeof(uint64_t));
        double mean = med / f->threads, var = 0;
        for (int i = 0; i < f->threads; i++) {
            if (r->per_thread_ops)
                r->per_thread_ops[i] = (uint64_t)(rounds[mr].per_thread[i] * wk->duration);
            var += (rounds[mr].per_thread[i] - mean) * (rounds[mr].per_thread[i] - mean);
        }
        double sd = f->threads > 1 ? sqrt(var / (f->threads - 1)) : 0;
        r->throughput = med;
        r->ops = (uint64_t)(med * wk->duration);
        r->duration_s = wk->duration;
        r->fairness = r->per_thread_ops ? bench_fairness(r->per_thread_ops, f->threads) : NAN;
        snprintf(r->extra + off, sizeof r->extra - off,
                 ", \"futexes\": %d, \"per_thread_ops_per_s\": %.6g, \"per_thread_spread_pct\": %.3g", f->futexes,
                 mean, mean > 0 ? 100.0 * sd / mean : 0.0);
    } else {
        r->throughput = NAN;
        snprintf(r->extra + off, sizeof r->extra - off, ", \"nwakes\": %d, \"wakers\": %d, \"iterations\": %d",
                 wk->nwakes, wk->wakers, wk->iterations);
    }
    return 0;
}

/* every configuration, rounds interleaved: round k of each before round k+1 */
static int fx_sweep(bench_ctx_t *c, const fx_work_t *wk, const fx_axes_t *a)
{
    size_t nconf = c->nthreads * (size_t)(a->nfutexes * a->nhash * a->ncall);
    fx_conf_t *conf = calloc(nconf, sizeof *conf);
    fx_out_t *res = calloc(nconf * (size_t)a->repeat, sizeof *res);
    fx_out_t *shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int rc = 0;
    if (!conf || !res || shared == MAP_FAILED) {
        free(conf), free(res);
        snprintf(c->err, sizeof c->err, "out of memory");
        return ENOMEM;
    }
    size_t k = 0;
    for (size_t t = 0; t < c->nthreads; t++)
        for (int fu = 0; fu < a->nfutexes; fu++)
            for (int h = 0; h < a->nhash; h++)
                for (int ca = 0; ca < a->ncall; ca++)
                    conf[k++] = (fx_conf_t){ c->threads[t], a->futexes[fu], a->hash[h], a->call[ca] };
    for (int round = 0; round < a->repeat && !rc; round++)
        for (k = 0; k < nconf && !rc; k++)
            if (!(rc = fx_round(c, wk, &conf[k], shared)))
                res[k * (size_t)a->repeat + (size_t)round] = *shared;
    for (k = 0; k < nconf && !rc; k++)
        rc = fx_record(c, wk, &conf[k], a, &res[k * (size_t)a->repeat]);
    munmap(shared, sizeof *shared);
    free(conf), free(res);
    return rc;
}

static void fx_table(const bench_ctx_t *c, const char *unit)
{
    printf("%-7s %-9s %-10s %-12s %14s %14s %14s  %s\n", "threads", "futexes", "hash", "call", "median", "min",
           "max", unit);
    for (size_t i = 0; i < c->nrecords; i++) {
        const bench_record_t *r = &c->records[i];
        char hash[24] = "", call[16] = "", fut[16] = "-";
        double med = 0, lo = 0, hi = 0;
        const char *p;
        if ((p = strstr(r->extra, "\"hash\": \"")))
            sscanf(p + 9, "%23[^\"]", hash);
        if ((p = strstr(r->extra, "\"call\": \"")))
            sscanf(p + 9, "%15[^\"]", call);
        if ((p = strstr(r->extra, "\"futexes\": ")))
            sscanf(p + 11, "%15[0-9]", fut);
        if ((p = strstr(r->extra, "\"median\": ")))
            sscanf(p, "\"median\": %lf, \"min\": %lf, \"max\": %lf", &med, &lo, &hi);
        if ((p = strstr(r->extra, "\"slots\": ")) && strcmp(hash, "global"))
            snprintf(hash + strlen(hash), sizeof hash - strlen(hash), "(%d)", atoi(p + 9));
        printf("%-7d %-9s %-10s %-12s %14.6g %14.6g %14.6g\n", r->threads, fut, hash, call, med, lo, hi);
    }
}

static int fx_go(bench_ctx_t *c, fx_work_t *wk, int with_futexes, const char *unit)
{
    fx_axes_t a;
    int rc = fx_axes(c, &a, with_futexes);
    if (rc)
        return rc;
    wk->duration = c->duration;
    if ((rc = fx_sweep(c, wk, &a)))
        return rc;
    if (!c->quiet)
        fx_table(c, unit);
    return 0;
}

static int fx_hash_run(bench_ctx_t *c)
{
    fx_work_t wk = { "total_ops_per_s", fx_hash_measure, 0, 0, 0, 0 };
    return fx_go(c, &wk, 1, "total operations per second");
}

static int fx_iterations(bench_ctx_t *c, fx_work_t *wk)
{
    wk->iterations = (int)bench_opt_long(c, "iterations");
    wk->nwakes = (int)bench_opt_long(c, "nwakes");
    if (wk->iterations < 1 || wk->nwakes < 1) {
        snprintf(c->err, sizeof c->err, "bad value for --iterations or --nwakes: at least 1");
        return EINVAL;
    }
    return 0;
}

static int fx_wake_run(bench_ctx_t *c)
{
    fx_work_t wk = { "wake_all_ms", fx_wake_measure, 0, 1, 0, 10 };
    return fx_iterations(c, &wk) ? EINVAL : fx_go(c, &wk, 0, "ms to wake every sleeper (mean of --iterations)");
}

static int fx_requeue_run(bench_ctx_t *c)
{
    fx_work_t wk = { "requeue_all_ms", fx_requeue_measure, 0, 1, 0, 10 };
    return fx_iterations(c, &wk) ? EINVAL : fx_go(c, &wk, 0, "ms to requeue every sleeper (mean of --iterations)");
}

static int fx_parallel_run(bench_ctx_t *c)
{
    fx_work_t wk = { "waker_us", fx_parallel_measure, 0, 1, 0, 10 };
    if (fx_iterations(c, &wk))
        return EINVAL;
    wk.wakers = (int)bench_opt_long(c, "wakers");
    for (size_t i = 0; i < c->nthreads; i++)
        if (wk.wakers < 1 || wk.wakers > 64 || c->threads[i] % wk.wakers) {
            snprintf(c->err, sizeof c->err,
                     "--wakers %d with --threads %d: 1 to 64 wakers, and the sleepers a multiple of them",
                     wk.wakers, c->threads[i]);
            return EINVAL;
        }
    return fx_go(c, &wk, 0, "us per waker's call (mean of wakers and --iterations)");
}

/* ---- the workloads ---------------------------------------------------------------- */
#define FX_AXES_OPTS                                                                                        \
    { "hash", "default", "the private futex hash: default, global, or N slots (a power of two), comma-separated" }, \
    { "call", "futex", "futex (the classic call), futex2, futex2-numa (FUTEX2_NUMA, two-word futexes); comma-separated" }, \
    { "repeat", "5", "rounds, each configuration in a process of its own, median kept" }

static const bench_opt_t fx_hash_opts[] = {
    { "futexes", "1024", "futexes per thread, comma-separated" },
    FX_AXES_OPTS,
    { NULL, NULL, NULL },
};
static const bench_opt_t fx_wake_opts[] = {
    { "nwakes", "1", "sleepers woken per call (futex-requeue: moved per call)" },
    { "iterations", "10", "sleep-and-wake cycles per round (mean kept)" },
    FX_AXES_OPTS,
    { NULL, NULL, NULL },
};
static const bench_opt_t fx_parallel_opts[] = {
    { "wakers", "2", "threads that wake at once, each its share of the sleepers" },
    { "nwakes", "1", "(not used: each waker wakes its share)" },
    { "iterations", "10", "sleep-and-wake cycles per round (mean kept)" },
    FX_AXES_OPTS,
    { NULL, NULL, NULL },
};
static const char *const fx_text_opts[] = { "futexes", "hash", "call", NULL };

const bench_workload_t bench_futex_hash = {
    .name = "futex-hash",
    .description = "perf bench futex hash: each thread waits on its futexes with a value they do not hold",
    .opts = fx_hash_opts,
    .default_locks = "pthread",
    .default_threads = "2",
    .default_duration = "1",
    .run = fx_hash_run,
    .own_table = 1,
    .text_opts = fx_text_opts,
};
const bench_workload_t bench_futex_wake = {
    .name = "futex-wake",
    .description = "perf bench futex wake: the time to wake the threads asleep on one futex",
    .opts = fx_wake_opts,
    .default_locks = "pthread",
    .default_threads = "4",
    .default_duration = "1",
    .run = fx_wake_run,
    .own_table = 1,
    .text_opts = fx_text_opts,
};
const bench_workload_t bench_futex_wake_parallel = {
    .name = "futex-wake-parallel",
    .description = "perf bench futex wake-parallel: wakers wake the sleepers of one futex at once",
    .opts = fx_parallel_opts,
    .default_locks = "pthread",
    .default_threads = "4",
    .default_duration = "1",
    .run = fx_parallel_run,
    .own_table = 1,
    .text_opts = fx_text_opts,
};
const bench_workload_t bench_futex_requeue = {
    .name = "futex-requeue",
    .description = "perf bench futex requeue: the time to move the sleepers of one futex to another",
    .opts = fx_wake_opts,
    .default_locks = "pthread",
    .default_threads = "4",
    .default_duration = "1",
    .run = fx_requeue_run,
    .own_table = 1,
    .text_opts = fx_text_opts,
};
