package dev.numalock;

/**
 * Source of the NUMA node (and socket) the calling thread currently runs on.
 *
 * <p>Locks ask their topology for the current node when they need it (slow path, statistics).
 * The default implementation is {@link OsTopology}, which reads the CPU with {@code sched_getcpu}
 * through the Foreign Function &amp; Memory API and maps it to a node with the table in
 * {@code /sys/devices/system/node}. {@link VirtualTopology} assigns threads round-robin to N
 * virtual nodes so that the per-node queues of the NUMA-aware locks are exercised on a one-node
 * machine. Implementations must be thread-safe; {@link #currentNode()} must always return a value
 * in {@code [0, nodeCount())} and {@link #socketOfNode(int)} a value in {@code [0, socketCount())}.
 */
public interface Topology {

    /** System property selecting the default topology, see {@link #parse(String)}. */
    String PROPERTY = "numalock.topology";

    /** Number of NUMA nodes, at least 1. Constant for the lifetime of the topology. */
    int nodeCount();

    /** Number of sockets (packages), at least 1, at most {@link #nodeCount()}. */
    int socketCount();

    /** The node of the calling thread, in {@code [0, nodeCount())}; may be a cached value. */
    int currentNode();

    /** The socket that holds {@code node}. */
    int socketOfNode(int node);

    /** The socket of the calling thread. */
    default int currentSocket() {
        return socketOfNode(currentNode());
    }

    /** A short description such as {@code os(nodes=1,sockets=1)} or {@code virtual:4:2}. */
    String describe();

    /**
     * The topology selected by the system property {@value #PROPERTY} (default {@code os}).
     *
     * @throws IllegalArgumentException when the property holds a malformed spec
     */
    static Topology fromSystemProperty() {
        return parse(System.getProperty(PROPERTY, "os"));
    }

    /**
     * Parses a topology spec: {@code os} (the machine's real topology), {@code virtual:N}
     * (N virtual nodes, threads assigned round-robin, N/2 sockets rounded up) or
     * {@code virtual:N:S} (N virtual nodes on S sockets, S dividing N).
     *
     * @throws IllegalArgumentException with one sentence naming the bad value and the valid forms
     */
    static Topology parse(String spec) {
        if (spec == null) {
            throw bad("null");
        }
        String s = spec.trim();
        if (s.equals("os")) {
            return OsTopology.instance();
        }
        if (!s.startsWith("virtual:")) {
            throw bad(spec);
        }
        String[] parts = s.substring("virtual:".length()).split(":", -1);
        if (parts.length < 1 || parts.length > 2) {
            throw bad(spec);
        }
        int nodes = parsePositive(parts[0], spec);
        int sockets = parts.length == 2 ? parsePositive(parts[1], spec) : (nodes + 1) / 2;
        if (nodes > VirtualTopology.MAX_NODES || sockets > nodes || nodes % sockets != 0) {
            throw bad(spec);
        }
        return new VirtualTopology(nodes, sockets);
    }

    private static int parsePositive(String digits, String spec) {
        if (digits.isEmpty() || digits.length() > 4) {
            throw bad(spec);
        }
        for (int i = 0; i < digits.length(); i++) {
            if (digits.charAt(i) < '0' || digits.charAt(i) > '9') {
                throw bad(spec);
            }
        }
        int v = Integer.parseInt(digits);
        if (v < 1) {
            throw bad(spec);
        }
        return v;
    }

    private static IllegalArgumentException bad(String spec) {
        return new IllegalArgumentException("Invalid numalock topology '" + spec
                + "': expected 'os', 'virtual:N' or 'virtual:N:S' with 1 <= N <= "
                + VirtualTopology.MAX_NODES + " nodes and S >= 1 sockets dividing N.");
    }
}
