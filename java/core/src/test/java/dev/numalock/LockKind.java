package dev.numalock;

import java.util.function.BiFunction;

/** The six numalock locks, for parameterized tests. */
enum LockKind {
    VNA(VnaLock::new),
    VNA_SPIN((t, s) -> new VnaLock(t, s, VnaLock.HeadWait.SPIN)),
    VNA_2Q(Vna2QLock::new),
    CNA(CnaLock::new),
    MCS(McsLock::new),
    HMCS(HmcsLock::new),
    HSPIN(HspinLock::new);

    private final BiFunction<Topology, Boolean, NumaLock> factory;

    LockKind(BiFunction<Topology, Boolean, NumaLock> factory) {
        this.factory = factory;
    }

    NumaLock create(Topology topology) {
        return factory.apply(topology, false);
    }

    NumaLock createWithStats(Topology topology) {
        return factory.apply(topology, true);
    }
}
