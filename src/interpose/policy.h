/*
 * The preload's policy (policy.c; not installed): which registered locks
 * can stand in for a pthread mutex, spin lock or rwlock, the defaults, and
 * the checks of the environment's values. Compiled into both the preload
 * library (config.c applies it at start-up, a bad value falls back to the
 * default) and the numalock command (`numalock run` refuses a bad value,
 * of an option or of the environment, before the program starts), so the
 * two agree. It uses the public API only (include/numalock).
 *
 * Every check returns 0 with its result, or -1 with one sentence in why
 * (the reason, with the valid choices where the function says so; the
 * caller names the variable or the option).
 */
#ifndef NL_INTERPOSE_POLICY_H
#define NL_INTERPOSE_POLICY_H

#include <stddef.h>
#include "numalock/numalock.h"
#include "numalock/interpose.h"

/* The default when NUMALOCK_LOCK is unset: the first of these that is
 * registered and interposable. Measured in docs/PRELOAD.md: on a loaded
 * 2-core machine the FIFO queue locks hand the lock to preempted waiters and
 * fall far behind glibc; HBO lets a running thread barge in, waits with
 * node-aware backoff and stays near glibc. */
#define NLP_DEFAULT_CHOICES "hbo", "ttas", "tas"

/* The default spin lock when NUMALOCK_SPIN is unset: the first of these
 * that is registered and fits a pthread_spinlock_t. Measured in
 * docs/PRELOAD.md (pthread_spinlock_t): hbo, NUMA-aware in 4 bytes, had the
 * best medians at 2 and 4 threads; qspinlock-cna's FIFO hand-over to a
 * preempted waiter gave it the worst outliers on 2 cores. */
#define NLP_DEFAULT_SPIN_CHOICES "hbo", "qspinlock-cna", "ttas"

/* Bytes of a pthread_mutex_t that a lock may occupy in place (offsets 0..15;
 * glibc's mutex kind stays at offset 16). Larger locks live in a block that
 * the mutex points to. */
#define NLP_INPLACE_BYTES 16
#define NLP_SPIN_BYTES 4 /* sizeof(pthread_spinlock_t) */

/* ---- which locks ---------------------------------------------------------- */
/* `ops` can stand in for a pthread mutex (why: the reason it cannot). */
int nlp_interposable(const nl_lock_ops_t *ops, char *why, size_t len);
/* ... for a pthread_spinlock_t (NUMALOCK_SPIN; pthread = glibc's own). */
int nlp_spin_usable(const nl_lock_ops_t *ops, char *why, size_t len);
/* ... for pthread rwlocks (NUMALOCK_RWLOCK). */
int nlp_rw_usable(const nl_lock_ops_t *ops, char *why, size_t len);
/* "a, b, c": the registered locks each of the three accepts, into buf. */
const char *nlp_interposable_names(char *buf, size_t len);
const char *nlp_spin_names(char *buf, size_t len);
const char *nlp_rw_names(char *buf, size_t len);
/* The defaults: the first registered, usable lock of NLP_DEFAULT_CHOICES
 * (of NLP_DEFAULT_SPIN_CHOICES), else glibc's (NLP_GLIBC_NAME). */
const nl_lock_ops_t *nlp_default_lock(void);
const nl_lock_ops_t *nlp_default_spin_lock(void);

/* A name for a mutex, a spin lock or an rwlock, looked up and checked:
 * 0 with *ops, or -1 with one sentence in why that names the value and the
 * valid choices (the same sentences `numalock run` gives for its options):
 *   "unknown lock 'x': valid locks are a, b"
 *   "lock 'mcs' cannot replace pthread mutexes: REASON; valid locks are a, b"
 *   "unknown spin lock algorithm 'x': REASON; valid are a, b"
 *   "unknown rwlock algorithm 'x': REASON; valid are a, b (default: ...)" */
int nlp_check_lock(const char *name, const nl_lock_ops_t **ops, char *why, size_t len);
int nlp_check_spin(const char *name, const nl_lock_ops_t **ops, char *why, size_t len);
int nlp_check_rwlock(const char *name, const nl_lock_ops_t **ops, char *why, size_t len);

/* ---- values of the profile's variables -------------------------------------
 * 0 with the value, or -1 with the valid forms in why ("expected ...",
 * "valid ..."; the caller names the variable and the value). */
/* NUMALOCK_STATS (and the preload's other switches): 0 or 1. */
int nlp_parse_flag(const char *v, int *on, char *why, size_t len);
/* NUMALOCK_STATS_TOP: rows of the profile, 1 to 1000000. */
int nlp_parse_stats_top(const char *v, unsigned *rows, char *why, size_t len);
/* NUMALOCK_STATS_STACKS (--stats-stacks): 0 to NLP_STATS_STACKS_MAX frames. */
int nlp_parse_stats_stacks(const char *v, unsigned *frames, char *why, size_t len);
/* NUMALOCK_STATS_FORMAT (--stats-format): "text" or "json". */
int nlp_parse_stats_format(const char *v, int *json, char *why, size_t len);
/* NUMALOCK_FUTEX_HASH (--futex-hash): slots of the private futex hash, a
 * power of two from 2 to 1048576, or 0 (the system's global hash). */
int nlp_parse_futex_hash(const char *v, unsigned *slots, char *why, size_t len);
/* Size the calling process's private futex hash (prctl PR_FUTEX_HASH): 0,
 * or -1 with one sentence in why (the kernel cannot: an older one has no
 * private hashes). */
int nlp_futex_hash_apply(unsigned slots, char *why, size_t len);

#endif
