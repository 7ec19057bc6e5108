/*
 * Spin model of CNA's hand-over (Dice & Kogan, EuroSys 2019, figures 3-5),
 * as implemented in src/locks/cna.c + src/locks/cna_impl.h.
 *
 * N threads on two sockets (socket of thread i: SOCK(i)), each taking the
 * lock ROUNDS times. The lock is `tail`; every thread owns one queue node
 * (index = thread id). spin[i] is the node's grant word: 0 = waiting,
 * 1 = granted with an empty secondary queue, k + 2 = granted, the secondary
 * queue's head is node k (the pointer of the C code). Every Promela statement
 * is one atomic step; SWAP and CAS are atomic blocks. keep_lock_local() (the
 * fairness rule, random or time based) is a nondeterministic choice, so
 * every interleaving of both outcomes is explored.
 *
 * Checked: mutual exclusion (assert in the critical section), no lost waiter
 * and progress (every thread finishes all its rounds: a waiter nobody will
 * grant is an invalid end state; at the end both queues are empty).
 *
 * Deliberately broken variants (verify/run.sh --broken):
 *   -DBROKEN=1  unlock ignores the secondary queue when the main queue is
 *               empty (CAS tail -> NULL): the moved waiters are lost
 *   -DBROKEN=2  find_successor forgets to cut the secondary queue's tail
 *               (secTail->next = NULL)
 *   -DBROKEN=3  the secondary head is granted before the tail CAS succeeds
 */
#ifndef N
#define N 4
#endif
#ifndef ROUNDS
#define ROUNDS 2
#endif
#define NIL 255
#define SOCK(i) ((i == 1 || i == 2) -> 1 : 0)   /* sockets 0,1,1,0 */

byte tail = NIL;
byte next[N];
byte spin[N];
byte secTail[N];
byte incs = 0;
byte done = 0;

inline find_successor(me, nx, succ)
{
    /* figure 5 */
    if
    :: SOCK(nx) == SOCK(me) -> succ = nx
    :: else ->
        secHead = nx; secT = nx; cur = next[nx];
        do
        :: cur == NIL -> succ = NIL; break
        :: cur != NIL && SOCK(cur) == SOCK(me) ->
            if
            :: spin[me] > 1 -> next[secTail[spin[me] - 2]] = secHead
            :: else -> spin[me] = secHead + 2
            fi;
#if BROKEN != 2
            next[secT] = NIL;
#endif
            secTail[spin[me] - 2] = secT;
            succ = cur;
            break
        :: cur != NIL && SOCK(cur) != SOCK(me) -> secT = cur; cur = next[cur]
        od
    fi
}

proctype thread(byte me)
{
    byte pred, nx, succ, sh, secHead, secT, cur, r;
    bit ok, keep;
    r = 0;
    do
    :: r == ROUNDS -> break
    :: r < ROUNDS ->
        /* ---- lock (figure 3) ---- */
        next[me] = NIL;
        spin[me] = 0;
        atomic { pred = tail; tail = me };          /* SWAP */
        if
        :: pred == NIL -> skip
        :: else -> next[pred] = me; (spin[me] > 0)  /* link, wait for the grant */
        fi;

        /* ---- critical section ---- */
        incs++;
        assert(incs == 1);
        incs--;

        /* ---- unlock (figure 4) ---- */
        nx = next[me];
        if
        :: nx == NIL ->
            if
            :: spin[me] <= 1 ->
                atomic { ok = (tail == me); if :: ok -> tail = NIL :: else skip fi };
                if :: ok -> goto released :: else skip fi
            :: spin[me] > 1 ->
                sh = spin[me] - 2;
#if BROKEN == 1
                atomic { ok = (tail == me); if :: ok -> tail = NIL :: else skip fi };
                if :: ok -> goto released :: else skip fi
#elif BROKEN == 3
                spin[sh] = 1;
                atomic { ok = (tail == me); if :: ok -> tail = secTail[sh] :: else skip fi };
                if :: ok -> goto released :: else skip fi
#else
                atomic { ok = (tail == me); if :: ok -> tail = secTail[sh] :: else skip fi };
                if :: ok -> spin[sh] = 1; goto released :: else skip fi
#endif
            fi;
            (next[me] != NIL);                      /* successor is linking */
            nx = next[me]
        :: else -> skip
        fi;
        if :: keep = 1 :: keep = 0 fi;               /* keep_lock_local() */
        succ = NIL;
        if
        :: keep -> find_successor(me, nx, succ)
        :: else -> skip
        fi;
        if
        :: succ != NIL ->
            if
            :: spin[me] > 1 -> spin[succ] = spin[me]
            :: else -> spin[succ] = 1
            fi
        :: succ == NIL && spin[me] > 1 ->           /* secondary queue goes first */
            sh = spin[me] - 2;
            next[secTail[sh]] = nx;
            spin[sh] = 1
        :: succ == NIL && spin[me] <= 1 -> spin[nx] = 1
        fi;
released:
        r++
    od;
    atomic { done++ }
}

init {
    byte i;
    atomic {
        i = 0;
        do
        :: i < N -> next[i] = NIL; secTail[i] = NIL; i++
        :: i == N -> break
        od;
        i = 0;
        do
        :: i < N -> run thread(i); i++
        :: i == N -> break
        od
    }
    (done == N);
    assert(tail == NIL)  /* both queues empty once everybody is done */
}
