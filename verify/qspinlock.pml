/*
 * Spin model of the 4-byte qspinlock's lock-word protocol, as implemented in
 * src/locks/qspinlock.c (MCS slow path, `qspinlock`).
 *
 * The 32-bit word is four fields that every atomic operation of the C code
 * reads or writes together: locked (the locked byte, 0 or 1), pending,
 * nosteal and tail (0 = nobody queued, i + 1 = thread i's node; a thread has
 * one acquisition in progress, so its node is its id). A snapshot of the
 * word (the C code's `val`) is the locals vl, vp, vn, vt. Every Promela
 * statement is one atomic step; a CAS, fetch_or and fetch_and is one d_step.
 * N threads each take the lock ROUNDS times (-DFOREVER: forever), each time
 * either lock, or trylock and lock when it fails (the generic handle with
 * statistics does that). Paths, as in the C code:
 *   fast:    CAS 0 -> locked.
 *   steal:   if the snapshot is 0 or pending alone (qs_stealable), one CAS
 *            of it to the same | locked.
 *   pending: snapshot == locked: fetch_or pending; if the old word had
 *            nothing but the locked byte, wait as the pending waiter
 *            (qs_pending_wait), else fetch_and ~pending unless it was
 *            already set, and queue.
 *   pending waiter: load; unlocked: claim with a CAS (pending -> 0,
 *            locked -> 1, nosteal -> 0 iff no tail); locked, or the claim
 *            lost: count a round. The patience
 *            (qs_pending_patience, 64 in the C code) is a nondeterministic
 *            choice at every counted round: set nosteal now, or count; after
 *            PATIENCE counted rounds it must set it. So every patience up to
 *            PATIENCE is explored, and stealing is bounded by the counter.
 *   queue:   publish the tail with one exchange of the tail half-word,
 *            link behind the old tail and wait for the grant; as head, load
 *            until locked and pending are clear, setting nosteal once if it
 *            is not set; claim with a CAS: last (tail == us) -> word = locked
 *            only (tail and nosteal cleared), else the same | locked |
 *            nosteal; a lost claim sets nosteal; then wait until the
 *            successor has linked and grant it.
 *   trylock: load; if qs_available (not locked, no nosteal, and not
 *            pending with a tail), one CAS to the same | locked.
 *   unlock:  locked = 0 (the byte store).
 * The successor is always the next node (plain MCS): the CNA reordering of
 * `qspinlock-cna` only changes which queued node becomes head, and is
 * checked by verify/cna.pml. Not modelled: spurious failures of the weak
 * CASes, the memory orderings (the model is sequentially consistent), the
 * park/futex side of the waits, nesting, and the no-slot fallback (spin with
 * trylock). A wait on an unchanged word is a blocking guard ("until the word
 * differs from the snapshot"), the same as re-loading it in a loop without
 * stuttering cycles. Node fields are cleared when the model is done with the
 * node (dead values in the C code), so stale values do not multiply states.
 *
 * Checked:
 *   safety (pan -DSAFETY): mutual exclusion (assert in the critical
 *     section), no lost waiter and progress (every thread finishes its
 *     rounds; a waiter nobody grants is an invalid end state), and an
 *     all-zero word at the end.
 *   liveness (-DFOREVER, pan -DNP -l -f: non-progress cycles under weak
 *     fairness): an acquisition is a progress step unless a pending waiter
 *     was waiting when it was made, so a fair cycle without progress is one
 *     where the pending waiter waits forever while the others keep acquiring
 *     (or where nobody acquires at all). With -DWATCH=k only thread k's
 *     acquisitions are progress: no non-progress cycle = thread k (so, by
 *     symmetry, every thread) is starvation-free.
 *
 * The first version of the code (commit 61676c7) failed the liveness check:
 * the pending waiter counted a round only when it saw the word locked, not
 * when it saw it unlocked and lost its claim CAS to a stealer, so "load
 * unlocked; steal; CAS fails; unlock" repeated forever with nosteal never
 * set. These switches are the fixes, all 1 = the code as it is now (0 = the
 * first version; verify/run.sh qspinlock --broken checks that turning any of
 * them off brings a counterexample back):
 *   -DCOUNT_LOST_CLAIM=1         a failed claim CAS of the pending waiter
 *                                counts a round (goes to the patience test)
 *   -DHEAD_LOST_CLAIM_NOSTEAL=1  a queue head that lost its claim CAS sets
 *                                nosteal (it sets it only when it sees the
 *                                word locked or pending: a trylock can win
 *                                every race against it)
 *   -DXCHG_TAIL=1                the tail is published with one exchange of
 *                                the tail half-word (Linux's xchg_tail), not
 *                                a CAS loop that fails whenever the word moved
 *   -DONE_TRY=1                  the slow-path steal and trylock make one CAS
 *                                attempt, not one per stealable value seen
 * COUNT_LOST_CLAIM alone passes the pending-waiter check; all four pass the
 * -DWATCH=0 check (no thread starves), and each of them is needed for it.
 *
 * Deliberately broken variants (verify/run.sh qspinlock --broken):
 *   -DBROKEN=1  the pending waiter never sets nosteal (unbounded stealing):
 *               non-progress cycle
 *   -DBROKEN=2  trylock and the slow-path steal ignore nosteal: non-progress
 *               cycle (the pending waiter is robbed after its patience)
 *   -DBROKEN=3  the pending waiter claims with a plain store (Linux's
 *               clear_pending_set_locked) instead of a CAS: a steal gets in
 *               between, assertion violated
 *   -DBROKEN=4  the queue head claims with a plain store (Linux's
 *               set_locked): a trylock before the head set nosteal gets in
 *               between, assertion violated
 *   -DBROKEN=5  a thread that found somebody pending or queued does not
 *               undo its pending bit: the head waits for pending forever,
 *               invalid end state
 */
