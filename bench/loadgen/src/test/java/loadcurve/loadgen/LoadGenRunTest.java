package loadcurve.loadgen;

import com.sun.net.httpserver.HttpServer;
import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.HistogramLogReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The generator end to end against loopback servers: what it sends, logs and counts. */
class LoadGenRunTest {
    static long field(String json, String scope, String name) {
        Matcher m = Pattern.compile("\"" + scope + "\": \\{[^}]*\"" + name + "\": (\\d+)").matcher(json);
        assertTrue(m.find(), scope + "." + name + " in " + json);
        return Long.parseLong(m.group(1));
    }

    /** The log's count under {@code tag} (null: untagged), read with HdrHistogram's reader. */
    private static long loggedCount(Path hlog, String tag) throws Exception {
        long count = 0;
        HistogramLogReader reader = new HistogramLogReader(hlog.toFile());
        EncodableHistogram h;
        while ((h = reader.nextIntervalHistogram()) != null) {
            if (java.util.Objects.equals(tag, h.getTag())) {
                count += ((org.HdrHistogram.Histogram) h).getTotalCount();
            }
        }
        return count;
    }

    private static String run(URI url, double rate, double timeoutS, Path dir) throws Exception {
        return run(dir, "--url", url.toString(), "--rate", Double.toString(rate), "--timeout-s",
                Double.toString(timeoutS));
    }

    /**
     * The generator run as from its command line, with a 1 s window, by default a fixed 1 s
     * warm-up and a 5 s timeout, and the given options; returns the counts file.
     */
    static String run(Path dir, String... options) throws Exception {
        List<String> args = new ArrayList<>(List.of(options));
        if (!args.contains("--warmup-s")) {
            args.addAll(List.of("--warmup-s", "1"));
        }
        if (!args.contains("--warmup")) {
            args.addAll(List.of("--warmup", "fixed"));
        }
        args.addAll(List.of("--duration-s", "1", "--hlog", dir.resolve("x.hlog").toString(),
                "--counts", dir.resolve("x.counts.json").toString(),
                "--server-pid", Long.toString(ProcessHandle.current().pid())));
        if (!args.contains("--timeout-s")) {
            args.addAll(List.of("--timeout-s", "5"));
        }
        LoadGen.Options o = LoadGen.parse(args.toArray(new String[0]));
        assertEquals(0, LoadGen.run(o, new PrintStream(new ByteArrayOutputStream(), true,
                StandardCharsets.UTF_8)));
        return Files.readString(dir.resolve("x.counts.json"));
    }

