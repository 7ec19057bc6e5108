package dev.numalock.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatFactory;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * Runs {@link ListingThreeBenchmark} for the paper's two contention levels and writes
 * {@code OUT/java.json} (JMH JSON of all runs) and {@code OUT/java.md} (a Markdown table of
 * iterations/ms with the ratio to the best ReentrantLock of the same row).
 *
 * <p>Usage: {@code java -jar benchmarks.jar --out DIR [--work low,high] [JMH options]}; JMH
 * options (e.g. {@code -f 1 -wi 1 -w 1s -i 2 -r 1s -p threads=64}) are passed to JMH. The work
 * levels are {@code low} (outer 100, inner 15) and {@code high} (outer 0, inner 50).
 */
public final class BenchMain {

    private record Work(String name, String outer, String inner) { }

    private static final Map<String, Work> WORKS = Map.of(
            "low", new Work("low contention", "100", "15"),
            "high", new Work("high contention", "0", "50"));

    private BenchMain() { }

    public static void main(String[] args) throws Exception {
        Path out = null;
        List<String> works = List.of("low", "high");
        List<String> jmhArgs = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--out" -> out = Path.of(args[++i]);
                case "--work" -> works = Arrays.asList(args[++i].split(","));
                default -> jmhArgs.add(args[i]);
            }
        }
        if (out == null) {
            System.err.println("usage: java -jar benchmarks.jar --out DIR [--work low,high] [JMH options]");
            System.exit(2);
        }
        for (String w : works) {
            if (!WORKS.containsKey(w)) {
                System.err.println("Unknown work level '" + w + "': expected low, high or low,high.");
                System.exit(2);
            }
        }
        Files.createDirectories(out);
        CommandLineOptions cli = new CommandLineOptions(jmhArgs.toArray(String[]::new));
        List<RunResult> all = new ArrayList<>();
        long start = System.nanoTime();
        for (String w : works) {
            Work work = WORKS.get(w);
            Options o = new OptionsBuilder().parent(cli)
                    .include(ListingThreeBenchmark.class.getName() + ".listing3")
                    .param("outer", work.outer())
                    .param("inner", work.inner())
                    .build();
            Collection<RunResult> rs = new Runner(o).run();
            all.addAll(rs);
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        try (PrintStream ps = new PrintStream(Files.newOutputStream(out.resolve("java.json")), true, "UTF-8")) {
            ResultFormatFactory.getInstance(ResultFormatType.JSON, ps).writeOut(all);
        }
        // the folder as OUTDIR: the command is the same wherever the results go
        List<String> shown = new ArrayList<>(Arrays.asList(args));
        int at = shown.indexOf("--out");
        shown.set(at + 1, "OUTDIR");
        String command = "java --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow "
                + "-jar java/bench/target/benchmarks.jar " + String.join(" ", shown);
        Files.writeString(out.resolve("java.md"), markdown(all, command, seconds));
        System.out.println("wrote " + out.resolve("java.json") + " and " + out.resolve("java.md"));
    }

    static String markdown(List<RunResult> results, String command, double seconds) throws IOException {
        // rows: (outer, inner, threads, topology); columns: lock
        Map<String, Map<String, Result>> rows = new TreeMap<>((a, b) -> {
            String[] x = a.split("\\|");
            String[] y = b.split("\\|");
            int c = Integer.compare(Integer.parseInt(y[0]), Integer.parseInt(x[0])); // outer desc: low first
            if (c != 0) {
                return c;
            }
            c = Integer.compare(Integer.parseInt(x[1]), Integer.parseInt(y[1]));
            if (c != 0) {
                return c;
            }
            c = Integer.compare(Integer.parseInt(x[2]), Integer.parseInt(y[2]));
            return c != 0 ? c : x[3].compareTo(y[3]);
        });
        List<String> locks = new ArrayList<>();
        for (RunResult r : results) {
            var p = r.getParams();
            String key = p.getParam("outer") + "|" + p.getParam("inner") + "|" + p.getParam("threads") + "|"
                    + p.getParam("topology");
            Result it = r.getSecondaryResults().get("iterations");
            if (it == null) {
                continue;
            }
            rows.computeIfAbsent(key, k -> new LinkedHashMap<>()).put(p.getParam("lock"), it);
            if (!locks.contains(p.getParam("lock"))) {
                locks.add(p.getParam("lock"));
            }
        }
        locks.sort((a, b) -> Integer.compare(order(a), order(b)));
        StringBuilder sb = new StringBuilder();
        sb.append("# numalock Java: paper listing 3 (JMH)\n\n");
        sb.append("Command (run from the repository root, built by `java/build.sh bench OUTDIR`):\n\n");
        sb.append("```\n").append(command).append("\n```\n\n");
        sb.append(String.format(Locale.ROOT, "Host: %d CPUs, %s %s; total wall time %.0f s.%n%n",
                Runtime.getRuntime().availableProcessors(), System.getProperty("java.vm.name"),
                System.getProperty("java.version"), seconds));
        sb.append("Score: listing-3 loop iterations per millisecond over all virtual threads "
                + "(JMH secondary metric `iterations`, higher is better), ± JMH's 99.9% error "
                + "where it has one; in brackets the ratio to the better of ReentrantLock fair/unfair "
                + "in the same row. Short runs on a small machine are noisy: read differences below "
                + "~10-20% as noise.\n\n");
        sb.append("| outer | inner | threads | topology |");
        for (String l : locks) {
            sb.append(' ').append(l).append(" |");
        }
        sb.append("\n|---|---|---|---|");
        sb.append("---|".repeat(locks.size()));
        sb.append('\n');
        for (var e : rows.entrySet()) {
            String[] k = e.getKey().split("\\|");
            Map<String, Result> m = e.getValue();
            double best = 0;
            for (String rl : new String[] {"ReentrantLock-fair", "ReentrantLock-unfair"}) {
                if (m.containsKey(rl)) {
                    best = Math.max(best, m.get(rl).getScore());
                }
            }
            sb.append("| ").append(k[0]).append(" | ").append(k[1]).append(" | ").append(k[2]).append(" | ")
                    .append(k[3]).append(" |");
            for (String l : locks) {
                Result r = m.get(l);
                if (r == null) {
                    sb.append(" - |");
                    continue;
                }
                sb.append(String.format(Locale.ROOT, " %.2f", r.getScore()));
                if (!Double.isNaN(r.getScoreError())) {
                    sb.append(String.format(Locale.ROOT, " ± %.2f", r.getScoreError()));
                }
                if (best > 0) {
                    sb.append(String.format(Locale.ROOT, " (%.2fx)", r.getScore() / best));
                }
                sb.append(" |");
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    private static int order(String lock) {
        List<String> l = Arrays.asList(ListingThreeBenchmark.LOCKS);
        int i = l.indexOf(lock);
        return i < 0 ? l.size() : i;
    }
}
