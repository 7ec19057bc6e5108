# The checks of verify/wmm/run.sh (sourced by it).
#   check NAME[:FILE] [-u N] [-3 RUNS] [THREADS...] [-- CFLAGS]
#                                                verify/wmm/FILE.c must pass
#   broken NAME CHECK FILE FROM TO [-u N] [THREADS] [-- CFLAGS]
#                                                one order weakened: must fail

check tas
broken tas-acquire tas src/locks/tas.c \
    'while (atomic_exchange_explicit(&l->word, 1, memory_order_acquire))' \
    'while (atomic_exchange_explicit(&l->word, 1, memory_order_relaxed))'

check ttas
broken ttas-acquire ttas src/locks/ttas.c \
    'if (!atomic_exchange_explicit(&l->word, 1, memory_order_acquire))' \
    'if (!atomic_exchange_explicit(&l->word, 1, memory_order_relaxed))'

check ticket
broken ticket-await ticket src/locks/ticket_impl.h \
    'while (atomic_load_explicit(&l->owner, memory_order_acquire) != me)' \
    'while (atomic_load_explicit(&l->owner, memory_order_relaxed) != me)'

check hbo 2
check hbo -u 4 3
broken hbo-release hbo include/numalock/spinlocks.h \
    'NL_ATOMIC_XCHG(&l->word, 0, __ATOMIC_RELEASE)' \
    'NL_ATOMIC_XCHG(&l->word, 0, __ATOMIC_RELAXED)'

check mcs
broken mcs-link mcs src/locks/mcs_queue.h \
    'atomic_store_explicit(&pred->next, me, memory_order_release)' \
    'atomic_store_explicit(&pred->next, me, memory_order_relaxed)'
broken grant mcs src/wait/wait.h \
    'static inline void nl_grant32(_Atomic uint32_t *w, uint32_t v)
{
    if (NL_UNLIKELY(atomic_exchange_explicit(w, v, memory_order_acq_rel)' \
    'static inline void nl_grant32(_Atomic uint32_t *w, uint32_t v)
{
    if (NL_UNLIKELY(atomic_exchange_explicit(w, v, memory_order_relaxed)'

check cna
check cna-opt:cna -- -DNL_CNA_OPT
broken cna-link cna src/locks/cna.c \
    'atomic_store_explicit(&tail->next, me, memory_order_release);' \
    'atomic_store_explicit(&tail->next, me, memory_order_relaxed);' 3

check qspinlock -u 3
check qspinlock-cna:qspinlock -u 3 -- -DNL_QS_CNA
broken qspinlock-unlock qspinlock include/numalock/cna.h \
    'NL_ATOMIC_FETCH_AND(&l->val, ~0xffu, __ATOMIC_RELEASE);' \
    'NL_ATOMIC_FETCH_AND(&l->val, ~0xffu, __ATOMIC_RELAXED);' -u 3

# the cohort composition (c-bo-mcs, c-tkt-tkt, hmcs) with 3 threads on 2
# nodes (two on one node): the global lock contended, one local lock too,
# passed within the node up to twice. Their 3-thread runs take minutes under
# IMM and with parking: RC11 only, and parking with c-bo-mcs's local MCS
# lock only (hmcs's 2-thread runs park on its global MCS lock; c-tkt-tkt's
# ticket waiters never park)
check c-bo-mcs:cohort -3 'rc11 rc11/park'
check c-tkt-tkt:cohort -3 rc11 -- -DNL_COHORT_TKT
check hmcs -3 rc11
broken hmcs-link hmcs src/locks/mcs_queue.h \
    'atomic_store_explicit(&pred->next, me, memory_order_release)' \
    'atomic_store_explicit(&pred->next, me, memory_order_relaxed)'
broken cohort-global cohort src/locks/cohort.c \
    'atomic_store_explicit((_Atomic uint32_t *)g, 0, memory_order_release);' \
    'atomic_store_explicit((_Atomic uint32_t *)g, 0, memory_order_relaxed);'

# the futex model catches a lost wake-up: a grant that finds its waiter
# parked and does not wake it
broken lost-wake mcs src/wait/wait.h \
    'static inline void nl_grant32(_Atomic uint32_t *w, uint32_t v)
{
    if (NL_UNLIKELY(atomic_exchange_explicit(w, v, memory_order_acq_rel) == NL_GRANT_PARKED))
        nl_wake_parked(w);' \
    'static inline void nl_grant32(_Atomic uint32_t *w, uint32_t v)
{
    if (NL_UNLIKELY(atomic_exchange_explicit(w, v, memory_order_acq_rel) == NL_GRANT_PARKED))
        (void)0;' -- -DNL_VERIFY_PARK
