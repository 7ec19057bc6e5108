/*
 * Internal declarations shared by the preload library's files, one file per
 * concern (docs/PRELOAD.md, "Design"):
 *   symbols.c  the real glibc functions (dlvsym) and the export macros
 *   say.c      the preload's own messages (write(2) to stderr)
 *   config.c   configuration from the environment, start-up, thread ids
 *   timed.c    deadlines: the timed futex wait, clock arithmetic
 *   mutex.c    pthread_mutex_*          cond.c  pthread_cond_*
 *   rwlock.c   pthread_rwlock_* (on src/locks/futex_rwlock.c)
 *   spin.c     pthread_spin_*           c11.c   C11 mtx_* / cnd_*
 *   profile.c  the lock profile of --stats
 *   symbolize.c  code addresses to names for the profile (libdw or dladdr)
 */
#ifndef NL_PRELOAD_H
#define NL_PRELOAD_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stddef.h>
#include <errno.h>
#include <stdint.h>
#include <time.h>
#include "../internal.h"
#include "../wait/futex.h"
#include "policy.h"

#define EXPORT __attribute__((visibility("default")))

/* The version glibc gave the pthread functions where the architecture's
 * port began (x86-64: 2.2.5, the condition variables 2.3.2; aarch64: 2.17
 * for both); preload.map.in names the same. */
#if defined(__aarch64__)
#define NLP_GLIBC_BASE "GLIBC_2.17"
#define NLP_GLIBC_COND "GLIBC_2.17"
#else
#define NLP_GLIBC_BASE "GLIBC_2.2.5"
#define NLP_GLIBC_COND "GLIBC_2.3.2"
#endif

/* Export impl as name@@newv and also as name@oldv (the versions are listed in
 * preload.map.in; tests/interpose/check_symbols.sh checks them). */
