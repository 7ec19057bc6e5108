package dev.numalock.bench;

import dev.numalock.CnaLock;
import dev.numalock.HmcsLock;
import dev.numalock.HspinLock;
import dev.numalock.McsLock;
import dev.numalock.Topology;
import dev.numalock.Vna2QLock;
import dev.numalock.VnaLock;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The paper's listing 3: {@code threads} virtual threads, each looping: multiply two private
 * {@code outer x outer} matrices, {@code Thread.yield()}, lock, multiply the two shared
 * {@code inner x inner} matrices into the shared result, {@code Thread.yield()}, unlock.
 *
 * <p>The virtual threads are started before each JMH iteration and loop until it ends (the paper
 * runs 10000 loops per thread; steady-state looping avoids start/finish effects in short runs).
 * Each benchmark invocation sleeps {@code sliceMillis} and adds the loops completed meanwhile to
 * the auxiliary counter {@code iterations}, which JMH reports as loop iterations per millisecond
 * over all threads (the paper's metric). {@code outer = 0} means no outer work (the paper's
 * high-contention case).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Threads(1)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xms512m", "-Xmx512m"})
public class ListingThreeBenchmark {

    /** Lock names accepted by {@link #lock}. */
    public static final String[] LOCKS = {"VnaLock", "VnaLock-spin", "Vna2QLock", "CnaLock", "McsLock", "HmcsLock",
        "HspinLock", "ReentrantLock-fair", "ReentrantLock-unfair"};

    @Param({"100", "0"})
    public int outer;

    @Param({"15", "50"})
    public int inner;

    @Param({"16", "64", "128"})
    public int threads;

    @Param({"virtual:4"})
    public String topology;

    @Param({"VnaLock", "Vna2QLock", "CnaLock", "McsLock", "HmcsLock", "HspinLock",
        "ReentrantLock-fair", "ReentrantLock-unfair"})
    public String lock;

    /** Length of one benchmark invocation (a measurement slice). */
    @Param({"20"})
    public int sliceMillis;

    private Lock theLock;
    private double[][] outerA;
    private double[][] outerB;
    private double[][] outerR;
    private double[] innerC;
    private double[] innerD;
    private double[] innerR;
    private final java.util.concurrent.atomic.LongAdder done = new java.util.concurrent.atomic.LongAdder();
    private volatile boolean stop;
    private Thread[] workers;

    /** Iterations of listing 3's loop, reported by JMH as a rate (ops/ms). */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Counters {
        public long iterations;

        @Setup(Level.Iteration)
        public void reset() {
            iterations = 0;
        }
    }

    /** Creates a lock by name on the given topology spec. */
    public static Lock createLock(String name, String topologySpec) {
        Topology t = Topology.parse(topologySpec);
        return switch (name) {
            case "VnaLock" -> new VnaLock(t);
            case "VnaLock-spin" -> new VnaLock(t, false, VnaLock.HeadWait.SPIN);
            case "Vna2QLock" -> new Vna2QLock(t);
            case "CnaLock" -> new CnaLock(t);
            case "McsLock" -> new McsLock(t);
            case "HmcsLock" -> new HmcsLock(t);
            case "HspinLock" -> new HspinLock(t);
            case "ReentrantLock-fair" -> new ReentrantLock(true);
            case "ReentrantLock-unfair" -> new ReentrantLock(false);
            default -> throw new IllegalArgumentException("Unknown lock '" + name + "': expected one of "
                    + String.join(", ", LOCKS) + ".");
        };
    }

    @Setup(Level.Trial)
    public void setup() {
        if (outer < 0 || inner < 1 || threads < 1 || sliceMillis < 1) {
            throw new IllegalArgumentException("need outer >= 0, inner >= 1, threads >= 1, sliceMillis >= 1");
        }
        theLock = createLock(lock, topology);
        outerA = new double[threads][];
        outerB = new double[threads][];
        outerR = new double[threads][];
        for (int i = 0; i < threads; i++) {
            outerA[i] = fill(outer, i + 1);
            outerB[i] = fill(outer, i + 2);
            outerR[i] = new double[outer * outer];
        }
        innerC = fill(inner, 3);
        innerD = fill(inner, 4);
        innerR = new double[inner * inner];
    }

    private static double[] fill(int n, int seed) {
        double[] m = new double[n * n];
        for (int i = 0; i < m.length; i++) {
            m[i] = ((i * 31 + seed * 17) % 97) / 97.0;
        }
        return m;
    }

    /** r = a x b for n x n row-major matrices (i-k-j order). */
    static void multiply(double[] a, double[] b, double[] r, int n) {
        java.util.Arrays.fill(r, 0.0);
        for (int i = 0; i < n; i++) {
            int row = i * n;
            for (int k = 0; k < n; k++) {
                double aik = a[row + k];
                int bk = k * n;
                for (int j = 0; j < n; j++) {
                    r[row + j] += aik * b[bk + j];
                }
            }
        }
    }

    private void work(int id) {
        double[] a = outerA[id];
        double[] b = outerB[id];
        double[] r = outerR[id];
        Lock l = theLock;
        while (!stop) {
            if (outer > 0) {
                multiply(a, b, r, outer);
            }
            Thread.yield();
            l.lock();
            try {
                multiply(innerC, innerD, innerR, inner);
                Thread.yield();
            } finally {
                l.unlock();
            }
            done.increment();
        }
    }

    /** Loop iterations completed so far by all workers. */
    long completed() {
        return done.sum();
    }

    @Setup(Level.Iteration)
    public void startWorkers() {
        stop = false;
        workers = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            final int id = i;
            workers[i] = Thread.ofVirtual().name("listing3-" + i).unstarted(() -> work(id));
        }
        for (Thread t : workers) {
            t.start();
        }
    }

    @org.openjdk.jmh.annotations.TearDown(Level.Iteration)
    public void stopWorkers() throws InterruptedException {
        stop = true;
        for (Thread t : workers) {
            if (!t.join(java.time.Duration.ofSeconds(60))) {
                throw new IllegalStateException("listing-3 worker did not stop within 60 s: " + t);
            }
        }
    }

    @Benchmark
    public void listing3(Counters counters, Blackhole bh) {
        long before = done.sum();
        java.util.concurrent.locks.LockSupport.parkNanos(sliceMillis * 1_000_000L);
        counters.iterations += done.sum() - before;
        bh.consume(innerR[0]);
    }
}
