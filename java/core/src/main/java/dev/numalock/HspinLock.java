package dev.numalock;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * HSPIN, the paper's hierarchical spin lock baseline: a cohort lock made of a test-and-set flag
 * per NUMA node and a global test-and-set flag. A thread takes its node's flag, then the global
 * flag unless its node already owns it. At unlock, if other threads of the node are waiting for
 * the node flag and fewer than {@code passThreshold} consecutive local hand-overs happened, the
 * global flag stays with the node and only the node flag is released; otherwise both are
 * released. Every spin loop calls {@link Thread#yield()} after {@link Spin#SPINS_PER_YIELD}
 * spins, as the paper requires ("otherwise the system might be blocked when all carrier threads
 * are actively spinning").
 */
public final class HspinLock extends NumaLock {

    /** Default number of consecutive hand-overs inside a node before the global flag is released. */
    public static final int DEFAULT_PASS_THRESHOLD = 64;

    private static final VarHandle GLOBAL;
    private static final VarHandle LOCAL;

    static {
        try {
            GLOBAL = MethodHandles.lookup().findVarHandle(HspinLock.class, "globalFlag", int.class);
            LOCAL = MethodHandles.lookup().findVarHandle(Cohort.class, "flag", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private static final class Cohort {
        volatile int flag;
        final AtomicInteger waiting = new AtomicInteger();
        /** Whether this node owns the global flag; protected by {@link #flag}. */
        boolean ownsGlobal;
        /** Consecutive local hand-overs; protected by {@link #flag}. */
        int passes;

        boolean tryTake() {
            return flag == 0 && LOCAL.compareAndSet(this, 0, 1);
        }
    }

    private volatile int globalFlag;
    private final Cohort[] cohorts;
    private final int passThreshold;
    private Cohort holderCohort;

    public HspinLock() {
        this(Topology.fromSystemProperty(), false);
    }

    public HspinLock(Topology topology) {
        this(topology, false);
    }

    public HspinLock(Topology topology, boolean stats) {
        this(topology, stats, DEFAULT_PASS_THRESHOLD);
    }

    public HspinLock(Topology topology, boolean stats, int passThreshold) {
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

    private boolean tryTakeGlobal() {
        return globalFlag == 0 && GLOBAL.compareAndSet(this, 0, 1);
    }

    @Override
    protected int acquire() {
        int node = topology.currentNode();
        Cohort c = cohorts[node];
        if (!c.tryTake()) {
            c.waiting.incrementAndGet();
            for (int i = 0; !c.tryTake(); i++) {
                Spin.pause(i);
            }
            c.waiting.decrementAndGet();
        }
        if (!c.ownsGlobal) {
            for (int i = 0; !tryTakeGlobal(); i++) {
                Spin.pause(i);
            }
            c.ownsGlobal = true;
            c.passes = 0;
        }
        holderCohort = c;
        return node;
    }

    @Override
    protected int tryAcquire() {
        int node = topology.currentNode();
        Cohort c = cohorts[node];
        if (!c.tryTake()) {
            return FAILED;
        }
        if (!c.ownsGlobal) {
            if (!tryTakeGlobal()) {
                LOCAL.setRelease(c, 0);
                return FAILED;
            }
            c.ownsGlobal = true;
            c.passes = 0;
        }
        holderCohort = c;
        return node;
    }

    @Override
    protected void release() {
        Cohort c = holderCohort;
        if (c.passes < passThreshold && c.waiting.get() > 0) {
            c.passes++;
            LOCAL.setRelease(c, 0); // keep the global flag for the node's next holder
            return;
        }
        c.ownsGlobal = false;
        GLOBAL.setRelease(this, 0);
        LOCAL.setRelease(c, 0);
    }
}
