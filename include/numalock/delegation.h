/*
 * Delegation locks: the critical section is a function, and it may be run by
 * another thread (a server) on the caller's behalf.
 *
 *  - SANL (Zhang et al., "Scalable Adaptive NUMA-aware Lock", IEEE TPDS 28(6),
 *    2017): a qspinlock-cna word used in place under low contention (and with fewer
 *    than 3 threads on the lock), a dynamic server
 *    walking a per-lock request array under high contention, chosen by a vote
 *    of the contending threads (algorithm 1); a NUMA serving policy
 *    (distance-first or serving-first, sec. 3.3.1) with a FIFO of remote
 *    threads, at most one per node, waiting to become a server (sec. 3.3.2).
 *  - FC (Hendler, Incze, Shavit, Tzafrir, "Flat Combining and the
 *    Synchronization-Parallelism Tradeoff", SPAA 2010): a publication list of
 *    per-thread records and one combiner at a time.
 *
 * Both also work as plain locks (acquire/release): an in-place holder and the
 * server's executions exclude each other (the server holds the same lock).
 * Neither can stand in for a pthread mutex (the preload refuses them).
 *
 * Storage: the lock in place (nl_sanl_t / nl_fc_t) plus per-thread request
 * records allocated on first use, 64 threads at a time; nl_*_destroy frees
 * them. A thread gets its request slot from a process-wide id manager
 * (bitmap, recycled at thread exit); NL_DELEG_MAX_SLOTS threads may hold one
 * at once, any further thread runs its critical sections in place.
 */
#ifndef NUMALOCK_DELEGATION_H
#define NUMALOCK_DELEGATION_H

#include "numalock.h"
#include "spinlocks.h"
#include "cna.h"
#include "topology.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NL_DELEG_MAX_SLOTS 4096
#define NL_DELEG_CHUNK 64 /* request records allocated together */

typedef void *(*nl_deleg_fn)(void *arg);

/* ---- SANL ----------------------------------------------------------------- */
enum { NL_SANL_SERVING_FIRST = 0, NL_SANL_DISTANCE_FIRST = 1, NL_SANL_NO_NUMA = 2 };
enum { NL_SANL_ADAPTIVE = 0, NL_SANL_INPLACE = 1, NL_SANL_DELEGATE = 2 };

/* Thresholds (paper table 2). Zero fields take the calibrated value (from
 * `numalock calibrate sanl`) or the built-in default. */
typedef struct nl_sanl_config {
    int policy;          /* NL_SANL_SERVING_FIRST (default), _DISTANCE_FIRST, _NO_NUMA */
    int mode;            /* NL_SANL_ADAPTIVE (default), or a fixed mode (profiling, tests) */
    uint32_t theta_l;    /* in-place/delegation threshold on C_l, in 1/1024 */
    uint32_t theta_f;    /* free/restrictive threshold on C_l, in 1/1024 */
    uint32_t ls_k;       /* L_s = ls_k * 1024 / C_l, clamped to 1..1000 (f(1/C_l), sec. 3.4.3) */
    uint32_t t_s;        /* static limit of a server's walks over the array */
    uint32_t t_w_ns;     /* client wait bound in ns before it tries to become the server */
    uint32_t boundary;   /* vote buffer of algorithm 1 */
} nl_sanl_config_t;

/* Parameters the library uses when a field is zero; *source says where they
 * came from: "built-in defaults" or the path of the calibration file
 * ($NUMALOCK_SANL_PARAMS, else $XDG_CONFIG_HOME or $HOME/.config,
 * numalock/sanl.conf). */
NL_API void nl_sanl_params(nl_sanl_config_t *out, const char **source);
/* Where `numalock calibrate sanl` stores them (buf gets the path); 0 or ENOENT. */
NL_API int nl_sanl_params_path(char *buf, size_t len);

typedef struct nl_sanl_slot nl_sanl_slot_t;

