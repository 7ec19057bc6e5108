package dev.numalock;

/** A topology where each thread chooses its own node with {@link #moveTo(int)} (default node 0). */
final class ScriptedTopology implements Topology {
    private final int nodes;
    private final int sockets;
    private final ThreadLocal<Integer> node = ThreadLocal.withInitial(() -> 0);

    ScriptedTopology(int nodes, int sockets) {
        this.nodes = nodes;
        this.sockets = sockets;
    }

    /** The calling thread now runs on {@code n}. */
    void moveTo(int n) {
        node.set(n);
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
        return node.get();
    }

    @Override
    public int socketOfNode(int n) {
        return n / (nodes / sockets);
    }

    @Override
    public String describe() {
        return "scripted:" + nodes + ":" + sockets;
    }
}
