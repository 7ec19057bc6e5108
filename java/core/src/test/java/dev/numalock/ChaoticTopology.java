package dev.numalock;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A topology whose answer changes on every query, as if every thread migrated to another node
 * between any two calls (worst case for a virtual thread that moves carriers inside a critical
 * section). A lock that looked the node up again at unlock instead of using the one recorded at
 * lock time would release the wrong queue/cohort and corrupt its state or hang.
 */
final class ChaoticTopology implements Topology {
    private final int nodes;
    private final AtomicInteger calls = new AtomicInteger();

    ChaoticTopology(int nodes) {
        this.nodes = nodes;
    }

    @Override
    public int nodeCount() {
        return nodes;
    }

    @Override
    public int socketCount() {
        return Math.max(1, nodes / 2);
    }

    @Override
    public int currentNode() {
        return Math.floorMod(calls.getAndIncrement() * 7 + (int) Thread.currentThread().threadId(), nodes);
    }

    @Override
    public int socketOfNode(int node) {
        return Math.min(node / 2, socketCount() - 1);
    }

    /** Number of node queries so far. */
    int calls() {
        return calls.get();
    }

    @Override
    public String describe() {
        return "chaotic:" + nodes;
    }
}
