/* Internal declarations shared by the preload library's files. */
#ifndef NL_PRELOAD_H
#define NL_PRELOAD_H

#include <stdint.h>
#include "../core/internal.h"

enum { NLP_OBJ_MUTEX = 1, NLP_OBJ_RWLOCK = 2 };

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

NL_HIDDEN int nlp_profile_init(const char *lock_name);
NL_HIDDEN nlp_stat_t *nlp_profile_get(const void *obj, uint32_t kind, void *caller);
/* call holding the object exclusively */
NL_HIDDEN void nlp_profile_write(nlp_stat_t *s, int contended, uint64_t wait_ns);
NL_HIDDEN void nlp_profile_read(nlp_stat_t *s, int contended, uint64_t wait_ns);

#endif
