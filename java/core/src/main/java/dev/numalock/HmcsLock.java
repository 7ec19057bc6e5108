package dev.numalock;

/**
 * Two-level HMCS (Chabbi, Fagan and Mellor-Crummey, PPoPP'15): one MCS queue per NUMA node and a
 * global MCS queue whose participants are the node cohorts. The first waiter of a node acquires
 * the global queue on behalf of its node; at unlock the holder passes the lock, global ownership
 * included, to its local successor up to {@code passThreshold} times in a row, after which (or
 * when no local successor is visible) it releases the global queue and then the local one, telling
 * the local successor to acquire the global queue itself.
 *
 * <p>Local grant values: 1 = "acquire the global queue", k &gt;= 2 = "you hold the global queue,
 * this is the k-th consecutive local hand-over". All waiters (local and global) are cooperative.
 */
public final class HmcsLock extends NumaLock {

    /** Default number of consecutive hand-overs inside a node before the global lock is released. */
    public static final int DEFAULT_PASS_THRESHOLD = 64;
    private static final int ACQUIRE_GLOBAL = 1;

    private static final class Cohort {
        final McsQueue local = new McsQueue();
        /** The cohort's node in the global queue; written only by the holder of {@link #local}. */
        QNode globalNode;
    }

    private final McsQueue global = new McsQueue();
    private final Cohort[] cohorts;
    private final int passThreshold;

    // holder-only state
    private QNode holderNode;
    private Cohort holderCohort;
    private int holderPasses;

    public HmcsLock() {
        this(Topology.fromSystemProperty(), false);
    }

    public HmcsLock(Topology topology) {
        this(topology, false);
    }

    public HmcsLock(Topology topology, boolean stats) {
        this(topology, stats, DEFAULT_PASS_THRESHOLD);
    }

    public HmcsLock(Topology topology, boolean stats, int passThreshold) {
        super(topology, stats);
        if (passThreshold < 1) {
            throw new IllegalArgumentException("passThreshold must be >= 1, got " + passThreshold);
        }
        this.passThreshold = passThreshold;
        cohorts = new Cohort[topology.nodeCount()];
        for (int i = 0; i < cohorts.length; i++) {
            cohorts[i] = new Cohort();
        }
    }

    @Override
    protected int acquire() {
        int node = topology.currentNode();
        Cohort c = cohorts[node];
        QNode q = new QNode(node);
        int status = c.local.lock(q);
        int passes;
        if (status <= ACQUIRE_GLOBAL) {
            QNode g = new QNode(node);
            global.lock(g);
            c.globalNode = g;
            passes = 1;
        } else {
            passes = status;
        }
        holderNode = q;
        holderCohort = c;
        holderPasses = passes;
        return node;
    }

    @Override
    protected int tryAcquire() {
        int node = topology.currentNode();
        Cohort c = cohorts[node];
        QNode q = new QNode(node);
        if (!c.local.tryLock(q)) {
            return FAILED;
        }
        QNode g = new QNode(node);
        if (!global.tryLock(g)) {
            c.local.unlock(q, ACQUIRE_GLOBAL);
            return FAILED;
        }
        c.globalNode = g;
        holderNode = q;
        holderCohort = c;
        holderPasses = 1;
        return node;
    }

    @Override
    protected void release() {
        QNode q = holderNode;
        Cohort c = holderCohort;
        int passes = holderPasses;
        if (passes < passThreshold) {
            QNode succ = q.next();
            if (succ != null) {
                succ.grant(passes + 1); // global ownership travels with the local lock
                return;
            }
        }
        global.unlock(c.globalNode, 1);
        c.local.unlock(q, ACQUIRE_GLOBAL);
    }
}
