package dev.numalock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * White-box checks of VNA's structure: the fast path uses no queue, the slow path waits in the
 * queue of its node (VNA) or socket (VNA_2_Q), and unlock releases the queue recorded at lock
 * time even when the thread has moved to another node inside the critical section.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class VnaStructureTest {

    private static void await(String what, BooleanSupplier cond) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!cond.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out waiting until " + what);
            }
            Thread.sleep(2);
        }
    }

    /** Starts a virtual thread on {@code node} that locks, moves to {@code moveTo}, unlocks. */
    private static Thread contender(VnaLock lock, ScriptedTopology topo, int node, int moveTo,
                                    AtomicInteger inside, AtomicInteger done) {
        return Thread.ofVirtual().start(() -> {
            topo.moveTo(node);
            lock.lock();
            if (inside.incrementAndGet() != 1) {
                throw new AssertionError("two holders");
            }
            topo.moveTo(moveTo); // migrate inside the critical section
            Thread.yield();
            inside.decrementAndGet();
            lock.unlock();
            done.incrementAndGet();
        });
    }

    private static void checkQueues(VnaLock lock, ScriptedTopology topo, int[] contenderNodes,
                                    boolean[] expectBusy) throws Exception {
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger done = new AtomicInteger();
        topo.moveTo(0);
        lock.lock(); // uncontended: fast path
        inside.incrementAndGet();
        for (int q = 0; q < lock.queueCount(); q++) {
            assertFalse(lock.queueBusy(q), "fast path must not touch queue " + q);
        }
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < contenderNodes.length; i++) {
            threads.add(contender(lock, topo, contenderNodes[i], (contenderNodes[i] + 1) % topo.nodeCount(), inside, done));
            int busyQueue = lock instanceof Vna2QLock ? topo.socketOfNode(contenderNodes[i]) : contenderNodes[i];
            await("queue " + busyQueue + " is used", () -> lock.queueBusy(busyQueue));
        }
        for (int q = 0; q < lock.queueCount(); q++) {
            assertEquals(expectBusy[q], lock.queueBusy(q), "queue " + q);
        }
        inside.decrementAndGet();
        lock.unlock();
        for (Thread t : threads) {
            if (!t.join(Duration.ofSeconds(20))) {
                fail("contender did not finish: unlock probably released the wrong queue; " + t);
            }
        }
        assertEquals(contenderNodes.length, done.get());
        for (int q = 0; q < lock.queueCount(); q++) {
            assertFalse(lock.queueBusy(q), "queue " + q + " must be free at the end");
        }
        assertFalse(lock.flagSet());
        assertTrue(lock.tryLock());
        lock.unlock();
    }

    @Test
    void vnaHasOneQueuePerNodeAndUnlocksTheRecordedOne() throws Exception {
        ScriptedTopology topo = new ScriptedTopology(4, 2);
        VnaLock lock = new VnaLock(topo);
        assertEquals(4, lock.queueCount());
        checkQueues(lock, topo, new int[] {1, 1, 3}, new boolean[] {false, true, false, true});
        checkQueues(lock, topo, new int[] {2, 0}, new boolean[] {true, false, true, false});
    }

    @Test
    void vna2qHasOneQueuePerSocket() throws Exception {
        ScriptedTopology topo = new ScriptedTopology(4, 2);
        Vna2QLock lock = new Vna2QLock(topo);
        assertEquals(2, lock.queueCount());
        checkQueues(lock, topo, new int[] {1, 0}, new boolean[] {true, false});
        checkQueues(lock, topo, new int[] {3, 2, 1}, new boolean[] {true, true});
    }

    @Test
    void parkedHeadsAreWokenByUnlock() throws Exception {
        ScriptedTopology topo = new ScriptedTopology(4, 2);
        VnaLock lock = new VnaLock(topo);
        assertEquals(VnaLock.HeadWait.PARK, lock.headWait());
        topo.moveTo(0);
        lock.lock();
        AtomicInteger entered = new AtomicInteger();
        List<Thread> heads = new ArrayList<>();
        for (int node : new int[] {1, 2, 3}) {
            heads.add(Thread.ofVirtual().start(() -> {
                topo.moveTo(node);
                lock.lock();
                entered.incrementAndGet();
                Thread.yield();
                lock.unlock();
            }));
        }
        for (int node : new int[] {1, 2, 3}) {
            await("head of queue " + node + " parks", () -> lock.headParked(node));
        }
        assertEquals(0, entered.get(), "nobody may enter while the lock is held");
        lock.unlock(); // wakes one head; each later unlock wakes the next
        for (Thread t : heads) {
            if (!t.join(Duration.ofSeconds(20))) {
                fail("a parked head was never woken: " + t);
            }
        }
        assertEquals(3, entered.get());
        for (int q = 0; q < 4; q++) {
            assertFalse(lock.headParked(q), "slot " + q + " must be cleared");
            assertFalse(lock.queueBusy(q));
        }
    }

    @Test
    void spinModeNeverParksHeads() throws Exception {
        ScriptedTopology topo = new ScriptedTopology(2, 1);
        VnaLock lock = new VnaLock(topo, false, VnaLock.HeadWait.SPIN);
        lock.lock();
        Thread t = Thread.ofVirtual().start(() -> {
            topo.moveTo(1);
            lock.lock();
            lock.unlock();
        });
        await("queue 1 is used", () -> lock.queueBusy(1));
        Thread.sleep(50);
        assertFalse(lock.headParked(1));
        lock.unlock();
        assertTrue(t.join(Duration.ofSeconds(20)));
    }

    @Test
    void queueCountFollowsTheTopology() {
        assertEquals(4, new VnaLock(new VirtualTopology(4)).queueCount());
        assertEquals(2, new Vna2QLock(new VirtualTopology(4)).queueCount());
        assertEquals(3, new Vna2QLock(new VirtualTopology(6, 3)).queueCount());
        Topology os = Topology.parse("os");
        assertEquals(os.nodeCount(), new VnaLock(os).queueCount());
        assertEquals(os.socketCount(), new Vna2QLock(os).queueCount());
    }
}
