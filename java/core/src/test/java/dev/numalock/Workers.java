package dev.numalock;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Runs worker threads (virtual or platform) with a progress watchdog: the test fails, with the
 * stack traces of the threads still running, when the shared progress counter has not moved for
 * {@link #STALL_MILLIS}, instead of hanging the build. Stuck threads are daemons and are
 * interrupted; they cannot keep the JVM alive.
 */
final class Workers {
    static final long STALL_MILLIS = 10_000;

    interface Body {
        void run(int worker, AtomicLong progress) throws Exception;
    }

    private Workers() { }

    static void run(String what, int count, boolean virtual, Body body) {
        run(what, count, virtual, STALL_MILLIS, body);
    }

    static void run(String what, int count, boolean virtual, long stallMillis, Body body) {
        AtomicLong progress = new AtomicLong();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            final int id = i;
            Runnable r = () -> {
                try {
                    body.run(id, progress);
                } catch (Throwable t) {
                    errors.add(t);
                }
            };
            Thread t = virtual
                    ? Thread.ofVirtual().name(what + "-v" + i).unstarted(r)
                    : Thread.ofPlatform().daemon(true).name(what + "-p" + i).unstarted(r);
            threads.add(t);
        }
        threads.forEach(Thread::start);
        long last = -1;
        long lastChange = System.nanoTime();
        try {
            for (Thread t : threads) {
                while (!t.join(java.time.Duration.ofMillis(100))) {
                    long p = progress.get();
                    if (p != last) {
                        last = p;
                        lastChange = System.nanoTime();
                    } else if ((System.nanoTime() - lastChange) / 1_000_000 > stallMillis) {
                        StringBuilder sb = new StringBuilder();
                        for (Thread s : threads) {
                            if (s.isAlive()) {
                                sb.append('\n').append(s).append(" state=").append(s.getState());
                                for (StackTraceElement e : s.getStackTrace()) {
                                    sb.append("\n    at ").append(e);
                                }
                            }
                        }
                        threads.forEach(Thread::interrupt);
                        fail(what + ": no progress for " + stallMillis + " ms (progress=" + p + ")" + sb);
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail("interrupted");
        }
        if (!errors.isEmpty()) {
            AssertionError ae = new AssertionError(what + ": " + errors.size() + " worker(s) failed", errors.peek());
            errors.stream().skip(1).limit(3).forEach(ae::addSuppressed);
            throw ae;
        }
    }
}
