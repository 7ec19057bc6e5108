package dev.numalock.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * A quick comparison that is less sensitive than separate JMH forks to load changing over time
 * on a shared machine: the locks run listing 3 in turns (rotating order), {@code rounds} times
 * {@code sliceMillis} each, in one JVM; prints the median iterations/ms per lock and its ratio to
 * the best ReentrantLock. Not a replacement for the JMH run (no forks, shared JIT profile).
 *
 * <p>Usage: {@code java -cp benchmarks.jar dev.numalock.bench.Interleaved OUTER INNER THREADS
 * TOPOLOGY ROUNDS SLICE_MS LOCK,LOCK,...}
 */
public final class Interleaved {
    private Interleaved() { }

    public static void main(String[] args) throws Exception {
        if (args.length != 7) {
            System.err.println("usage: Interleaved OUTER INNER THREADS TOPOLOGY ROUNDS SLICE_MS LOCK,LOCK,...");
            System.exit(2);
        }
        int outer = Integer.parseInt(args[0]);
        int inner = Integer.parseInt(args[1]);
        int threads = Integer.parseInt(args[2]);
        String topology = args[3];
        int rounds = Integer.parseInt(args[4]);
        int slice = Integer.parseInt(args[5]);
        List<String> locks = Arrays.asList(args[6].split(","));
        double[][] rates = new double[locks.size()][rounds + 1];
        for (int r = 0; r <= rounds; r++) { // round 0 is warm-up
            for (int k = 0; k < locks.size(); k++) {
                int li = (k + r) % locks.size();
                ListingThreeBenchmark b = new ListingThreeBenchmark();
                b.outer = outer;
                b.inner = inner;
                b.threads = threads;
                b.topology = topology;
                b.lock = locks.get(li);
                b.sliceMillis = slice;
                b.setup();
                b.startWorkers();
                Thread.sleep(slice / 4 + 1);
                long c0 = b.completed();
                long t0 = System.nanoTime();
                Thread.sleep(slice);
                long c1 = b.completed();
                long t1 = System.nanoTime();
                b.stopWorkers();
                rates[li][r] = (c1 - c0) / ((t1 - t0) / 1e6);
            }
        }
        List<Double> medians = new ArrayList<>();
        double best = 0;
        for (int li = 0; li < locks.size(); li++) {
            double[] m = Arrays.copyOfRange(rates[li], 1, rounds + 1);
            Arrays.sort(m);
            double med = m[m.length / 2];
            medians.add(med);
            if (locks.get(li).startsWith("ReentrantLock")) {
                best = Math.max(best, med);
            }
        }
        System.out.printf(Locale.ROOT, "outer=%d inner=%d threads=%d topology=%s rounds=%d slice=%dms%n",
                outer, inner, threads, topology, rounds, slice);
        for (int li = 0; li < locks.size(); li++) {
            System.out.printf(Locale.ROOT, "  %-22s median %8.2f it/ms  %s%n", locks.get(li), medians.get(li),
                    best > 0 ? String.format(Locale.ROOT, "(%.2fx best ReentrantLock)", medians.get(li) / best) : "");
        }
    }
}
