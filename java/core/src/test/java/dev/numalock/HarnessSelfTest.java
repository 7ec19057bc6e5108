package dev.numalock;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;

/** Shows that the stress harness can fail: a lock without mutual exclusion and a lock that never grants are caught. */
class HarnessSelfTest {

    /** Lock that never becomes free once taken (waiters park forever). */
    static final class StuckLock implements Lock {
        private volatile boolean taken;
        @Override public void lock() {
            synchronized (this) {
                if (!taken) {
                    taken = true;
                    return;
                }
            }
            while (true) {
                java.util.concurrent.locks.LockSupport.park(this);
                if (Thread.interrupted()) {
                    throw new IllegalStateException("interrupted while stuck");
                }
            }
        }
        @Override public void lockInterruptibly() { lock(); }
        @Override public boolean tryLock() { return false; }
        @Override public boolean tryLock(long t, TimeUnit u) { return false; }
        @Override public void unlock() { /* never frees: the lock stays taken */ }
        @Override public Condition newCondition() { throw new UnsupportedOperationException(); }
    }

    @Test
    void detectsMissingMutualExclusion() {
        AssertionFailedError e = assertThrows(AssertionFailedError.class,
                () -> LockStressTest.stress(new LockStressTestSupport.OverlappingNoLock(), 16, 200, true, false));
        assertTrue(e.getMessage().contains("mutual exclusion") || e.getMessage().contains("lost updates"),
                e.getMessage());
    }

    @Test
    void watchdogFailsInsteadOfHanging() {
        AssertionFailedError e = assertThrows(AssertionFailedError.class,
                () -> LockStressTest.stress(new StuckLock(), 4, 10, true, false, 1_000));
        assertTrue(e.getMessage().contains("no progress"), e.getMessage());
    }
}
