package loadcurve.server;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The server under test: the JDK's built-in HttpServer on loopback, with the executor that runs
 * the handlers chosen on the command line. The executor is the only thing that differs between
 * the systems a run compares.
 *
 * <pre>
 * java -jar server.jar --executor pool:20|virtual [--port 0] [--port-file PATH]
 *   GET /sleep?ms=200   hold the request (the worker thread) for 200 ms, then answer "ok"
 *   GET /cpu?ms=5       burn 5 ms of this thread's CPU time, then answer with a checksum
 *   GET /health         answer "ok" at once (readiness)
 * </pre>
 *
 * Stops on SIGTERM (the JVM's shutdown hooks run, so a JFR recording started with
 * -XX:StartFlightRecording=...,dumponexit=true is written).
 */
public final class TargetServer {
    private static final String USAGE =
            "usage: TargetServer --executor pool:N|virtual [--port 0] [--port-file PATH] [--backlog 4096]";

    private TargetServer() {
    }

    public static void main(String[] args) throws Exception {
        String executorSpec = null;
        int port = 0;
        int backlog = 4096;
        Path portFile = null;
        for (int i = 0; i < args.length; i++) {
            String value = i + 1 < args.length ? args[i + 1] : null;
            switch (args[i]) {
                case "--executor" -> { executorSpec = value; i++; }
                case "--port" -> { port = Integer.parseInt(require(value, "--port")); i++; }
                case "--backlog" -> { backlog = Integer.parseInt(require(value, "--backlog")); i++; }
                case "--port-file" -> { portFile = Path.of(require(value, "--port-file")); i++; }
                case "-h", "--help" -> { System.out.println(USAGE); return; }
                default -> fail("unknown argument " + args[i]);
            }
        }
        if (executorSpec == null) {
            fail("--executor is required");
        }
        final ExecutorService executor;
        try {
            executor = executorFor(executorSpec);
        } catch (IllegalArgumentException e) {
            fail(e.getMessage());
            return;
        }
        HttpServer server = start(executor, port, backlog);

        int boundPort = server.getAddress().getPort();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            // Requests still queued are abandoned: their clients have been stopped already.
            server.stop(0);
            executor.shutdownNow();
            stopped.countDown();
        }, "target-server-shutdown"));

        System.out.printf("target-server: listening on 127.0.0.1:%d, executor %s, JDK %s%n",
                boundPort, executorSpec, Runtime.version());
        if (portFile != null) {
            // Written last and renamed into place, so a reader that sees the file can connect.
            Path tmp = portFile.resolveSibling(portFile.getFileName() + ".tmp");
            Files.writeString(tmp, boundPort + "\n");
            Files.move(tmp, portFile, StandardCopyOption.ATOMIC_MOVE);
        }
        stopped.await();
    }

    /** Starts the server on loopback with the endpoints above, handlers run by {@code executor}. */
    static HttpServer start(ExecutorService executor, int port, int backlog) throws IOException {
        // Loopback only: the benchmark never listens on an outside address.
        HttpServer server = HttpServer.create(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), port), backlog);
        server.createContext("/sleep", TargetServer::sleep);
        server.createContext("/cpu", TargetServer::burnCpu);
        server.createContext("/health", exchange -> respond(exchange, 200, "ok\n"));
        server.setExecutor(executor);
        server.start();
        return server;
    }

    static ExecutorService executorFor(String spec) {
        if (spec.equals("virtual")) {
            return Executors.newVirtualThreadPerTaskExecutor();
        }
        if (spec.startsWith("pool:")) {
            int threads = Integer.parseInt(spec.substring("pool:".length()));
            if (threads < 1) {
                throw new IllegalArgumentException("pool size must be at least 1: " + spec);
            }
            // Unbounded queue: requests beyond the pool wait, as in the common configuration
            // this benchmark measures (Executors.newFixedThreadPool).
            return Executors.newFixedThreadPool(threads);
        }
        throw new IllegalArgumentException("--executor must be pool:N or virtual, not " + spec);
    }

    private static void sleep(HttpExchange exchange) throws IOException {
        long ms = queryLong(exchange, "ms", 200);
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            exchange.close();
            return;
        }
        respond(exchange, 200, "ok\n");
    }

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private static void burnCpu(HttpExchange exchange) throws IOException {
        long ms = queryLong(exchange, "ms", 5);
        // Measured in this thread's CPU time, so the work per request stays the same when the
        // machine is busy (wall time would shrink the work under contention).
        long until = THREADS.getCurrentThreadCpuTime() + ms * 1_000_000L;
        long checksum = 0x9E3779B97F4A7C15L;
        int rounds = 0;
        while (THREADS.getCurrentThreadCpuTime() < until && rounds < 100_000_000) {
            for (int i = 0; i < 1000; i++) {
                checksum = Long.rotateLeft(checksum * 0xBF58476D1CE4E5B9L + i, 31);
            }
            rounds++;
        }
        respond(exchange, 200, Long.toHexString(checksum) + "\n");
    }

    private static long queryLong(HttpExchange exchange, String name, long defaultValue) {
        String query = exchange.getRequestURI().getRawQuery();
        if (query != null) {
            for (String pair : query.split("&")) {
                int eq = pair.indexOf('=');
                if (eq > 0 && pair.substring(0, eq).equals(name)) {
                    try {
                        return Math.max(0, Math.min(60_000, Long.parseLong(pair.substring(eq + 1))));
                    } catch (NumberFormatException e) {
                        return defaultValue;
                    }
                }
            }
        }
        return defaultValue;
    }

    private static void respond(HttpExchange exchange, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.US_ASCII);
        exchange.getResponseHeaders().set("Content-Type", "text/plain");
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }

    private static String require(String value, String flag) {
        if (value == null) {
            fail(flag + " needs a value");
        }
        return value;
    }

    private static void fail(String message) {
        System.err.println("error: " + message);
        System.err.println(USAGE);
        System.exit(2);
    }
}
