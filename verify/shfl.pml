/*
 * Spin model of ShflLock (src/locks/shfl.c): the lock byte and steal filter,
 * the waiter queue (tail exchange, linking), the shuffle pass of the
 * shuffler, the shuffler role, and the queue head's take-and-leave.
 *
 * Each statement is one atomic step, as one load, store, exchange or CAS of
 * the code:
 *   - steal (fast path + filtered steal, one CAS on the low half): the lock
 *     byte is 0, the filter is not NOBODY, and it is 0 or our node's tag or
 *     nobody is queued; the filter becomes our tag;
 *   - enqueue: exchange of the tail; link behind the old tail;
 *   - a waiter waits for HEAD; while it holds the shuffler role it shuffles;
 *   - the head: shuffles while it has the role (batch 0 or given), may run
 *     out of patience (filter := NOBODY) at any time, takes the lock byte
 *     with one CAS of the whole word that also clears the tail when it is
 *     the tail, waits for its successor to link, passes the role if it
 *     still holds it, grants HEAD;
 *   - the shuffle pass (sh_shuffle), step by step: the role is consumed;
 *     the fairness rule may stop the batch (nondeterministic: the pass then
 *     moves nobody and drops the role); it walks from the shuffler, moves
 *     waiters of its node behind the group, never one whose next is NIL (it
 *     may be the tail being linked), may stop after any step (the lock was
 *     released / we were granted), and gives the role to the group's last.
 * Threads 0, 2 are on node 0, threads 1, 3 on node 1.
 *
 * Checked (safety): mutual exclusion (assert), at most one shuffle pass at
 * a time (assert), every thread completes its rounds (no lost waiter:
 * invalid end states), and at the end the queue is empty and the lock free.
 *
 * Broken variants (-DBROKEN=k), each must yield a counterexample:
 *   1  the shuffler moves a waiter whose next is NIL (maybe the tail): a
 *      waiter linking behind it is lost
 *   2  every waiter shuffles while it waits, not only the one holding the
 *      shuffler role: two passes at once
 *   3  the head leaves the queue with a load of the tail and a separate
 *      store (not one CAS): a waiter that queues in between is lost
 */
#ifndef N
#define N 3
#endif
#ifndef ROUNDS
#define ROUNDS 1
#endif
#ifndef BROKEN
#define BROKEN 0
#endif

#define NIL 255
#define WAIT 0
#define HEAD 1
#define NOBODY 255

byte lockb = 0;        /* the lock byte */
byte filter = 0;       /* 0: anybody, k+1: node k, NOBODY */
byte tail = NIL;
byte next[N];
byte status[N];
bool role[N];
byte batch[N];
byte cs = 0;
byte shufflers = 0;

#define NODE(t) ((t) % 2)
#define TAG(t) (NODE(t) + 1)

/* one shuffle pass by `me` (sh_shuffle) */
inline shuffle(me) {
    shufflers++;
    assert(shufflers == 1);
    role[me] = false;
    if
    :: batch[me] == 0 -> batch[me] = 1
    :: else -> skip
    fi;
    if
    :: true -> shufflers--   /* the batch's time is over: nobody moves, the role is dropped */
    :: true ->
        last = me; prev = me;
        do
        :: cur = next[prev];
           if
           :: cur == NIL -> break
           :: else -> skip
           fi;
           if
           :: NODE(cur) == NODE(me) ->
              if
              :: prev == last -> last = cur; prev = cur
              :: else ->
                 after = next[cur];
#if BROKEN != 1
                 if
                 :: after == NIL -> break
                 :: else -> skip
                 fi;
#endif
                 next[prev] = after;
                 tmp = next[last];
                 next[cur] = tmp;
                 next[last] = cur;
                 last = cur
              fi;
              batch[cur] = 2
           :: else -> prev = cur
           fi;
           if
           :: true -> skip
           :: true -> break  /* stop early: the lock is free (head) or we were granted */
           fi
        od;
        shufflers--;         /* the pass touches no waiter after this */
        role[last] = true
    fi
}

proctype T(byte me) {
    byte r = 0, prev, last, cur, after, tmp, succ;
    bool got, headrole, wastail;
    do
    :: r < ROUNDS ->
        /* fast path + filtered steal: one CAS on the low half */
        atomic {
            if
            :: lockb == 0 && filter != NOBODY && (filter == 0 || filter == TAG(me) || tail == NIL) ->
               lockb = 1; filter = TAG(me); got = true
            :: else -> got = false
            fi
        }
        if
        :: got -> goto crit
        :: else -> skip
        fi;
        next[me] = NIL; status[me] = WAIT; role[me] = false; batch[me] = 0;
        atomic { prev = tail; tail = me }
        if
        :: prev != NIL ->
            next[prev] = me;
            do
            :: status[me] == HEAD -> break
#if BROKEN == 2
            :: status[me] != HEAD -> shuffle(me)
#else
            :: status[me] != HEAD && role[me] -> shuffle(me)
#endif
            od
        :: else -> skip
        fi;
        /* the head */
        headrole = (batch[me] == 0 || role[me]);
        do
        :: atomic {
               lockb == 0 ->
               lockb = 1;
#if BROKEN != 3
               if
               :: tail == me -> tail = NIL; filter = 0; wastail = true
               :: else -> filter = TAG(me); wastail = false
               fi
#else
               filter = TAG(me); wastail = (tail == me)
#endif
           };
           break
        :: lockb != 0 && (headrole || role[me]) -> headrole = false; shuffle(me)
        :: lockb != 0 && filter != NOBODY -> filter = NOBODY  /* out of patience */
        od;
#if BROKEN == 3
        if
        :: wastail -> tail = NIL   /* a separate store: may erase a newcomer */
        :: else -> skip
        fi;
#endif
        if
        :: !wastail ->
            (next[me] != NIL);
            succ = next[me];
            if
            :: headrole || role[me] -> role[succ] = true
            :: else -> skip
            fi;
            role[me] = false;
            status[succ] = HEAD
        :: else -> skip
        fi;
crit:
        cs++;
        assert(cs == 1);
        cs--;
        lockb = 0;
        r++
    :: else -> break
    od
}

init {
    byte i;
    atomic {
        for (i : 0 .. N - 1) {
            next[i] = NIL;
            run T(i)
        }
    }
    (_nr_pr == 1);
    assert(tail == NIL && lockb == 0 && cs == 0)
}
