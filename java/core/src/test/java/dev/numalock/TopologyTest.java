package dev.numalock;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ConcurrentHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TopologyTest {

    @Test
    void parsesValidSpecs() {
        assertInstanceOf(OsTopology.class, Topology.parse("os"));
        Topology v4 = Topology.parse("virtual:4");
        assertEquals(4, v4.nodeCount());
        assertEquals(2, v4.socketCount());
        assertEquals("virtual:4:2", v4.describe());
        Topology v6 = Topology.parse(" virtual:6:3 ");
        assertEquals(6, v6.nodeCount());
        assertEquals(3, v6.socketCount());
        assertEquals(2, v6.socketOfNode(5));
        Topology v1 = Topology.parse("virtual:1");
        assertEquals(1, v1.nodeCount());
        assertEquals(1, v1.socketCount());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "OS", "virtual", "virtual:", "virtual:0", "virtual:-2", "virtual:x",
            "virtual:4:3", "virtual:4:0", "virtual:2:4", "virtual:4:2:1", "virtual:99999", "numa:4", "virtual: 4"})
    void rejectsMalformedSpecsWithOneClearSentence(String spec) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Topology.parse(spec));
        String m = e.getMessage();
        assertTrue(m.contains("'" + spec + "'"), "names the bad value: " + m);
        assertTrue(m.contains("'os'") && m.contains("'virtual:N'") && m.contains("'virtual:N:S'"),
                "names the valid forms: " + m);
        assertTrue(m.endsWith(".") && m.indexOf(". ") < 0, "one sentence: " + m);
    }

    @Test
    void systemPropertySelectsTheTopology() {
        String old = System.getProperty(Topology.PROPERTY);
        try {
            System.setProperty(Topology.PROPERTY, "virtual:4");
            assertEquals("virtual:4:2", Topology.fromSystemProperty().describe());
            assertEquals(4, new VnaLock().queueCount());
            System.setProperty(Topology.PROPERTY, "virtual:zero");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, VnaLock::new);
            assertTrue(e.getMessage().contains("virtual:zero"));
            System.clearProperty(Topology.PROPERTY);
            assertInstanceOf(OsTopology.class, Topology.fromSystemProperty());
        } finally {
            if (old == null) {
                System.clearProperty(Topology.PROPERTY);
            } else {
                System.setProperty(Topology.PROPERTY, old);
            }
        }
    }

    @Test
    void virtualTopologyAssignsThreadsRoundRobinAndSticky() throws Exception {
        VirtualTopology t = new VirtualTopology(4);
        Map<Integer, Integer> count = new ConcurrentHashMap<>();
        Thread[] ts = new Thread[40];
        for (int i = 0; i < ts.length; i++) {
            ts[i] = Thread.ofVirtual().start(() -> {
                int n = t.currentNode();
                for (int k = 0; k < 100; k++) {
                    if (t.currentNode() != n) {
                        throw new AssertionError("node changed");
                    }
                    Thread.yield();
                }
                count.merge(n, 1, Integer::sum);
            });
        }
        for (Thread th : ts) {
            th.join();
        }
        assertEquals(Map.of(0, 10, 1, 10, 2, 10, 3, 10), count);
        assertEquals(0, t.socketOfNode(1));
        assertEquals(1, t.socketOfNode(2));
    }

    @Test
    void parsesKernelCpuLists() {
        assertArrayEquals(new int[] {0, 1, 2, 3, 8, 10, 11}, OsTopology.parseCpuList("0-3,8,10-11\n"));
        assertArrayEquals(new int[] {5}, OsTopology.parseCpuList("5"));
        assertArrayEquals(new int[0], OsTopology.parseCpuList("\n"));
        assertThrows(IllegalArgumentException.class, () -> OsTopology.parseCpuList("3-1"));
        assertThrows(IllegalArgumentException.class, () -> OsTopology.parseCpuList("a-b"));
    }

    @Test
    void readsAFakeSysfsTree(@TempDir Path root) throws Exception {
        // kernel node ids 0 and 2 (sparse), node 2 on another package; node3 without cpulist
        write(root.resolve("node/node0/cpulist"), "0-1,4\n");
        write(root.resolve("node/node2/cpulist"), "2-3\n");
        Files.createDirectories(root.resolve("node/node3"));
        write(root.resolve("node/online"), "0,2\n");
        for (int cpu : new int[] {0, 1, 4}) {
            write(root.resolve("cpu/cpu" + cpu + "/topology/physical_package_id"), "0\n");
        }
        for (int cpu : new int[] {2, 3}) {
            write(root.resolve("cpu/cpu" + cpu + "/topology/physical_package_id"), "7\n");
        }
        OsTopology t = new OsTopology(root, 1);
        assertEquals(2, t.nodeCount());
        assertEquals(2, t.socketCount());
        assertEquals(0, t.nodeOfCpu(4));
        assertEquals(1, t.nodeOfCpu(3));
        assertEquals(0, t.nodeOfCpu(99), "unknown CPU maps to node 0");
        assertEquals(1, t.socketOfNode(1));
        int n = t.currentNode();
        assertTrue(n == 0 || n == 1);
    }

    @Test
    void rereadsTheTablesPeriodically(@TempDir Path root) throws Exception {
        write(root.resolve("node/node0/cpulist"), "0-1\n");
        write(root.resolve("node/node1/cpulist"), "2-3\n");
        OsTopology t = new OsTopology(root, 1);
        assertEquals(0, t.nodeOfCpu(0));
        assertEquals(1, t.nodeOfCpu(3));
        // the CPUs move between the nodes (e.g. hot-plug); visible after the refresh interval
        write(root.resolve("node/node0/cpulist"), "2-3\n");
        write(root.resolve("node/node1/cpulist"), "0-1\n");
        Thread.sleep(OsTopology.TABLE_REFRESH_NANOS / 1_000_000 + 100);
        for (int i = 0; i < 200; i++) {
            t.currentNode();
        }
        assertEquals(1, t.nodeOfCpu(0));
        assertEquals(0, t.nodeOfCpu(3));
    }

    @Test
    void missingSysfsMeansOneNode(@TempDir Path root) {
        OsTopology t = new OsTopology(root.resolve("nothing"), 4);
        assertEquals(1, t.nodeCount());
        assertEquals(1, t.socketCount());
        assertEquals(0, t.currentNode());
        assertThrows(IllegalArgumentException.class, () -> new OsTopology(root, 0));
    }

    @Test
    void realMachineThroughForeignFunctionApi() throws Exception {
        assertTrue(OsTopology.nativeCpuAvailable(), "sched_getcpu must be bound through java.lang.foreign");
        int cpus = Runtime.getRuntime().availableProcessors();
        OsTopology os = OsTopology.instance();
        assertTrue(os.nodeCount() >= 1);
        for (int i = 0; i < 1000; i++) {
            int cpu = OsTopology.currentCpu();
            assertTrue(cpu >= 0, "sched_getcpu failed");
            int n = os.currentNode();
            assertTrue(n >= 0 && n < os.nodeCount());
        }
        Thread v = Thread.ofVirtual().start(() -> {
            for (int i = 0; i < 100; i++) {
                if (OsTopology.currentCpu() < 0) {
                    throw new AssertionError("sched_getcpu failed on a virtual thread");
                }
                Thread.yield();
            }
        });
        v.join();
        assertTrue(cpus >= 1);
    }

    private static void write(Path p, String s) throws Exception {
        Files.createDirectories(p.getParent());
        Files.writeString(p, s);
    }
}
