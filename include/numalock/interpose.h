/*
 * The contract of libnumalock-preload.so, shared by the preload library
 * (src/interpose), `numalock run` (tools/run.c) and programs that set the
 * environment themselves: the environment variables it reads, and which
 * registered locks can stand in for a pthread mutex, spin lock or rwlock.
 */
#ifndef NL_INTERPOSE_H
#define NL_INTERPOSE_H

#include <stdio.h>
#include <string.h>
#include "numalock.h"

#define NLP_ENV_LOCK "NUMALOCK_LOCK"             /* mutex algorithm (default below) */
#define NLP_ENV_RWLOCK "NUMALOCK_RWLOCK"         /* rwlock algorithm (default: built-in) */
#define NLP_ENV_STATS "NUMALOCK_STATS"           /* "1": keep a lock profile, print it at exit */
#define NLP_ENV_STATS_FILE "NUMALOCK_STATS_FILE" /* append the profile here, not to stderr */
#define NLP_ENV_STATS_TOP "NUMALOCK_STATS_TOP"   /* rows of the profile (default 20) */
#define NLP_ENV_STATS_STACKS "NUMALOCK_STATS_STACKS" /* frames kept where each object was first locked */
#define NLP_ENV_STATS_FORMAT "NUMALOCK_STATS_FORMAT" /* "text" (default) or "json" (one line per process) */
#define NLP_ENV_SPIN "NUMALOCK_SPIN"             /* pthread_spinlock_t algorithm (default below) */
#define NLP_ENV_WAIT "NUMALOCK_WAIT"             /* waiting policy (the library's nl_wait_set_policy) */
#define NLP_ENV_CNA_FAIRNESS "NUMALOCK_CNA_FAIRNESS" /* CNA fairness rule (nl_cna_set_fairness) */

/* NUMALOCK_STATS_STACKS (and `numalock run --stats-stacks`): 0 (no stacks, the
 * default) to NLP_STATS_STACKS_MAX frames. 0 and *frames set, or -1 with the
 * valid range in why ("expected ..."; the caller names the value). */
#define NLP_STATS_STACKS_MAX 64
static inline int nlp_parse_stats_stacks(const char *v, unsigned *frames, char *why, size_t len)
{
    unsigned n = 0;
    const char *p = v;
    for (; *p >= '0' && *p <= '9' && n <= NLP_STATS_STACKS_MAX; p++)
        n = n * 10 + (unsigned)(*p - '0');
    if (p == v || *p || n > NLP_STATS_STACKS_MAX) {
        snprintf(why, len, "expected a number of stack frames from 0 (none) to %d", NLP_STATS_STACKS_MAX);
        return -1;
    }
    *frames = n;
    return 0;
}

/* NUMALOCK_STATS_FORMAT (and `numalock run --stats-format`): "text" or
 * "json". 0 with *json set, or -1 with the valid forms in why. */
static inline int nlp_parse_stats_format(const char *v, int *json, char *why, size_t len)
{
    if (!strcmp(v, "text") || !strcmp(v, "json")) {
        *json = v[0] == 'j';
        return 0;
    }
    snprintf(why, len, "valid formats are text and json");
    return -1;
}

/* The default when NUMALOCK_LOCK is unset: the first of these that is
 * registered and interposable. Measured in docs/PRELOAD.md: on a loaded
 * 2-core machine the FIFO queue locks hand the lock to preempted waiters and
 * fall far behind glibc; HBO lets a running thread barge in, waits with
 * node-aware backoff and stays near glibc. */
#define NLP_DEFAULT_CHOICES "hbo", "ttas", "tas"

/* "pthread" runs glibc's own mutex under the interposer (a baseline, and a
 * lock profile of an unmodified program). */
#define NLP_GLIBC_NAME "pthread"

/* Bytes of a pthread_mutex_t that a lock may occupy in place (offsets 0..15;
 * glibc's mutex kind stays at offset 16). Larger locks live in a block that
 * the mutex points to. */
#define NLP_INPLACE_BYTES 16

/* 0 if `ops` can stand in for a pthread mutex; otherwise writes one sentence
 * (the reason) into why and returns -1. */
static inline int nlp_interposable(const nl_lock_ops_t *ops, char *why, size_t len)
{
    if (!strcmp(ops->name, NLP_GLIBC_NAME))
        return 0;
    if (!strncmp(ops->name, "pthread", 7)) {
        snprintf(why, len, "'%s' wraps glibc's own pthread objects, which the preload library replaces",
                 ops->name);
        return -1;
    }
    if (ops->props & NL_PROP_DELEGATE) {
        snprintf(why, len, "'%s' is a delegation lock: a pthread critical section cannot be shipped to a server thread",
                 ops->name);
        return -1;
    }
    if (!(ops->props & NL_PROP_ANY_UNLOCK)) {
        snprintf(why, len, "'%s' must be released by the thread that acquired it, but glibc lets any thread unlock a normal mutex",
                 ops->name);
        return -1;
    }
    /* every interposable lock tells whether it is held: pthread_mutex_destroy
     * returns EBUSY for a held mutex, and a stray unlock of a free mutex is
     * skipped for locks without NL_PROP_FREE_RELEASE (tests/interpose
     * semantics.c checks both for every interposable lock) */
    if (!ops->held) {
        snprintf(why, len, "'%s' cannot tell whether it is held (its ops table has no held function), which "
                 "pthread_mutex_destroy and a stray unlock need", ops->name);
        return -1;
    }
    return 0;
}