#ifndef N
#define N 3
#endif
#ifndef ROUNDS
#define ROUNDS 2
#endif
#ifndef PATIENCE
#define PATIENCE 2
#endif
#ifndef BROKEN
#define BROKEN 0
#endif
#ifndef COUNT_LOST_CLAIM
#define COUNT_LOST_CLAIM 1
#endif
#ifndef HEAD_LOST_CLAIM_NOSTEAL
#define HEAD_LOST_CLAIM_NOSTEAL 1
#endif
#ifndef XCHG_TAIL
#define XCHG_TAIL 1
#endif
#ifndef ONE_TRY
#define ONE_TRY 1
#endif
#if ONE_TRY
#define RETRY break
#else
#define RETRY skip
#endif

/* the lock word */
bit locked;
bit pending;
bit nosteal;
byte tail;            /* 0 or i + 1 */

/* the MCS nodes, one per thread */
byte next[N];         /* 0 or i + 1 */
bit granted[N];

byte incs;            /* threads in the critical section */
byte done;            /* threads finished */
byte pw;              /* ghost: i + 1 while thread i is the pending waiter */

#define SAME (locked == vl && pending == vp && nosteal == vn && tail == vt)
#define CHANGED (locked != vl || pending != vp || nosteal != vn || tail != vt)
#define RELOAD vl = locked; vp = pending; vn = nosteal; vt = tail

#ifdef FOREVER
/* ghost: an acquisition overtakes the pending waiter if one is waiting */
#define OVERTAKE ovt = (pw != 0)
#define NEXT_ROUND skip
#else
#define OVERTAKE skip
#define NEXT_ROUND r++
#endif

inline load()
{
    d_step { RELOAD }
}

/* CAS the word from the snapshot to (l, p, s, t); on failure the snapshot
 * is the current word */
inline cas(l, p, s, t)
{
    d_step {
        if
        :: SAME -> locked = l; pending = p; nosteal = s; tail = t; ok = 1; OVERTAKE
        :: else -> RELOAD; ok = 0
        fi
    }
}

#if BROKEN == 2
#define NOSTEAL_BLOCKS 0
#else
#define NOSTEAL_BLOCKS vn
#endif
/* qs_stealable: the word is 0 or pending alone */
#define STEALABLE (vl == 0 && !NOSTEAL_BLOCKS && vt == 0)
/* qs_available: not locked, no nosteal, no pending waiter with a queue */
#define AVAILABLE (vl == 0 && !NOSTEAL_BLOCKS && (vp == 0 || vt == 0))

