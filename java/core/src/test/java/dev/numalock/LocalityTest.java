package dev.numalock;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.EnumMap;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * NUMA-awareness measured with the locks' statistics on a virtual topology: 64 virtual threads,
 * each acquiring the lock repeatedly with a {@link Thread#yield()} inside and outside the critical
 * section. MCS is FIFO, so with threads spread round-robin over the nodes most of its hand-overs
 * cross nodes. CNA, HMCS and HSPIN pass the lock inside a node by design and must show a remote
 * share far below MCS's.
 *
 * <p>VNA and VNA_2_Q are measured and printed but not asserted: the paper's VNA has no local
 * hand-over rule (the releaser clears the global flag and any queue head, from any node, may win
 * it), and its remote share was measured to vary between ~0% and ~80% from run to run on the
 * 2-core development machine, so no bound on it would be robust (see docs/JAVA.md).
 */
class LocalityTest {

    static LockStats run(LockKind kind, Topology topo, int threads, int iters) {
        NumaLock lock = kind.createWithStats(topo);
        LockStressTest.Guarded g = new LockStressTest.Guarded();
        Workers.run("locality " + kind, threads, true, (id, progress) -> {
            for (int i = 0; i < iters; i++) {
                lock.lock();
                try {
                    g.counter++;
                    Thread.yield();
                } finally {
                    lock.unlock();
                }
                progress.incrementAndGet();
                Thread.yield();
            }
        });
        LockStats s = lock.stats();
        assertTrue(s.acquisitions() == (long) threads * iters && g.counter == s.acquisitions(), kind + " " + s);
        return s;
    }

    @ParameterizedTest(name = "virtual:{0}")
    @ValueSource(ints = {2, 4})
    void nodeLocalLocksHandOverMostlyInsideANode(int nodes) {
        Map<LockKind, LockStats> r = new EnumMap<>(LockKind.class);
        for (LockKind k : LockKind.values()) {
            r.put(k, run(k, new VirtualTopology(nodes), 64, 250));
            System.out.printf("locality virtual:%d %-6s %s%n", nodes, k, r.get(k));
        }
        double mcs = r.get(LockKind.MCS).remoteShare();
        // FIFO over threads spread round-robin: a random order alone gives 1 - 1/nodes
        assertTrue(mcs >= 0.3, "MCS should hand over across nodes most of the time: " + r.get(LockKind.MCS));
        for (LockKind k : new LockKind[] {LockKind.CNA, LockKind.HMCS, LockKind.HSPIN}) {
            double share = r.get(k).remoteShare();
            assertTrue(share < 0.5 * mcs, k + " remote share " + share + " must be < 0.5 x MCS " + mcs);
            assertTrue(r.get(k).handovers() > r.get(k).acquisitions() / 2, k + " must be contended: " + r.get(k));
        }
    }
}
