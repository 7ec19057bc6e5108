package dev.numalock;

/**
 * A snapshot of a lock's optional statistics.
 *
 * @param acquisitions     successful lock/tryLock calls
 * @param handovers        acquisitions whose holder is a different thread than the previous holder
 * @param remoteHandovers  hand-overs whose new holder was on a different NUMA node than the
 *                         previous holder (nodes as recorded by the lock at acquisition time)
 */
public record LockStats(long acquisitions, long handovers, long remoteHandovers) {

    /** {@code remoteHandovers / handovers}, or 0 without hand-overs. */
    public double remoteShare() {
        return handovers == 0 ? 0.0 : (double) remoteHandovers / handovers;
    }

    @Override
    public String toString() {
        return String.format("acquisitions=%d handovers=%d remote=%d (%.1f%%)",
                acquisitions, handovers, remoteHandovers, 100.0 * remoteShare());
    }
}