typedef struct nl_sanl {
    nl_qspinlock_t ll;                    /* the in-place lock (qspinlock-cna); the server holds it */
    char ll_line[60];                     /* ll alone on its cache line (the lock is 64-byte aligned):
                                           * the fields below are read on every call */
    NL_ATOMIC(uint32_t) server_up;           /* 1 while a server walks the array */
    NL_ATOMIC(int32_t) server_node;
    NL_ATOMIC(int32_t) votes;                /* C_g: threads voting for delegation */
    NL_ATOMIC(int32_t) fvotes;               /* second vote: threads voting restrictive */
    NL_ATOMIC(int32_t) joined;               /* threads that have used this lock */
    NL_ATOMIC(int32_t) hwm;                  /* highest slot + 1 that has used this lock */
    nl_sanl_config_t cfg;
    NL_ATOMIC(uint8_t) q_node[NL_MAX_NODES]; /* remote FIFO: one waiter per node */
    NL_ATOMIC(nl_sanl_slot_t *) chunks[NL_DELEG_MAX_SLOTS / NL_DELEG_CHUNK];
    /* statistics, written under ll */
    NL_ATOMIC(uint64_t) served, own, inplace, terms, switches, takeovers, handbacks, timeouts;
} nl_sanl_t;

typedef struct nl_sanl_stats {
    uint64_t served;     /* requests a server ran for another thread */
    uint64_t own;        /* critical sections a server ran for itself */
    uint64_t inplace;    /* critical sections run in place (in-place mode, takeovers) */
    uint64_t terms;      /* server terms (nominations) */
    uint64_t switches;   /* per-thread mode switches (in-place <-> delegation) */
    uint64_t takeovers;  /* clients that took their request back and ran it */
    uint64_t handbacks;  /* requests that waited on a condition, sent back to run in place */
    uint64_t timeouts;   /* clients that waited T_w and queued on the in-place lock */
} nl_sanl_stats_t;

NL_API int  nl_sanl_init(nl_sanl_t *l, const nl_sanl_config_t *cfg); /* cfg may be NULL */
NL_API void nl_sanl_destroy(nl_sanl_t *l);
NL_API void *nl_sanl_execute(nl_sanl_t *l, nl_deleg_fn fn, void *arg);
NL_API void nl_sanl_acquire(nl_sanl_t *l);
NL_API int  nl_sanl_try(nl_sanl_t *l);
NL_API void nl_sanl_release(nl_sanl_t *l);
NL_API void nl_sanl_stats(const nl_sanl_t *l, nl_sanl_stats_t *out);
NL_API size_t nl_sanl_footprint(const nl_sanl_t *l);

/* Condition variable for SANL critical sections (sec. 3.3.2). Wait only from
 * inside a critical section of `l`, and before the section has changed
 * anything (the usual `while (!ready) nl_sanl_cond_wait(l, c);` first): a
 * section a server runs for another thread is abandoned at the wait and runs
 * again from its start on its caller's thread, in place, where the wait
 * releases the lock and sleeps. The server never blocks in a request.
 * Spurious wake-ups happen: wait in a loop on the predicate. Zero-initialised
 * is ready. */
typedef struct nl_sanl_cond { NL_ATOMIC(uint32_t) seq; } nl_sanl_cond_t;
NL_API void nl_sanl_cond_wait(nl_sanl_t *l, nl_sanl_cond_t *c);
NL_API void nl_sanl_cond_signal(nl_sanl_cond_t *c);
NL_API void nl_sanl_cond_broadcast(nl_sanl_cond_t *c);

/* ---- flat combining -------------------------------------------------------- */
typedef struct nl_fc_rec nl_fc_rec_t;

typedef struct nl_fc {
    nl_mcs_t ll;                         /* the combiner lock; plain acquire takes it */
    NL_ATOMIC(nl_fc_rec_t *) head;         /* publication list */
    uint64_t pass;                       /* combining passes (combiner only) */
    NL_ATOMIC(nl_fc_rec_t *) chunks[NL_DELEG_MAX_SLOTS / NL_DELEG_CHUNK];
    NL_ATOMIC(uint64_t) served, own, terms;
} nl_fc_t;

typedef struct nl_fc_stats {
    uint64_t served;     /* requests the combiner ran for another thread */
    uint64_t own;        /* critical sections a combiner ran for itself */
    uint64_t terms;      /* combining sessions */
} nl_fc_stats_t;

NL_API int  nl_fc_init(nl_fc_t *l);
NL_API void nl_fc_destroy(nl_fc_t *l);
NL_API void *nl_fc_execute(nl_fc_t *l, nl_deleg_fn fn, void *arg);
NL_API void nl_fc_acquire(nl_fc_t *l);
NL_API int  nl_fc_try(nl_fc_t *l);
NL_API void nl_fc_release(nl_fc_t *l);
NL_API void nl_fc_stats(const nl_fc_t *l, nl_fc_stats_t *out);

#ifdef __cplusplus
}
#endif
#endif
