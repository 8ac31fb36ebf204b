/*
 * java-gc - a JVM service whose heap is too small for the data it keeps: its
 * throughput is limited by the garbage collector's stop-the-world pauses.
 *
 * Problem: --threads "worker-i" threads (default 2) each serve requests in a loop:
 * build a 1-4 KiB record (a little CPU work) and put it into a shared cache of
 * --live-mb MiB (default 120) that replaces entries at random, so most records live
 * long enough to be copied by the young collection and promoted, and the old
 * generation fills and is collected again and again. The launcher gives the JVM a
 * 192 MiB heap and the parallel collector, whose collections stop every Java thread.
 * Nothing else waits: the workers only ever wait for the collector.
 *
 * Expected diagnosis: no knot; the sink is the JVM's pauses (safepoints/GC of the
 * process), with their number, the longest and their total; no worker, no GC thread
 * and no VM Thread as the answer.
 *
 * --fixed: the cache keeps 1/16 of the data (a bounded cache sized to the heap): the
 * collections are short and rare.
 */
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

public class GcPauses {
    public static void main(String[] args) throws Exception {
        double seconds = 5;
        boolean fixed = false;
        int threads = 2, liveMb = 120;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String v = (i + 1 < args.length) ? args[i + 1] : null;
            try {
                switch (a) {
                    case "--help" -> {
                        System.out.println("usage: java-gc [--seconds N] [--fixed] [--threads N] [--live-mb N]");
                        return;
                    }
                    case "--fixed" -> fixed = true;
                    case "--seconds" -> { seconds = Double.parseDouble(v); i++; }
                    case "--threads" -> { threads = Integer.parseInt(v); i++; }
                    case "--live-mb" -> { liveMb = Integer.parseInt(v); i++; }
                    default -> {
                        System.err.println("java-gc: unknown flag " + a);
                        System.exit(2);
                    }
                }
            } catch (NumberFormatException | NullPointerException e) {
                System.err.println("java-gc: bad value for " + a);
                System.exit(2);
            }
        }
        if (seconds <= 0 || threads < 1 || liveMb < 1) {
            System.err.println("java-gc: values must be positive");
            System.exit(2);
        }
        int slots = liveMb * 1024 / 2 / (fixed ? 16 : 1); // records of 2 KiB on average
        AtomicReferenceArray<byte[]> cache = new AtomicReferenceArray<>(slots);
        AtomicLong done = new AtomicLong();
        long end = System.nanoTime() + (long) (seconds * 1e9);
        Thread[] ts = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            ts[i] = new Thread(() -> serve(cache, end, done), "worker-" + i);
            ts[i].start();
        }
        long start = System.nanoTime();
        for (Thread t : ts) t.join();
        double secs = (System.nanoTime() - start) / 1e9;
        System.out.printf("throughput: %.1f ops/s%n", done.get() / secs);
    }

    static void serve(AtomicReferenceArray<byte[]> cache, long end, AtomicLong done) {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        long sum = 0;
        while (System.nanoTime() < end) {
            byte[] rec = buildRecord(rnd);
            sum += rec[0];
            cache.set(rnd.nextInt(cache.length()), rec);
            done.incrementAndGet();
        }
        if (sum == 42) System.err.println("unlikely");
    }

    static byte[] buildRecord(ThreadLocalRandom rnd) {
        byte[] rec = new byte[1024 + rnd.nextInt(3072)];
        for (int i = 0; i < rec.length; i += 64) rec[i] = (byte) (i ^ rnd.nextInt());
        return rec;
    }
}
