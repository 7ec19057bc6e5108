package dev.numalock.bench;

import dev.numalock.OsTopology;
import dev.numalock.Topology;
import dev.numalock.VirtualTopology;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * Cost of finding the current NUMA node (the paper caches it because a getcpu system call per lock
 * operation was too expensive): {@code sched_getcpu} through the FFM API, {@link OsTopology} with its
 * per-thread cache (refresh every 8 calls) and without cache (every call), and the virtual topology.
 * Run with {@code java -cp java/bench/target/benchmarks.jar org.openjdk.jmh.Main NodeLookup}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class NodeLookupBenchmark {
    private final Topology cached = OsTopology.instance();
    private final Topology uncached = new OsTopology(Path.of("/sys/devices/system"), 1);
    private final Topology virtual = new VirtualTopology(4);

    @Benchmark
    public int schedGetcpuFfm() {
        return OsTopology.currentCpu();
    }

    @Benchmark
    public int osTopologyCached() {
        return cached.currentNode();
    }

    @Benchmark
    public int osTopologyEveryCall() {
        return uncached.currentNode();
    }

    @Benchmark
    public int virtualTopology() {
        return virtual.currentNode();
    }
}
