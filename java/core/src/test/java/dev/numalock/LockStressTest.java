package dev.numalock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Mutual exclusion and progress of every lock under many more threads than cores, with
 * {@link Thread#yield()} inside the critical section, on virtual and platform threads and on the
 * OS, a virtual 4-node and a "chaotic" topology (node changes on every query).
 */
class LockStressTest {

    /** Shared state touched only inside the critical section: plain fields on purpose. */
    static final class Guarded {
        long counter;
        Thread owner;
    }

    static Stream<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        List<Supplier<Topology>> topologies = List.of(
                () -> Topology.parse("os"),
                () -> new VirtualTopology(4),
                () -> new ChaoticTopology(4));
        for (LockKind k : LockKind.values()) {
            for (Supplier<Topology> t : topologies) {
                Topology sample = t.get();
                out.add(Arguments.of(k, sample.describe(), t));
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} on {1}, virtual threads")
    @MethodSource("cases")
    void virtualThreads(LockKind kind, String topoName, Supplier<Topology> topo) {
        stress(kind.create(topo.get()), 64, 600, true, false);
    }

    @ParameterizedTest(name = "{0} on {1}, platform threads")
    @MethodSource("cases")
    void platformThreads(LockKind kind, String topoName, Supplier<Topology> topo) {
        stress(kind.create(topo.get()), 8, 1500, false, false);
    }

    @ParameterizedTest(name = "{0} on {1}, virtual threads mixing lock/tryLock/tryLock(timeout)")
    @MethodSource("cases")
    void mixedAcquireModes(LockKind kind, String topoName, Supplier<Topology> topo) {
        stress(kind.create(topo.get()), 32, 400, true, true);
    }

    static void stress(java.util.concurrent.locks.Lock lock, int threads, int iters, boolean virtual, boolean mixed) {
        stress(lock, threads, iters, virtual, mixed, Workers.STALL_MILLIS);
    }

    static void stress(java.util.concurrent.locks.Lock lock, int threads, int iters, boolean virtual, boolean mixed,
            long stallMillis) {
        Guarded g = new Guarded();
        LockStressTestSupport.InsideHook hook =
                lock instanceof LockStressTestSupport.InsideHook h ? h : null;
        AtomicInteger violations = new AtomicInteger();
        AtomicInteger acquired = new AtomicInteger();
        Workers.run(lock + (virtual ? " virtual" : " platform"), threads, virtual, stallMillis, (id, progress) -> {
            int done = 0;
            for (int i = 0; done < iters; i++) {
                boolean got;
                int mode = mixed ? (i + id) % 3 : 0;
                if (mode == 1) {
                    got = lock.tryLock();
                } else if (mode == 2) {
                    got = lock.tryLock(1, TimeUnit.MILLISECONDS);
                } else {
                    lock.lock();
                    got = true;
                }
                if (!got) {
                    Thread.yield();
                    continue;
                }
                try {
                    Thread me = Thread.currentThread();
                    if (g.owner != null) {
                        violations.incrementAndGet();
                    }
                    g.owner = me;
                    long c = g.counter;
                    Thread.yield(); // lets any thread that wrongly entered run in between
                    if (hook != null) {
                        hook.inside();
                    }
                    g.counter = c + 1;
                    if (g.owner != me) {
                        violations.incrementAndGet();
                    }
                    g.owner = null;
                } finally {
                    lock.unlock();
                }
                acquired.incrementAndGet();
                done++;
                progress.incrementAndGet();
                if ((i & 7) == 0) {
                    Thread.yield(); // vary the interleaving outside the critical section
                }
            }
        });
        assertEquals(0, violations.get(), "mutual exclusion violated (owner field) for " + lock);
        assertEquals((long) threads * iters, g.counter, "lost updates for " + lock);
        assertEquals(threads * iters, acquired.get());
        assertTrue(lock.tryLock(), "lock must be free after the run: " + lock);
        lock.unlock();
    }
}
