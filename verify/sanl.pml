/*
 * Spin model of SANL's mode switch and server hand-over (Zhang et al., TPDS
 * 2017, algorithms 2 and 3), as implemented in src/locks/sanl_impl.h.
 *
 * N threads, each running ROUNDS critical sections. Every round a thread
 * picks its mode nondeterministically (the votes of algorithm 1 may say
 * anything at any time, so every mix of in-place and delegation-mode threads
 * is explored):
 *   in place   acquire ll (blocking), run, release;
 *   delegation trylock ll -> become the server; otherwise send the request
 *              (fn[i] = 1) and wait for done[i]; while waiting, a client may
 *              (a) take ll by trylock when no server is up, or (b) after T_w
 *              (a nondeterministic time-out) await the answer if a server is
 *              running its request (exec[i]), else queue on ll (blocking);
 *              holding ll it takes its request back if still pending, and
 *              becomes the server;
 *   remote     a client not admitted by the NUMA policy queues on ll (the
 *              queue Q) and becomes the server.
 * The server runs its own section, sets server_up, walks the request array a
 * nondeterministic number of times (1 or 2: the L_s / T_s downgrade), clears
 * server_up, walks once more, and releases ll. ll is a plain test-and-set
 * lock: the model checks safety, and which waiter gets ll next is left open.
 *
 * Checked: mutual exclusion (incs <= 1), every request runs exactly once
 * (ran[i] is 0 before a run and 1 when its caller returns), no lost request
 * (a client waiting for an answer nobody will give is an invalid end state).
 *
 * Deliberately broken variants (verify/run.sh sanl --broken):
 *   -DBROKEN=1  the downgrading server answers the requests of its last walk
 *               without running them (a request dropped on downgrade)
 *   -DBROKEN=2  a client that timed out takes its request back without
 *               holding ll
 *   -DBROKEN=3  a client holding ll runs its request without checking whether
 *               a server answered it already
 */
#ifndef N
#define N 3
#endif
#ifndef ROUNDS
#define ROUNDS 2
#endif
#ifndef BROKEN
#define BROKEN 0
#endif

bit ll = 0;
bit server_up = 0;
bit fn[N];
bit exec[N];
bit done[N];
byte ran[N];
byte incs = 0;

inline cs(j)
{
    incs++;
    assert(incs == 1);
    assert(ran[j] == 0);
    ran[j]++;
    incs--
}

inline walk(me, last)
{
    j = 0;
    do
    :: j == N -> break
    :: j < N ->
        if
        :: j != me && fn[j] && !exec[j] ->
#if BROKEN == 1
            if
            :: last -> fn[j] = 0; done[j] = 1
            :: else ->
#endif
            exec[j] = 1;
            cs(j);
            exec[j] = 0;
            fn[j] = 0;
            done[j] = 1
#if BROKEN == 1
            fi
#endif
        :: else -> skip
        fi;
        j++
    od
}

/* ll held: own section (if any), serve, downgrade, release */
inline serve(me, own)
{
    if
    :: own -> cs(me)
    :: else -> skip
    fi;
    server_up = 1;
    walk(me, 0);
    if
    :: walk(me, 0)       /* density stayed high: one more walk */
    :: skip              /* L_s or T_s reached */
    fi;
    server_up = 0;
    walk(me, 1);
    ll = 0
}

proctype thread(byte me)
{
    byte r = 0, j;
    bit got;
    do
    :: r == ROUNDS -> break
    :: r < ROUNDS ->
        if
        :: /* in place */
            atomic { ll == 0 -> ll = 1 };
            cs(me);
            ll = 0
        :: /* remote, not admitted: queue (Q) on ll and serve */
            atomic { ll == 0 -> ll = 1 };
            serve(me, 1)
        :: /* delegation */
            atomic { if :: ll == 0 -> ll = 1; got = 1 :: else -> got = 0 fi };
            if
            :: got -> serve(me, 1)
            :: else ->
                done[me] = 0;
                fn[me] = 1;
                do
                :: done[me] == 1 -> break
                :: atomic { server_up == 0 && ll == 0 -> ll = 1 }; goto holding
                :: /* waited T_w */
                    if
                    :: exec[me] -> done[me] == 1; break
#if BROKEN == 2
                    :: !exec[me] && fn[me] -> fn[me] = 0; cs(me); break
#endif
                    :: else ->
                        atomic { ll == 0 -> ll = 1 };
holding:
                        if
#if BROKEN == 3
                        :: true -> fn[me] = 0; serve(me, 1); break
#else
                        :: fn[me] == 0 -> serve(me, 0); break   /* answered already */
                        :: fn[me] == 1 && !exec[me] -> fn[me] = 0; serve(me, 1); break
#endif
                        :: fn[me] == 1 && exec[me] -> ll = 0   /* a waiting server runs it */
                        fi
                    fi
                od
            fi
        fi;
        assert(ran[me] == 1);   /* exactly once, by the time the caller returns */
        ran[me] = 0;
        r++
    od
}

init {
    byte i = 0;
    atomic {
        do
        :: i < N -> run thread(i); i++
        :: else -> break
        od
    }
}