    @Test
    void aServerThatAnswersGetsEveryRequestLoggedFromItsIntendedTime(@TempDir Path dir) throws Exception {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        server.createContext("/", exchange -> {
            byte[] body = "ok\n".getBytes(StandardCharsets.US_ASCII);
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.start();
        try {
            String json = run(URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/x"),
                    200, 5, dir);
            assertEquals(200, field(json, "window", "sent"));
            assertEquals(0, field(json, "window", "timed_out"));
            assertEquals(0, field(json, "window", "errors"));
            assertEquals(200, field(json, "window", "completed"), "every window request, drained");
            assertEquals(200, loggedCount(dir.resolve("x.hlog"), null), "log vs counts file");
            assertEquals(0, loggedCount(dir.resolve("x.hlog"), "timeout"));
            assertTrue(loggedCount(dir.resolve("x.hlog"), "outside") >= 190, "the warm-up's completions");
            assertTrue(json.contains("\"server\": {\"pid\": "), json);
            assertTrue(Files.exists(dir.resolve("x.hlog")) && !Files.exists(dir.resolve("x.hlog.tmp")));
        } finally {
            server.stop(0);
        }
    }

    @Test
    void aServerThatNeverAnswersStillGetsTheOfferedRateAndTimeouts(@TempDir Path dir) throws Exception {
        // Accepts connections and reads nothing back: a stalled server. An open-loop generator
        // keeps sending on schedule, one connection per request, and counts timeouts.
        List<Socket> accepted = new ArrayList<>();
        try (ServerSocket stalled = new ServerSocket(0, 1000, InetAddress.getLoopbackAddress())) {
            Thread acceptor = new Thread(() -> {
                while (!stalled.isClosed()) {
                    try {
                        accepted.add(stalled.accept());
                    } catch (Exception e) {
                        return;
                    }
                }
            });
            acceptor.setDaemon(true);
            acceptor.start();
            String json = run(URI.create("http://127.0.0.1:" + stalled.getLocalPort() + "/x"),
                    100, 0.3, dir);
            assertEquals(100, field(json, "window", "sent"));
            assertEquals(0, field(json, "window", "completed"));
            assertEquals(0, loggedCount(dir.resolve("x.hlog"), null));
            // The drain waits for every window request: all of them time out, and are logged.
            assertEquals(100, field(json, "window", "timed_out"));
            assertEquals(100, loggedCount(dir.resolve("x.hlog"), "timeout"));
            // The drain's requests are abandoned when the last window request times out.
            assertTrue(field(json, "total", "in_flight_at_end") >= 25, json);
            assertEquals(field(json, "total", "sent"),
                    field(json, "total", "completed") + field(json, "total", "errors")
                            + field(json, "total", "timed_out") + field(json, "total", "in_flight_at_end"));
        } finally {
            for (Socket s : accepted) {
                s.close();
            }
        }
    }
    @Test
    void anAutoWarmupStartsTheWindowOnAWholeSecondAndEveryRecordAgrees(@TempDir Path dir) throws Exception {
        HttpServer server = okServer(() -> { });
        try {
            String json = run(dir, "--url", "http://127.0.0.1:" + server.getAddress().getPort() + "/x",
                    "--rate", "50", "--warmup", "auto", "--warmup-s", "2", "--warmup-max-s", "12");
            Matcher m = Pattern.compile("\"warmup_s\": (\\d+),\\s+\"warmup\": \\{\"mode\": \"auto\", \"min_s\": 2, "
                    + "\"max_s\": 12, \"used_s\": (\\d+), \"reached\": (true|false)\\}").matcher(json);
            assertTrue(m.find(), json);
            int used = Integer.parseInt(m.group(1));
            assertEquals(used, Integer.parseInt(m.group(2)), "top-level warmup_s is the seconds used");
            // Never before the rule has K seconds to judge; at the maximum only when not reached.
            assertTrue(used >= Steadiness.SECONDS && used <= 12, json);
            assertTrue(m.group(3).equals("true") || used == 12, json);
            assertEquals(used, field(json, "window", "start_s"));
            assertEquals(used + 1, field(json, "window", "end_s"));
            assertEquals(field(json, "window", "start_epoch_ms") - 1000L * used,
                    Long.parseLong(top(json, "start_epoch_ms")));
            assertEquals(50, field(json, "window", "sent"));
            assertEquals(50, loggedCount(dir.resolve("x.hlog"), null), "the window's completions, untagged");
            Matcher phases = Pattern.compile("\"t_s\": (\\d+), \"length_s\": [^,]+, \"phase\": \"(\\w+)\"")
                    .matcher(json);
            int n = 0;
            while (phases.find()) {
                int t = Integer.parseInt(phases.group(1));
                assertEquals(t < used ? "warmup" : t < used + 1 ? "window" : "drain", phases.group(2), "interval " + t);
                n++;
            }
            assertTrue(n >= used + 1, json);
            assertTrue(Files.readString(dir.resolve("x.hlog")).contains("window = [" + used + ", " + (used + 1) + ") s"));
        } finally {
            server.stop(0);
        }
    }

    @Test
    void startAtWaitsForItsInstantAndTakesItAsTheScheduleZero(@TempDir Path dir) throws Exception {
        // The server's own clock for the first request it sees: the source the test trusts.
        java.util.concurrent.atomic.AtomicLong firstArrivalMs = new java.util.concurrent.atomic.AtomicLong();
        HttpServer server = okServer(() -> firstArrivalMs.compareAndSet(0, System.currentTimeMillis()));
        try {
            long startAt = System.currentTimeMillis() + 1500;
            String json = run(dir, "--url", "http://127.0.0.1:" + server.getAddress().getPort() + "/x",
                    "--rate", "20", "--start-at", Long.toString(startAt), "--generator", "2/3");
            assertTrue(firstArrivalMs.get() >= startAt, "first request at " + firstArrivalMs.get()
                    + ", before --start-at " + startAt);
            // Not long after either: the first request is due at the instant itself.
            assertTrue(firstArrivalMs.get() < startAt + 500, firstArrivalMs.get() + " vs " + startAt);
            assertEquals(startAt, Long.parseLong(top(json, "start_epoch_ms")));
            assertEquals(startAt + 1000, field(json, "window", "start_epoch_ms"));
            assertEquals(2, Long.parseLong(top(json, "generator_index")));
            assertEquals(3, Long.parseLong(top(json, "generators")));
            assertEquals(20, field(json, "window", "sent"));
            assertTrue(Files.readString(dir.resolve("x.hlog")).contains(String.format(java.util.Locale.ROOT,
                    "#[StartTime: %.3f ", startAt / 1000.0)),
                    "the log's StartTime is the instant");
        } finally {
            server.stop(0);
        }
    }

    /** A loopback server answering 200 "ok" to everything, after {@code onRequest}. */
    private static HttpServer okServer(Runnable onRequest) throws java.io.IOException {
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        server.createContext("/", exchange -> {
            onRequest.run();
            exchange.sendResponseHeaders(200, 3);
            exchange.getResponseBody().write("ok\n".getBytes(StandardCharsets.US_ASCII));
            exchange.close();
        });
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.start();
        return server;
    }

    private static String top(String json, String name) {
        Matcher m = Pattern.compile("\"" + name + "\": (\\d+)").matcher(json);
        assertTrue(m.find(), name + " in " + json);
        return m.group(1);
    }
}
