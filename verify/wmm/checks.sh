# The checks of verify/wmm/run.sh (sourced by it).
#   check NAME[:FILE] [-u N [-l]] [-3 RUNS] [THREADS...] [-- CFLAGS]
#                                                verify/wmm/FILE.c must pass
#   broken NAME CHECK FILE FROM TO [-u N [-l]] [THREADS] [-- CFLAGS]
#                                                one order weakened: must fail
#   $(full RUN...)                               in a -3 list: RUN only with
#                                                VERIFY_WMM_FULL=1
# The runs left to VERIFY_WMM_FULL=1 take a minute and more each on the
# 2-core machine; a run of the same code with fewer threads, or a sibling's
# 3-thread run, stays in every make verify-wmm (each says which).
full() { [ -n "${VERIFY_WMM_FULL:-}" ] && echo "$*"; }

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
# (its 3-thread run under IMM with parked waiters, 45 s: VERIFY_WMM_FULL=1;
# RC11's stays)
check hbo -u 4 -3 "rc11 rc11/park imm $(full imm/park)" 3
broken hbo-release hbo include/numalock/spinlocks.h \
    'NL_ATOMIC_XCHG(&l->word, 0, __ATOMIC_RELEASE)' \
    'NL_ATOMIC_XCHG(&l->word, 0, __ATOMIC_RELAXED)'

# (mcs's and mcs-futex2's 3-thread runs under IMM with parked waiters, 40 s
# each: VERIFY_WMM_FULL=1; RC11's stay)
check mcs -3 "rc11 rc11/park imm $(full imm/park)"
broken mcs-link mcs src/locks/mcs_queue.h \
    'atomic_store_explicit(&pred->next, me, memory_order_release)' \
    'atomic_store_explicit(&pred->next, me, memory_order_relaxed)'
