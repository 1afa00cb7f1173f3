package loadcurve.server;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The server under test: one of the {@link Targets} on loopback, serving the {@link Scenarios}.
 *
 * <pre>
 * java -jar server.jar --target ID [--threads 100] [--port 0] [--port-file PATH] [--backlog 4096]
 *   ID: jdk-pool, jdk-virtual, jetty-pool, jetty-virtual, helidon-virtual, vertx-eventloop,
 *       netty-eventloop; --threads is the pool size of jdk-pool and jetty-pool
 * java -jar server.jar --executor pool:N|virtual ...   (the JDK HttpServer, as before targets)
 * </pre>
 *
 * Prints the target and the JVM's flags, so a run's log shows every target ran with the same
 * heap and GC. Stops on SIGTERM (the JVM's shutdown hooks run, so a JFR recording started with
 * -XX:StartFlightRecording=...,dumponexit=true is written).
 */
public final class TargetServer {
    private static final String USAGE = "usage: TargetServer --target ID [--threads N] | --executor pool:N|virtual;"
            + " [--port 0] [--port-file PATH] [--backlog 4096]; ID one of " + String.join(", ", Targets.IDS);

    private TargetServer() {
    }

    public static void main(String[] args) throws Exception {
        String executorSpec = null;
        String target = null;
        int threads = 100;
        int port = 0;
        int backlog = 4096;
        Path portFile = null;
        for (int i = 0; i < args.length; i++) {
            String value = i + 1 < args.length ? args[i + 1] : null;
            switch (args[i]) {
                case "--target" -> { target = require(value, "--target"); i++; }
                case "--threads" -> { threads = Integer.parseInt(require(value, "--threads")); i++; }
                case "--executor" -> { executorSpec = require(value, "--executor"); i++; }
                case "--port" -> { port = Integer.parseInt(require(value, "--port")); i++; }
                case "--backlog" -> { backlog = Integer.parseInt(require(value, "--backlog")); i++; }
                case "--port-file" -> { portFile = Path.of(require(value, "--port-file")); i++; }
                case "-h", "--help" -> { System.out.println(USAGE); return; }
                default -> fail("unknown argument " + args[i]);
            }
        }
        if ((target == null) == (executorSpec == null)) {
            fail("give one of --target and --executor");
        }
        if (threads < 1) {
            fail("--threads must be at least 1");
        }
        final Targets.Running server;
        final String name;
        try {
            if (target != null) {
                server = Targets.start(target, threads, port, backlog);
                name = target + (target.endsWith("-pool") ? " (" + threads + " threads)" : "");
            } else {
                server = Targets.jdk(executorFor(executorSpec), port, backlog);
                name = "jdk, executor " + executorSpec;
            }
        } catch (IllegalArgumentException e) {
            fail(e.getMessage());
            return;
        }

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                server.stop();
            } catch (Exception e) {
                System.err.println("target-server: stop: " + e);
            }
            stopped.countDown();
        }, "target-server-shutdown"));

        System.out.printf("target-server: listening on 127.0.0.1:%d, target %s, JDK %s, JVM flags %s%n",
                server.port(), name, Runtime.version(),
                String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments()));
        if (portFile != null) {
            // Written last and renamed into place, so a reader that sees the file can connect.
            Path tmp = portFile.resolveSibling(portFile.getFileName() + ".tmp");
            Files.writeString(tmp, server.port() + "\n");
            Files.move(tmp, portFile, StandardCopyOption.ATOMIC_MOVE);
        }
        stopped.await();
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
