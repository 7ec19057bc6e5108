package dev.numalock;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * CNA, the compact NUMA-aware lock of Dice and Kogan (EuroSys'19): an MCS lock whose holder, at
 * unlock, hands the lock to the first waiter of the main queue that runs on its own NUMA node;
 * the remote waiters it skips are moved, in order, to a secondary queue. The secondary queue is
 * handed along with the lock (the paper encodes its head in the successor's spin word; here it is
 * a field of the successor's queue node written before the grant). It is spliced back in front of
 * the main queue when the main queue has no local waiter, and, for long-term fairness, after
 * {@code localThreshold} consecutive local hand-overs (the paper uses a pseudo-random draw; a
 * counter is deterministic and easier to test).
 *
 * <p>Waiters are cooperative: spin briefly, then park until granted. Nodes are read from the
 * {@link Topology} at enqueue time and stored in the queue node.
 */
public final class CnaLock extends NumaLock {

    /** Default number of consecutive local hand-overs before the secondary queue is flushed. */
    public static final int DEFAULT_LOCAL_THRESHOLD = 256;

    private static final VarHandle TAIL;

    static {
        try {
            TAIL = MethodHandles.lookup().findVarHandle(CnaLock.class, "tail", QNode.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private volatile QNode tail;
    private final int localThreshold;

    // holder-only state
    private QNode holderNode;
    private int localPasses;

    public CnaLock() {
        this(Topology.fromSystemProperty(), false);
    }

    public CnaLock(Topology topology) {
        this(topology, false);
    }

    public CnaLock(Topology topology, boolean stats) {
        this(topology, stats, DEFAULT_LOCAL_THRESHOLD);
    }

    public CnaLock(Topology topology, boolean stats, int localThreshold) {
        super(topology, stats);
        if (localThreshold < 1) {
            throw new IllegalArgumentException("localThreshold must be >= 1, got " + localThreshold);
        }
        this.localThreshold = localThreshold;
    }

    @Override
    protected int acquire() {
        QNode q = new QNode(topology.currentNode());
        QNode pred = (QNode) TAIL.getAndSet(this, q);
        if (pred != null) {
            pred.setNext(q);
            q.await();
        } else {
            q.sec = null;
        }
        holderNode = q;
        return q.node;
    }

    @Override
    protected int tryAcquire() {
        if (tail != null) {
            return FAILED;
        }
        QNode q = new QNode(topology.currentNode());
        if (!TAIL.compareAndSet(this, (QNode) null, q)) {
            return FAILED;
        }
        holderNode = q;
        return q.node;
    }

    @Override
    protected void release() {
        QNode me = holderNode;
        QNode sec = me.sec;
        QNode succ = me.next();
        if (succ == null) {
            if (sec == null) {
                if (TAIL.compareAndSet(this, me, (QNode) null)) {
                    return;
                }
            } else if (TAIL.compareAndSet(this, me, sec.secTail)) {
                // main queue empty: the secondary queue becomes the main queue
                localPasses = 0;
                handTo(sec, null);
                return;
            }
            succ = me.awaitNext();
        }
        if (localPasses < localThreshold) {
            // look for the first waiter on my node; stop at a node without a visible successor
            QNode prev = null;
            QNode cur = succ;
            while (cur != null && cur.node != me.node) {
                prev = cur;
                cur = cur.next();
            }
            if (cur != null) {
                if (prev != null) {
                    // move succ..prev (all remote) to the end of the secondary queue
                    prev.setNext(null);
                    if (sec == null) {
                        sec = succ;
                    } else {
                        sec.secTail.setNext(succ);
                    }
                    sec.secTail = prev;
                }
                localPasses++;
                handTo(cur, sec);
                return;
            }
        }
        localPasses = 0;
        if (sec != null) {
            sec.secTail.setNext(succ);
            handTo(sec, null);
        } else {
            handTo(succ, null);
        }
    }

    private static void handTo(QNode q, QNode secondary) {
        q.sec = secondary;
        q.grant(1);
    }
}