/* The default spin lock when NUMALOCK_SPIN is unset: the first of these
 * that is registered and fits a pthread_spinlock_t. Measured in
 * docs/PRELOAD.md (pthread_spinlock_t): hbo, NUMA-aware in 4 bytes, had the
 * best medians at 2 and 4 threads; qspinlock-cna's FIFO hand-over to a
 * preempted waiter gave it the worst outliers on 2 cores. */
#define NLP_DEFAULT_SPIN_CHOICES "hbo", "qspinlock-cna", "ttas"
#define NLP_SPIN_BYTES 4 /* sizeof(pthread_spinlock_t) */

/* 0 if `ops` can stand in for a pthread_spinlock_t (NUMALOCK_SPIN; pthread =
 * glibc's own); else one sentence in why and -1. */
static inline int nlp_spin_usable(const nl_lock_ops_t *ops, char *why, size_t len)
{
    if (!strcmp(ops->name, NLP_GLIBC_NAME))
        return 0;
    if (nlp_interposable(ops, why, len))
        return -1;
    if (ops->size > NLP_SPIN_BYTES || ops->align > NLP_SPIN_BYTES || !(ops->props & NL_PROP_ZERO_INIT) || ops->init) {
        snprintf(why, len, "'%s' does not fit a pthread_spinlock_t (%d bytes that are zero when unlocked)", ops->name,
                 NLP_SPIN_BYTES);
        return -1;
    }
    return 0;
}

/* 0 if `ops` can implement pthread rwlocks (NUMALOCK_RWLOCK); else one
 * sentence in why and -1. */
static inline int nlp_rw_usable(const nl_lock_ops_t *ops, char *why, size_t len)
{
    if (!(ops->props & NL_PROP_RW) || !ops->read_acquire || !ops->read_try_acquire || !ops->read_release) {
        snprintf(why, len, "'%s' is not a read-write lock", ops->name);
        return -1;
    }
    if (!strncmp(ops->name, "pthread", 7)) {
        snprintf(why, len, "'%s' wraps glibc's own pthread objects, which the preload library replaces", ops->name);
        return -1;
    }
    return 0;
}

/* Writes "a, b, c", the registered locks that `usable` accepts, into buf. */
static inline const char *nlp_names_where(char *buf, size_t len,
                                          int (*usable)(const nl_lock_ops_t *, char *, size_t))
{
    char why[256];
    size_t off = 0;
    buf[0] = 0;
    for (size_t i = 0; i < nl_lock_count() && off < len; i++) {
        const nl_lock_ops_t *ops = nl_lock_at(i);
        if (usable(ops, why, sizeof why) == 0)
            off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? ", " : "", ops->name);
    }
    return buf;
}

/* Writes "a, b" (the locks usable for rwlocks) into buf. */
static inline const char *nlp_rw_names(char *buf, size_t len)
{
    return nlp_names_where(buf, len, nlp_rw_usable);
}

/* Writes "a, b" (the locks usable for pthread spin locks) into buf. */
static inline const char *nlp_spin_names(char *buf, size_t len)
{
    return nlp_names_where(buf, len, nlp_spin_usable);
}

/* Writes the interposable lock names, "a, b, c", into buf. */
static inline const char *nlp_interposable_names(char *buf, size_t len)
{
    return nlp_names_where(buf, len, nlp_interposable);
}

/* The default lock: first registered, interposable one of NLP_DEFAULT_CHOICES. */
static inline const nl_lock_ops_t *nlp_default_lock(void)
{
    static const char *const choices[] = { NLP_DEFAULT_CHOICES };
    char why[256];
    for (size_t i = 0; i < sizeof choices / sizeof choices[0]; i++) {
        const nl_lock_ops_t *ops = nl_lock_find(choices[i]);
        if (ops && nlp_interposable(ops, why, sizeof why) == 0)
            return ops;
    }
    return nl_lock_find(NLP_GLIBC_NAME);
}

/* The default spin lock: first registered, usable one of NLP_DEFAULT_SPIN_CHOICES. */
static inline const nl_lock_ops_t *nlp_default_spin_lock(void)
{
    static const char *const choices[] = { NLP_DEFAULT_SPIN_CHOICES };
    char why[256];
    for (size_t i = 0; i < sizeof choices / sizeof choices[0]; i++) {
        const nl_lock_ops_t *ops = nl_lock_find(choices[i]);
        if (ops && nlp_spin_usable(ops, why, sizeof why) == 0)
            return ops;
    }
    return nl_lock_find(NLP_GLIBC_NAME);
}

#endif