#define NLP_TWO_VERSIONS(impl, name, oldv, newv)                                           \
    extern __typeof(impl) impl##_old __attribute__((alias(#impl), visibility("default"))); \
    __asm__(".symver " #impl "_old, " #name "@" oldv);                                     \
    __asm__(".symver " #impl ", " #name "@@" newv)

/* ---- the real (glibc) functions (symbols.c) ------------------------------ */
typedef struct nlp_real {
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
    int (*spin_init)(pthread_spinlock_t *, int);
    int (*spin_destroy)(pthread_spinlock_t *);
    int (*spin_lock)(pthread_spinlock_t *);
    int (*spin_trylock)(pthread_spinlock_t *);
    int (*spin_unlock)(pthread_spinlock_t *);
} nlp_real_t;

NL_HIDDEN extern nlp_real_t nlp_real;
NL_HIDDEN void nlp_resolve_real(void);

/* ---- configuration (config.c) ------------------------------------------- */
enum { NLP_MODE_INPLACE = 0, NLP_MODE_EXTERNAL = 1, NLP_MODE_GLIBC = 2 };

typedef struct nlp_config {
    const nl_lock_ops_t *ops; /* the mutex lock (NUMALOCK_LOCK) */
    void (*acquire)(void *);
    int (*try_acquire)(void *);
    /* ops->release, or a wrapper that skips a stray release of a free lock
     * when the lock lacks NL_PROP_FREE_RELEASE */
    void (*release)(void *);
    int (*held)(const void *);
    size_t ext_size, ext_align;
    int mode;                    /* NLP_MODE_* */
    int stats;                   /* NUMALOCK_STATS=1 and the profile table is mapped */
    const nl_lock_ops_t *rw_ops; /* NUMALOCK_RWLOCK: a registered read-write lock, NULL: built-in */
    size_t rw_size, rw_align;
    const nl_lock_ops_t *spin_ops; /* NUMALOCK_SPIN; NULL: glibc's spin locks */
    void (*spin_acquire)(void *);
    int (*spin_try)(void *);
    void (*spin_release)(void *);
    int spin_pshared_too;        /* tests only: process-shared spin locks are not left to glibc */
} nlp_config_t;

NL_HIDDEN extern nlp_config_t nlp_g;

/* The lock block a pthread object points to at `slot` (a lock too large for
 * the object, or NUMALOCK_RWLOCK's): allocated and initialised by the first
 * thread that needs it and published with one CAS; a thread that loses the
 * race frees its own. */
NL_HIDDEN void *nlp_block_get_slow(_Atomic(void *) *slot, const nl_lock_ops_t *ops, size_t size, size_t align);
static inline void *nlp_block_get(_Atomic(void *) *slot, const nl_lock_ops_t *ops, size_t size, size_t align)
{
    void *p = atomic_load_explicit(slot, memory_order_acquire);
    return NL_LIKELY(p != NULL) ? p : nlp_block_get_slow(slot, ops, size, align);
}
/* 1 once initialised with an in-place mutex lock and statistics off */
NL_HIDDEN extern _Atomic int nlp_fast;
NL_HIDDEN extern _Atomic int nlp_ready;
NL_HIDDEN void nlp_init_slow(void);

static inline void nlp_ensure_init(void)
{
    if (NL_UNLIKELY(!atomic_load_explicit(&nlp_ready, memory_order_acquire)))
        nlp_init_slow();
}

/* The calling thread's kernel tid (cached; reset in a child after fork). */
NL_HIDDEN extern NL_TLS pid_t nlp_tls_tid;
NL_HIDDEN pid_t nlp_gettid(void);
static inline int nlp_tid(void)
{
    pid_t t = nlp_tls_tid;
    return NL_LIKELY(t != 0) ? t : nlp_gettid();
}

/* Writes one line to stderr with write(2) (no stdio: callable at any time;
 * say.c, below every other file of the preload). */
NL_HIDDEN void nlp_say(const char *msg);

/* ---- timed waits (timed.c) --------------------------------------------------- */
/* A deadline: an absolute time on a clock (abs NULL: none). */
typedef struct nlp_deadline {
    clockid_t clk;
    const struct timespec *abs;
} nlp_deadline_t;
/* An object's timed sleepers: their count and the futex word they sleep on. */
typedef struct nlp_sleep {
    _Atomic uint32_t *sleepers;
    _Atomic uint32_t *seq;
} nlp_sleep_t;
/* Acquire `l` with `try_fn(l, arg)` (0: taken) before the deadline `abs` on
 * `clk`: 0, ETIMEDOUT, or EINVAL for a bad deadline. */
NL_HIDDEN int nlp_timed_acquire(const nlp_sleep_t *z, int (*try_fn)(void *l, int arg), void *l, int arg,
                                clockid_t clk, const struct timespec *abs);
/* Release `l` with `release`, waking `n` of the object's timed sleepers if
 * it has any. Nothing of the object is written after the release (another thread
 * may acquire, unlock and free it at once: POSIX allows that), so the
 * sequence word is bumped while the lock is still held and only the futex
 * wake (a system call on the address, harmless if it is gone) follows. */
static inline void nlp_timed_release(const nlp_sleep_t *z, void (*release)(void *), void *l, int n)
{
    if (NL_LIKELY(!atomic_load_explicit(z->sleepers, memory_order_relaxed))) {
        release(l);
        return;
    }
    atomic_fetch_add_explicit(z->seq, 1, memory_order_relaxed);
    release(l);
    nl_futex_wake(z->seq, n);
}

/* The futex waits with a deadline (nl_futex_wait_until: 0, EAGAIN, EINTR or
 * ETIMEDOUT) and the shared wake are the library's (src/wait/wait.h). */
/* now + ns on clk, but not past abs; *expired: abs has passed */
NL_HIDDEN struct timespec nlp_until_at_most(clockid_t clk, const struct timespec *abs, long ns, int *expired);

static inline int nlp_bad_time(const struct timespec *t) { return t->tv_nsec < 0 || t->tv_nsec >= 1000000000L; }
static inline int nlp_bad_clock(clockid_t c) { return c != CLOCK_REALTIME && c != CLOCK_MONOTONIC; }

/* ---- mutexes (mutex.c), used by cond.c and c11.c ------------------------- */
typedef struct nlp_mutex {
    union {
        unsigned char inplace[NLP_INPLACE_BYTES];
        _Atomic(void *) ext;
    } u;                    /*  0: the lock, or a pointer to it      */
    int kind;               /* 16: glibc's __kind                     */
    _Atomic uint32_t twait; /* 20: threads sleeping in timedlock      */
    _Atomic int owner;      /* 24: holder's tid (recursive/errorcheck) */
    uint32_t count;         /* 28: recursion depth                    */
    _Atomic uint32_t tseq;  /* 32: futex word for timedlock sleepers  */
    uint32_t spare;         /* 36 */
#if __SIZEOF_PTHREAD_MUTEX_T > 40
    unsigned char tail_[__SIZEOF_PTHREAD_MUTEX_T - 40]; /* aarch64: 48 bytes */
#endif
} nlp_mutex_t;

/* kind bits that leave a mutex to glibc: robust (16), priority inheritance
 * (32), priority protection (64), process-shared (128) */
#define NLP_KIND_GLIBC 0xF0
#define NLP_KIND_TYPE 3

static inline int nlp_mutex_is_glibc(const nlp_mutex_t *m)
{
    return nlp_g.mode == NLP_MODE_GLIBC || (m->kind & NLP_KIND_GLIBC);
}

/* the replaced lock: acquire (counted with stats on), release (waking timed sleepers) */
NL_HIDDEN void nlp_mutex_raw_acquire(nlp_mutex_t *m, void *ra);
NL_HIDDEN void nlp_mutex_raw_release(nlp_mutex_t *m);
/* a glibc-owned mutex, counted with stats on */
NL_HIDDEN int nlp_mutex_glibc_lock(pthread_mutex_t *pm, void *ra);
NL_HIDDEN int nlp_mutex_lock_slow(nlp_mutex_t *m, void *ra);
NL_HIDDEN int nlp_mutex_unlock_slow(nlp_mutex_t *m);
NL_HIDDEN int nlp_mutex_trylock_impl(pthread_mutex_t *pm, void *ra);
NL_HIDDEN int nlp_mutex_clocklock_impl(pthread_mutex_t *pm, clockid_t clk, const struct timespec *abs, void *ra);

/* ---- condition variables (cond.c), used by c11.c ------------------------- */
NL_HIDDEN int nlp_cond_wait_impl(pthread_cond_t *pc, pthread_mutex_t *pm, clockid_t clk, const struct timespec *abs,
                                 void *ra);

/* ---- the lock profile (profile.c) ----------------------------------------- */
enum { NLP_OBJ_MUTEX = 1, NLP_OBJ_RWLOCK = 2, NLP_OBJ_SPIN = 3 };

/* Per-object statistics (only with NUMALOCK_STATS=1): found by hashing the
 * object's address into a table that is mapped at start-up, so no global
 * lock or counter is touched on the way. */
typedef struct nlp_stat {
    _Alignas(NL_CACHELINE) _Atomic uintptr_t key; /* object address; 0 free, 1 being set up */
    uintptr_t caller;                             /* return address at first use */
    uint32_t kind;                                /* NLP_OBJ_* */
    nl_stats_t st;                                /* write side: acquisitions, contended, hand-overs */
    _Atomic uint64_t wait_ns;                     /* time spent in contended write acquisitions */
    _Atomic uint64_t read_contended;
    _Atomic uint64_t read_wait_ns;
} nlp_stat_t;

/* The profile's settings, from the environment (config.c reads them). */
typedef struct nlp_profile_opts {
    unsigned top;    /* NUMALOCK_STATS_TOP: rows of the report */
    unsigned stacks; /* NUMALOCK_STATS_STACKS: frames kept per object, 0..NLP_STATS_STACKS_MAX */
    int json;        /* NUMALOCK_STATS_FORMAT=json */
} nlp_profile_opts_t;
NL_HIDDEN int nlp_profile_init(const char *lock_name, const nlp_profile_opts_t *opts);
NL_HIDDEN nlp_stat_t *nlp_profile_get(const void *obj, uint32_t kind, void *caller);
/* call holding the object exclusively */
NL_HIDDEN void nlp_profile_write(nlp_stat_t *s, int contended, uint64_t wait_ns);
/* Acquire numalock lock `l` with `acquire` for object `obj` (kind, caller)
 * and record it: contended when the lock's slow path ran (the thread's
 * waiting counters, as the generic handle reads them), the time it waited
 * then, and its waiting events. The same call as without the profile: no
 * try first. */
NL_HIDDEN void nlp_profiled_acquire(const void *obj, uint32_t kind, void *caller, void (*acquire)(void *),
                                    void *l);
NL_HIDDEN void nlp_profile_read(nlp_stat_t *s, int contended, uint64_t wait_ns);
/* An acquisition through calls that cannot tell whether they waited (glibc's
 * locks, a lock's try): `try_fn`, then, if it found the object busy and
 * there is one, `lock_fn` (timed as the wait); with the profile on,
 * recorded on the read or write side when it succeeded (0, or EOWNERDEAD
 * for a robust mutex). The result of the last call. With the profile on,
 * the object's block is found before the object is held, as in
 * nlp_profiled_acquire: creating it may walk the stack, and the unwinder may
 * take locks, this very object among them (libgcc's own mutex). */
NL_HIDDEN int nlp_profiled_call_slow(void *obj, uint32_t kind, int read, void *caller, int (*try_fn)(void *obj),
                                     int (*lock_fn)(void *obj, const void *ctx), const void *ctx);
static inline int nlp_profiled_call(void *obj, uint32_t kind, int read, void *caller, int (*try_fn)(void *obj),
                                    int (*lock_fn)(void *obj, const void *ctx), const void *ctx)
{
    if (NL_UNLIKELY(nlp_g.stats))
        return nlp_profiled_call_slow(obj, kind, read, caller, try_fn, lock_fn, ctx);
    int rc = try_fn(obj);
    return rc == EBUSY && lock_fn ? lock_fn(obj, ctx) : rc;
}

/* ---- code addresses to names (symbolize.c), at report time only ----------- */
typedef struct nlp_site {
    uintptr_t pc;         /* the address looked up: a return address */
    char object[512];     /* the module's file; "" when unknown */
    char function[256];   /* "" when unknown (demangled when libstdc++ is loaded) */
    char inlined_in[256]; /* the function `function` was inlined into; "" when it was not */
    char file[512];       /* the source file; "" without debug information */
    int line;             /* 0 without debug information */
    char text[768];       /* "function (file.c:LINE)", "function", "object(+0xOFFSET)" or "0x..." */
} nlp_site_t;
typedef struct nlp_symbolizer nlp_symbolizer_t;
/* NULL only without memory; lookups with NULL still use dladdr */
NL_HIDDEN nlp_symbolizer_t *nlp_sym_open(void);
NL_HIDDEN void nlp_sym_lookup(nlp_symbolizer_t *s, uintptr_t pc, nlp_site_t *out);
NL_HIDDEN void nlp_sym_close(nlp_symbolizer_t *s);

#endif
