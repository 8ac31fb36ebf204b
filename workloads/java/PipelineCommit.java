/*
 * java-commit - the pipeline-commit workload on the JVM: a request pipeline whose one
 * sync thread commits one request per fdatasync, between network threads and reply
 * threads.
 *
 * Problem: the server JVM listens on 127.0.0.1 (ephemeral port). Its "acceptor"
 * thread accepts connections and deals them out to --net-threads "net-i" threads
 * (default 2), each running a NIO selector over its connections: it reads a 64-byte
 * request and puts it on the request queue. The single "sync" thread takes one request
 * at a time, appends a 4 KiB record to a log (FileChannel.write) and forces it to the
 * disk (FileChannel.force(false): fdatasync), then hands the request to the reply
 * queue, from which --reply-threads "reply-i" threads (default 2) write the replies
 * back. The client JVM (the one started; it starts the server JVM as a child with
 * `--server` and ends it with SIGTERM) runs --clients "client-i" threads (default 16),
 * one blocking connection each, request -> reply.
 * Both are ordinary JVMs with their own VM Thread, GC threads, compiler threads and
 * periodic tasks.
 *
 * Expected diagnosis: knot {sync, disk} at fdatasync (appendAndSync -> force), no
 * thread of the JVM's own (VM Thread, GC Thread#N, G1 Service, C2 CompilerThread...)
 * in it or on the way to it.
 *
 * --fixed: group commit: the sync thread takes every pending request, appends them all
 * and forces once for the batch.
 */
import java.io.DataInputStream;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;

public class PipelineCommit {
    static final int REQ = 64;
    static final int REC = 4096;
    static final long LOG_SLOTS = 4096; // a 16 MiB ring

    static double seconds = 5;
    static boolean fixed = false;
    static int clients = 16, netThreads = 2, replyThreads = 2;
    static String dir = null;
    static volatile boolean stop = false;

    /** One request travelling through the pipeline: its connection and its bytes. */
    record Request(SocketChannel ch, byte[] data) {}

    static final LinkedBlockingQueue<Request> requests = new LinkedBlockingQueue<>();
    static final LinkedBlockingQueue<Request> replies = new LinkedBlockingQueue<>();
    static final AtomicLong committed = new AtomicLong();

    public static void main(String[] args) throws Exception {
        if (parse(args)) {
            runServer();
            return;
        }
        runClients(startServer(args));
    }

    /** The server JVM, started as a child (`--server`); returns the port it prints. */
    static Process server;

