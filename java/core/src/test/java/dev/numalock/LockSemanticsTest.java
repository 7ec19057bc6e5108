package dev.numalock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Lock interface contract of every lock, single-threaded and with one competing thread. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class LockSemanticsTest {

    private static <T> T onOtherThread(boolean virtual, java.util.concurrent.Callable<T> c) throws Exception {
        CompletableFuture<T> f = new CompletableFuture<>();
        Runnable r = () -> {
            try {
                f.complete(c.call());
            } catch (Throwable t) {
                f.completeExceptionally(t);
            }
        };
        if (virtual) {
            Thread.ofVirtual().start(r);
        } else {
            Thread.ofPlatform().daemon(true).start(r);
        }
        return f.get(20, TimeUnit.SECONDS);
    }

    @ParameterizedTest
    @EnumSource(LockKind.class)
    void tryLockFailsWhileHeldByAnotherThreadAndSucceedsWhenFree(LockKind kind) throws Exception {
        for (Topology topo : new Topology[] {new VirtualTopology(4), Topology.parse("os")}) {
            NumaLock lock = kind.create(topo);
            assertTrue(lock.tryLock(), "free lock: tryLock must succeed");
            assertTrue(lock.isHeldByCurrentThread());
            for (boolean virtual : new boolean[] {true, false}) {
                boolean other = onOtherThread(virtual, lock::tryLock);
                assertFalse(other, "held by another thread: tryLock must fail");
                boolean timed = onOtherThread(virtual, () -> lock.tryLock(20, TimeUnit.MILLISECONDS));
                assertFalse(timed, "held by another thread: timed tryLock must time out");
            }
            assertFalse(lock.tryLock(), "not reentrant: the holder's tryLock fails");
            lock.unlock();
            assertFalse(lock.isHeldByCurrentThread());
            for (boolean virtual : new boolean[] {true, false}) {
                boolean free = onOtherThread(virtual, () -> {
                    boolean ok = lock.tryLock();
                    if (ok) {
                        lock.unlock();
                    }
                    return ok;
                });
                assertTrue(free, "free lock: tryLock on another thread must succeed");
            }
            lock.lock();
            lock.unlock();
            assertTrue(lock.tryLock(0, TimeUnit.NANOSECONDS));
            lock.unlock();
        }
    }

    @ParameterizedTest
    @EnumSource(LockKind.class)
    void timedTryLockSucceedsWhenReleasedInTime(LockKind kind) throws Exception {
        NumaLock lock = kind.create(new VirtualTopology(2));
        lock.lock();
        CountDownLatch started = new CountDownLatch(1);
        CompletableFuture<Boolean> f = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            started.countDown();
            try {
                boolean ok = lock.tryLock(15, TimeUnit.SECONDS);
                if (ok) {
                    lock.unlock();
                }
                f.complete(ok);
            } catch (Throwable t) {
                f.completeExceptionally(t);
            }
        });
        started.await();
        Thread.sleep(30);
        lock.unlock();
        assertTrue(f.get(20, TimeUnit.SECONDS));
    }

    @ParameterizedTest
    @EnumSource(LockKind.class)
    void lockWaitsForTheHolder(LockKind kind) throws Exception {
        NumaLock lock = kind.create(new VirtualTopology(4));
        lock.lock();
        AtomicBoolean entered = new AtomicBoolean();
        Thread t = Thread.ofVirtual().start(() -> {
            lock.lock();
            entered.set(true);
            lock.unlock();
        });
        Thread.sleep(50);
        assertFalse(entered.get(), "a second thread entered while the lock was held");
        lock.unlock();
        assertTrue(t.join(java.time.Duration.ofSeconds(20)));
        assertTrue(entered.get());
    }

    @ParameterizedTest
    @EnumSource(LockKind.class)
    void misuseIsRejected(LockKind kind) throws Exception {
        NumaLock lock = kind.create(new VirtualTopology(2));
        assertThrows(IllegalMonitorStateException.class, lock::unlock, "unlock of a free lock");
        lock.lock();
        assertThrows(IllegalStateException.class, lock::lock, "re-entry must be refused, not deadlock");
        Exception e = onOtherThread(true, () -> {
            try {
                lock.unlock();
                return null;
            } catch (IllegalMonitorStateException x) {
                return x;
            }
        });
        assertTrue(e instanceof IllegalMonitorStateException, "unlock by a non-holder must throw");
        assertTrue(lock.isHeldByCurrentThread(), "a refused unlock must not release the lock");
        lock.unlock();
        assertThrows(UnsupportedOperationException.class, lock::lockInterruptibly);
        assertThrows(UnsupportedOperationException.class, lock::newCondition);
        Thread.currentThread().interrupt();
        assertThrows(InterruptedException.class, () -> lock.tryLock(1, TimeUnit.SECONDS));
        assertFalse(Thread.interrupted(), "the interrupt status is consumed by the exception");
    }

    @ParameterizedTest
    @EnumSource(LockKind.class)
    void statsCountHandoversBetweenNodes(LockKind kind) throws Exception {
        ScriptedTopology topo = new ScriptedTopology(2, 1);
        NumaLock lock = kind.createWithStats(topo);
        // main thread on node 0 twice: one acquisition is no hand-over
        lock.lock();
        lock.unlock();
        lock.lock();
        lock.unlock();
        // another thread on node 0: local hand-over; then one on node 1: remote hand-over
        onOtherThread(true, () -> { lock.lock(); lock.unlock(); return null; });
        onOtherThread(true, () -> { topo.moveTo(1); lock.lock(); lock.unlock(); return null; });
        LockStats s = lock.stats();
        assertEquals(4, s.acquisitions());
        assertEquals(2, s.handovers());
        assertEquals(1, s.remoteHandovers());
        assertEquals(0.5, s.remoteShare(), 1e-9);
        NumaLock quiet = kind.create(topo);
        quiet.lock();
        quiet.unlock();
        assertEquals(new LockStats(0, 0, 0), quiet.stats(), "statistics disabled by default");
    }
}
