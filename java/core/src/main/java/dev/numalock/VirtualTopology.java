package dev.numalock;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A made-up topology: every thread that asks is assigned, on its first query, the next of
 * {@code nodes} virtual nodes in round-robin order, and keeps it for its lifetime. Node
 * {@code n} lies on socket {@code n / (nodes / sockets)}.
 *
 * <p>This lets the per-node queues of the NUMA-aware locks be exercised (and their hand-over
 * locality be measured through {@link LockStats}) on a machine with a single NUMA node.
 */
public final class VirtualTopology implements Topology {

    /** Largest accepted node count. */
    public static final int MAX_NODES = 1024;

    private final int nodes;
    private final int sockets;
    private final int nodesPerSocket;
    private final AtomicInteger next = new AtomicInteger();
    private final ThreadLocal<Integer> assigned;

    /** {@code nodes} virtual nodes on {@code ceil(nodes / 2)} sockets. */
    public VirtualTopology(int nodes) {
        this(nodes, (nodes + 1) / 2);
    }

    /** {@code nodes} virtual nodes on {@code sockets} sockets; {@code sockets} must divide {@code nodes}. */
    public VirtualTopology(int nodes, int sockets) {
        if (nodes < 1 || nodes > MAX_NODES || sockets < 1 || sockets > nodes || nodes % sockets != 0) {
            throw new IllegalArgumentException("Invalid virtual topology " + nodes + " nodes / " + sockets
                    + " sockets: expected 1 <= nodes <= " + MAX_NODES + " and 1 <= sockets dividing nodes.");
        }
        this.nodes = nodes;
        this.sockets = sockets;
        this.nodesPerSocket = nodes / sockets;
        this.assigned = ThreadLocal.withInitial(() -> Math.floorMod(next.getAndIncrement(), this.nodes));
    }

    @Override
    public int nodeCount() {
        return nodes;
    }

    @Override
    public int socketCount() {
        return sockets;
    }

    @Override
    public int currentNode() {
        return assigned.get();
    }

    @Override
    public int socketOfNode(int node) {
        return node / nodesPerSocket;
    }

    @Override
    public String describe() {
        return "virtual:" + nodes + ":" + sockets;
    }

    @Override
    public String toString() {
        return describe();
    }
}