proctype thread(byte me)
{
    bit vl, vp, vn, ok, ns, ovt;
    byte vt, r, rounds;

    do
#ifndef FOREVER
    :: r == ROUNDS -> break
    :: r < ROUNDS ->
#else
    :: true ->
#endif
        if
        :: true                                 /* lock */
        :: true ->                              /* trylock, then lock */
            load();
            do
            :: AVAILABLE ->
                cas(1, vp, vn, vt);
                if :: ok -> goto cs :: else -> RETRY fi
            :: else -> break
            od
        fi;

        /* ---- fast path ---- */
        vl = 0; vp = 0; vn = 0; vt = 0;
        cas(1, 0, 0, 0);
        if :: ok -> goto cs :: else fi;

        /* ---- slow path: steal from a lone pending waiter ---- */
        do
        :: STEALABLE ->
            cas(1, vp, vn, vt);
            if :: ok -> goto cs :: else -> RETRY fi
        :: else -> break
        od;

        /* ---- become the pending waiter ---- */
        if
        :: vp == 0 && vn == 0 && vt == 0 ->    /* the snapshot is `locked` */
            d_step {                            /* fetch_or pending */
                RELOAD; pending = 1;
                if :: vp == 0 && vn == 0 && vt == 0 -> pw = me + 1 :: else fi
            }
            if
            :: vp == 0 && vn == 0 && vt == 0 -> goto pendwait
            :: else
            fi;
#if BROKEN != 5
            if :: vp == 0 -> pending = 0 :: else fi  /* fetch_and ~pending */
#endif
        :: else
        fi;

        /* ---- queue ---- */
        /* our node: next = 0 and not granted (stored here by the C code,
         * cleared after use by the model) */
#if XCHG_TAIL
        d_step { assert(next[me] == 0 && !granted[me]); RELOAD; tail = me + 1 };
#else
        d_step { assert(next[me] == 0 && !granted[me]); RELOAD };
        do                                      /* publish our tail */
        :: cas(vl, vp, vn, me + 1);
           if :: ok -> break :: else fi
        od;
#endif
        if
        :: vt != 0 ->                           /* link, wait for the grant */
            next[vt - 1] = me + 1;
            d_step { granted[me] -> granted[me] = 0 }
        :: else
        fi;
        ns = 0;
        do                                      /* head */
        :: load();
           if
           :: vl || vp ->
                if
                :: !ns && !vn -> nosteal = 1; ns = 1
                :: else -> (CHANGED)
                fi
           :: else ->
#if BROKEN == 4
                d_step {
                    vt = tail; locked = 1; OVERTAKE;
                    if :: tail == me + 1 -> tail = 0; nosteal = 0 :: else -> nosteal = 1 fi;
                    ok = 1
                };
#else
                if
                :: vt == me + 1 -> cas(1, 0, 0, 0)
                :: else -> cas(1, 0, 1, vt)
                fi;
#endif
#if HEAD_LOST_CLAIM_NOSTEAL
                if                              /* lost the race: keep trylocks out */
                :: ok -> break
                :: !ok && !ns -> nosteal = 1; ns = 1
                :: !ok && ns -> skip
                fi
#else
                if :: ok -> break :: else fi
#endif
           fi
        od;
        if
        :: vt != me + 1 ->                      /* a successor: make it head */
            d_step { next[me] != 0 -> granted[next[me] - 1] = 1; next[me] = 0 }
        :: else
        fi;
        goto cs;

        /* ---- the pending waiter (qs_pending_wait) ---- */
pendwait:
        ns = 0;
        rounds = 0;
        do
        :: load();
           if
           :: vl == 0 ->                        /* claim */
#if BROKEN == 3
                d_step {
                    locked = 1; pending = 0;
                    if :: tail == 0 -> nosteal = 0 :: else fi;
                    pw = 0
                };
                break
#else
                d_step {
                    if
                    :: SAME ->
                        locked = 1; pending = 0;
                        if :: vt == 0 -> nosteal = 0 :: else fi;
                        pw = 0; ok = 1
                    :: else -> RELOAD; ok = 0
                    fi
                };
#if COUNT_LOST_CLAIM
                if                              /* the lost race counts a round */
                :: ok -> break
                :: else -> goto round
                fi
#else
                if :: ok -> break :: else fi    /* else `continue`: load again */
#endif
#endif
           :: else ->                           /* locked: one round */
round:
#if BROKEN == 1
                if :: vl -> (CHANGED) :: else fi  /* never out of patience */
#else
                if
                :: !ns && rounds < PATIENCE -> rounds++
                :: !ns -> nosteal = 1; ns = 1  /* out of patience: fetch_or */
                :: ns && vl -> (CHANGED)
                :: ns && !vl -> skip           /* lost the claim race */
                fi
#endif
           fi
        od;

        /* ---- critical section ---- */
cs:
        atomic {
            incs++;
            assert(incs == 1);
            vl = 0; vp = 0; vn = 0; vt = 0; ok = 0; ns = 0; rounds = 0
        };
#if defined(FOREVER) && defined(WATCH)
        if                                      /* only thread WATCH progresses */
        :: me == WATCH ->
progress_watched:
            skip
        :: else
        fi;
#elif defined(FOREVER)
        if
        :: ovt -> skip                          /* overtook the pending waiter */
        :: else ->
progress_cs:
            skip
        fi;
#endif
        d_step { incs--; ovt = 0; NEXT_ROUND; locked = 0 } /* unlock: the byte store */
    od;
    atomic { done++ }
}

init {
    byte i;
    atomic {
        i = 0;
        do
        :: i < N -> run thread(i); i++
        :: i == N -> break
        od
    }
    (done == N);
    assert(locked == 0 && pending == 0 && nosteal == 0 && tail == 0 && pw == 0)
}
