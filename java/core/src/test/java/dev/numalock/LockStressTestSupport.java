package dev.numalock;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/** Deliberately broken locks used to show that the tests can fail. */
final class LockStressTestSupport {
    private LockStressTestSupport() { }

    /** "Lock" that excludes nobody. */
    public static final class NoLock implements Lock {
        @Override public void lock() { }
        @Override public void lockInterruptibly() { }
        @Override public boolean tryLock() { return true; }
        @Override public boolean tryLock(long t, TimeUnit u) { return true; }
        @Override public void unlock() { }
        @Override public Condition newCondition() { throw new UnsupportedOperationException(); }
    }
}
