package dev.numalock;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * Common part of the numalock locks: a non-reentrant mutual-exclusion {@link Lock} that keeps the
 * per-acquisition state (queue node, NUMA node used) inside the lock, so no token leaks to the
 * caller, and optionally counts hand-overs.
 *
 * <ul>
 *   <li>{@link #lock()} and {@link #tryLock()} are the algorithm's; {@link #tryLock(long, TimeUnit)}
 *       retries {@link #tryLock()} with the bounded spin/yield policy until the deadline (it barges
 *       ahead of queued waiters, and honours interrupts).</li>
 *   <li>{@link #unlock()} by a thread that does not hold the lock throws
 *       {@link IllegalMonitorStateException}; {@link #lock()} by the holder throws
 *       {@link IllegalStateException} (the locks are not reentrant).</li>
 *   <li>{@link #lockInterruptibly()} and {@link #newCondition()} throw
 *       {@link UnsupportedOperationException}: queued MCS-style waiters cannot leave the queue.</li>
 * </ul>
 *
 * <p>Statistics, when enabled at construction, are updated by the holder inside the critical
 * section (so they cost no atomics); {@link #stats()} is exact when no thread is using the lock.
 */
public abstract class NumaLock implements Lock {

    /** Returned by {@link #acquire()} / {@link #tryAcquire()} when the node used is not known. */
    protected static final int UNKNOWN_NODE = -1;
    /** Returned by {@link #tryAcquire()} on failure. */
    protected static final int FAILED = -2;

    protected final Topology topology;
    private final boolean statsEnabled;

    /** The holder; written only by the holder (set after acquiring, cleared before releasing). */
    private Thread owner;

    private long acquisitions;
    private long handovers;
    private long remoteHandovers;
    private Thread lastHolder;
    private int lastNode = -1;

    protected NumaLock(Topology topology, boolean statsEnabled) {
        if (topology == null) {
            throw new NullPointerException("topology");
        }
        this.topology = topology;
        this.statsEnabled = statsEnabled;
    }

    /** Acquires the lock (blocking); returns the NUMA node used, or {@link #UNKNOWN_NODE}. */
    protected abstract int acquire();

    /** Acquires the lock if that needs no waiting; returns the node used, {@link #UNKNOWN_NODE} or {@link #FAILED}. */
    protected abstract int tryAcquire();

    /** Releases the lock held by the calling thread. */
    protected abstract void release();

    @Override
    public final void lock() {
        Thread me = Thread.currentThread();
        if (owner == me) {
            throw new IllegalStateException(getClass().getSimpleName() + " is not reentrant: "
                    + me + " already holds it.");
        }
        acquired(me, acquire());
    }

    @Override
    public final boolean tryLock() {
        Thread me = Thread.currentThread();
        if (owner == me) {
            return false;
        }
        int node = tryAcquire();
        if (node == FAILED) {
            return false;
        }
        acquired(me, node);
        return true;
    }

    @Override
    public final boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        long deadline = System.nanoTime() + unit.toNanos(time);
        for (int i = 0; ; i++) {
            if (tryLock()) {
                return true;
            }
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            if (Thread.interrupted()) {
                throw new InterruptedException();
            }
            Spin.pause(i);
        }
    }

    @Override
    public final void unlock() {
        if (owner != Thread.currentThread()) {
            throw new IllegalMonitorStateException(getClass().getSimpleName()
                    + " is not held by " + Thread.currentThread());
        }
        owner = null;
        release();
    }

    /** Unsupported: queued waiters cannot abandon the queue. */
    @Override
    public final void lockInterruptibly() {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " does not support lockInterruptibly");
    }

    /** Unsupported. */
    @Override
    public final Condition newCondition() {
        throw new UnsupportedOperationException(getClass().getSimpleName() + " does not support conditions");
    }

    /** True when the calling thread holds this lock. */
    public final boolean isHeldByCurrentThread() {
        return owner == Thread.currentThread();
    }

    /** The topology this lock asks for NUMA nodes. */
    public final Topology topology() {
        return topology;
    }

    /** Statistics snapshot (all zero when statistics are disabled). */
    public final LockStats stats() {
        return new LockStats(acquisitions, handovers, remoteHandovers);
    }

    /** Whether statistics are being collected. */
    public final boolean statsEnabled() {
        return statsEnabled;
    }

    private void acquired(Thread me, int node) {
        owner = me;
        if (statsEnabled) {
            if (node < 0) {
                node = topology.currentNode();
            }
            acquisitions++;
            if (lastHolder != null && lastHolder != me) {
                handovers++;
                if (node != lastNode) {
                    remoteHandovers++;
                }
            }
            lastHolder = me;
            lastNode = node;
        }
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + topology.describe() + ", owner=" + owner + "]";
    }
}