broken grant mcs src/wait/wait.h \
    'static inline void nl_grant32n(_Atomic uint32_t *w, uint32_t v)
{
    if (NL_UNLIKELY(atomic_exchange_explicit(w, v, memory_order_acq_rel)' \
    'static inline void nl_grant32n(_Atomic uint32_t *w, uint32_t v)
{
    if (NL_UNLIKELY(atomic_exchange_explicit(w, v, memory_order_relaxed)'
# the MCS queue's grant word is a two-word futex: parked on the futex2 path
# (FUTEX2_NUMA: a wake finds its sleeper in the bucket of the node its
# second word names, env.c), 2 and 3 threads parking; the waiter's node
# written after it published PARKED: a grant that reads the node before
# that write wakes another node's bucket (a lost wake-up)
check mcs-futex2:mcs -3 "rc11/park $(full imm/park)" -- -DNL_VERIFY_FUTEX2
broken node-late mcs src/wait/grant.c \
    '    if (form == GW_32N && atomic_load_explicit(w32, memory_order_relaxed) == NL_GRANT_WAITING)
        nl_futex_node_claim(w32);
    uint32_t expect = NL_GRANT_WAITING;
    return atomic_compare_exchange_strong_explicit(w32, &expect, NL_GRANT_PARKED, memory_order_acq_rel,
                                                   memory_order_acquire) ||
           expect == NL_GRANT_PARKED;' \
    '    uint32_t expect = NL_GRANT_WAITING;
    bool won = atomic_compare_exchange_strong_explicit(w32, &expect, NL_GRANT_PARKED, memory_order_acq_rel,
                                                       memory_order_acquire);
    if (won && form == GW_32N)
        nl_futex_node_claim(w32);
    return won || expect == NL_GRANT_PARKED;' -- -DNL_VERIFY_PARK -DNL_VERIFY_FUTEX2
# the early wake's CAS (PARKED -> WAITING) made relaxed: its wake may read
# the node half from before the third thread's park (3 threads, parking)
broken nudge-node mcs src/wait/grant.c \
    '(_Atomic uint32_t *)addr, &expect,
                                                       NL_GRANT_WAITING, memory_order_acquire,' \
    '(_Atomic uint32_t *)addr, &expect,
                                                       NL_GRANT_WAITING, memory_order_relaxed,' \
    3 -- -DNL_VERIFY_PARK -DNL_VERIFY_FUTEX2

# CNA's 3-thread runs under IMM with parking double with every draw of the
# fairness rule (each a coin the checker chooses): cna's left to RC11, and
# cna-opt's (its scan skipped or not, too) to its spinning runs
check cna -3 'rc11 rc11/park imm'
check cna-opt:cna -3 'rc11 imm' -- -DNL_CNA_OPT
broken cna-link cna src/locks/cna.c \
    'atomic_store_explicit(&tail->next, me, memory_order_release);' \
    'atomic_store_explicit(&tail->next, me, memory_order_relaxed);' 3

# the queue: a third thread queues behind the holder and the pending waiter;
# loops unrolled 4 (the tail nodes' set-up and the coin thread are loop-free
# once compiled, so the bound is the waits'); 3 threads RC11 spinning only
# (a minute each)
# (qspinlock's own 3-thread run, 2 min: VERIFY_WMM_FULL=1; qspinlock-cna's
# is the same queue with CNA's hand-over, as many executions, and stays)
check qspinlock -u 4 -3 "$(full rc11)"
check qspinlock-cna:qspinlock -u 4 -3 rc11 -- -DNL_QS_CNA
broken qspinlock-unlock qspinlock include/numalock/qspinlock.h \
    'NL_ATOMIC_FETCH_AND(&l->val, ~0xffu, __ATOMIC_RELEASE);' \
    'NL_ATOMIC_FETCH_AND(&l->val, ~0xffu, __ATOMIC_RELAXED);' -u 3

# the cohort composition (c-bo-mcs, c-tkt-tkt, hmcs) with 3 threads on 2
# nodes (two on one node): the global lock contended, one local lock too,
# passed within the node up to twice. Their 3-thread runs take minutes under
# IMM and with parking (c-bo-mcs parking: 132 s): RC11 spinning only (their
# 2-thread runs park; c-tkt-tkt's ticket waiters never park). c-bo-mcs's
# and hmcs's 3-thread runs (a minute and a half each): VERIFY_WMM_FULL=1;
# c-tkt-tkt's (half a minute) stays for the composition
check c-bo-mcs:cohort -3 "$(full rc11)"
check c-tkt-tkt:cohort -3 rc11 -- -DNL_COHORT_TKT
check hmcs -3 "$(full rc11)"
broken hmcs-link hmcs src/locks/mcs_queue.h \
    'atomic_store_explicit(&pred->next, me, memory_order_release)' \
    'atomic_store_explicit(&pred->next, me, memory_order_relaxed)'
broken cohort-global cohort src/locks/cohort.c \
    'atomic_store_explicit((_Atomic uint32_t *)g, 0, memory_order_release);' \
    'atomic_store_explicit((_Atomic uint32_t *)g, 0, memory_order_relaxed);'

# the futex model catches a lost wake-up: a grant that finds its waiter
# parked and does not wake it
broken lost-wake mcs src/wait/wait.h \
    'static inline void nl_grant32n(_Atomic uint32_t *w, uint32_t v)
{
    if (NL_UNLIKELY(atomic_exchange_explicit(w, v, memory_order_acq_rel) == NL_GRANT_PARKED))
        nl_wake_parked_node(w);' \
    'static inline void nl_grant32n(_Atomic uint32_t *w, uint32_t v)
{
    if (NL_UNLIKELY(atomic_exchange_explicit(w, v, memory_order_acq_rel) == NL_GRANT_PARKED))
        (void)0;' -- -DNL_VERIFY_PARK
broken lost-wake-futex2 mcs src/wait/wait.h \
    'static inline void nl_grant32n(_Atomic uint32_t *w, uint32_t v)
{
    if (NL_UNLIKELY(atomic_exchange_explicit(w, v, memory_order_acq_rel) == NL_GRANT_PARKED))
        nl_wake_parked_node(w);' \
    'static inline void nl_grant32n(_Atomic uint32_t *w, uint32_t v)
{
    if (NL_UNLIKELY(atomic_exchange_explicit(w, v, memory_order_acq_rel) == NL_GRANT_PARKED))
        (void)0;' -- -DNL_VERIFY_PARK -DNL_VERIFY_FUTEX2

# CST (cst-mutex, cst-rwsem; verify/wmm/cst_mutex.c and cst_rwsem.c say
# where each run starts): the mutex with 2 threads on two nodes, the second
# node's snode allocated while the first keeps the global lock idle; with 2
# threads on one node from no snode (the allocation race, the local queue,
# parking and re-queueing); with 3 threads on two nodes, RC11 spinning only
# (the local pass and the cohort release; minutes with parking or IMM); the
# trylock. The rw-semaphore with a writer and a reader on two nodes, the
# reader's snode allocated meanwhile; 3 threads (a writer, readers on both
# nodes) RC11 spinning only; the trylocks.
check cst-mutex:cst_mutex 2 -- -DCST_VERIFY_WARM=1
check cst-mutex-node:cst_mutex 2 -- -DCST_VERIFY_ONE_NODE
check cst-mutex-3:cst_mutex -3 rc11 3 -- -DCST_VERIFY_WARM=2
check cst-mutex-try:cst_mutex 2 -- -DCST_VERIFY_WARM=2 -DCST_VERIFY_TRY
check cst-rwsem:cst_rwsem 2 -- -DCST_VERIFY_WARM=1
check cst-rwsem-3:cst_rwsem -3 rc11 3 -- -DCST_VERIFY_WARM=2
check cst-rwsem-try:cst_rwsem 2 -- -DCST_VERIFY_WARM=2 -DCST_VERIFY_TRY
broken cst-pass cst_mutex src/locks/cst_mutex.c \
    'if (atomic_compare_exchange_strong_explicit(&next->status, &expect, to,
                                                        memory_order_acq_rel, memory_order_acquire)) {' \
    'if (atomic_compare_exchange_strong_explicit(&next->status, &expect, to,
                                                        memory_order_acquire, memory_order_acquire)) {' \
    -- -DCST_VERIFY_ONE_NODE
broken cst-idle-keep cst_mutex src/locks/cst_mutex.c \
    'uint64_t p = atomic_load_explicit(&((nl_cst_mutex_t *)m)->present, memory_order_seq_cst);' \
    'uint64_t p = atomic_load_explicit(&((nl_cst_mutex_t *)m)->present, memory_order_acquire);' \
    -- -DCST_VERIFY_WARM=1
broken cst-reader cst_rwsem src/locks/cst_rwsem.c \
    'if (!(atomic_load_explicit(&l->writers, SO) & RW_COUNT))' \
    'if (!(atomic_load_explicit(&l->writers, memory_order_acquire) & RW_COUNT))' \
    -- -DCST_VERIFY_WARM=1

# Delegation locks (fc, sanl) and the futex read-write lock (verify/wmm/fc.c,
# sanl.c, futex_rwlock.c say what each run covers). fc, 2 threads, every
# session cleaning up (FC_CLEAN_EVERY 1, FC_AGE 0): the records' chunk
# published by its first user, idle records unlinked; then thread 0 with a
# second request after its record may have been unlinked (pushed again, or
# run by itself as combiner), the chunk published at init, one walk per
# session; 3 threads, RC11 (its waiters never park), a combiner serving two
# requests. sanl in delegation mode: 2 threads, server and client,
# termination checked (no request lost); with T_w over at the first poll
# (the paths after it: sleep on the answer, or queue on ll), loops unrolled
# 3 and termination still checked ('-u "3 --check-liveness"': the in-place
# lock's loops are not awaits, the sleep on the answer is); both modes on
# one lock (a thread flips it to in place), unrolled 3, safety only.
# futex-rwlock, termination checked (a lost wake-up is a sleep nobody
# ends: broken futex-rwlock-lost-wake): a writer and a reader, 3 threads
# RC11 parking (a writer, two readers; spinning: 45 s more), two writers,
# and the writer-preferring kind.
check fc 2 -- -DFC_CLEAN_EVERY=1 -DFC_AGE=0
check fc-repush:fc 2 -- -DFC_CLEAN_EVERY=1 -DFC_AGE=0 -DNL_ROUNDS=2 '-DNL_ROUNDS_OF(tid)=(2-(tid))' \
    -DNL_DELEG_PREALLOC -DFC_PASSES=1
# (fc-3: 80 s, VERIFY_WMM_FULL=1; the 2-thread fc checks stay)
check fc-3:fc -3 "$(full rc11)" 3 -- -DNL_DELEG_PREALLOC -DFC_PASSES=1
check sanl 2
# the slots joined by the threads' first requests (the chunk allocation race)
check sanl-first:sanl 2 -- -DNL_SANL_FIRST_USE
check sanl-tw:sanl -u 3 -l 2 -- -DNL_SANL_VERIFY_TW
check sanl-flip:sanl -u 3 2 -- -DNL_SANL_FLIP
check futex-rwlock:futex_rwlock -3 rc11/park
check futex-rwlock-ww:futex_rwlock 2 -- '-DNL_WRITER(tid)=1'
check futex-rwlock-pw:futex_rwlock 2 -- -DNL_FRW_PREFER_WRITERS
# a requester that reads its answer without acquiring it
broken fc-answer fc src/locks/fc.c \
    'if (atomic_load_explicit(&me->done, memory_order_acquire) == 1)' \
    'if (atomic_load_explicit(&me->done, memory_order_relaxed) == 1)'
# the server's DOWN store and its last walk without the fence, and the
# client's request store release only: a client that read UP sleeps on an
# answer nobody gives
broken sanl-down sanl src/locks/sanl_impl.h \
    '    atomic_thread_fence(memory_order_seq_cst);
    any |= sanl_walk(l, me, 1);' \
    '    any |= sanl_walk(l, me, 1);' -u 3 -l -- -DNL_SANL_VERIFY_TW
broken sanl-send sanl src/locks/sanl_impl.h \
    'atomic_store_explicit(&s->fn, fn, memory_order_seq_cst);' \
    'atomic_store_explicit(&s->fn, fn, memory_order_release);' -u 3 -l -- -DNL_SANL_VERIFY_TW
broken futex-rwlock-release futex_rwlock src/locks/futex_rwlock.c \
    'while (!atomic_compare_exchange_weak_explicit(&l->state, &s, s & FRW_WWAIT, memory_order_release,' \
    'while (!atomic_compare_exchange_weak_explicit(&l->state, &s, s & FRW_WWAIT, memory_order_relaxed,'
broken futex-rwlock-lost-wake futex_rwlock src/locks/futex_rwlock.c \
    '                                                  memory_order_relaxed));
    if (s & FRW_SLEEPERS)
        nl_wait_wake(&l->state, INT_MAX);
}' \
    '                                                  memory_order_relaxed));
}'

# shfl and shfl-block (verify/wmm/shfl.c: main holds the lock while its
# workers queue; 3 threads: a head, a waiter of its node behind it, the
# shuffle). -u 2: the waiter's and the head's loops write (shuffle passes,
# the filter, early wakes, nudges), so GenMC cannot read them as awaits;
# safety only. 3 threads RC11 only: shfl with waiters that spin (40 s);
# shfl-block with waiters that park (80 s) with VERIFY_WMM_FULL=1; shfl's
# parking waiters and IMM are left to the 2-thread runs
check shfl -u 2 -3 rc11
check shfl-block:shfl -u 2 -3 "$(full rc11/park)" -- -DNL_SHFL_BLOCK
broken shfl-unlock shfl src/locks/shfl.c \
    'atomic_fetch_and_explicit(&l->val, ~SH_LOCK_MASK, memory_order_release);' \
    'atomic_fetch_and_explicit(&l->val, ~SH_LOCK_MASK, memory_order_relaxed);' -u 2
# hmcs-n and c-tkt-n on a 2-level topology (NL_VERIFY_LEVELS in env.c), 2
# threads: on the two nodes (they meet at the domain lock above them) and
# on one node (-node: they meet at its lock), every acquisition climbing the
# tree (NL_HN_ALONE=0); then as built (-alone: the root taken alone when
# free; hmcs_n.c gives thread 0 a second round, so that a thread that took
# the root alone meets one that climbs, and the climbers still meet and
# pass below the root). 3 threads, or 2 rounds each, take minutes
check hmcs-n:hmcs_n 2 -- -DNL_HN_ALONE=0
check hmcs-n-node:hmcs_n 2 -- -DNL_HN_ALONE=0 -DNL_ONE_NODE
check c-tkt-n:hmcs_n 2 -- -DNL_HN_ALONE=0 -DNL_TKT_N
check c-tkt-n-node:hmcs_n 2 -- -DNL_HN_ALONE=0 -DNL_TKT_N -DNL_ONE_NODE
check hmcs-n-alone:hmcs_n 2
check hmcs-n-node-alone:hmcs_n 2 -- -DNL_ONE_NODE
check c-tkt-n-alone:hmcs_n 2 -- -DNL_TKT_N
check c-tkt-n-node-alone:hmcs_n 2 -- -DNL_TKT_N -DNL_ONE_NODE
broken hmcs-n-link hmcs_n src/locks/mcs_queue.h \
    'atomic_store_explicit(&pred->next, me, memory_order_release)' \
    'atomic_store_explicit(&pred->next, me, memory_order_relaxed)'
broken c-tkt-n-release hmcs_n include/numalock/spinlocks.h \
    'NL_ATOMIC_STORE(&l->owner, NL_ATOMIC_LOAD(&l->owner, __ATOMIC_RELAXED) + 1, __ATOMIC_RELEASE);' \
    'NL_ATOMIC_STORE(&l->owner, NL_ATOMIC_LOAD(&l->owner, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);' 2 -- -DNL_TKT_N
# lockref (verify/wmm/lockref.c: lockless CAS updates, locked sections, the
# last put's teardown), 2 threads (3 take minutes)
check lockref 2
broken lockref-cas lockref src/locks/lockref.c \
    'memory_order_acq_rel, memory_order_relaxed)) {
            count_path(0);' \
    'memory_order_relaxed, memory_order_relaxed)) {
            count_path(0);'

# ---- clh, hemlock, reciprocating, reciprocating-numa ------------------------
# CLH (verify/wmm/clh.c): the holder's node kept in the lock, nodes from the
# threads' caches; -2r: thread 0 arrives again with the node it took from
# its predecessor (or kept); -cross: the lock released by another thread
# than its holder. The release CAS made relaxed: the next holder that finds
# the lock free does not see the section.
check clh
check clh-2r:clh 2 -- -DNL_ROUNDS=2 '-DNL_ROUNDS_OF(tid)=(2-(tid))'
check clh-cross:clh 3 -- -DCLH_CROSS
broken clh-release clh src/locks/clh.c \
    'if (NL_LIKELY(atomic_compare_exchange_strong_explicit(&l->tail, &mine, NULL, memory_order_release,' \
    'if (NL_LIKELY(atomic_compare_exchange_strong_explicit(&l->tail, &mine, NULL, memory_order_relaxed,'
# Hemlock (verify/wmm/hemlock.c): -pool, the node-free form (the thread
# slot's element); -2locks: one element for two held locks, a waiter of
# each watching it (with parking both asleep on it). The grant made
# relaxed: the successor enters without the section; the grant that finds
# its waiter asleep on the element and does not wake it (a lost wake-up).
# The 3-thread runs with parking take minutes (hemlock 4 min, -2locks 19
# min under RC11; IMM two to three times that; -pool's 3 min RC11, 11 min
# IMM): RC11 with VERIFY_WMM_FULL=1 only (the 2-thread runs park), and
# -pool's 3-thread run spinning only.
check hemlock -3 "rc11 imm $(full rc11/park)"
check hemlock-pool:hemlock -3 rc11 -- -DHEM_NODE_FREE
# (with parked waiters: 3 million executions)
check hemlock-2locks:hemlock -3 "rc11 imm $(full rc11/park)" 3 -- -DHEM_TWO_LOCKS
broken hemlock-grant hemlock src/locks/hemlock.c \
    'if (atomic_exchange_explicit(&self->grant, lock, memory_order_release) & HEM_SLEEP)' \
    'if (atomic_exchange_explicit(&self->grant, lock, memory_order_relaxed) & HEM_SLEEP)'
broken hemlock-lost-wake hemlock src/locks/hemlock.c \
    'if (atomic_exchange_explicit(&self->grant, lock, memory_order_release) & HEM_SLEEP)
        hem_wake(self);' \
    'if (atomic_exchange_explicit(&self->grant, lock, memory_order_release) & HEM_SLEEP)
        (void)0;' -- -DNL_VERIFY_PARK
# reciprocating (verify/wmm/reciprocating.c): paper form, 3 threads make a
# segment of two whose bottom is the holder's element and an arrival onto
# the next stack; -2r: an element that may still be the mark of the segment
# its thread detached arrives again; -pool: the node-free form; -2locks:
# one element for two locks. The release CAS made relaxed: the next holder
# through a free lock does not see the section; the detaching exchange
# without acquire: its grant may land before the waiter's reset of its gate
# and be wiped (a waiter never granted).
check reciprocating
check reciprocating-2r:reciprocating 2 -- -DNL_ROUNDS=2 '-DNL_ROUNDS_OF(tid)=(2-(tid))'
check reciprocating-pool:reciprocating -- -DRECIP_NODE_FREE
check reciprocating-2locks:reciprocating 3 -- -DRECIP_TWO_LOCKS
broken reciprocating-release reciprocating src/locks/reciprocating.c \
    'if (NL_LIKELY(atomic_compare_exchange_strong_explicit(&l->arrivals, &eos, 0, memory_order_release,' \
    'if (NL_LIKELY(atomic_compare_exchange_strong_explicit(&l->arrivals, &eos, 0, memory_order_relaxed,'
broken reciprocating-detach reciprocating src/locks/reciprocating.c \
    'atomic_exchange_explicit(&l->arrivals, RECIP_EMPTY, memory_order_acquire);' \
    'atomic_exchange_explicit(&l->arrivals, RECIP_EMPTY, memory_order_relaxed);' 3
# reciprocating-numa (verify/wmm/reciprocating_numa.c): 3 threads on two
# nodes, the random fairness rule's coins: a turn keeps the lock on the
# node (the other waiter deferred, served by a move when the segment ends)
# or moves it. Its 3-thread runs under IMM with parking double with the
# coins: RC11 only. -xchg: every arrival takes the exchange (no CAS try):
# a holder through a free lock whose value is tagged, links written after.
# The turning holder's exchange of the arrivals without acquire, or the
# arrival's tagged CAS without release: the grant may land before the
# waiter's reset of its gate and be wiped (a waiter never granted). The
# arrival's link needs no release: it rides on the arrivals' release
# sequence (the check passed with it relaxed).
check reciprocating-numa:reciprocating_numa -3 'rc11 rc11/park imm'
check reciprocating-numa-xchg:reciprocating_numa -3 rc11 -- -DRN_CAS_TRIES=0
broken reciprocating-numa-detach reciprocating_numa src/locks/reciprocating_numa.c \
    'top = atomic_exchange_explicit(&l->arrivals, RN_EMPTY, memory_order_acquire);' \
    'top = atomic_exchange_explicit(&l->arrivals, RN_EMPTY, memory_order_relaxed);' 3
broken reciprocating-numa-arrival reciprocating_numa src/locks/reciprocating_numa.c \
    'memory_order_acq_rel, memory_order_relaxed))
            goto wait;' \
    'memory_order_acquire, memory_order_relaxed))
            goto wait;' 3
