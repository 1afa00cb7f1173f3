package loadcurve.loadgen;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;
import org.HdrHistogram.Recorder;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;
import java.util.concurrent.locks.LockSupport;

/**
 * An open-loop HTTP load generator: sends GET requests at a constant offered rate whatever the
 * server does (a request never waits for an earlier reply), measures each latency from the
 * request's intended send time (the wrk2 method), and writes one HdrHistogram interval histogram
 * per second of the measured window with HdrHistogram's own HistogramLogWriter. The warm-up runs
 * at the same rate and is left out of the log. Counts (sent, completed, errors, timeouts, in
 * flight at the end) and the generator's own send accuracy go to a JSON file beside the log.
 *
 * <p>HTTP/1.1 without pipelining: each request in flight holds its own connection, so a
 * saturated server means as many connections as requests waiting. {@code --max-in-flight} caps
 * that below the process's file limit; a request not sent because of the cap is counted as
 * not_sent, never queued behind earlier ones.
 */
public final class LoadGen {
    static final String USAGE = String.join("\n",
            "usage: LoadGen --url URL --rate REQ_PER_S --duration-s S --hlog PATH --counts PATH",
            "               [--warmup-s 5] [--timeout-s 15] [--max-in-flight 15000]",
            "  --url          loopback URL to GET, e.g. http://127.0.0.1:8080/sleep?ms=200",
            "  --rate         offered rate in requests per second (constant, open loop)",
            "  --warmup-s     seconds at the same rate before the measured window (not logged)",
            "  --duration-s   length of the measured window in seconds (one log interval each)",
            "  --timeout-s    a request with no reply this long after its intended send time",
            "                 is a timeout (its connection is closed)",
            "  --max-in-flight  requests in flight at most (one connection each); above it a",
            "                 request is not sent and counted as not_sent",
            "  --hlog         HdrHistogram interval log to write (latency in microseconds)",
            "  --counts       JSON file with the counts to write");

    /** Latencies are recorded in microseconds: a 15 s timeout is 1.5e7, well inside the range. */
    static final long NANOS_PER_UNIT = 1_000;
    static final String VALUE_UNIT = "us";

    private LoadGen() {
    }

    record Options(URI url, double rate, double warmupS, int durationS, double timeoutS,
                   int maxInFlight, Path hlog, Path counts) {
    }

