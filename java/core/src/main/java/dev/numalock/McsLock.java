package dev.numalock;

/**
 * The MCS queue lock (Mellor-Crummey and Scott), cooperative: a waiter spins briefly on its own
 * queue node, then parks and is unparked by its predecessor. Strict FIFO, NUMA-oblivious: the
 * paper's reference point for hand-over locality.
 */
public final class McsLock extends NumaLock {
    private final McsQueue queue = new McsQueue();
    private QNode holderNode;

    public McsLock() {
        this(Topology.fromSystemProperty(), false);
    }

    public McsLock(Topology topology) {
        this(topology, false);
    }

    public McsLock(Topology topology, boolean stats) {
        super(topology, stats);
    }

    @Override
    protected int acquire() {
        QNode q = new QNode(-1);
        queue.lock(q);
        holderNode = q;
        return UNKNOWN_NODE;
    }

    @Override
    protected int tryAcquire() {
        QNode q = new QNode(-1);
        if (!queue.tryLock(q)) {
            return FAILED;
        }
        holderNode = q;
        return UNKNOWN_NODE;
    }

    @Override
    protected void release() {
        queue.unlock(holderNode, 1);
    }
}
