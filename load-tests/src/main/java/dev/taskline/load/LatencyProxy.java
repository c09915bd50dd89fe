package dev.taskline.load;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * A TCP proxy on loopback that holds every chunk of bytes for a delay in each direction (and, if
 * asked, a jitter around it), so that a benchmark can run with PostgreSQL "a millisecond away" as a
 * managed one is: a node's round trip to PostgreSQL through it takes two delays more.
 *
 * <p>Each direction of each connection has a reader, which stamps a chunk with the time it is due
 * and queues it, and a writer, which parks until that time (parkNanos: tens of microseconds late on
 * Linux, where a timer of milliseconds would round 0.5 ms away) and writes it. A chunk is never due
 * before the one before it, so the bytes keep their order whatever the jitter; a chunk read while
 * the one before still waits waits no longer than its own delay, so the delay is added once per
 * trip, not once per chunk, as on a real link. Loopback only, a bounded number of connections, and it
 * stops by itself after {@code --seconds}.
 *
 * <pre>
 * java -cp load-tests/target/classes dev.taskline.load.LatencyProxy --listen 55440 --target 55432 \
 *     --delay-ms 0.5 [--jitter-ms 0.1] [--seconds 3600] [--max-connections 256]
 * </pre>
 */
public final class LatencyProxy {

    private static final int CHUNK = 64 * 1024;
    private static final long SPIN_NANOS = 150_000;

    private final int targetPort;
    private final long delayNanos;
    private final long jitterNanos;
    private final int maxConnections;
    private final AtomicInteger open = new AtomicInteger();

    LatencyProxy(int targetPort, double delayMs, double jitterMs, int maxConnections) {
        this.targetPort = targetPort;
        this.delayNanos = (long) (delayMs * 1_000_000);
        this.jitterNanos = (long) (jitterMs * 1_000_000);
        this.maxConnections = maxConnections;
    }

    public static void main(String[] args) throws IOException {
        int listen = 0;
        int target = 0;
        double delayMs = 1;
        double jitterMs = 0;
        long seconds = 3600;
        int maxConnections = 256;
        for (int i = 0; i + 1 < args.length; i += 2) {
            String value = args[i + 1];
            switch (args[i]) {
                case "--listen" -> listen = Integer.parseInt(value);
                case "--target" -> target = Integer.parseInt(value);
                case "--delay-ms" -> delayMs = Double.parseDouble(value);
                case "--jitter-ms" -> jitterMs = Double.parseDouble(value);
                case "--seconds" -> seconds = Long.parseLong(value);
                case "--max-connections" -> maxConnections = Integer.parseInt(value);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (listen <= 0 || target <= 0) {
            throw new IllegalArgumentException("--listen PORT and --target PORT (both on 127.0.0.1) are needed");
        }
        if (delayMs < 0 || delayMs > 1000 || jitterMs < 0 || jitterMs > delayMs) {
            throw new IllegalArgumentException("--delay-ms from 0 to 1000, --jitter-ms from 0 to the delay");
        }
        if (seconds < 1 || seconds > 24 * 3600 || maxConnections < 1 || maxConnections > 10_000) {
            throw new IllegalArgumentException("--seconds from 1 to 86400, --max-connections from 1 to 10000");
        }
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        long limit = seconds;
        daemon("deadline", () -> {
            while (System.nanoTime() < until) {
                LockSupport.parkNanos(until - System.nanoTime());
            }
            System.err.println("latency proxy: " + limit + " s are up; stopping");
            System.exit(0);
        });
        new LatencyProxy(target, delayMs, jitterMs, maxConnections).serve(listen);
    }

    private void serve(int port) throws IOException {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        try (ServerSocket server = new ServerSocket()) {
            server.setReuseAddress(true);
            server.bind(new InetSocketAddress(loopback, port));
            System.err.printf(
                    "latency proxy: 127.0.0.1:%d -> 127.0.0.1:%d, %.3f ms each way (jitter %.3f)%n",
                    port, targetPort, delayNanos / 1e6, jitterNanos / 1e6);
            while (true) {
                Socket client = server.accept();
                if (open.incrementAndGet() > maxConnections) {
                    open.decrementAndGet();
                    client.close();
                    continue;
                }
                Socket upstream;
                try {
                    upstream = new Socket(loopback, targetPort);
                } catch (IOException e) {
                    open.decrementAndGet();
                    client.close();
                    continue;
                }
                client.setTcpNoDelay(true);
                upstream.setTcpNoDelay(true);
                AtomicInteger directionsLeft = new AtomicInteger(2);
                Runnable closed = () -> {
                    if (directionsLeft.decrementAndGet() == 0) {
                        open.decrementAndGet();
                    }
                    closeQuietly(client);
                    closeQuietly(upstream);
                };
                pipe(client, upstream, closed);
                pipe(upstream, client, closed);
            }
        }
    }

    /** One direction: a reader that stamps and queues, a writer that waits for each stamp. */
    private void pipe(Socket from, Socket to, Runnable closed) throws IOException {
        BlockingQueue<Chunk> line = new LinkedBlockingQueue<>();
        InputStream in = from.getInputStream();
        OutputStream out = to.getOutputStream();
        daemon("reader", () -> {
            long lastDue = 0;
            byte[] buffer = new byte[CHUNK];
            try {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    lastDue = due(System.nanoTime(), lastDue);
                    line.add(new Chunk(lastDue, Arrays.copyOf(buffer, n)));
                }
            } catch (IOException e) {
                // the connection ended
            }
            line.add(new Chunk(lastDue, null));
        });
        daemon("writer", () -> {
            try {
                while (true) {
                    Chunk chunk = line.take();
                    long wait;
                    // Parked until just before it is due, then a short spin: a park alone wakes 0.1 to
                    // 0.25 ms late on a busy 2-core machine, which would add half as much again at 0.5 ms.
                    while ((wait = chunk.due() - System.nanoTime()) > SPIN_NANOS) {
                        LockSupport.parkNanos(wait - SPIN_NANOS);
                    }
                    while (chunk.due() - System.nanoTime() > 0) {
                        Thread.onSpinWait();
                    }
                    if (chunk.bytes() == null) {
                        break;
                    }
                    out.write(chunk.bytes());
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // the other side is gone
            }
            closed.run();
        });
    }

    /** When a chunk read at {@code now} is due: its delay (and jitter) later, never before the one before. */
    long due(long now, long previousDue) {
        long jitter = jitterNanos == 0 ? 0 : ThreadLocalRandom.current().nextLong(-jitterNanos, jitterNanos + 1);
        return Math.max(now + delayNanos + jitter, previousDue);
    }

    private static void daemon(String name, Runnable body) {
        Thread thread = new Thread(body, "latency-proxy-" + name);
        thread.setDaemon(true);
        thread.start();
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException e) {
            // closing anyway
        }
    }

    private record Chunk(long due, byte[] bytes) {}
}
