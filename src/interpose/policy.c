/* The preload's policy (policy.h): which locks stand in for pthread
 * objects, the defaults, the checks of the environment's values. One
 * source for the preload library and the numalock command. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include "policy.h"

/* NUMALOCK_STATS_STACKS (and `numalock run --stats-stacks`): 0 (no stacks, the
 * default) to NLP_STATS_STACKS_MAX frames. 0 and *frames set, or -1 with the
 * valid range in why ("expected ..."; the caller names the value). */
int nlp_parse_stats_stacks(const char *v, unsigned *frames, char *why, size_t len)
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
int nlp_parse_stats_format(const char *v, int *json, char *why, size_t len)
{
    if (!strcmp(v, "text") || !strcmp(v, "json")) {
        *json = v[0] == 'j';
        return 0;
    }
    snprintf(why, len, "valid formats are text and json");
    return -1;
}

/* 0 if `ops` can stand in for a pthread mutex; otherwise writes one sentence
 * (the reason) into why and returns -1. */
int nlp_interposable(const nl_lock_ops_t *ops, char *why, size_t len)
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

/* 0 if `ops` can stand in for a pthread_spinlock_t (NUMALOCK_SPIN; pthread =
 * glibc's own); else one sentence in why and -1. */
int nlp_spin_usable(const nl_lock_ops_t *ops, char *why, size_t len)
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
int nlp_rw_usable(const nl_lock_ops_t *ops, char *why, size_t len)
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
static const char *names_where(char *buf, size_t len,
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
const char *nlp_rw_names(char *buf, size_t len)
{
    return names_where(buf, len, nlp_rw_usable);
}

/* Writes "a, b" (the locks usable for pthread spin locks) into buf. */
const char *nlp_spin_names(char *buf, size_t len)
{
    return names_where(buf, len, nlp_spin_usable);
}

/* Writes the interposable lock names, "a, b, c", into buf. */
const char *nlp_interposable_names(char *buf, size_t len)
{
    return names_where(buf, len, nlp_interposable);
}

/* The default lock: first registered, interposable one of NLP_DEFAULT_CHOICES. */
const nl_lock_ops_t *nlp_default_lock(void)
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
const nl_lock_ops_t *nlp_default_spin_lock(void)
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

/* ---- names, looked up and checked --------------------------------------- */
int nlp_check_lock(const char *name, const nl_lock_ops_t **ops, char *why, size_t len)
{
    char names[1024], reason[512];
    const nl_lock_ops_t *o = nl_lock_find(name);
    if (!o) {
        snprintf(why, len, "unknown lock '%s': valid locks are %s", name, nlp_interposable_names(names, sizeof names));
        return -1;
    }
    if (nlp_interposable(o, reason, sizeof reason)) {
        snprintf(why, len, "lock '%s' cannot replace pthread mutexes: %s; valid locks are %s", name, reason,
                 nlp_interposable_names(names, sizeof names));
        return -1;
    }
    *ops = o;
    return 0;
}

int nlp_check_spin(const char *name, const nl_lock_ops_t **ops, char *why, size_t len)
{
    char names[1024], reason[512];
    const nl_lock_ops_t *o = nl_lock_find(name);
    if (!o || nlp_spin_usable(o, reason, sizeof reason)) {
        if (!o)
            snprintf(reason, sizeof reason, "'%s' is not a registered lock", name);
        snprintf(why, len, "unknown spin lock algorithm '%s': %s; valid are %s", name, reason,
                 nlp_spin_names(names, sizeof names));
        return -1;
    }
    *ops = o;
    return 0;
}

int nlp_check_rwlock(const char *name, const nl_lock_ops_t **ops, char *why, size_t len)
{
    char names[1024], reason[512];
    const nl_lock_ops_t *o = nl_lock_find(name);
    if (!o || nlp_rw_usable(o, reason, sizeof reason)) {
        if (!o)
            snprintf(reason, sizeof reason, "'%s' is not a registered lock", name);
        snprintf(why, len,
                 "unknown rwlock algorithm '%s': %s; valid are %s (default: the built-in reader-preferring lock)",
                 name, reason, nlp_rw_names(names, sizeof names));
        return -1;
    }
    *ops = o;
    return 0;
}

/* ---- values of the profile's variables ------------------------------------ */
int nlp_parse_flag(const char *v, int *on, char *why, size_t len)
{
    if (!strcmp(v, "0") || !strcmp(v, "1")) {
        *on = v[0] == '1';
        return 0;
    }
    snprintf(why, len, "valid values are 0 and 1");
    return -1;
}

int nlp_parse_stats_top(const char *v, unsigned *rows, char *why, size_t len)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || end == v || *end || n < 1 || n > 1000000) {
        snprintf(why, len, "expected a number of rows from 1 to 1000000");
        return -1;
    }
    *rows = (unsigned)n;
    return 0;
}

int nlp_parse_futex_hash(const char *v, unsigned *slots, char *why, size_t len)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || end == v || *end || n < 0 || n == 1 || n > (1l << 20) || (n & (n - 1))) {
        snprintf(why, len, "expected the slots of the private futex hash, a power of two from 2 to 1048576, "
                           "or 0 for the system's global hash");
        return -1;
    }
    *slots = (unsigned)n;
    return 0;
}

/* the kernel's ABI, where this system's headers predate it */
#ifndef PR_FUTEX_HASH
#define PR_FUTEX_HASH 78
#define PR_FUTEX_HASH_SET_SLOTS 1
#endif

int nlp_futex_hash_apply(unsigned slots, char *why, size_t len)
{
    if (prctl(PR_FUTEX_HASH, PR_FUTEX_HASH_SET_SLOTS, (unsigned long)slots, 0ul, 0ul) == 0)
        return 0;
    int e = errno;
    if (e == EINVAL)
        snprintf(why, len, "this kernel does not size a process's private futex hash (prctl PR_FUTEX_HASH: %s); "
                           "the program runs with the kernel's own futex hash", strerror(e));
    else
        snprintf(why, len, "the kernel refused %u slots (prctl PR_FUTEX_HASH: %s); the program runs with the "
                           "futex hash it has", slots, strerror(e));
    return -1;
}
