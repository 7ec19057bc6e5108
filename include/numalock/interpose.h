/*
 * The contract of libnumalock-preload.so, shared by the preload library
 * (src/interpose), `numalock run` (tools/run.c) and programs that set the
 * environment themselves: the environment variables it reads and the
 * values they take. Which registered locks can stand in for a pthread
 * mutex, spin lock or rwlock, and the defaults, are the preload's policy
 * (src/interpose/policy.c), not part of this header.
 */
#ifndef NL_INTERPOSE_H
#define NL_INTERPOSE_H

#define NLP_ENV_LOCK "NUMALOCK_LOCK"             /* mutex algorithm (default: the preload's) */
#define NLP_ENV_RWLOCK "NUMALOCK_RWLOCK"         /* rwlock algorithm (default: built-in) */
#define NLP_ENV_STATS "NUMALOCK_STATS"           /* "1": keep a lock profile, print it at exit */
#define NLP_ENV_STATS_FILE "NUMALOCK_STATS_FILE" /* append the profile here, not to stderr */
#define NLP_ENV_STATS_TOP "NUMALOCK_STATS_TOP"   /* rows of the profile, 1 to 1000000 (default 20) */
#define NLP_ENV_STATS_STACKS "NUMALOCK_STATS_STACKS" /* frames kept where each object was first locked */
#define NLP_ENV_STATS_FORMAT "NUMALOCK_STATS_FORMAT" /* "text" (default) or "json" (one line per process) */
#define NLP_ENV_SPIN "NUMALOCK_SPIN"             /* pthread_spinlock_t algorithm (default: the preload's) */
#define NLP_ENV_WAIT "NUMALOCK_WAIT"             /* waiting policy (the library's nl_wait_set_policy) */
#define NLP_ENV_CNA_FAIRNESS "NUMALOCK_CNA_FAIRNESS" /* CNA fairness rule (nl_cna_set_fairness) */
#define NLP_ENV_FUTEX "NUMALOCK_FUTEX"           /* futex path (the library's nl_futex_set_path) */
#define NLP_ENV_FUTEX_HASH "NUMALOCK_FUTEX_HASH" /* the program's private futex hash: N slots (a power
                                                  * of two, 2 to 1048576) or 0, the system's global one */

/* NUMALOCK_STATS_STACKS (and `numalock run --stats-stacks`): 0 (no stacks, the
 * default) to NLP_STATS_STACKS_MAX frames. */
#define NLP_STATS_STACKS_MAX 64

/* "pthread" runs glibc's own mutex under the interposer (a baseline, and a
 * lock profile of an unmodified program): a value of NUMALOCK_LOCK and
 * NUMALOCK_SPIN. */
#define NLP_GLIBC_NAME "pthread"

#endif
