package dev.numalock;

import java.io.IOException;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The machine's real topology.
 *
 * <p>The CPU is read with {@code sched_getcpu(3)} from the C library through the Foreign Function
 * &amp; Memory API ({@code java.lang.foreign}, final since JDK 22). The CPU-to-node table comes from
 * {@code /sys/devices/system/node/node*}{@code /cpulist} and the node-to-socket table from
 * {@code /sys/devices/system/cpu/cpuN/topology/physical_package_id}; both are cached and re-read at
 * most every {@link #TABLE_REFRESH_NANOS} (CPU hot-plug, cpuset changes; the age is checked every 64th
 * time a thread asks the OS). Node ids are renumbered
 * densely from 0 in the order of the kernel's ids; the node count is fixed when the instance is
 * created (a node that appears later is folded into node 0).
 *
 * <p>Each thread caches its last node for {@code numalock.os.refreshCalls} queries (default 8; 1
 * asks the OS every time), like the paper caches the identifier per carrier thread. For a virtual
 * thread the cache belongs to the virtual thread, not to its carrier: the JDK exposes no public
 * carrier-local storage (deviation from the paper, documented in docs/JAVA.md). A stale value only
 * costs locality, never correctness: every lock records the node it used and unlocks with it.
 *
 * <p>Without {@code sched_getcpu} (no native access, foreign C library) or without the sysfs files,
 * every thread is reported on node 0 of a one-node machine.
 */
public final class OsTopology implements Topology {

    /** Minimum interval between two re-reads of the sysfs tables. */
    public static final long TABLE_REFRESH_NANOS = 1_000_000_000L;

    private static final MethodHandle SCHED_GETCPU = lookupSchedGetcpu();
    private static volatile OsTopology instance;

    private final Path sysRoot;
    private final int refreshCalls;
    private final int nodes;
    private volatile int[] cpuToNode;
    private volatile int[] nodeToSocket;
    private volatile int sockets;
    private volatile long nextTableRefresh;
    /** Per thread: {cached node, queries left before asking the OS, OS queries left before checking the table age}. */
    private final ThreadLocal<int[]> cache = ThreadLocal.withInitial(() -> new int[] {0, 0, 0});

    /** The process-wide instance reading {@code /sys}. */
    public static OsTopology instance() {
        OsTopology t = instance;
        if (t == null) {
            synchronized (OsTopology.class) {
                t = instance;
                if (t == null) {
                    t = new OsTopology(Path.of("/sys/devices/system"),
                            Integer.getInteger("numalock.os.refreshCalls", 8));
                    instance = t;
                }
            }
        }
        return t;
    }

    /**
     * A topology reading its tables below {@code sysRoot} (normally {@code /sys/devices/system};
     * tests pass a fake tree) and asking the OS for the CPU every {@code refreshCalls} queries.
     */
    public OsTopology(Path sysRoot, int refreshCalls) {
        if (refreshCalls < 1) {
            throw new IllegalArgumentException("refreshCalls must be >= 1, got " + refreshCalls);
        }
        this.sysRoot = sysRoot;
        this.refreshCalls = refreshCalls;
        Tables t = readTables(sysRoot, -1);
        this.nodes = t.nodes;
        this.cpuToNode = t.cpuToNode;
        this.nodeToSocket = t.nodeToSocket;
        this.sockets = t.sockets;
        this.nextTableRefresh = System.nanoTime() + TABLE_REFRESH_NANOS;
    }

    /** True when {@code sched_getcpu} could be bound through the FFM API. */
    public static boolean nativeCpuAvailable() {
        return SCHED_GETCPU != null;
    }

