package dev.numalock;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;

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

    /** How a queue head waits for the test-and-set flag. */
    public enum HeadWait {
        /** The paper: CAS the flag in a loop ({@link Thread#onSpinWait()}, periodic {@link Thread#yield()}). */
        SPIN,
        /**
         * Spin like {@link #SPIN} for {@link Spin#spinsBeforePark} iterations, then publish the
         * thread in the queue's slot and park; every unlock unparks one published head (round
         * robin over the queues). The default: on few carriers, spinning heads take the carrier
         * away from the holder each time it yields inside its critical section.
         */
        PARK
    }

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
    private final HeadWait headWait;
    /** PARK mode: the parked head of each queue, or null. */
    private final AtomicReferenceArray<Thread> parkedHeads;
    /** PARK mode: where the next wake-up scan starts (a hint; races are harmless). */
    private int wakeCursor;
    /** PARK mode, holder-only: consecutive releases that woke no parked head in favour of a local successor. */
    private int localSkips;

    /**
     * PARK mode: at most this many consecutive releases that hand their queue to a local
     * successor skip waking a parked head of another queue ({@code numalock.vna.localSkips},
     * default 64; 0 wakes one on every release).
     */
    static final int MAX_LOCAL_SKIPS = Math.max(0, Integer.getInteger("numalock.vna.localSkips", 64));

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

    public VnaLock(Topology topology, boolean stats, HeadWait headWait) {
        this(topology, stats, false, headWait);
    }

    VnaLock(Topology topology, boolean stats, boolean perSocket) {
        this(topology, stats, perSocket, HeadWait.PARK);
    }

    VnaLock(Topology topology, boolean stats, boolean perSocket, HeadWait headWait) {
        super(topology, stats);
        this.perSocket = perSocket;
        this.headWait = headWait;
        int n = perSocket ? topology.socketCount() : topology.nodeCount();
        queues = new McsQueue[n];
        for (int i = 0; i < n; i++) {
            queues[i] = new McsQueue();
        }
        parkedHeads = new AtomicReferenceArray<>(n);
    }

    /** How queue heads wait for the flag. */
    public final HeadWait headWait() {
        return headWait;
    }

    /** Number of MCS queues (nodes for VNA, sockets for VNA_2_Q). */
    public final int queueCount() {
        return queues.length;
    }

    /** Test hook: whether queue {@code i} has a holder or waiters (racy snapshot). */
    final boolean queueBusy(int i) {
        return !queues[i].isFree();
    }

    /** Test hook: whether the head of queue {@code i} has published itself as parked (racy snapshot). */
    final boolean headParked(int i) {
        return parkedHeads.get(i) != null;
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
        if (headWait == HeadWait.SPIN) {
            for (int i = 0; ; i++) {
                if (flag == 0 && FLAG.compareAndSet(this, 0, 1)) {
                    break;
                }
                Spin.pause(i);
            }
        } else {
            awaitFlagParking(qi);
        }
        holderNode = q;
        holderQueue = qi;
        return node;
    }

    /** PARK mode: the head of queue {@code qi} takes the flag, parking between attempts. */
    private void awaitFlagParking(int qi) {
        Thread me = Thread.currentThread();
        int spins = Spin.spinsBeforePark(me);
        for (int i = 0; ; i++) {
            if (flag == 0 && FLAG.compareAndSet(this, 0, 1)) {
                return;
            }
            if (i < spins) {
                Spin.pause(i);
                continue;
            }
            // Publish, then re-check: the releaser clears the flag, then reads the slots (both
            // volatile), so either we see the free flag or it sees us and unparks us.
            parkedHeads.set(qi, me);
            if (flag != 0) {
                LockSupport.park(this);
            }
            parkedHeads.set(qi, null);
            i = spins - 2; // one CAS attempt and a pause before parking again
        }
    }

    /** PARK mode: unparks one published head, scanning the queues round robin. */
    private void wakeOneHead(int cursor) {
        int n = queues.length;
        for (int k = 0; k < n; k++) {
            int idx = cursor + k;
            if (idx >= n) {
                idx -= n;
            }
            Thread t = parkedHeads.get(idx);
            if (t != null) {
                wakeCursor = idx + 1 == n ? 0 : idx + 1;
                LockSupport.unpark(t);
                return;
            }
        }
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
        if (headWait == HeadWait.SPIN) {
            FLAG.setRelease(this, 0);
            if (q != null) {
                queues[qi].unlock(q, 1);
            }
            return;
        }
        int cursor = wakeCursor;
        // A visible successor in our own queue becomes its head and takes the flag: let it, and
        // leave the other queues' parked heads asleep, a bounded number of times in a row.
        boolean wake = true;
        if (q != null && q.next() != null && localSkips < MAX_LOCAL_SKIPS) {
            localSkips++;
            wake = false;
        } else {
            localSkips = 0;
        }
        FLAG.setVolatile(this, 0);
        if (q != null) {
            queues[qi].unlock(q, 1);
        }
        if (wake) {
            wakeOneHead(cursor);
        }
    }
}
