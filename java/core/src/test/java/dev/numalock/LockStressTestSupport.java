package dev.numalock;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/** Deliberately broken locks used to show that the tests can fail. */
final class LockStressTestSupport {
    private LockStressTestSupport() { }

    /**
     * Called by the stress harness inside its critical section, between reading and writing the
     * guarded counter, on a lock that implements it: a broken lock uses it to force the
     * interleaving that shows its missing exclusion, instead of waiting for the scheduler to
     * produce it by chance.
     */
    interface InsideHook {
        void inside();
    }

    /**
     * Excludes nobody, and makes sure two threads are inside the critical section at once: the
     * first two threads to get there wait for each other (a lock that excluded would time out
     * here with one thread inside, and the harness would then see no violation).
     */
    public static final class OverlappingNoLock implements Lock, InsideHook {
        private final CountDownLatch both = new CountDownLatch(2);
        @Override public void inside() {
            if (both.getCount() == 0) {
                return;
            }
            both.countDown();
            try {
                both.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        @Override public void lock() { }
        @Override public void lockInterruptibly() { }
        @Override public boolean tryLock() { return true; }
        @Override public boolean tryLock(long t, TimeUnit u) { return true; }
        @Override public void unlock() { }
        @Override public Condition newCondition() { throw new UnsupportedOperationException(); }
    }
}