    /** The CPU the calling thread runs on right now, or -1 when it cannot be determined. */
    public static int currentCpu() {
        if (SCHED_GETCPU == null) {
            return -1;
        }
        try {
            return (int) SCHED_GETCPU.invokeExact();
        } catch (Throwable e) {
            return -1;
        }
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
    public int socketOfNode(int node) {
        int[] t = nodeToSocket;
        return node >= 0 && node < t.length ? t[node] : 0;
    }

    @Override
    public int currentNode() {
        int[] c = cache.get();
        if (--c[1] > 0) {
            return c[0];
        }
        c[1] = refreshCalls;
        if (--c[2] <= 0) {
            c[2] = 64; // reading the clock costs more than sched_getcpu: check the table age sometimes
            maybeRefreshTables();
        }
        c[0] = nodeOfCpu(currentCpu());
        return c[0];
    }

    /** The node of {@code cpu} according to the cached table (0 for an unknown CPU). */
    public int nodeOfCpu(int cpu) {
        int[] t = cpuToNode;
        if (cpu < 0 || cpu >= t.length) {
            return 0;
        }
        return t[cpu];
    }

    private void maybeRefreshTables() {
        long now = System.nanoTime();
        long due = nextTableRefresh;
        if (now - due < 0) {
            return;
        }
        synchronized (this) {
            if (nextTableRefresh != due) {
                return; // another thread refreshed meanwhile
            }
            Tables t = readTables(sysRoot, nodes);
            cpuToNode = t.cpuToNode;
            nodeToSocket = t.nodeToSocket;
            nextTableRefresh = System.nanoTime() + TABLE_REFRESH_NANOS;
        }
    }

    @Override
    public String describe() {
        return "os(nodes=" + nodes + ",sockets=" + sockets + ",sched_getcpu="
                + (SCHED_GETCPU != null) + ")";
    }

    @Override
    public String toString() {
        return describe();
    }

    // ---------------------------------------------------------------- sysfs parsing

    private record Tables(int nodes, int[] cpuToNode, int[] nodeToSocket, int sockets) { }

    /**
     * Reads the tables; {@code fixedNodes > 0} keeps the node count of an earlier read (nodes with a
     * higher dense index are folded into node 0). Never throws: a missing tree gives one node.
     */
    static Tables readTables(Path sysRoot, int fixedNodes) {
        TreeMap<Integer, int[]> nodeCpus = new TreeMap<>();
        Path nodeDir = sysRoot.resolve("node");
        if (Files.isDirectory(nodeDir)) {
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(nodeDir, "node[0-9]*")) {
                for (Path p : ds) {
                    String name = p.getFileName().toString();
                    int id;
                    try {
                        id = Integer.parseInt(name.substring(4));
                    } catch (NumberFormatException e) {
                        continue;
                    }
                    Path list = p.resolve("cpulist");
                    if (!Files.isReadable(list)) {
                        continue;
                    }
                    try {
                        nodeCpus.put(id, parseCpuList(Files.readString(list)));
                    } catch (IllegalArgumentException e) {
                        // a malformed file is ignored like a missing one
                    }
                }
            } catch (IOException e) {
                nodeCpus.clear();
            }
        }
        int n = Math.max(1, nodeCpus.size());
        int nodes = fixedNodes > 0 ? fixedNodes : n;
        int maxCpu = -1;
        for (int[] cpus : nodeCpus.values()) {
            for (int c : cpus) {
                maxCpu = Math.max(maxCpu, c);
            }
        }
        int[] cpuToNode = new int[maxCpu + 1];
        int[] firstCpu = new int[nodes];
        Arrays.fill(firstCpu, -1);
        int dense = 0;
        for (int[] cpus : nodeCpus.values()) {
            int node = dense < nodes ? dense : 0;
            for (int c : cpus) {
                cpuToNode[c] = node;
            }
            if (cpus.length > 0 && firstCpu[node] < 0) {
                firstCpu[node] = cpus[0];
            }
            dense++;
        }
        // sockets: physical package of the first CPU of each node, renumbered densely
        int[] pkgOfNode = new int[nodes];
        TreeMap<Integer, Integer> pkgIds = new TreeMap<>();
        for (int node = 0; node < nodes; node++) {
            int pkg = 0;
            if (firstCpu[node] >= 0) {
                Path f = sysRoot.resolve("cpu").resolve("cpu" + firstCpu[node])
                        .resolve("topology").resolve("physical_package_id");
                try {
                    pkg = Integer.parseInt(Files.readString(f).trim());
                } catch (IOException | NumberFormatException e) {
                    pkg = 0;
                }
            }
            pkgOfNode[node] = pkg;
            pkgIds.putIfAbsent(pkg, 0);
        }
        int i = 0;
        for (var e : pkgIds.entrySet()) {
            e.setValue(i++);
        }
        int[] nodeToSocket = new int[nodes];
        for (int node = 0; node < nodes; node++) {
            nodeToSocket[node] = pkgIds.get(pkgOfNode[node]);
        }
        return new Tables(nodes, cpuToNode, nodeToSocket, Math.max(1, pkgIds.size()));
    }

    /**
     * Parses the kernel's CPU list format, e.g. {@code 0-3,8,10-11}; an empty list is allowed.
     *
     * @throws IllegalArgumentException on malformed input
     */
    public static int[] parseCpuList(String text) {
        String s = text.trim();
        List<Integer> out = new ArrayList<>();
        if (s.isEmpty()) {
            return new int[0];
        }
        for (String part : s.split(",")) {
            String p = part.trim();
            int dash = p.indexOf('-');
            try {
                if (dash < 0) {
                    out.add(checkCpu(Integer.parseInt(p), text));
                } else {
                    int lo = checkCpu(Integer.parseInt(p.substring(0, dash)), text);
                    int hi = checkCpu(Integer.parseInt(p.substring(dash + 1)), text);
                    if (hi < lo) {
                        throw new IllegalArgumentException("Malformed CPU list '" + text + "': range " + p + " is reversed.");
                    }
                    for (int c = lo; c <= hi; c++) {
                        out.add(c);
                    }
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("Malformed CPU list '" + text + "': '" + p + "' is not a CPU or range.");
            }
        }
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    private static int checkCpu(int cpu, String text) {
        if (cpu < 0 || cpu > 65535) {
            throw new IllegalArgumentException("Malformed CPU list '" + text + "': CPU " + cpu + " out of range.");
        }
        return cpu;
    }

    private static MethodHandle lookupSchedGetcpu() {
        try {
            Linker linker = Linker.nativeLinker();
            Optional<MemorySegment> sym = linker.defaultLookup().find("sched_getcpu");
            if (sym.isEmpty()) {
                return null;
            }
            return linker.downcallHandle(sym.get(), FunctionDescriptor.of(ValueLayout.JAVA_INT),
                    Linker.Option.critical(false));
        } catch (Throwable e) {
            // IllegalCallerException when native access is denied, UnsupportedOperationException
            // on platforms without a native linker
            return null;
        }
    }
}
