/*
 * libnumalock-preload.so: pthread mutexes, condition variables and rwlocks of
 * an unmodified program, run on a numalock algorithm.
 *
 *   LD_PRELOAD=libnumalock-preload.so NUMALOCK_LOCK=qspinlock-cna program ...
 *   (or: numalock run --lock qspinlock-cna -- program ...)
 *
 * Where things live (docs/PRELOAD.md has the picture):
 *  - pthread_mutex_t (40 bytes): the lock in bytes 0..15 when it fits and is
 *    zero-initialisable (PTHREAD_MUTEX_INITIALIZER is all zeros), else a
 *    pointer there to a block allocated at first use; glibc's kind stays at
 *    offset 16 (so static recursive/errorcheck initialisers keep working);
 *    20: sleepers in timedlock; 24: owner tid and 28: depth (recursive and
 *    error-checking types only); 32: futex word for timedlock sleepers.
 *    Process-shared, robust and priority-protocol mutexes stay glibc's.
 *  - pthread_cond_t (48 bytes): a futex sequence word and a waiter count.
 *    A waiter reads the sequence while it still holds the mutex, releases the
 *    mutex, sleeps on the sequence word, then re-acquires the mutex; signal
 *    and broadcast bump the sequence and wake one or all sleepers.
 *  - pthread_rwlock_t (56 bytes): a reader-preferring read-write lock (as
 *    glibc's default kind) in one state word with a futex sequence word;
 *    process-shared rwlocks (glibc's __shared at offset 28) stay glibc's.
 *
 * Every replaced function is exported under each symbol version a program may
 * have bound it to (GLIBC_2.2.5, 2.3.2, 2.30, 2.34); see preload.map.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>
#include "interpose.h"
#include "preload.h"

#define EXPORT __attribute__((visibility("default")))

/* Export impl as name@@newv and also as name@oldv. */
#define NLP_TWO_VERSIONS(impl, name, oldv, newv)                                      \
    extern __typeof(impl) impl##_old __attribute__((alias(#impl), visibility("default"))); \
    __asm__(".symver " #impl "_old, " #name "@" oldv);                                \
    __asm__(".symver " #impl ", " #name "@@" newv)

/* ---- the real (glibc) functions --------------------------------------- */
static struct {
    int (*mutex_init)(pthread_mutex_t *, const pthread_mutexattr_t *);
    int (*mutex_destroy)(pthread_mutex_t *);
    int (*mutex_lock)(pthread_mutex_t *);
    int (*mutex_trylock)(pthread_mutex_t *);
    int (*mutex_timedlock)(pthread_mutex_t *, const struct timespec *);
    int (*mutex_clocklock)(pthread_mutex_t *, clockid_t, const struct timespec *);
    int (*mutex_unlock)(pthread_mutex_t *);
    int (*cond_init)(pthread_cond_t *, const pthread_condattr_t *);
    int (*cond_destroy)(pthread_cond_t *);
    int (*cond_wait)(pthread_cond_t *, pthread_mutex_t *);
    int (*cond_timedwait)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
    int (*cond_clockwait)(pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *);
    int (*cond_signal)(pthread_cond_t *);
    int (*cond_broadcast)(pthread_cond_t *);
    int (*rw_init)(pthread_rwlock_t *, const pthread_rwlockattr_t *);
    int (*rw_destroy)(pthread_rwlock_t *);
    int (*rw_rdlock)(pthread_rwlock_t *);
    int (*rw_tryrdlock)(pthread_rwlock_t *);
    int (*rw_timedrdlock)(pthread_rwlock_t *, const struct timespec *);
    int (*rw_clockrdlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
    int (*rw_wrlock)(pthread_rwlock_t *);
    int (*rw_trywrlock)(pthread_rwlock_t *);
    int (*rw_timedwrlock)(pthread_rwlock_t *, const struct timespec *);
    int (*rw_clockwrlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
    int (*rw_unlock)(pthread_rwlock_t *);
} real;

static void *resolve(const char *name, const char *version)
{
    void *p = dlvsym(RTLD_NEXT, name, version);
    return p ? p : dlsym(RTLD_NEXT, name);
}

static void resolve_real(void)
{
#define R(field, name, ver) *(void **)&real.field = resolve(name, ver)
    R(mutex_init, "pthread_mutex_init", "GLIBC_2.2.5");
    R(mutex_destroy, "pthread_mutex_destroy", "GLIBC_2.2.5");
    R(mutex_lock, "pthread_mutex_lock", "GLIBC_2.2.5");
    R(mutex_trylock, "pthread_mutex_trylock", "GLIBC_2.34");
    R(mutex_timedlock, "pthread_mutex_timedlock", "GLIBC_2.34");
    R(mutex_clocklock, "pthread_mutex_clocklock", "GLIBC_2.34");
    R(mutex_unlock, "pthread_mutex_unlock", "GLIBC_2.2.5");
    R(cond_init, "pthread_cond_init", "GLIBC_2.3.2");
    R(cond_destroy, "pthread_cond_destroy", "GLIBC_2.3.2");
    R(cond_wait, "pthread_cond_wait", "GLIBC_2.3.2");
    R(cond_timedwait, "pthread_cond_timedwait", "GLIBC_2.3.2");
    R(cond_clockwait, "pthread_cond_clockwait", "GLIBC_2.34");
    R(cond_signal, "pthread_cond_signal", "GLIBC_2.3.2");
    R(cond_broadcast, "pthread_cond_broadcast", "GLIBC_2.3.2");
    R(rw_init, "pthread_rwlock_init", "GLIBC_2.34");
    R(rw_destroy, "pthread_rwlock_destroy", "GLIBC_2.34");
    R(rw_rdlock, "pthread_rwlock_rdlock", "GLIBC_2.34");
    R(rw_tryrdlock, "pthread_rwlock_tryrdlock", "GLIBC_2.34");
    R(rw_timedrdlock, "pthread_rwlock_timedrdlock", "GLIBC_2.34");
    R(rw_clockrdlock, "pthread_rwlock_clockrdlock", "GLIBC_2.34");
    R(rw_wrlock, "pthread_rwlock_wrlock", "GLIBC_2.34");
    R(rw_trywrlock, "pthread_rwlock_trywrlock", "GLIBC_2.34");
    R(rw_timedwrlock, "pthread_rwlock_timedwrlock", "GLIBC_2.34");
    R(rw_clockwrlock, "pthread_rwlock_clockwrlock", "GLIBC_2.34");
    R(rw_unlock, "pthread_rwlock_unlock", "GLIBC_2.34");
#undef R
}

/* ---- configuration ------------------------------------------------------ */
enum { MODE_INPLACE = 0, MODE_EXTERNAL = 1, MODE_GLIBC = 2 };

static struct {
    const nl_lock_ops_t *ops;
    void (*acquire)(void *);
    int (*try_acquire)(void *);
    void (*release)(void *);
    size_t ext_size, ext_align;
    int mode;
    int stats;
    const nl_lock_ops_t *rw_ops; /* NUMALOCK_RWLOCK: a registered read-write lock, NULL: built-in */
    size_t rw_size, rw_align;
} g;

/* 1 once initialised with an in-place lock and statistics off: the fast path */
static _Atomic int fast;
static _Atomic int ready;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static NL_TLS pid_t tls_tid;

static inline int my_tid(void)
{
    pid_t t = tls_tid;
    if (NL_UNLIKELY(!t))
        tls_tid = t = (pid_t)syscall(SYS_gettid);
    return t;
}

static void atfork_child(void) { tls_tid = 0; }

static void say(const char *msg)
{
    size_t n = strlen(msg);
    while (n) {
        ssize_t w = write(2, msg, n);
        if (w <= 0)
            return;
        msg += w;
        n -= (size_t)w;
    }
}

static void do_init(void)
{
    char msg[1024], why[256], names[512];
    resolve_real();
    const char *name = getenv(NLP_ENV_LOCK);
    const nl_lock_ops_t *ops = NULL;
    if (name && *name) {
        ops = nl_lock_find(name);
        if (!ops) {
            snprintf(msg, sizeof msg,
                     "numalock preload: NUMALOCK_LOCK '%s' is not a lock that can replace pthread mutexes "
                     "(valid: %s); using glibc's mutexes\n",
                     name, nlp_interposable_names(names, sizeof names));
            say(msg);
        } else if (nlp_interposable(ops, why, sizeof why)) {
            snprintf(msg, sizeof msg, "numalock preload: %s (interposable: %s); using glibc's mutexes\n", why,
                     nlp_interposable_names(names, sizeof names));
            say(msg);
            ops = NULL;
        }
        if (!ops)
            ops = nl_lock_find(NLP_GLIBC_NAME);
    } else {
        ops = nlp_default_lock();
    }
    nl_topology_current();
    if (nl_topology_env_error()) {
        snprintf(msg, sizeof msg, "numalock preload: NUMALOCK_TOPOLOGY: %s\n", nl_topology_env_error());
        say(msg);
    }
    g.ops = ops;
    if (!ops || !strcmp(ops->name, NLP_GLIBC_NAME)) {
        g.mode = MODE_GLIBC;
    } else {
        g.acquire = ops->acquire;
        g.try_acquire = ops->try_acquire;
        g.release = ops->release;
        const char *ext = getenv("NUMALOCK_PRELOAD_EXTERNAL"); /* tests: force out-of-place storage */
        if ((ops->props & NL_PROP_ZERO_INIT) && ops->size <= NLP_INPLACE_BYTES && ops->align <= 8 &&
            !(ext && !strcmp(ext, "1"))) {
            g.mode = MODE_INPLACE;
        } else {
            g.mode = MODE_EXTERNAL;
            g.ext_align = ops->align > NL_CACHELINE ? ops->align : NL_CACHELINE;
            g.ext_size = (ops->size + g.ext_align - 1) / g.ext_align * g.ext_align;
        }
    }
    const char *rwname = getenv(NLP_ENV_RWLOCK);
    if (rwname && *rwname && g.mode != MODE_GLIBC) {
        const nl_lock_ops_t *rw = nl_lock_find(rwname);
        if (!rw || nlp_rw_usable(rw, why, sizeof why)) {
            if (!rw)
                snprintf(why, sizeof why, "'%s' is not a registered lock", rwname);
            snprintf(msg, sizeof msg, "numalock preload: NUMALOCK_RWLOCK: %s; rwlocks use the built-in read-write lock\n",
                     why);
            say(msg);
        } else {
            g.rw_ops = rw;
            g.rw_align = rw->align > NL_CACHELINE ? rw->align : NL_CACHELINE;
            g.rw_size = (rw->size + g.rw_align - 1) / g.rw_align * g.rw_align;
        }
    }
    const char *st = getenv(NLP_ENV_STATS);
    if (st && *st && strcmp(st, "0"))
        g.stats = nlp_profile_init(ops ? ops->name : NLP_GLIBC_NAME) == 0;
    pthread_atfork(NULL, NULL, atfork_child);
    atomic_store(&ready, 1);
    atomic_store(&fast, g.mode == MODE_INPLACE && !g.stats);
}

static inline void ensure_init(void)
{
    if (NL_UNLIKELY(!atomic_load_explicit(&ready, memory_order_acquire)))
        pthread_once(&init_once, do_init);
}

__attribute__((constructor)) static void nlp_ctor(void) { ensure_init(); }

/* ---- futex helpers -------------------------------------------------------- */
/* Sleep while *w == val, until abs (on clk) when abs is not NULL. Returns 0,
 * EAGAIN, EINTR or ETIMEDOUT. */
static int futex_wait_abs(_Atomic uint32_t *w, uint32_t val, const struct timespec *abs, clockid_t clk,
                          int shared)
{
    int op = FUTEX_WAIT_BITSET | (shared ? 0 : FUTEX_PRIVATE_FLAG) |
             (abs && clk == CLOCK_REALTIME ? FUTEX_CLOCK_REALTIME : 0);
    if (abs && abs->tv_sec < 0)
        return ETIMEDOUT;
    long r = syscall(SYS_futex, w, op, val, abs, NULL, FUTEX_BITSET_MATCH_ANY);
    return r == 0 ? 0 : errno;
}

static void futex_wake_n(_Atomic uint32_t *w, int n, int shared)
{
    syscall(SYS_futex, w, FUTEX_WAKE | (shared ? 0 : FUTEX_PRIVATE_FLAG), n, NULL, NULL, 0);
}

static inline int bad_time(const struct timespec *t)
{
    return t->tv_nsec < 0 || t->tv_nsec >= 1000000000L;
}

static inline int bad_clock(clockid_t c) { return c != CLOCK_REALTIME && c != CLOCK_MONOTONIC; }

/* now + ns on clk, but not past abs */
static struct timespec until_at_most(clockid_t clk, const struct timespec *abs, long ns, int *expired)
{
    struct timespec now, t;
    clock_gettime(clk, &now);
    *expired = now.tv_sec > abs->tv_sec || (now.tv_sec == abs->tv_sec && now.tv_nsec >= abs->tv_nsec);
    t.tv_sec = now.tv_sec;
    t.tv_nsec = now.tv_nsec + ns;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    if (t.tv_sec > abs->tv_sec || (t.tv_sec == abs->tv_sec && t.tv_nsec > abs->tv_nsec))
        t = *abs;
    return t;
}

/* ====================================================================== */
/* mutexes                                                                  */
/* ====================================================================== */
typedef struct nlp_mutex {
    union {
        unsigned char inplace[NLP_INPLACE_BYTES];
        _Atomic(void *) ext;
    } u;                        /*  0: the lock, or a pointer to it      */
    int kind;                   /* 16: glibc's __kind                     */
    _Atomic uint32_t twait;     /* 20: threads sleeping in timedlock      */
    _Atomic int owner;          /* 24: holder's tid (recursive/errorcheck) */
    uint32_t count;             /* 28: recursion depth                    */
    _Atomic uint32_t tseq;      /* 32: futex word for timedlock sleepers  */
    uint32_t spare;             /* 36 */
} nlp_mutex_t;

_Static_assert(sizeof(nlp_mutex_t) == sizeof(pthread_mutex_t), "mutex layout");
_Static_assert(offsetof(nlp_mutex_t, kind) == offsetof(pthread_mutex_t, __data.__kind), "kind offset");

/* kind bits that leave a mutex to glibc: robust (16), priority inheritance
 * (32), priority protection (64), process-shared (128) */
#define KIND_GLIBC 0xF0
#define KIND_TYPE 3

static void *ext_alloc(nlp_mutex_t *m)
{
    void *p = NULL;
    if (posix_memalign(&p, g.ext_align, g.ext_size) || !p)
        abort(); /* no memory for a lock: nothing sane to return from pthread_mutex_lock */
    memset(p, 0, g.ext_size);
    if (g.ops->init && g.ops->init(p, NULL))
        abort();
    void *expect = NULL;
    if (atomic_compare_exchange_strong_explicit(&m->u.ext, &expect, p, memory_order_acq_rel,
                                                memory_order_acquire))
        return p;
    if (g.ops->destroy)
        g.ops->destroy(p);
    free(p);
    return expect;
}

static inline void *mstore(nlp_mutex_t *m)
{
    if (NL_LIKELY(g.mode == MODE_INPLACE))
        return m;
    void *p = atomic_load_explicit(&m->u.ext, memory_order_acquire);
    return NL_LIKELY(p != NULL) ? p : ext_alloc(m);
}

/* Release, waking a timedlock sleeper if there is one. Nothing of the mutex
 * is written after the lock's release: another thread may acquire, unlock and
 * free it at once (POSIX allows that), so the sequence word is bumped while
 * the lock is still held and only the futex wake (a system call on the
 * address, harmless if it is gone) follows the release. */
static inline void release_and_wake(nlp_mutex_t *m, void *l)
{
    if (NL_LIKELY(!atomic_load_explicit(&m->twait, memory_order_relaxed))) {
        g.release(l);
        return;
    }
    atomic_fetch_add_explicit(&m->tseq, 1, memory_order_relaxed);
    g.release(l);
    futex_wake_n(&m->tseq, 1, 0);
}

static inline void raw_acquire(nlp_mutex_t *m, void *ra)
{
    void *l = mstore(m);
    if (NL_LIKELY(!g.stats)) {
        g.acquire(l);
        return;
    }
    nlp_stat_t *s = nlp_profile_get(m, NLP_OBJ_MUTEX, ra);
    if (g.try_acquire(l) == 0) {
        nlp_profile_write(s, 0, 0);
        return;
    }
    uint64_t t0 = nl_now_ns();
    g.acquire(l);
    nlp_profile_write(s, 1, nl_now_ns() - t0);
}

static inline int raw_try(nlp_mutex_t *m, void *ra)
{
    if (g.try_acquire(mstore(m)))
        return EBUSY;
    if (g.stats)
        nlp_profile_write(nlp_profile_get(m, NLP_OBJ_MUTEX, ra), 0, 0);
    return 0;
}

static inline void raw_release(nlp_mutex_t *m) { release_and_wake(m, mstore(m)); }

/* acquire with a deadline: try, spin a little, then sleep on tseq in slices
 * of at most 1 ms (a release wakes a sleeper; the slice bounds the case where
 * a release read the sleeper count just before the sleeper registered). */
static int raw_timed(nlp_mutex_t *m, clockid_t clk, const struct timespec *abs, void *ra)
{
    void *l = mstore(m);
    if (g.try_acquire(l) == 0)
        goto got_uncontended;
    if (bad_time(abs))
        return EINVAL;
    uint64_t t0 = g.stats ? nl_now_ns() : 0;
    for (int i = 0; i < 64; i++) {
        nl_cpu_relax();
        if (g.try_acquire(l) == 0)
            goto got;
    }
    for (;;) {
        int expired;
        atomic_fetch_add(&m->twait, 1);
        uint32_t seq = atomic_load(&m->tseq);
        if (g.try_acquire(l) == 0) {
            atomic_fetch_sub(&m->twait, 1);
            goto got;
        }
        struct timespec t = until_at_most(clk, abs, 1000000L, &expired);
        if (expired) {
            atomic_fetch_sub(&m->twait, 1);
            return ETIMEDOUT;
        }
        futex_wait_abs(&m->tseq, seq, &t, clk, 0);
        atomic_fetch_sub(&m->twait, 1);
        if (g.try_acquire(l) == 0)
            goto got;
    }
got:
    if (g.stats)
        nlp_profile_write(nlp_profile_get(m, NLP_OBJ_MUTEX, ra), 1, nl_now_ns() - t0);
    return 0;
got_uncontended:
    if (g.stats)
        nlp_profile_write(nlp_profile_get(m, NLP_OBJ_MUTEX, ra), 0, 0);
    return 0;
}

/* glibc-owned mutexes (and every mutex in glibc mode), counted when stats are on */
static int glibc_lock(pthread_mutex_t *pm, void *ra)
{
    if (!g.stats)
        return real.mutex_lock(pm);
    nlp_stat_t *s = nlp_profile_get(pm, NLP_OBJ_MUTEX, ra);
    int rc = real.mutex_trylock(pm);
    if (rc == 0 || rc == EOWNERDEAD) {
        nlp_profile_write(s, 0, 0);
        return rc;
    }
    if (rc != EBUSY)
        return rc;
    uint64_t t0 = nl_now_ns();
    rc = real.mutex_lock(pm);
    if (rc == 0 || rc == EOWNERDEAD)
        nlp_profile_write(s, 1, nl_now_ns() - t0);
    return rc;
}

static int glibc_try(pthread_mutex_t *pm, void *ra)
{
    int rc = real.mutex_trylock(pm);
    if (g.stats && (rc == 0 || rc == EOWNERDEAD))
        nlp_profile_write(nlp_profile_get(pm, NLP_OBJ_MUTEX, ra), 0, 0);
    return rc;
}

static int glibc_timed(pthread_mutex_t *pm, clockid_t clk, const struct timespec *abs, void *ra)
{
    int rc;
    if (g.stats && (rc = glibc_try(pm, ra)) != EBUSY)
        return rc;
    uint64_t t0 = g.stats ? nl_now_ns() : 0;
    rc = real.mutex_clocklock ? real.mutex_clocklock(pm, clk, abs)
         : clk == CLOCK_REALTIME ? real.mutex_timedlock(pm, abs) : EINVAL;
    if (g.stats && (rc == 0 || rc == EOWNERDEAD))
        nlp_profile_write(nlp_profile_get(pm, NLP_OBJ_MUTEX, ra), 1, nl_now_ns() - t0);
    return rc;
}

static inline int is_glibc(const nlp_mutex_t *m)
{
    return g.mode == MODE_GLIBC || (m->kind & KIND_GLIBC);
}

EXPORT int pthread_mutex_init(pthread_mutex_t *pm, const pthread_mutexattr_t *attr)
{
    ensure_init();
    int type = PTHREAD_MUTEX_NORMAL, pshared = PTHREAD_PROCESS_PRIVATE, robust = PTHREAD_MUTEX_STALLED,
        proto = PTHREAD_PRIO_NONE;
    if (attr) {
        pthread_mutexattr_gettype(attr, &type);
        pthread_mutexattr_getpshared(attr, &pshared);
        pthread_mutexattr_getrobust(attr, &robust);
        pthread_mutexattr_getprotocol(attr, &proto);
    }
    if (g.mode == MODE_GLIBC || pshared != PTHREAD_PROCESS_PRIVATE || robust != PTHREAD_MUTEX_STALLED ||
        proto != PTHREAD_PRIO_NONE)
        return real.mutex_init(pm, attr);
    if (type < 0 || type > KIND_TYPE)
        return EINVAL;
    nlp_mutex_t *m = (nlp_mutex_t *)pm;
    memset(m, 0, sizeof *m);
    m->kind = type;
    return 0;
}

EXPORT int pthread_mutex_destroy(pthread_mutex_t *pm)
{
    ensure_init();
    nlp_mutex_t *m = (nlp_mutex_t *)pm;
    if (is_glibc(m))
        return real.mutex_destroy(pm);
    if (g.mode == MODE_EXTERNAL) {
        void *p = atomic_exchange(&m->u.ext, NULL);
        if (p) {
            if (g.ops->destroy)
                g.ops->destroy(p);
            free(p);
        }
    }
    return 0;
}

static int __attribute__((noinline)) mutex_lock_slow(nlp_mutex_t *m, void *ra)
{
    ensure_init();
    if (is_glibc(m))
        return glibc_lock((pthread_mutex_t *)m, ra);
    int type = m->kind & KIND_TYPE;
    if (type == PTHREAD_MUTEX_NORMAL || type == PTHREAD_MUTEX_ADAPTIVE_NP) {
        raw_acquire(m, ra);
        return 0;
    }
    int me = my_tid();
    if (atomic_load_explicit(&m->owner, memory_order_relaxed) == me) {
        if (type == PTHREAD_MUTEX_ERRORCHECK)
            return EDEADLK;
        if (m->count == UINT32_MAX)
            return EAGAIN;
        m->count++;
        return 0;
    }
    raw_acquire(m, ra);
    atomic_store_explicit(&m->owner, me, memory_order_relaxed);
    m->count = 1;
    return 0;
}

EXPORT int pthread_mutex_lock(pthread_mutex_t *pm)
{
    nlp_mutex_t *m = (nlp_mutex_t *)pm;
    if (NL_LIKELY(atomic_load_explicit(&fast, memory_order_acquire))) {
        int k = m->kind;
        if (NL_LIKELY(k == PTHREAD_MUTEX_NORMAL || k == PTHREAD_MUTEX_ADAPTIVE_NP)) {
            g.acquire(m);
            return 0;
        }
    }
    return mutex_lock_slow(m, __builtin_return_address(0));
}

static int __attribute__((noinline)) mutex_unlock_slow(nlp_mutex_t *m)
{
    ensure_init();
    if (is_glibc(m))
        return real.mutex_unlock((pthread_mutex_t *)m);
    int type = m->kind & KIND_TYPE;
    if (type == PTHREAD_MUTEX_NORMAL || type == PTHREAD_MUTEX_ADAPTIVE_NP) {
        raw_release(m);
        return 0;
    }
    if (atomic_load_explicit(&m->owner, memory_order_relaxed) != my_tid())
        return EPERM;
    if (type == PTHREAD_MUTEX_RECURSIVE && --m->count)
        return 0;
    m->count = 0;
    atomic_store_explicit(&m->owner, 0, memory_order_relaxed);
    raw_release(m);
    return 0;
}

EXPORT int pthread_mutex_unlock(pthread_mutex_t *pm)
{
    nlp_mutex_t *m = (nlp_mutex_t *)pm;
    if (NL_LIKELY(atomic_load_explicit(&fast, memory_order_acquire))) {
        int k = m->kind;
        if (NL_LIKELY(k == PTHREAD_MUTEX_NORMAL || k == PTHREAD_MUTEX_ADAPTIVE_NP)) {
            release_and_wake(m, m);
            return 0;
        }
    }
    return mutex_unlock_slow(m);
}

static int mutex_trylock_impl(pthread_mutex_t *pm, void *ra)
{
    ensure_init();
    nlp_mutex_t *m = (nlp_mutex_t *)pm;
    if (is_glibc(m))
        return glibc_try(pm, ra);
    int type = m->kind & KIND_TYPE;
    if (type == PTHREAD_MUTEX_NORMAL || type == PTHREAD_MUTEX_ADAPTIVE_NP)
        return raw_try(m, ra);
    int me = my_tid();
    if (atomic_load_explicit(&m->owner, memory_order_relaxed) == me) {
        if (type == PTHREAD_MUTEX_ERRORCHECK)
            return EBUSY;
        if (m->count == UINT32_MAX)
            return EAGAIN;
        m->count++;
        return 0;
    }
    if (raw_try(m, ra))
        return EBUSY;
    atomic_store_explicit(&m->owner, me, memory_order_relaxed);
    m->count = 1;
    return 0;
}

static int mutex_clocklock_impl(pthread_mutex_t *pm, clockid_t clk, const struct timespec *abs, void *ra)
{
    ensure_init();
    nlp_mutex_t *m = (nlp_mutex_t *)pm;
    if (bad_clock(clk))
        return EINVAL;
    if (is_glibc(m))
        return glibc_timed(pm, clk, abs, ra);
    int type = m->kind & KIND_TYPE;
    int me = 0;
    if (type == PTHREAD_MUTEX_RECURSIVE || type == PTHREAD_MUTEX_ERRORCHECK) {
        me = my_tid();
        if (atomic_load_explicit(&m->owner, memory_order_relaxed) == me) {
            if (type == PTHREAD_MUTEX_ERRORCHECK)
                return EDEADLK;
            if (m->count == UINT32_MAX)
                return EAGAIN;
            m->count++;
            return 0;
        }
    }
    int rc = raw_timed(m, clk, abs, ra);
    if (rc == 0 && me) {
        atomic_store_explicit(&m->owner, me, memory_order_relaxed);
        m->count = 1;
    }
    return rc;
}

int nlp_mutex_trylock(pthread_mutex_t *pm);
int nlp_mutex_timedlock(pthread_mutex_t *pm, const struct timespec *abs);
int nlp_mutex_clocklock(pthread_mutex_t *pm, clockid_t clk, const struct timespec *abs);

EXPORT int nlp_mutex_trylock(pthread_mutex_t *pm)
{
    return mutex_trylock_impl(pm, __builtin_return_address(0));
}
EXPORT int nlp_mutex_timedlock(pthread_mutex_t *pm, const struct timespec *abs)
{
    return mutex_clocklock_impl(pm, CLOCK_REALTIME, abs, __builtin_return_address(0));
}
EXPORT int nlp_mutex_clocklock(pthread_mutex_t *pm, clockid_t clk, const struct timespec *abs)
{
    return mutex_clocklock_impl(pm, clk, abs, __builtin_return_address(0));
}
NLP_TWO_VERSIONS(nlp_mutex_trylock, pthread_mutex_trylock, "GLIBC_2.2.5", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_mutex_timedlock, pthread_mutex_timedlock, "GLIBC_2.2.5", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_mutex_clocklock, pthread_mutex_clocklock, "GLIBC_2.30", "GLIBC_2.34");

/* the double-underscore names glibc also exports at GLIBC_2.2.5 */
EXPORT int __pthread_mutex_init(pthread_mutex_t *pm, const pthread_mutexattr_t *a)
{
    return pthread_mutex_init(pm, a);
}
EXPORT int __pthread_mutex_destroy(pthread_mutex_t *pm) { return pthread_mutex_destroy(pm); }
EXPORT int __pthread_mutex_lock(pthread_mutex_t *pm)
{
    return mutex_lock_slow((nlp_mutex_t *)pm, __builtin_return_address(0));
}
EXPORT int __pthread_mutex_trylock(pthread_mutex_t *pm)
{
    return mutex_trylock_impl(pm, __builtin_return_address(0));
}
EXPORT int __pthread_mutex_unlock(pthread_mutex_t *pm) { return mutex_unlock_slow((nlp_mutex_t *)pm); }

/* ====================================================================== */
/* condition variables                                                      */
/* ====================================================================== */
typedef struct nlp_cond {
    _Atomic uint32_t seq;     /*  0: bumped by signal/broadcast; the futex word */
    _Atomic uint32_t waiters; /*  4: threads between registering and re-locking */
    uint32_t pad[7];          /*  8 */
    uint32_t flags;           /* 36: COND_SHARED, COND_MONOTONIC */
    uint32_t pad2[2];         /* 40 */
} nlp_cond_t;
_Static_assert(sizeof(nlp_cond_t) == sizeof(pthread_cond_t), "cond layout");
#define COND_SHARED 1u
#define COND_MONOTONIC 2u

EXPORT int pthread_cond_init(pthread_cond_t *pc, const pthread_condattr_t *attr)
{
    ensure_init();
    if (g.mode == MODE_GLIBC)
        return real.cond_init(pc, attr);
    nlp_cond_t *c = (nlp_cond_t *)pc;
    memset(c, 0, sizeof *c);
    if (attr) {
        int ps = PTHREAD_PROCESS_PRIVATE;
        clockid_t clk = CLOCK_REALTIME;
        pthread_condattr_getpshared(attr, &ps);
        pthread_condattr_getclock(attr, &clk);
        if (ps != PTHREAD_PROCESS_PRIVATE)
            c->flags |= COND_SHARED;
        if (clk == CLOCK_MONOTONIC)
            c->flags |= COND_MONOTONIC;
    }
    return 0;
}

EXPORT int pthread_cond_destroy(pthread_cond_t *pc)
{
    ensure_init();
    if (g.mode == MODE_GLIBC)
        return real.cond_destroy(pc);
    /* woken waiters may still be on their way out: let them leave first
     * (bounded: destroying a condition with blocked waiters is undefined) */
    nlp_cond_t *c = (nlp_cond_t *)pc;
    for (int i = 0; i < 100000 && atomic_load(&c->waiters); i++)
        sched_yield();
    return 0;
}

struct cond_cancel {
    nlp_cond_t *c;
    nlp_mutex_t *m;
    void *ra;
    int owned, me;
    uint32_t depth;
    int glibc_m;
    uint32_t seq;
    int shared;
    clockid_t clk;
    const struct timespec *abs;
    int rc;
};

static void cond_cancelled(void *p)
{
    struct cond_cancel *cc = p;
    atomic_fetch_sub(&cc->c->waiters, 1);
    if (cc->glibc_m) {
        glibc_lock((pthread_mutex_t *)cc->m, cc->ra);
        return;
    }
    raw_acquire(cc->m, cc->ra);
    if (cc->owned) {
        atomic_store_explicit(&cc->m->owner, cc->me, memory_order_relaxed);
        cc->m->count = cc->depth;
    }
}

/* The sleep runs with asynchronous cancellation on (as glibc's own futex
 * waits do); a cancelled waiter leaves the count and re-acquires the mutex
 * (cond_cancelled) before the program's cleanup handlers run. */
static void __attribute__((noinline)) cond_sleep(struct cond_cancel *cc)
{
    int oldtype;
    pthread_cleanup_push(cond_cancelled, cc);
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &oldtype);
    do {
        cc->rc = futex_wait_abs(&cc->c->seq, cc->seq, cc->abs, cc->clk, cc->shared);
    } while (cc->rc == EINTR && atomic_load(&cc->c->seq) == cc->seq);
    pthread_setcanceltype(oldtype, NULL);
    pthread_cleanup_pop(0);
}

static int cond_wait_impl(pthread_cond_t *pc, pthread_mutex_t *pm, clockid_t clk,
                          const struct timespec *abs, void *ra)
{
    nlp_cond_t *c = (nlp_cond_t *)pc;
    nlp_mutex_t *m = (nlp_mutex_t *)pm;
    if (abs && bad_time(abs))
        return EINVAL;
    int glibc_m = (m->kind & KIND_GLIBC) != 0;
    int type = m->kind & KIND_TYPE;
    int owned = !glibc_m && (type == PTHREAD_MUTEX_RECURSIVE || type == PTHREAD_MUTEX_ERRORCHECK);
    int me = 0;
    uint32_t depth = 0;
    if (owned) {
        me = my_tid();
        if (atomic_load_explicit(&m->owner, memory_order_relaxed) != me)
            return EPERM;
    }
    int shared = (c->flags & COND_SHARED) != 0;
    atomic_fetch_add(&c->waiters, 1);
    uint32_t seq = atomic_load(&c->seq);
    if (glibc_m) {
        int rc = real.mutex_unlock(pm);
        if (rc) {
            atomic_fetch_sub(&c->waiters, 1);
            return rc;
        }
    } else {
        if (owned) {
            depth = m->count; /* a recursive mutex is released whole while waiting */
            m->count = 0;
            atomic_store_explicit(&m->owner, 0, memory_order_relaxed);
        }
        raw_release(m);
    }
    /* pthread_cond_wait is a cancellation point: see cond_sleep */
    struct cond_cancel cc = { c, m, ra, owned, me, depth, glibc_m, seq, shared, clk, abs, 0 };
    cond_sleep(&cc);
    int rc = cc.rc;
    atomic_fetch_sub(&c->waiters, 1);
    if (glibc_m) {
        int r2 = glibc_lock(pm, ra);
        if (r2)
            return r2;
    } else {
        raw_acquire(m, ra);
        if (owned) {
            atomic_store_explicit(&m->owner, me, memory_order_relaxed);
            m->count = depth;
        }
    }
    return rc == ETIMEDOUT ? ETIMEDOUT : 0;
}

EXPORT int pthread_cond_wait(pthread_cond_t *pc, pthread_mutex_t *pm)
{
    ensure_init();
    if (g.mode == MODE_GLIBC)
        return real.cond_wait(pc, pm);
    return cond_wait_impl(pc, pm, CLOCK_REALTIME, NULL, __builtin_return_address(0));
}

EXPORT int pthread_cond_timedwait(pthread_cond_t *pc, pthread_mutex_t *pm, const struct timespec *abs)
{
    ensure_init();
    if (g.mode == MODE_GLIBC)
        return real.cond_timedwait(pc, pm, abs);
    clockid_t clk = (((nlp_cond_t *)pc)->flags & COND_MONOTONIC) ? CLOCK_MONOTONIC : CLOCK_REALTIME;
    return cond_wait_impl(pc, pm, clk, abs, __builtin_return_address(0));
}

int nlp_cond_clockwait(pthread_cond_t *pc, pthread_mutex_t *pm, clockid_t clk, const struct timespec *abs);
EXPORT int nlp_cond_clockwait(pthread_cond_t *pc, pthread_mutex_t *pm, clockid_t clk,
                              const struct timespec *abs)
{
    ensure_init();
    if (g.mode == MODE_GLIBC)
        return real.cond_clockwait(pc, pm, clk, abs);
    if (bad_clock(clk))
        return EINVAL;
    return cond_wait_impl(pc, pm, clk, abs, __builtin_return_address(0));
}
NLP_TWO_VERSIONS(nlp_cond_clockwait, pthread_cond_clockwait, "GLIBC_2.30", "GLIBC_2.34");

EXPORT int pthread_cond_signal(pthread_cond_t *pc)
{
    ensure_init();
    if (g.mode == MODE_GLIBC)
        return real.cond_signal(pc);
    nlp_cond_t *c = (nlp_cond_t *)pc;
    if (atomic_load(&c->waiters) == 0)
        return 0;
    atomic_fetch_add(&c->seq, 1);
    futex_wake_n(&c->seq, 1, (c->flags & COND_SHARED) != 0);
    return 0;
}

EXPORT int pthread_cond_broadcast(pthread_cond_t *pc)
{
    ensure_init();
    if (g.mode == MODE_GLIBC)
        return real.cond_broadcast(pc);
    nlp_cond_t *c = (nlp_cond_t *)pc;
    if (atomic_load(&c->waiters) == 0)
        return 0;
    atomic_fetch_add(&c->seq, 1);
    futex_wake_n(&c->seq, INT_MAX, (c->flags & COND_SHARED) != 0);
    return 0;
}

/* ====================================================================== */
/* read-write locks                                                         */
/* ====================================================================== */
typedef struct nlp_rwlock {
    _Atomic uint32_t state;    /*  0: RW_WRITER | RW_SLEEPERS | waiting writers | readers; the futex word */
    uint32_t pad0[5];          /*  4 */
    _Atomic int writer;        /* 24: tid of the write holder (glibc's __cur_writer) */
    int shared;                /* 28: glibc's __shared: non-zero leaves the lock to glibc */
    _Atomic(void *) alg;       /* 32: NUMALOCK_RWLOCK's lock, allocated at first use */
    unsigned char pad1[8];     /* 40 */
    uint32_t flags;            /* 48: glibc's __flags (kind) */
    uint32_t pad2;             /* 52 */
} nlp_rwlock_t;
_Static_assert(sizeof(nlp_rwlock_t) == sizeof(pthread_rwlock_t), "rwlock layout");
_Static_assert(offsetof(nlp_rwlock_t, shared) == offsetof(pthread_rwlock_t, __data.__shared), "shared");
#define RW_WRITER 0x80000000u
#define RW_SLEEPERS 0x40000000u /* someone sleeps (or is about to) on the state word */
#define RW_WWAIT 0x3fc00000u    /* writers waiting (counted for the writer-preferring kind) */
#define RW_WWAIT_ONE 0x00400000u
#define RW_READERS 0x003fffffu

/* PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP: new readers wait for waiting
 * writers (the program promises no recursive read locks) */
static inline int rw_prefers_writers(const nlp_rwlock_t *r)
{
    return r->flags == PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP;
}

static inline int rw_is_glibc(const nlp_rwlock_t *r) { return g.mode == MODE_GLIBC || r->shared; }

/* One attempt; the sleeper flag is kept (the new holder's release wakes).
 * `registered`: the caller counted itself among the waiting writers, and
 * taking the lock takes it out of the count in the same step. */
static inline int rw_try_reg(nlp_rwlock_t *r, int write, int registered)
{
    uint32_t s = atomic_load_explicit(&r->state, memory_order_relaxed);
    for (;;) {
        uint32_t n;
        if (write) {
            if (s & (RW_WRITER | RW_READERS))
                return EBUSY;
            n = (s | RW_WRITER) - (registered ? RW_WWAIT_ONE : 0);
        } else {
            if ((s & RW_WRITER) || ((s & RW_WWAIT) && rw_prefers_writers(r)))
                return EBUSY;
            if ((s & RW_READERS) == RW_READERS)
                return EAGAIN;
            n = s + 1;
        }
        if (atomic_compare_exchange_weak_explicit(&r->state, &s, n, memory_order_acquire, memory_order_relaxed))
            return 0;
    }
}
static inline int rw_try(nlp_rwlock_t *r, int write) { return rw_try_reg(r, write, 0); }

/* a waiting writer leaves the count without the lock (timeout): readers it
 * held back may go, so sleepers are woken */
static void rw_unregister(nlp_rwlock_t *r)
{
    uint32_t s = atomic_load_explicit(&r->state, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&r->state, &s, (s - RW_WWAIT_ONE) & ~RW_SLEEPERS,
                                                  memory_order_relaxed, memory_order_relaxed))
        ;
    if (s & RW_SLEEPERS)
        futex_wake_n(&r->state, INT_MAX, 0);
}

/* wait for the lock: spin, yield a little, then flag a sleeper in the state
 * word and sleep on it; a release that clears the flag wakes all sleepers */
static int rw_wait(nlp_rwlock_t *r, int write, clockid_t clk, const struct timespec *abs)
{
    int rc, reg = 0;
    if (abs && bad_time(abs))
        return EINVAL;
    if (write && rw_prefers_writers(r)) { /* count this writer: new readers hold back */
        uint32_t s = atomic_load_explicit(&r->state, memory_order_relaxed);
        while ((s & RW_WWAIT) != RW_WWAIT) {
            if (atomic_compare_exchange_weak_explicit(&r->state, &s, s + RW_WWAIT_ONE, memory_order_relaxed,
                                                      memory_order_relaxed)) {
                reg = 1;
                break;
            }
        }
    }
    for (int i = 0; i < 128; i++) {
        if ((rc = rw_try_reg(r, write, reg)) != EBUSY)
            return rc;
        if (i < 120)
            nl_cpu_relax();
        else
            sched_yield();
    }
    for (;;) {
        if ((rc = rw_try_reg(r, write, reg)) != EBUSY)
            return rc;
        uint32_t s = atomic_load_explicit(&r->state, memory_order_relaxed);
        int busy = write ? (s & (RW_WRITER | RW_READERS)) != 0
                         : (s & RW_WRITER) || ((s & RW_WWAIT) && rw_prefers_writers(r));
        if (!busy)
            continue;
        if (!(s & RW_SLEEPERS) &&
            !atomic_compare_exchange_strong_explicit(&r->state, &s, s | RW_SLEEPERS, memory_order_relaxed,
                                                     memory_order_relaxed))
            continue;
        if (futex_wait_abs(&r->state, s | RW_SLEEPERS, abs, clk, 0) == ETIMEDOUT) {
            if (rw_try_reg(r, write, reg) == 0)
                return 0;
            if (reg)
                rw_unregister(r);
            return ETIMEDOUT;
        }
    }
}

/* ---- NUMALOCK_RWLOCK: a registered read-write algorithm in a block the
 * rwlock points to (offset 32) ---------------------------------------------- */
static void *rw_alg(nlp_rwlock_t *r)
{
    void *p = atomic_load_explicit(&r->alg, memory_order_acquire);
    if (NL_LIKELY(p != NULL))
        return p;
    if (posix_memalign(&p, g.rw_align, g.rw_size) || !p)
        abort();
    memset(p, 0, g.rw_size);
    if (g.rw_ops->init && g.rw_ops->init(p, NULL))
        abort();
    void *expect = NULL;
    if (atomic_compare_exchange_strong_explicit(&r->alg, &expect, p, memory_order_acq_rel, memory_order_acquire))
        return p;
    if (g.rw_ops->destroy)
        g.rw_ops->destroy(p);
    free(p);
    return expect;
}

static inline int alg_try(void *l, int write)
{
    return write ? g.rw_ops->try_acquire(l) : g.rw_ops->read_try_acquire(l);
}

/* acquire with the algorithm: blocking, or polling with sleeps of at most
 * 1 ms until the deadline (the algorithm has no timed form) */
static int alg_lock(void *l, int write, clockid_t clk, const struct timespec *abs)
{
    if (!abs) {
        write ? g.rw_ops->acquire(l) : g.rw_ops->read_acquire(l);
        return 0;
    }
    if (bad_time(abs))
        return EINVAL;
    long ns = 1000;
    for (;;) {
        if (alg_try(l, write) == 0)
            return 0;
        int expired;
        struct timespec t = until_at_most(clk, abs, ns, &expired);
        if (expired)
            return alg_try(l, write) == 0 ? 0 : ETIMEDOUT;
        clock_nanosleep(clk, TIMER_ABSTIME, &t, NULL);
        if (ns < 1000000)
            ns *= 2;
    }
}

static int rw_lock_impl(pthread_rwlock_t *pr, int write, int trylock, clockid_t clk,
                        const struct timespec *abs, void *ra)
{
    ensure_init();
    nlp_rwlock_t *r = (nlp_rwlock_t *)pr;
    if (abs && bad_clock(clk))
        return EINVAL;
    if (rw_is_glibc(r)) {
        int (*try_fn)(pthread_rwlock_t *) = write ? real.rw_trywrlock : real.rw_tryrdlock;
        int rc = try_fn(pr);
        if (rc != EBUSY || trylock) {
            if (rc == 0 && g.stats) {
                nlp_stat_t *s = nlp_profile_get(pr, NLP_OBJ_RWLOCK, ra);
                write ? nlp_profile_write(s, 0, 0) : nlp_profile_read(s, 0, 0);
            }
            return rc;
        }
        uint64_t t0 = g.stats ? nl_now_ns() : 0;
        if (!abs)
            rc = write ? real.rw_wrlock(pr) : real.rw_rdlock(pr);
        else if (write)
            rc = real.rw_clockwrlock ? real.rw_clockwrlock(pr, clk, abs) : real.rw_timedwrlock(pr, abs);
        else
            rc = real.rw_clockrdlock ? real.rw_clockrdlock(pr, clk, abs) : real.rw_timedrdlock(pr, abs);
        if (rc == 0 && g.stats) {
            nlp_stat_t *s = nlp_profile_get(pr, NLP_OBJ_RWLOCK, ra);
            write ? nlp_profile_write(s, 1, nl_now_ns() - t0) : nlp_profile_read(s, 1, nl_now_ns() - t0);
        }
        return rc;
    }
    int me = my_tid();
    if (atomic_load_explicit(&r->writer, memory_order_relaxed) == me)
        return trylock ? EBUSY : EDEADLK;
    void *alg = g.rw_ops ? rw_alg(r) : NULL;
    int rc = alg ? (alg_try(alg, write) ? EBUSY : 0) : rw_try(r, write), contended = 0;
    uint64_t t0 = 0;
    if (rc == EBUSY && !trylock) {
        contended = 1;
        if (g.stats)
            t0 = nl_now_ns();
        rc = alg ? alg_lock(alg, write, clk, abs) : rw_wait(r, write, clk, abs);
    }
    if (rc)
        return rc;
    if (write)
        atomic_store_explicit(&r->writer, me, memory_order_relaxed);
    if (g.stats) {
        nlp_stat_t *s = nlp_profile_get(pr, NLP_OBJ_RWLOCK, ra);
        uint64_t dt = contended ? nl_now_ns() - t0 : 0;
        write ? nlp_profile_write(s, contended, dt) : nlp_profile_read(s, contended, dt);
    }
    return 0;
}

EXPORT int nlp_rwlock_init(pthread_rwlock_t *pr, const pthread_rwlockattr_t *attr)
{
    ensure_init();
    int ps = PTHREAD_PROCESS_PRIVATE;
    if (attr)
        pthread_rwlockattr_getpshared(attr, &ps);
    if (g.mode == MODE_GLIBC || ps != PTHREAD_PROCESS_PRIVATE)
        return real.rw_init(pr, attr);
    nlp_rwlock_t *r = (nlp_rwlock_t *)pr;
    memset(r, 0, sizeof *r);
    if (attr) {
        int kind = 0;
        pthread_rwlockattr_getkind_np(attr, &kind);
        r->flags = (uint32_t)kind;
    }
    return 0;
}

EXPORT int nlp_rwlock_destroy(pthread_rwlock_t *pr)
{
    ensure_init();
    nlp_rwlock_t *r = (nlp_rwlock_t *)pr;
    if (rw_is_glibc(r))
        return real.rw_destroy(pr);
    void *p = atomic_exchange(&r->alg, NULL);
    if (p) {
        if (g.rw_ops && g.rw_ops->destroy)
            g.rw_ops->destroy(p);
        free(p);
    }
    return 0;
}

EXPORT int nlp_rwlock_rdlock(pthread_rwlock_t *pr)
{
    return rw_lock_impl(pr, 0, 0, CLOCK_REALTIME, NULL, __builtin_return_address(0));
}
EXPORT int nlp_rwlock_tryrdlock(pthread_rwlock_t *pr)
{
    return rw_lock_impl(pr, 0, 1, CLOCK_REALTIME, NULL, __builtin_return_address(0));
}
EXPORT int nlp_rwlock_timedrdlock(pthread_rwlock_t *pr, const struct timespec *abs)
{
    return rw_lock_impl(pr, 0, 0, CLOCK_REALTIME, abs, __builtin_return_address(0));
}
EXPORT int nlp_rwlock_clockrdlock(pthread_rwlock_t *pr, clockid_t clk, const struct timespec *abs)
{
    return rw_lock_impl(pr, 0, 0, clk, abs, __builtin_return_address(0));
}
EXPORT int nlp_rwlock_wrlock(pthread_rwlock_t *pr)
{
    return rw_lock_impl(pr, 1, 0, CLOCK_REALTIME, NULL, __builtin_return_address(0));
}
EXPORT int nlp_rwlock_trywrlock(pthread_rwlock_t *pr)
{
    return rw_lock_impl(pr, 1, 1, CLOCK_REALTIME, NULL, __builtin_return_address(0));
}
EXPORT int nlp_rwlock_timedwrlock(pthread_rwlock_t *pr, const struct timespec *abs)
{
    return rw_lock_impl(pr, 1, 0, CLOCK_REALTIME, abs, __builtin_return_address(0));
}
EXPORT int nlp_rwlock_clockwrlock(pthread_rwlock_t *pr, clockid_t clk, const struct timespec *abs)
{
    return rw_lock_impl(pr, 1, 0, clk, abs, __builtin_return_address(0));
}

EXPORT int nlp_rwlock_unlock(pthread_rwlock_t *pr)
{
    ensure_init();
    nlp_rwlock_t *r = (nlp_rwlock_t *)pr;
    if (rw_is_glibc(r))
        return real.rw_unlock(pr);
    if (g.rw_ops) {
        void *alg = rw_alg(r);
        if (atomic_load_explicit(&r->writer, memory_order_relaxed) == my_tid()) {
            atomic_store_explicit(&r->writer, 0, memory_order_relaxed);
            g.rw_ops->release(alg);
        } else {
            g.rw_ops->read_release(alg);
        }
        return 0;
    }
    /* the release clears the sleeper flag in the same atomic step and wakes
     * after it: nothing of the rwlock is written once it is released */
    uint32_t s;
    if (atomic_load_explicit(&r->writer, memory_order_relaxed) == my_tid()) {
        atomic_store_explicit(&r->writer, 0, memory_order_relaxed);
        s = atomic_load_explicit(&r->state, memory_order_relaxed);
        while (!atomic_compare_exchange_weak_explicit(&r->state, &s, s & RW_WWAIT, memory_order_release,
                                                      memory_order_relaxed))
            ;
    } else {
        s = atomic_load_explicit(&r->state, memory_order_relaxed);
        for (;;) {
            if ((s & RW_WRITER) || !(s & RW_READERS))
                return EPERM; /* not held for reading (nor writing) by this thread */
            /* the last reader out clears the flag; others leave it to it */
            uint32_t n = (s & RW_READERS) == 1 ? (s & RW_WWAIT) : s - 1;
            if (atomic_compare_exchange_weak_explicit(&r->state, &s, n, memory_order_release,
                                                      memory_order_relaxed))
                break;
        }
        if ((s & RW_READERS) != 1)
            return 0;
    }
    if (s & RW_SLEEPERS)
        futex_wake_n(&r->state, INT_MAX, 0);
    return 0;
}

NLP_TWO_VERSIONS(nlp_rwlock_init, pthread_rwlock_init, "GLIBC_2.2.5", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_destroy, pthread_rwlock_destroy, "GLIBC_2.2.5", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_rdlock, pthread_rwlock_rdlock, "GLIBC_2.2.5", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_tryrdlock, pthread_rwlock_tryrdlock, "GLIBC_2.2.5", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_timedrdlock, pthread_rwlock_timedrdlock, "GLIBC_2.2.5", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_clockrdlock, pthread_rwlock_clockrdlock, "GLIBC_2.30", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_wrlock, pthread_rwlock_wrlock, "GLIBC_2.2.5", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_trywrlock, pthread_rwlock_trywrlock, "GLIBC_2.2.5", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_timedwrlock, pthread_rwlock_timedwrlock, "GLIBC_2.2.5", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_clockwrlock, pthread_rwlock_clockwrlock, "GLIBC_2.30", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_rwlock_unlock, pthread_rwlock_unlock, "GLIBC_2.2.5", "GLIBC_2.34");

/* glibc's own double-underscore rwlock names (GLIBC_2.2.5) */
EXPORT int __pthread_rwlock_init(pthread_rwlock_t *pr, const pthread_rwlockattr_t *a)
{
    return nlp_rwlock_init(pr, a);
}
EXPORT int __pthread_rwlock_destroy(pthread_rwlock_t *pr) { return nlp_rwlock_destroy(pr); }
EXPORT int __pthread_rwlock_rdlock(pthread_rwlock_t *pr)
{
    return rw_lock_impl(pr, 0, 0, CLOCK_REALTIME, NULL, __builtin_return_address(0));
}
EXPORT int __pthread_rwlock_tryrdlock(pthread_rwlock_t *pr)
{
    return rw_lock_impl(pr, 0, 1, CLOCK_REALTIME, NULL, __builtin_return_address(0));
}
EXPORT int __pthread_rwlock_wrlock(pthread_rwlock_t *pr)
{
    return rw_lock_impl(pr, 1, 0, CLOCK_REALTIME, NULL, __builtin_return_address(0));
}
EXPORT int __pthread_rwlock_trywrlock(pthread_rwlock_t *pr)
{
    return rw_lock_impl(pr, 1, 1, CLOCK_REALTIME, NULL, __builtin_return_address(0));
}
EXPORT int __pthread_rwlock_unlock(pthread_rwlock_t *pr) { return nlp_rwlock_unlock(pr); }

/* ====================================================================== */
/* C11 <threads.h> mutexes and condition variables                          */
/* ====================================================================== */
/* glibc implements them with its internal pthread functions, which the
 * interposer cannot see: replaced here on top of the functions above.
 * mtx_t and cnd_t have the sizes of pthread_mutex_t and pthread_cond_t. */
_Static_assert(sizeof(mtx_t) == sizeof(pthread_mutex_t), "mtx_t");
_Static_assert(sizeof(cnd_t) == sizeof(pthread_cond_t), "cnd_t");

static int thrd_rc(int rc)
{
    return rc == 0 ? thrd_success : rc == EBUSY ? thrd_busy : rc == ETIMEDOUT ? thrd_timedout
           : rc == ENOMEM ? thrd_nomem : thrd_error;
}

EXPORT int nlp_mtx_init(mtx_t *m, int type)
{
    pthread_mutexattr_t a;
    if (type != mtx_plain && type != mtx_timed && type != (mtx_plain | mtx_recursive) &&
        type != (mtx_timed | mtx_recursive))
        return thrd_error;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, (type & mtx_recursive) ? PTHREAD_MUTEX_RECURSIVE : PTHREAD_MUTEX_NORMAL);
    int rc = pthread_mutex_init((pthread_mutex_t *)m, &a);
    pthread_mutexattr_destroy(&a);
    return thrd_rc(rc);
}
EXPORT void nlp_mtx_destroy(mtx_t *m) { pthread_mutex_destroy((pthread_mutex_t *)m); }
EXPORT int nlp_mtx_lock(mtx_t *m)
{
    return thrd_rc(mutex_lock_slow((nlp_mutex_t *)m, __builtin_return_address(0)));
}
EXPORT int nlp_mtx_trylock(mtx_t *m)
{
    return thrd_rc(mutex_trylock_impl((pthread_mutex_t *)m, __builtin_return_address(0)));
}
EXPORT int nlp_mtx_timedlock(mtx_t *restrict m, const struct timespec *restrict abs)
{
    return thrd_rc(mutex_clocklock_impl((pthread_mutex_t *)m, CLOCK_REALTIME, abs, __builtin_return_address(0)));
}
EXPORT int nlp_mtx_unlock(mtx_t *m) { return thrd_rc(mutex_unlock_slow((nlp_mutex_t *)m)); }
EXPORT int nlp_cnd_init(cnd_t *c) { return thrd_rc(pthread_cond_init((pthread_cond_t *)c, NULL)); }
EXPORT void nlp_cnd_destroy(cnd_t *c) { pthread_cond_destroy((pthread_cond_t *)c); }
EXPORT int nlp_cnd_signal(cnd_t *c) { return thrd_rc(pthread_cond_signal((pthread_cond_t *)c)); }
EXPORT int nlp_cnd_broadcast(cnd_t *c) { return thrd_rc(pthread_cond_broadcast((pthread_cond_t *)c)); }
EXPORT int nlp_cnd_wait(cnd_t *c, mtx_t *m)
{
    ensure_init();
    if (g.mode == MODE_GLIBC)
        return thrd_rc(real.cond_wait((pthread_cond_t *)c, (pthread_mutex_t *)m));
    return thrd_rc(cond_wait_impl((pthread_cond_t *)c, (pthread_mutex_t *)m, CLOCK_REALTIME, NULL,
                                  __builtin_return_address(0)));
}
EXPORT int nlp_cnd_timedwait(cnd_t *restrict c, mtx_t *restrict m, const struct timespec *restrict abs)
{
    ensure_init();
    if (g.mode == MODE_GLIBC)
        return thrd_rc(real.cond_timedwait((pthread_cond_t *)c, (pthread_mutex_t *)m, abs));
    return thrd_rc(cond_wait_impl((pthread_cond_t *)c, (pthread_mutex_t *)m, CLOCK_REALTIME, abs,
                                  __builtin_return_address(0)));
}
NLP_TWO_VERSIONS(nlp_mtx_init, mtx_init, "GLIBC_2.28", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_mtx_destroy, mtx_destroy, "GLIBC_2.28", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_mtx_lock, mtx_lock, "GLIBC_2.28", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_mtx_trylock, mtx_trylock, "GLIBC_2.28", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_mtx_timedlock, mtx_timedlock, "GLIBC_2.28", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_mtx_unlock, mtx_unlock, "GLIBC_2.28", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_cnd_init, cnd_init, "GLIBC_2.28", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_cnd_destroy, cnd_destroy, "GLIBC_2.28", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_cnd_signal, cnd_signal, "GLIBC_2.28", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_cnd_broadcast, cnd_broadcast, "GLIBC_2.28", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_cnd_wait, cnd_wait, "GLIBC_2.28", "GLIBC_2.34");
NLP_TWO_VERSIONS(nlp_cnd_timedwait, cnd_timedwait, "GLIBC_2.28", "GLIBC_2.34");
