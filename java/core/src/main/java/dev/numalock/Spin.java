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

    /** Busy iterations a queued waiter spins before it parks ({@code numalock.spinsBeforePark}, default 128). */
    static final int SPINS_BEFORE_PARK = Math.max(0, Integer.getInteger("numalock.spinsBeforePark", 128));

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
