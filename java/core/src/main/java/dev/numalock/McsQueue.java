package dev.numalock;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/** A cooperative MCS queue lock working on caller-supplied {@link QNode}s. */
final class McsQueue {
    private static final VarHandle TAIL;

    static {
        try {
            TAIL = MethodHandles.lookup().findVarHandle(McsQueue.class, "tail", QNode.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private volatile QNode tail;

    /**
     * Enqueues {@code q} and waits for the lock. Returns 0 when the queue was empty (acquired
     * without a predecessor) and otherwise the predecessor's grant value (positive).
     */
    int lock(QNode q) {
        QNode pred = (QNode) TAIL.getAndSet(this, q);
        if (pred == null) {
            return 0;
        }
        pred.setNext(q);
        return q.await();
    }

    /** Acquires with {@code q} only if the queue is empty. */
    boolean tryLock(QNode q) {
        return TAIL.compareAndSet(this, (QNode) null, q);
    }

    /** Releases the lock held through {@code q}, handing {@code grantValue} to a successor if any. */
    void unlock(QNode q, int grantValue) {
        QNode succ = q.next();
        if (succ == null) {
            if (TAIL.compareAndSet(this, q, (QNode) null)) {
                return;
            }
            succ = q.awaitNext();
        }
        succ.grant(grantValue);
    }

    /** True when nobody holds or waits for this queue (racy snapshot). */
    boolean isFree() {
        return tail == null;
    }
}
