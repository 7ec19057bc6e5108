package dev.numalock;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * A queue node of the MCS family (MCS, CNA, HMCS, VNA's per-node queues). One node is allocated
 * per queued acquisition and never reused, so there is no ABA problem.
 *
 * <p>Waiting is cooperative: the waiter spins {@link Spin#spinsBeforePark} times, then publishes
 * {@link #PARKED} and parks; the granter swaps in a positive grant value and unparks the waiter
 * only when it had parked. A positive status is a grant; its value carries information from the
 * granter (HMCS's pass count).
 */
final class QNode {
    static final int WAITING = 0;
    static final int PARKED = -1;

    private static final VarHandle STATUS;
    private static final VarHandle NEXT;

    static {
        try {
            MethodHandles.Lookup l = MethodHandles.lookup();
            STATUS = l.findVarHandle(QNode.class, "status", int.class);
            NEXT = l.findVarHandle(QNode.class, "next", QNode.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final Thread thread;
    /** NUMA node of the acquiring thread (or -1 where the lock does not need it). */
    final int node;
    private volatile int status;
    private volatile QNode next;

    /** CNA: head of the secondary queue handed to this node's thread with the lock. */
    QNode sec;
    /** CNA: in the head of a secondary queue, its tail. */
    QNode secTail;

    QNode(int node) {
        this.thread = Thread.currentThread();
        this.node = node;
    }

    QNode next() {
        return next;
    }

    void setNext(QNode n) {
        next = n;
    }

    /** Spins (yielding periodically) until a successor has linked itself behind this node. */
    QNode awaitNext() {
        QNode n;
        for (int i = 0; (n = next) == null; i++) {
            Spin.pause(i);
        }
        return n;
    }

    /** Blocks the owning thread until {@link #grant(int)}; returns the grant value (positive). */
    int await() {
        int s;
        int spins = Spin.spinsBeforePark(thread);
        for (int i = 0; i < spins; i++) {
            if ((s = status) > 0) {
                return s;
            }
            Thread.onSpinWait();
        }
        if (STATUS.compareAndSet(this, WAITING, PARKED)) {
            while ((s = status) == PARKED) {
                LockSupport.park(this);
            }
            return s;
        }
        return status; // granted between the spin and the CAS
    }

    /** Hands the lock to this node's thread, passing {@code value} (must be positive). */
    void grant(int value) {
        int prev = (int) STATUS.getAndSet(this, value);
        if (prev == PARKED) {
            LockSupport.unpark(thread);
        }
    }

    static boolean casNext(QNode holder, QNode expect, QNode update) {
        return NEXT.compareAndSet(holder, expect, update);
    }
}