    public static void main(String[] args) throws Exception {
        Options options;
        try {
            options = parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage());
            System.err.println(USAGE);
            System.exit(2);
            return;
        }
        if (options == null) {
            System.out.println(USAGE);
            return;
        }
        System.exit(run(options, System.out));
    }

    static Options parse(String[] args) {
        URI url = null;
        double rate = 0;
        double warmupS = 5;
        int durationS = 0;
        double timeoutS = 15;
        int maxInFlight = 15_000;
        Path hlog = null;
        Path counts = null;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("-h") || args[i].equals("--help")) {
                return null;
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(args[i] + " needs a value");
            }
            String value = args[++i];
            switch (args[i - 1]) {
                case "--url" -> url = URI.create(value);
                case "--rate" -> rate = Double.parseDouble(value);
                case "--warmup-s" -> warmupS = Double.parseDouble(value);
                case "--duration-s" -> durationS = Integer.parseInt(value);
                case "--timeout-s" -> timeoutS = Double.parseDouble(value);
                case "--max-in-flight" -> maxInFlight = Integer.parseInt(value);
                case "--hlog" -> hlog = Path.of(value);
                case "--counts" -> counts = Path.of(value);
                default -> throw new IllegalArgumentException("unknown argument " + args[i - 1]);
            }
        }
        if (url == null || hlog == null || counts == null) {
            throw new IllegalArgumentException("--url, --hlog and --counts are required");
        }
        String host = url.getHost();
        if (!("127.0.0.1".equals(host) || "localhost".equals(host) || "[::1]".equals(host))) {
            throw new IllegalArgumentException("only loopback targets are allowed, not " + host);
        }
        if (!(rate > 0) || rate > 100_000) {
            throw new IllegalArgumentException("--rate must be in (0, 100000], not " + rate);
        }
        if (durationS < 1 || durationS > 3600 || warmupS < 0 || warmupS > 600) {
            throw new IllegalArgumentException("--duration-s must be 1..3600 and --warmup-s 0..600");
        }
        if (!(timeoutS > 0) || timeoutS > 600 || maxInFlight < 1) {
            throw new IllegalArgumentException("--timeout-s must be in (0, 600], --max-in-flight >= 1");
        }
        return new Options(url, rate, warmupS, durationS, timeoutS, maxInFlight, hlog, counts);
    }

    /** Connections the client opened (one per request that found no idle keep-alive one). */
    private static long connectionsOpened;
    /** Requests sent a second time because a reused keep-alive connection had just closed. */
    private static long retries;

    static int run(Options o, PrintStream out) throws IOException, InterruptedException {
        long timeoutNanos = Math.round(o.timeoutS() * 1e9);
        // Start a little in the future so the first intended times are not already late.
        long startNanos = System.nanoTime() + 50_000_000L;
        long startEpochMs = System.currentTimeMillis() + 50;
        Schedule schedule = new Schedule(startNanos, o.rate());
        long windowStart = startNanos + Math.round(o.warmupS() * 1e9);
        long windowEnd = windowStart + o.durationS() * 1_000_000_000L;
        long windowStartEpochMs = startEpochMs + Math.round(o.warmupS() * 1000);
        long requests = schedule.countBefore(windowEnd);

        Recorder recorder = new Recorder(3);
        Accounting accounting = new Accounting(windowStart, windowEnd, NANOS_PER_UNIT, recorder);
        Histogram sendLagUs = new Histogram(3);

        Path hlogTmp = o.hlog().resolveSibling(o.hlog().getFileName() + ".tmp");
        Files.createDirectories(hlogTmp.toAbsolutePath().getParent());
        IntervalLog intervalLog = new IntervalLog(hlogTmp, windowStart, windowStartEpochMs, o, accounting);
        Thread ticker = new Thread(intervalLog, "loadgen-interval-log");
        ticker.setDaemon(true);
        ticker.start();

        out.printf(Locale.ROOT, "loadgen: %s at %.1f req/s, warm-up %.1f s, window %d s, timeout %.1f s%n",
                o.url(), o.rate(), o.warmupS(), o.durationS(), o.timeoutS());
        int port = o.url().getPort() > 0 ? o.url().getPort() : 80;
        String pathAndQuery = o.url().getRawPath().isEmpty() ? "/" : o.url().getRawPath();
        if (o.url().getRawQuery() != null) {
            pathAndQuery += "?" + o.url().getRawQuery();
        }
        InetSocketAddress address = new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
        try (OpenLoopClient client = new OpenLoopClient(address, pathAndQuery, timeoutNanos,
                o.maxInFlight(), accounting)) {
            client.run(schedule, requests, windowEnd, sendLagUs);
            connectionsOpened = client.connectionsOpened();
            retries = client.retries();
            intervalLog.noteError(client.firstError());
        }
        Accounting.Snapshot snapshot = accounting.close();
        intervalLog.finish();
        ticker.join(10_000);
        if (intervalLog.failure() != null) {
            throw intervalLog.failure();
        }
        Files.move(hlogTmp, o.hlog(), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);

        String json = countsJson(o, snapshot, sendLagUs, intervalLog);
        Path countsTmp = o.counts().resolveSibling(o.counts().getFileName() + ".tmp");
        Files.writeString(countsTmp, json);
        Files.move(countsTmp, o.counts(), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        out.print(summary(o, snapshot, sendLagUs));
        // Requests still in flight are abandoned: the process exits and their sockets close.
        return 0;
    }

    static String summary(Options o, Accounting.Snapshot s, Histogram sendLagUs) {
        Accounting.Counts w = s.window();
        return String.format(Locale.ROOT,
                "loadgen: window %d s: offered %.1f/s, sent %.1f/s (by actual send time), "
                        + "completed %.1f/s; errors %d, timeouts %d; send lag p99 %.2f ms, max %.2f ms; "
                        + "in flight at end %d, max in flight %d, connections opened %d, not sent %d%n",
                o.durationS(), o.rate(), s.sentInWindowByActualTime() / (double) o.durationS(),
                w.completed() / (double) o.durationS(), w.errors(), w.timeouts(),
                sendLagUs.getValueAtPercentile(99) / 1000.0, sendLagUs.getMaxValue() / 1000.0,
                s.inFlightAtEnd(), s.maxInFlight(), connectionsOpened, s.notSent());
    }

    static String countsJson(Options o, Accounting.Snapshot s, Histogram sendLagUs, IntervalLog log) {
        Accounting.Counts t = s.total();
        Accounting.Counts w = s.window();
        String firstError = log.firstError() == null ? "null" : quote(log.firstError());
        return String.format(Locale.ROOT, String.join("\n",
                "{",
                "  \"schema_version\": 1,",
                "  \"url\": %s,",
                "  \"offered_rate\": %s,",
                "  \"warmup_s\": %s,",
                "  \"duration_s\": %d,",
                "  \"timeout_s\": %s,",
                "  \"max_in_flight_cap\": %d,",
                "  \"value_unit\": \"%s\",",
                "  \"hlog\": %s,",
                "  \"hlog_intervals\": %d,",
                "  \"window\": {\"sent\": %d, \"completed\": %d, \"errors\": %d, \"timeouts\": %d},",
                "  \"total\": {\"sent\": %d, \"completed\": %d, \"errors\": %d, \"timeouts\": %d, \"in_flight_at_end\": %d},",
                "  \"not_sent\": %d,",
                "  \"max_in_flight\": %d,",
                "  \"connections_opened\": %d,",
                "  \"retries_on_closed_keepalive\": %d,",
                "  \"sent_in_window_by_actual_time\": %d,",
                "  \"achieved_send_rate\": %.3f,",
                "  \"achieved_completion_rate\": %.3f,",
                "  \"send_lag_us_window\": {\"p50\": %d, \"p99\": %d, \"p999\": %d, \"max\": %d, \"count\": %d},",
                "  \"first_error\": %s",
                "}", ""),
                quote(o.url().toString()), num(o.rate()), num(o.warmupS()), o.durationS(), num(o.timeoutS()),
                o.maxInFlight(), VALUE_UNIT, quote(o.hlog().getFileName().toString()), log.intervalsWritten(),
                w.sent(), w.completed(), w.errors(), w.timeouts(),
                t.sent(), t.completed(), t.errors(), t.timeouts(), s.inFlightAtEnd(),
                s.notSent(), s.maxInFlight(), connectionsOpened, retries, s.sentInWindowByActualTime(),
                s.sentInWindowByActualTime() / (double) o.durationS(), w.completed() / (double) o.durationS(),
                sendLagUs.getValueAtPercentile(50), sendLagUs.getValueAtPercentile(99),
                sendLagUs.getValueAtPercentile(99.9), sendLagUs.getMaxValue(), sendLagUs.getTotalCount(),
                firstError);
    }

    private static String num(double value) {
        return value == Math.rint(value) ? Long.toString((long) value) : Double.toString(value);
    }

    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }

    /**
     * Writes one interval histogram per second of the measured window. Interval i covers
     * [i, i+1) seconds after the window start; the last one is taken after the accounting has
     * closed, so the log holds exactly the completions counted in the window.
     */
    static final class IntervalLog implements Runnable {
        private final Path path;
        private final long windowStartEpochMs;
        private final Options options;
        private final Accounting accounting;
        private final long windowStartNanos;
        private final Object finished = new Object();
        private boolean finishedFlag;
        private volatile IOException failure;
        private volatile String firstError;
        private volatile int intervalsWritten;

        IntervalLog(Path path, long windowStartNanos, long windowStartEpochMs, Options options,
                    Accounting accounting) {
            this.path = path;
            this.windowStartNanos = windowStartNanos;
            this.windowStartEpochMs = windowStartEpochMs;
            this.options = options;
            this.accounting = accounting;
        }

        void noteError(String error) {
            if (firstError == null) {
                firstError = error;
            }
        }

        String firstError() {
            return firstError;
        }

        int intervalsWritten() {
            return intervalsWritten;
        }

        IOException failure() {
            return failure;
        }

        void finish() {
            synchronized (finished) {
                finishedFlag = true;
                finished.notifyAll();
            }
        }

        @Override
        public void run() {
            try (PrintStream stream = new PrintStream(Files.newOutputStream(path), false, "US-ASCII")) {
                HistogramLogWriter writer = new HistogramLogWriter(stream);
                writer.outputComment("loadcurve bench/loadgen: open loop at " + options.rate()
                        + " req/s, latency from intended send time, values in microseconds");
                writer.outputLogFormatVersion();
                writer.setBaseTime(windowStartEpochMs);
                writer.outputStartTime(windowStartEpochMs);
                writer.outputBaseTime(windowStartEpochMs);
                writer.outputLegend();
                Histogram interval = null;
                for (int i = 1; i <= options.durationS(); i++) {
                    if (i < options.durationS()) {
                        long due = windowStartNanos + i * 1_000_000_000L;
                        while (System.nanoTime() - due < 0) {
                            LockSupport.parkNanos(due - System.nanoTime());
                        }
                    } else {
                        awaitFinish();
                    }
                    interval = accounting.takeInterval(interval);
                    // Max column in milliseconds (values are in microseconds).
                    writer.outputIntervalHistogram(i - 1, i, interval, 1000.0);
                    intervalsWritten = i;
                }
                stream.flush();
                if (stream.checkError()) {
                    throw new IOException("could not write " + path);
                }
            } catch (IOException e) {
                failure = e;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                failure = new IOException("interval log interrupted", e);
            }
        }

        private void awaitFinish() throws InterruptedException {
            long deadline = System.nanoTime() + 60_000_000_000L;
            synchronized (finished) {
                while (!finishedFlag && System.nanoTime() - deadline < 0) {
                    finished.wait(1000);
                }
            }
        }
    }
}
