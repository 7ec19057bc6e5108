package dev.numalock;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * VNA, the paper's lock (listings 1 and 2): a test-and-set flag plus one cooperative MCS queue per
 * NUMA node.
 *
 * <ul>
 *   <li>Fast path: one CAS of the flag from free to held; the acquisition is marked as fast.</li>
 *   <li>Slow path: read the current node from the {@link Topology}, acquire that node's MCS queue
 *       (queued waiters park and are unparked by their predecessor), then, as the queue head, CAS
 *       the flag until it succeeds (test-and-test-and-set, {@link Thread#onSpinWait()} and a
 *       {@link Thread#yield()} every {@link Spin#SPINS_PER_YIELD} iterations, so a head never
 *       monopolises a carrier).</li>
 *   <li>Unlock: clear the flag, then, for a slow-path acquisition, release the MCS queue of the
 *       node <em>recorded at lock time</em>, even if the thread has since moved to another
 *       carrier/CPU/node.</li>
 * </ul>
 *
 * <p>Invariants: the flag is set iff some thread holds the lock; at most one thread per queue is
 * past its queue (the queue head), so at most {@code queues + arrivals on the fast path} threads
 * compete for the flag. The per-acquisition "LockInfo" of the paper (fast path flag, node id, MCS
 * node) is kept in holder-only fields of the lock instead of being returned to the caller.
 */
public class VnaLock extends NumaLock {

    private static final VarHandle FLAG;

    static {
        try {
            FLAG = MethodHandles.lookup().findVarHandle(VnaLock.class, "flag", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private volatile int flag;
    private final McsQueue[] queues;
    private final boolean perSocket;

    // LockInfo of the current holder (holder-only state)
    private QNode holderNode;   // null: acquired on the fast path
    private int holderQueue;

    /** A VNA lock on the topology named by the {@code numalock.topology} property. */
    public VnaLock() {
        this(Topology.fromSystemProperty(), false);
    }

    public VnaLock(Topology topology) {
        this(topology, false);
    }

    public VnaLock(Topology topology, boolean stats) {
        this(topology, stats, false);
    }

    VnaLock(Topology topology, boolean stats, boolean perSocket) {
        super(topology, stats);
        this.perSocket = perSocket;
        int n = perSocket ? topology.socketCount() : topology.nodeCount();
        queues = new McsQueue[n];
        for (int i = 0; i < n; i++) {
            queues[i] = new McsQueue();
        }
    }

    /** Number of MCS queues (nodes for VNA, sockets for VNA_2_Q). */
    public final int queueCount() {
        return queues.length;
    }

    /** Test hook: whether queue {@code i} has a holder or waiters (racy snapshot). */
    final boolean queueBusy(int i) {
        return !queues[i].isFree();
    }

    /** Test hook: whether the flag is set (racy snapshot). */
    final boolean flagSet() {
        return flag != 0;
    }

    @Override
    protected final int acquire() {
        if (FLAG.compareAndSet(this, 0, 1)) {
            holderNode = null;
            return UNKNOWN_NODE;
        }
        int node = topology.currentNode();
        int qi = perSocket ? topology.socketOfNode(node) : node;
        QNode q = new QNode(node);
        queues[qi].lock(q);
        for (int i = 0; ; i++) {
            if (flag == 0 && FLAG.compareAndSet(this, 0, 1)) {
                break;
            }
            Spin.pause(i);
        }
        holderNode = q;
        holderQueue = qi;
        return node;
    }

    @Override
    protected final int tryAcquire() {
        if (flag == 0 && FLAG.compareAndSet(this, 0, 1)) {
            holderNode = null;
            return UNKNOWN_NODE;
        }
        return FAILED;
    }

    @Override
    protected final void release() {
        QNode q = holderNode;
        int qi = holderQueue;
        FLAG.setRelease(this, 0);
        if (q != null) {
            queues[qi].unlock(q, 1);
        }
    }
}
