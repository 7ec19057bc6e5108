package dev.numalock;

/**
 * VNA_2_Q of the paper: the VNA algorithm with one MCS queue per <em>socket</em> instead of one
 * per NUMA node (on the paper's Kunpeng-920 machine two NUMA nodes share a socket, so the lock has
 * two queues instead of four). Fewer queues mean fewer queue heads competing for the test-and-set
 * flag, so fewer threads can take the lock while others are suspended; the paper found it slower
 * than VNA with four queues. The node recorded for statistics is still the NUMA node.
 */
public final class Vna2QLock extends VnaLock {

    public Vna2QLock() {
        this(Topology.fromSystemProperty(), false);
    }

    public Vna2QLock(Topology topology) {
        this(topology, false);
    }

    public Vna2QLock(Topology topology, boolean stats) {
        super(topology, stats, true);
    }
}