    static int startServer(String[] args) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path"),
                "PipelineCommit", "--server"));
        cmd.addAll(List.of(args));
        server = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        var out = new java.io.BufferedReader(new java.io.InputStreamReader(server.getInputStream()));
        String line = out.readLine();
        if (line == null || !line.startsWith("port ")) {
            System.err.println("java-commit: the server did not start");
            System.exit(1);
        }
        return Integer.parseInt(line.substring(5).trim());
    }

    /** Parse the flags; true for the server JVM. */
    static boolean parse(String[] args) {
        boolean isServer = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String v = (i + 1 < args.length) ? args[i + 1] : null;
            try {
                switch (a) {
                    case "--help" -> {
                        System.out.println("usage: java-commit [--seconds N] [--fixed] [--clients N]"
                                + " [--net-threads N] [--reply-threads N] [--dir DIR]");
                        System.exit(0);
                    }
                    case "--fixed" -> fixed = true;
                    case "--seconds" -> { seconds = Double.parseDouble(v); i++; }
                    case "--clients" -> { clients = Integer.parseInt(v); i++; }
                    case "--net-threads" -> { netThreads = Integer.parseInt(v); i++; }
                    case "--reply-threads" -> { replyThreads = Integer.parseInt(v); i++; }
                    case "--dir" -> { dir = v; i++; if (v == null) throw new NumberFormatException(); }
                    case "--server" -> isServer = true;
                    default -> {
                        System.err.println("java-commit: unknown flag " + a);
                        System.exit(2);
                    }
                }
            } catch (NumberFormatException | NullPointerException e) {
                System.err.println("java-commit: bad value for " + a);
                System.exit(2);
            }
        }
        if (seconds <= 0 || clients < 1 || netThreads < 1 || replyThreads < 1) {
            System.err.println("java-commit: values must be positive");
            System.exit(2);
        }
        return isServer;
    }

    static void runServer() throws Exception {
        ServerSocketChannel server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        int port = ((InetSocketAddress) server.getLocalAddress()).getPort();
        File logDir = new File(dir != null ? dir : System.getProperty("java.io.tmpdir"));
        File log = File.createTempFile("java-commit-", ".log", logDir);
        log.deleteOnExit();
        FileChannel fc = FileChannel.open(Path.of(log.getPath()), StandardOpenOption.WRITE);

        List<NetLoop> nets = new ArrayList<>();
        for (int i = 0; i < netThreads; i++) {
            NetLoop n = new NetLoop();
            nets.add(n);
            Thread t = new Thread(n, "net-" + i);
            t.setDaemon(true);
            t.start();
        }
        Thread acceptor = new Thread(() -> accept(server, nets), "acceptor");
        acceptor.setDaemon(true);
        acceptor.start();
        Thread sync = new Thread(() -> syncLoop(fc), "sync");
        sync.setDaemon(true);
        sync.start();
        for (int i = 0; i < replyThreads; i++) {
            Thread t = new Thread(PipelineCommit::replyLoop, "reply-" + i);
            t.setDaemon(true);
            t.start();
        }

        System.out.println("port " + port);
        System.out.flush();
        // Until the client process ends it (SIGTERM runs the JVM's shutdown).
        Runtime.getRuntime().addShutdownHook(new Thread(() ->
                System.err.printf("server: %d commits%n", committed.get())));
        Thread.currentThread().join();
    }

    static void accept(ServerSocketChannel server, List<NetLoop> nets) {
        int next = 0;
        try {
            while (!stop) {
                SocketChannel ch = server.accept();
                ch.socket().setTcpNoDelay(true);
                nets.get(next++ % nets.size()).add(ch);
            }
        } catch (IOException e) {
            if (!stop) e.printStackTrace();
        }
    }

    /** One network thread: a selector over its connections, reading whole requests. */
    static final class NetLoop implements Runnable {
        final Selector sel;
        final ConcurrentLinkedQueue<SocketChannel> incoming = new ConcurrentLinkedQueue<>();

        NetLoop() throws IOException {
            sel = Selector.open();
        }

        void add(SocketChannel ch) {
            incoming.add(ch);
            sel.wakeup();
        }

        public void run() {
            try {
                while (!stop) {
                    sel.select();
                    SocketChannel ch;
                    while ((ch = incoming.poll()) != null) {
                        ch.configureBlocking(false);
                        ch.register(sel, SelectionKey.OP_READ, ByteBuffer.allocate(REQ));
                    }
                    var it = sel.selectedKeys().iterator();
                    while (it.hasNext()) {
                        SelectionKey k = it.next();
                        it.remove();
                        readRequest(k);
                    }
                }
            } catch (IOException e) {
                if (!stop) e.printStackTrace();
            }
        }

        void readRequest(SelectionKey k) throws IOException {
            SocketChannel ch = (SocketChannel) k.channel();
            ByteBuffer buf = (ByteBuffer) k.attachment();
            int n = ch.read(buf);
            if (n < 0) {
                k.cancel();
                ch.close();
                return;
            }
            if (buf.hasRemaining()) return;
            byte[] data = parse(buf.array());
            buf.clear();
            requests.add(new Request(ch, data));
        }

        static byte[] parse(byte[] raw) {
            return raw.clone();
        }
    }

    static void syncLoop(FileChannel fc) {
        long slot = 0;
        ByteBuffer rec = ByteBuffer.allocateDirect(REC);
        List<Request> batch = new ArrayList<>();
        try {
            while (!stop) {
                batch.clear();
                batch.add(requests.take());
                if (fixed) requests.drainTo(batch);
                for (Request r : batch) slot = append(fc, rec, r, slot);
                appendAndSync(fc);
                committed.addAndGet(batch.size());
                replies.addAll(batch);
            }
        } catch (InterruptedException | IOException e) {
            if (!stop) e.printStackTrace();
        }
    }

    static long append(FileChannel fc, ByteBuffer rec, Request r, long slot) throws IOException {
        rec.clear();
        rec.put(r.data());
        rec.position(REC);
        rec.flip();
        fc.write(rec, (slot % LOG_SLOTS) * REC);
        return slot + 1;
    }

    static void appendAndSync(FileChannel fc) throws IOException {
        fc.force(false);
    }

    static void replyLoop() {
        try {
            while (!stop) {
                Request r = replies.take();
                ByteBuffer b = ByteBuffer.wrap(r.data());
                while (b.hasRemaining()) r.ch().write(b);
            }
        } catch (InterruptedException | IOException e) {
            if (!stop) e.printStackTrace();
        }
    }

    static void runClients(int port) throws Exception {
        AtomicLong done = new AtomicLong();
        long end = System.nanoTime() + (long) (seconds * 1e9);
        List<Thread> ts = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            Thread t = new Thread(() -> client(port, end, done), "client-" + i);
            ts.add(t);
            t.start();
        }
        long start = System.nanoTime();
        for (Thread t : ts) t.join();
        double secs = (System.nanoTime() - start) / 1e9;
        System.out.printf("throughput: %.1f ops/s%n", done.get() / secs);
        server.destroy();
        server.waitFor();
    }

    static void client(int port, long end, AtomicLong done) {
        byte[] req = new byte[REQ];
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            s.setTcpNoDelay(true);
            OutputStream out = s.getOutputStream();
            DataInputStream in = new DataInputStream(s.getInputStream());
            while (System.nanoTime() < end) {
                out.write(req);
                in.readFully(req);
                done.incrementAndGet();
            }
        } catch (IOException e) {
            System.err.println("client: " + e);
        }
    }
}
