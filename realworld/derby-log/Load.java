// The load for derby-log: CLIENTS connections to a Derby network server, each a thread
// that inserts one short row at a time with autocommit on (every insert is a commit),
// as an application logging events to a table does. Prints the inserts per second
// over the seconds after a warm-up.
//
//   java -cp derbyclient.jar:derbyshared.jar:. Load URL CLIENTS WARMUP_S MEASURE_S
//
// The table is created by the first connection if it is missing. "warmed up" is printed
// when the count starts.
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicLong;

public class Load {
    public static void main(String[] args) throws Exception {
        String url = args[0];
        int clients = Integer.parseInt(args[1]);
        double warmup = Double.parseDouble(args[2]);
        double measure = Double.parseDouble(args[3]);
        try (Connection c = DriverManager.getConnection(url);
             Statement s = c.createStatement()) {
            s.executeUpdate("CREATE TABLE rw_events (client INT, seq INT, payload VARCHAR(100))");
        } catch (SQLException e) {
            if (!"X0Y32".equals(e.getSQLState())) throw e;   // exists already
        }
        AtomicLong done = new AtomicLong();
        Thread[] ts = new Thread[clients];
        for (int i = 0; i < clients; i++) {
            final int id = i;
            ts[i] = new Thread(() -> {
                try (Connection c = DriverManager.getConnection(url)) {
                    c.setAutoCommit(true);
                    PreparedStatement p = c.prepareStatement(
                        "INSERT INTO rw_events (client, seq, payload) VALUES (?, ?, ?)");
                    for (int n = 0; ; n++) {
                        p.setInt(1, id);
                        p.setInt(2, n);
                        p.setString(3, "event " + n + " of client " + id);
                        p.executeUpdate();
                        done.incrementAndGet();
                    }
                } catch (SQLException e) {
                    System.err.println("client " + id + ": " + e);
                }
            }, "load-client-" + i);
            ts[i].setDaemon(true);
            ts[i].start();
        }
        Thread.sleep((long) (warmup * 1000));
        long a = done.get(), t0 = System.nanoTime();
        System.out.printf("warmed up: %d inserts in %.1f s%n", a, warmup);
        System.out.flush();
        Thread.sleep((long) (measure * 1000));
        long b = done.get(), t1 = System.nanoTime();
        System.out.printf("throughput: %.0f inserts/s (%d clients, %.1f s)%n",
                          (b - a) / ((t1 - t0) / 1e9), clients, (t1 - t0) / 1e9);
        System.exit(0);
    }
}
