package dev.numalock;

/**
 * The bounded-spin policy shared by all locks. Virtual threads are never preempted, so a waiter
 * that spins without ever giving its carrier back can starve the very thread it waits for. Every
 * waiting loop therefore calls {@link #pause(int)} with its iteration count: it is
 * {@link Thread#onSpinWait()} most of the time and {@link Thread#yield()} once every
 * {@link #SPINS_PER_YIELD} iterations.
 */
final class Spin {

    /** Busy iterations between two {@link Thread#yield()} calls ({@code numalock.spinsPerYield}, default 64). */
    static final int SPINS_PER_YIELD = Math.max(1, Integer.getInteger("numalock.spinsPerYield", 64));

    /** Busy iterations a queued platform thread spins before it parks ({@code numalock.spinsBeforePark}, default 128). */
    static final int SPINS_BEFORE_PARK = Math.max(0, Integer.getInteger("numalock.spinsBeforePark", 128));

    /**
     * Busy iterations a queued virtual thread spins before it parks
     * ({@code numalock.spinsBeforeParkVirtual}, default 0: park at once). A spinning virtual thread
     * holds one of the few carriers that the holder and every runnable virtual thread share, and
     * parking one costs no system call (it unmounts): on the 2-carrier development machine the
     * listing-3 benchmark (64 and 128 threads, 4 virtual nodes) ran VnaLock at 0.88x-1.00x of the
     * best ReentrantLock with 128 spins and at 0.98x-1.05x with none (docs/JAVA.md).
     */
    static final int SPINS_BEFORE_PARK_VIRTUAL =
            Math.max(0, Integer.getInteger("numalock.spinsBeforeParkVirtual", 0));

    /** The spin budget before parking for {@code t}: virtual or platform. */
    static int spinsBeforePark(Thread t) {
        return t.isVirtual() ? SPINS_BEFORE_PARK_VIRTUAL : SPINS_BEFORE_PARK;
    }

    private Spin() { }

    /** One iteration of a waiting loop; {@code i} counts the iterations from 0. */
    static void pause(int i) {
        if (i % SPINS_PER_YIELD == SPINS_PER_YIELD - 1) {
            Thread.yield();
        } else {
            Thread.onSpinWait();
        }
    }
}
