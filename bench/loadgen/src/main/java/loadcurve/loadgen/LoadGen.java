package loadcurve.loadgen;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * An open-loop HTTP load generator: sends requests (one URL, or several in a weighted rotation,
 * with the method, headers and body of {@link RequestShape}) at a constant offered rate whatever
 * the server does (a request never waits for an earlier reply) and measures each latency from the
 * request's intended send time (the wrk2 method). A cell is the population of requests whose
 * intended send time falls in the measured window: after the window the generator keeps sending
 * at the same rate (the drain) until every window request has been answered, has failed or has
 * timed out, so they all see unchanged conditions. The log (HdrHistogram's HistogramLogWriter,
 * 1 s intervals from t0 to the end of the drain) holds the window's completions untagged, its
 * timeouts under tag {@code timeout} and every other completion under tag {@code outside}; the
 * counts, the requests in flight and CPU use per interval go to a JSON file beside it
 * (bench/README.md describes both).
 *
 * <p>HTTP/1.1 without pipelining: each request in flight holds its own connection, so a
 * saturated server means as many connections as requests waiting. {@code --max-in-flight} caps
 * that below the process's file limit; a request not sent because of the cap is counted as
 * not_sent, never queued behind earlier ones.
 */
public final class LoadGen {
    static final String USAGE = String.join("\n",
            "usage: LoadGen (--url URL | --urls-file FILE) --rate REQ_PER_S --duration-s S --hlog PATH --counts PATH",
            "               [--method GET] [--header 'Name: value']... [--body-file PATH] [--success 200-399]",
            "               [--insecure] [--warmup auto] [--warmup-s 5] [--warmup-max-s 60] [--timeout-s 15]",
            "               [--max-in-flight 15000] [--server-pid PID] [--start-at EPOCH_MS] [--generator I/N]",
            "               [--host-check busy_share_before=X,loadavg_1m_before=X,waited_s=X,verdict=quiet]",
            "  --url          the URL to send to, http:// or https://, e.g. http://127.0.0.1:8080/sleep?ms=200",
            "  --urls-file    instead of --url: one URL or WEIGHT URL a line (# comments); requests take",
            "                 them in turn by weight (smooth weighted round-robin: a fixed order)",
            "  --method       the request method (any token: GET, POST, PUT, ...)",
            "  --header       an extra header, repeatable; only the names go to the counts file",
            "  --body-file    sent as the body of every request, with Content-Length",
            "  --success      statuses that count as success, e.g. 200-399 or 200,204; any other is an error",
            "  --insecure     https without certificate or host-name checks (a self-signed server)",
            "  --rate         offered rate in requests per second (constant, open loop)",
            "  --warmup       auto: after --warmup-s, keep sending at the rate until the last 5 s are",
            "                 steady (in flight flat and near Little's law, p99 without a trend), or",
            "                 --warmup-max-s runs out; fixed: exactly --warmup-s (bench/README.md)",
            "  --warmup-s     whole seconds at the same rate before the measured window (auto: at least)",
            "  --warmup-max-s auto: whole seconds of warm-up at most",
            "  --duration-s   length of the measured window in whole seconds",
            "  --timeout-s    a request with no reply this long after its intended send time",
            "                 is a timeout (its connection is closed)",
            "  --max-in-flight  requests in flight at most (one connection each); above it a",
            "                 request is not sent and counted as not_sent",
            "  --server-pid   the server's pid: its CPU use in the window goes to the counts file",
            "  --start-at     the schedule's zero, in milliseconds since the epoch (wall clock): wait until",
            "                 then, so that copies started on other machines send from the same instant",
            "                 (in the future, at most 10 minutes ahead; clocks synchronised, e.g. by NTP)",
            "  --generator    this process is generator I of N of one cell (1-based), each at its share",
            "                 of the cell's rate: written to the counts file for the merge; with N > 1",
            "                 the warm-up must be fixed (the same --warmup-s for all: one window)",
            "  --host-check   the host check run before the cell (bench/hostcheck.py), recorded as is",
            "  --hlog         HdrHistogram interval log to write (latency in microseconds)",
            "  --counts       JSON file with the counts to write",
            "       LoadGen --self-test [--self-test-s 2]",
            "  --self-test    measure only this host: a null server on 127.0.0.1 in this process, the rate",
            "                 doubled from 1000 req/s until the generator falls behind (sent < 99 % of the",
            "                 offered rate, or send lag p99 > 20 ms), then bisected twice; prints one JSON",
            "                 line {\"max_rate\", \"max_in_flight\", \"cores\", ...}",
            "  --self-test-s  each probe's window in seconds (after 1 s of warm-up)");
    /**
     * The keys --host-check takes; verdict, action and settle are words, the others numbers. The
     * settle_ keys: how long run.sh waited for a server given by URL to answer quickly again
     * (bench/settle.py).
     */
    static final Set<String> HOST_CHECK_KEYS = Set.of("busy_share_before", "loadavg_1m_before", "waited_s",
            "threshold", "action", "verdict", "settle", "settle_waited_s", "settle_bound_ms");
    static final Set<String> HOST_CHECK_WORDS = Set.of("verdict", "action", "settle");

    /** Latencies are recorded in microseconds: a 15 s timeout is 1.5e7, well inside the range. */
    static final long NANOS_PER_UNIT = 1_000;
    static final String VALUE_UNIT = "us";

    private LoadGen() {
    }

    static final double MAX_RATE = 100_000;

    /**
     * How far ahead --start-at may be: enough to start copies on other machines by hand, short
     * enough that a typo (seconds for milliseconds, a day off) is caught rather than waited for.
     */
    static final long MAX_START_AHEAD_MS = 10 * 60 * 1000;

    /**
     * {@code selfTestS} > 0: run the self-test with windows of that many seconds, nothing else.
     * {@code warmupAuto}: the window starts once the warm-up is steady (Steadiness), from
     * {@code warmupS} to {@code warmupMaxS} seconds; else after exactly {@code warmupS}.
     * {@code startAtEpochMs} > 0: the schedule's zero (--start-at), else as soon as ready.
     * {@code generatorIndex} of {@code generators} (1-based; 0 of 0: a cell's only generator).
     */
    record Options(RequestShape request, double rate, int warmupS, int durationS, double timeoutS,
                   int maxInFlight, Path hlog, Path counts, long serverPid, Map<String, Object> hostCheck,
                   int selfTestS, boolean warmupAuto, int warmupMaxS, long startAtEpochMs,
                   int generatorIndex, int generators) {
        /** A cell measured without files (the self-test's probes), with a fixed warm-up. */
        static Options probe(URI url, double rate, int warmupS, int durationS, double timeoutS, int maxInFlight) {
            return new Options(RequestShape.get(url), rate, warmupS, durationS, timeoutS, maxInFlight, null, null, 0,
                    null, 0, false, warmupS, 0, 0, 0);
        }

        /** The first URL of the rotation (the only one with --url). */
        URI url() {
            return request.urls.get(0).url();
        }
    }

    public static void main(String[] args) throws Exception {
        Options options;
        try {
            options = parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("error: " + e.getMessage() + " (--help lists the options)");
            System.exit(2);
            return;
        }
        if (options == null) {
            System.out.println(USAGE);
            return;
        }
        if (options.selfTestS() > 0) {
            System.exit(SelfTest.run(options.selfTestS(), System.out));
        }
        try {
            System.exit(run(options, System.out));
        } catch (UnknownHostException e) {
            System.err.println("error: cannot resolve the URL's host: " + e.getMessage());
            System.exit(2);
        } catch (StartPassed e) {
            System.err.println("error: " + e.getMessage());
            System.exit(2);
        }
    }

    static Options parse(String[] args) {
        String url = null;
        Path urlsFile = null;
        String method = "GET";
        List<String[]> headers = new ArrayList<>();
        byte[] body = new byte[0];
        String success = RequestShape.DEFAULT_SUCCESS;
        boolean insecure = false;
        double rate = 0;
        int warmupS = 5;
        String warmup = "auto";
        int warmupMaxS = 60;
        int durationS = 0;
        double timeoutS = 15;
        int maxInFlight = 15_000;
        Path hlog = null;
        Path counts = null;
        long serverPid = 0;
        Map<String, Object> hostCheck = null;
        boolean selfTest = false;
        int selfTestS = 2;
        long startAt = 0;
        int[] generator = {0, 0};
        for (int i = 0; i < args.length; i++) {
            String option = args[i];
            if (option.equals("-h") || option.equals("--help")) {
                return null;
            }
            if (option.equals("--self-test") || option.equals("--insecure")) {
                selfTest |= option.equals("--self-test");
                insecure |= option.equals("--insecure");
                continue;
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(option + " needs a value");
            }
            String value = args[++i];
            switch (option) {
                case "--url" -> url = value;
                case "--urls-file" -> urlsFile = Path.of(value);
                case "--method" -> method = value;
                case "--header" -> headers.add(RequestShape.header(value));
                case "--body-file" -> body = readBody(Path.of(value));
                case "--success" -> success = value;
                case "--rate" -> rate = number(option, value);
                case "--warmup-s" -> warmupS = (int) whole(option, value);
                case "--warmup" -> warmup = value;
                case "--warmup-max-s" -> warmupMaxS = (int) whole(option, value);
                case "--duration-s" -> durationS = (int) whole(option, value);
                case "--timeout-s" -> timeoutS = number(option, value);
                case "--max-in-flight" -> maxInFlight = (int) whole(option, value);
                case "--hlog" -> hlog = Path.of(value);
                case "--counts" -> counts = Path.of(value);
                case "--server-pid" -> serverPid = whole(option, value);
                case "--host-check" -> hostCheck = parseHostCheck(value);
                case "--self-test-s" -> selfTestS = (int) whole(option, value);
                case "--start-at" -> startAt = startAt(value, System.currentTimeMillis());
                case "--generator" -> generator = generator(value);
                default -> throw new IllegalArgumentException("unknown argument " + option);
            }
        }
        if (selfTest) {
            if (selfTestS < 1 || selfTestS > 60) {
                throw new IllegalArgumentException("--self-test-s must be 1..60, not " + selfTestS);
            }
            return new Options(null, 0, 0, 0, 0, 0, null, null, 0, null, selfTestS, false, 0, 0, 0, 0);
        }
        if ((url == null) == (urlsFile == null) || hlog == null || counts == null) {
            throw new IllegalArgumentException("one of --url and --urls-file, and --hlog and --counts, are required");
        }
        List<RequestShape.Weighted> urls = urlsFile != null ? RequestShape.readUrls(urlsFile)
                : List.of(new RequestShape.Weighted(RequestShape.checkedUrl(url), 1));
        RequestShape request = new RequestShape(method, urls, headers, body, success, insecure);
        if (!(rate > 0) || rate > MAX_RATE) {
            throw new IllegalArgumentException("--rate must be in (0, 100000], not " + rate);
        }
        if (durationS < 1 || durationS > 3600 || warmupS < 0 || warmupS > 600) {
            throw new IllegalArgumentException("--duration-s must be 1..3600 and --warmup-s 0..600");
        }
        if (!warmup.equals("auto") && !warmup.equals("fixed")) {
            throw new IllegalArgumentException("--warmup must be auto or fixed, not " + warmup);
        }
        boolean auto = warmup.equals("auto");
        if (auto && generator[1] > 1) {
            // Each would judge its own share's seconds and open its own window: logs apart.
            throw new IllegalArgumentException("--warmup auto lets each of the " + generator[1] + " generators"
                    + " choose its own window; give every one --warmup fixed and the same --warmup-s");
        }
        if (auto && (warmupMaxS < warmupS || warmupMaxS > 600)) {
            throw new IllegalArgumentException("--warmup-max-s must be --warmup-s (" + warmupS + ")..600, not "
                    + warmupMaxS);
        }
        if (!(timeoutS > 0) || timeoutS > 600 || maxInFlight < 1) {
            throw new IllegalArgumentException("--timeout-s must be in (0, 600], --max-in-flight >= 1");
        }
        return new Options(request, rate, warmupS, durationS, timeoutS, maxInFlight, hlog, counts, serverPid,
                hostCheck, 0, auto, auto ? warmupMaxS : warmupS, startAt, generator[0], generator[1]);
    }

    /** --start-at's instant, checked against {@code nowMs}: in the future, not too far. */
    static long startAt(String value, long nowMs) {
        long at;
        try {
            at = Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--start-at takes milliseconds since the epoch (e.g. $(( ($(date +%s)"
                    + " + 30) * 1000 ))), not " + value);
        }
        if (at <= nowMs / 100) {
            throw new IllegalArgumentException("--start-at " + at + " is long past: it takes milliseconds since the"
                    + " epoch, not seconds (now " + nowMs + ")");
        }
        if (at <= nowMs) {
            throw new IllegalArgumentException("--start-at " + at + " is " + (nowMs - at) + " ms in the past"
                    + " (now " + nowMs + "); give an instant a few seconds ahead, the same for every generator");
        }
        if (at - nowMs > MAX_START_AHEAD_MS) {
            throw new IllegalArgumentException("--start-at " + at + " is " + (at - nowMs) / 1000 + " s ahead, more"
                    + " than " + MAX_START_AHEAD_MS / 1000 + " s (now " + nowMs + "); milliseconds, not seconds or"
                    + " microseconds?");
        }
        return at;
    }

    /** --generator I/N: this process's 1-based index among the cell's N generators. */
    static int[] generator(String value) {
        String[] in = value.split("/", -1);
        try {
            if (in.length == 2) {
                int index = Integer.parseInt(in[0]);
                int of = Integer.parseInt(in[1]);
                if (of >= 1 && index >= 1 && index <= of) {
                    return new int[] {index, of};
                }
            }
        } catch (NumberFormatException e) {
            // the message below says the form
        }
        throw new IllegalArgumentException("--generator takes I/N with 1 <= I <= N (e.g. 2/3), not " + value);
    }

    /** --start-at had passed by the time the generator was ready to send. */
    static final class StartPassed extends RuntimeException {
        StartPassed(String message) {
            super(message);
        }
    }

    private static double number(String option, String value) {
        try {
            return Double.parseDouble(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " takes a number, not " + value);
        }
    }

    private static long whole(String option, String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " takes a whole number, not " + value);
        }
    }

    private static byte[] readBody(Path file) {
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new IllegalArgumentException("--body-file " + file + ": cannot read it (" + e.getMessage() + ")");
        }
    }

    static Map<String, Object> parseHostCheck(String spec) {
        Map<String, Object> check = new LinkedHashMap<>();
        for (String item : spec.split(",")) {
            String[] kv = item.split("=", 2);
            if (kv.length != 2 || !HOST_CHECK_KEYS.contains(kv[0])) {
                throw new IllegalArgumentException("--host-check takes KEY=VALUE,... with keys "
                        + HOST_CHECK_KEYS + ", not " + item);
            }
            check.put(kv[0], HOST_CHECK_WORDS.contains(kv[0]) ? kv[1] : Double.valueOf(Double.parseDouble(kv[1])));
        }
        return check;
    }

    /**
     * The warm-up a cell had: {@code usedS} whole seconds, and whether the rule called its last
     * seconds steady ({@code why}: the rule's last verdict, for the log). With a fixed warm-up the
     * rule is only applied to what the warm-up was, at its end.
     */
    record Warmup(boolean auto, int minS, int maxS, int usedS, boolean reached, String why) {
        Map<String, Object> json() {
            return map("mode", auto ? "auto" : "fixed", "min_s", minS, "max_s", maxS, "used_s", usedS,
                    "reached", reached);
        }
    }

    /** One measured cell: the accounting at the end, the window's send lag, the client's figures. */
    record Measurement(Accounting.Snapshot snapshot, Histogram sendLagUs, Map<String, Object> client,
                       long startEpochMs, HostProbe.Usage usage, Warmup warmup) {
        /** The rate the generator actually sent at in the window. */
        double sentRate(int durationS) {
            return snapshot.sentInWindowByActualTime() / (double) durationS;
        }
    }

    static int run(Options o, PrintStream out) throws IOException {
        out.printf(Locale.ROOT, "loadgen: %s at %.1f req/s, warm-up %s, window %d s, timeout %.1f s, then drain%n",
                o.url(), o.rate(), o.warmupAuto() ? String.format(Locale.ROOT, "auto %d..%d s", o.warmupS(),
                        o.warmupMaxS()) : o.warmupS() + " s", o.durationS(), o.timeoutS());
        if (o.startAtEpochMs() > 0) {
            out.printf(Locale.ROOT, "loadgen: sends from --start-at %d (in %d ms)%s%n", o.startAtEpochMs(),
                    o.startAtEpochMs() - System.currentTimeMillis(), o.generators() > 0
                            ? ", generator " + o.generatorIndex() + " of " + o.generators() : "");
        }
        Measurement m = measure(o);
        writeAtomically(o.hlog(), hlog(o, m.snapshot(), m.startEpochMs(), m.warmup().usedS()));
        writeAtomically(o.counts(), Json.write(counts(o, m.snapshot(), m.sendLagUs(), m.client(),
                m.startEpochMs(), m.usage(), m.warmup())));
        Warmup w = m.warmup();
        out.printf(Locale.ROOT, "loadgen: warm-up %d s (%s, %s): %s%n", w.usedS(), w.auto() ? "auto" : "fixed",
                w.reached() ? "steady" : "not steady", w.why());
        out.print(summary(o, m.snapshot(), m.sendLagUs()));
        // Requests still in flight are abandoned: the process exits and their sockets close.
        return 0;
    }

    /** Sends on the schedule through warm-up, window and drain, and returns what happened. */
    static Measurement measure(Options o) throws IOException {
        long timeoutNanos = Math.round(o.timeoutS() * 1e9);
        try (OpenLoopClient c = new OpenLoopClient(o.request(), timeoutNanos, o.maxInFlight())) {
            return measure(o, c, timeoutNanos);
        }
    }

    /** Made ready first (names resolved, TLS set up), so that none of it delays the schedule. */
    private static Measurement measure(Options o, OpenLoopClient c, long timeoutNanos) throws IOException {
        // t0 a little in the future so the first intended times are not already late.
        long t0 = System.nanoTime() + 50_000_000L;
        long startEpochMs = System.currentTimeMillis() + 50;
        if (o.startAtEpochMs() > 0) {
            t0 = nanoTimeAt(o.startAtEpochMs());
            startEpochMs = o.startAtEpochMs();
        }
        Schedule schedule = new Schedule(t0, o.rate());
        Accounting accounting;
        // The rule's last verdict, written by the chooser on the client's thread.
        Steadiness.Verdict[] verdict = {null};
        if (o.warmupAuto()) {
            int firstCheck = Steadiness.firstCheck(o.warmupS(), o.warmupMaxS());
            Accounting[] self = new Accounting[1];
            accounting = new Accounting(t0, o.warmupMaxS(), o.durationS(), timeoutNanos, NANOS_PER_UNIT, schedule,
                    (second, before) -> {
                        if (second < firstCheck) {
                            return false;
                        }
                        verdict[0] = Steadiness.judge(self[0].seconds(before), o.rate(), o.timeoutS());
                        return verdict[0].steady();
                    });
            self[0] = accounting;
        } else {
            long windowStart = t0 + o.warmupS() * Accounting.SECOND;
            long windowEnd = windowStart + o.durationS() * Accounting.SECOND;
            long windowRequests = schedule.countBefore(windowEnd) - schedule.countBefore(windowStart);
            accounting = new Accounting(t0, windowStart, windowEnd, timeoutNanos, NANOS_PER_UNIT, windowRequests);
        }
        HostProbe probe = new HostProbe(o.serverPid());
        HostProbe.Sample[] probes = new HostProbe.Sample[2];
        accounting.listener((phase, now) -> {
            if (phase == Accounting.Phase.WINDOW) {
                probes[0] = probe.sample(now);
            } else if (phase == Accounting.Phase.DRAIN) {
                probes[1] = probe.sample(now);
            }
        });
        Histogram sendLagUs = new Histogram(3);
        Accounting.Snapshot snapshot;
        Map<String, Object> client = new LinkedHashMap<>();
        // Every window request resolves by windowEnd + timeout; the margin only guards a bug.
        long end = c.run(accounting, schedule, timeoutNanos + 5 * Accounting.SECOND, sendLagUs);
        snapshot = accounting.close(end);
        int usedS = accounting.warmupSeconds();
        if (!o.warmupAuto() || verdict[0] == null) {
            // A fixed warm-up (or one that ended before the rule was asked): the rule on what it was.
            verdict[0] = Steadiness.judge(accounting.seconds(snapshot.intervals().subList(0,
                    Math.min(usedS, snapshot.intervals().size()))), o.rate(), o.timeoutS());
        }
        Warmup warmup = new Warmup(o.warmupAuto(), o.warmupS(), o.warmupMaxS(), usedS, verdict[0].steady(),
                verdict[0].why());
        client.put("connections_opened", c.connectionsOpened());
        client.put("retries_on_closed_keepalive", c.retries());
        client.put("first_error", c.errors().first());
        client.put("errors_by_status", c.errors().windowByStatus());
        if (probes[1] == null) {
            probes[1] = probe.sample(snapshot.endNanos()); // no drain request fell due
        }
        if (probes[0] == null) {
            probes[0] = probes[1];
        }
        return new Measurement(snapshot, sendLagUs, client, startEpochMs, HostProbe.between(probes[0], probes[1]),
                warmup);
    }

    /**
     * The System.nanoTime() of wall-clock instant {@code epochMs}, which must still be ahead: the
     * generator's schedule runs on nanoTime (monotonic); the wall clock only places its zero.
     */
    static long nanoTimeAt(long epochMs) {
        java.time.Instant now = java.time.Instant.now();
        long nowNanos = System.nanoTime();
        long aheadNanos = (epochMs - now.toEpochMilli()) * 1_000_000L - now.getNano() % 1_000_000;
        if (aheadNanos <= 0) {
            throw new StartPassed("--start-at " + epochMs + " passed " + (-aheadNanos / 1_000_000) + " ms before"
                    + " the generator was ready to send (its JVM and connections take a moment): give an instant"
                    + " further ahead");
        }
        return nowNanos + aheadNanos;
    }

    private static void writeAtomically(Path path, String text) throws IOException {
        Path tmp = path.resolveSibling(path.getFileName() + ".tmp");
        if (tmp.toAbsolutePath().getParent() != null) {
            Files.createDirectories(tmp.toAbsolutePath().getParent());
        }
        Files.writeString(tmp, text, StandardCharsets.US_ASCII);
        Files.move(tmp, path, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /**
     * The interval log: per interval the window's completions (untagged), then tags timeout and
     * outside, each written even when empty so every interval has all three lines.
     */
    static String hlog(Options o, Accounting.Snapshot s, long startEpochMs, int warmupS) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintStream stream = new PrintStream(bytes, false, StandardCharsets.US_ASCII);
        HistogramLogWriter writer = new HistogramLogWriter(stream);
        writer.outputComment("loadcurve bench/loadgen: open loop at " + o.rate() + " req/s, latency from"
                + " intended send time, values in microseconds; untagged = window requests answered in time,"
                + " tag timeout = window requests timed out (value = the timeout), tag outside = other"
                + " requests' completions; window = [" + warmupS + ", " + (warmupS + o.durationS())
                + ") s");
        writer.outputLogFormatVersion();
        writer.setBaseTime(startEpochMs);
        writer.outputStartTime(startEpochMs);
        writer.outputBaseTime(startEpochMs);
        writer.outputLegend();
        for (Accounting.Interval iv : s.intervals()) {
            double start = iv.index;
            double end = iv.index + iv.lengthNanos / 1e9;
            // Max column in milliseconds (values are in microseconds).
            writer.outputIntervalHistogram(start, end, iv.window, 1000.0);
            writer.outputIntervalHistogram(start, end, iv.timeout, 1000.0);
            writer.outputIntervalHistogram(start, end, iv.outside, 1000.0);
        }
        stream.flush();
        return bytes.toString(StandardCharsets.US_ASCII);
    }

    static Map<String, Object> counts(Options o, Accounting.Snapshot s, Histogram sendLagUs,
                                      Map<String, Object> client, long startEpochMs, HostProbe.Usage usage,
                                      Warmup warmup) {
        Accounting.Counts t = s.total();
        Accounting.Counts w = s.window();
        long windowStartMs = startEpochMs + warmup.usedS() * 1000L;
        long windowEndMs = windowStartMs + o.durationS() * 1000L;
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("schema_version", 2);
        m.put("url", o.url().toString());
        m.put("offered_rate", o.rate());
        m.put("warmup_s", warmup.usedS());
        m.put("warmup", warmup.json());
        m.put("duration_s", o.durationS());
        m.put("timeout_s", o.timeoutS());
        m.put("max_in_flight_cap", o.maxInFlight());
        m.put("value_unit", VALUE_UNIT);
        m.put("hlog", o.hlog().getFileName().toString());
        m.put("hlog_intervals", s.intervals().size());
        m.put("start_epoch_ms", startEpochMs);
        if (o.generators() > 0) {
            m.put("generator_index", o.generatorIndex());
            m.put("generators", o.generators());
        }
        m.put("window", map("start_s", warmup.usedS(), "end_s", warmup.usedS() + o.durationS(),
                "start_epoch_ms", windowStartMs, "end_epoch_ms", windowEndMs,
                "sent", w.sent(), "completed", w.completed(), "timed_out", w.timedOut(),
                "errors", w.errors(), "not_sent", w.notSent()));
        m.put("drain_s", s.drainNanos() / 1e9);
        m.put("total", map("sent", t.sent(), "completed", t.completed(), "timed_out", t.timedOut(),
                "errors", t.errors(), "not_sent", t.notSent(), "in_flight_at_end", s.abandoned()));
        m.put("not_sent", t.notSent());
        m.put("max_in_flight", s.maxInFlight());
        m.putAll(client);
        m.put("request", o.request().json());
        m.put("sent_in_window_by_actual_time", s.sentInWindowByActualTime());
        m.put("achieved_send_rate", s.sentInWindowByActualTime() / (double) o.durationS());
        m.put("achieved_completion_rate", s.completedDuringWindow() / (double) o.durationS());
        m.put("in_flight", map("at_window_start", s.inFlightAtWindowStart(),
                "at_window_end", s.inFlightAtWindowEnd(), "window_mean", s.windowInFlightMean(),
                "window_max", s.windowInFlightMax()));
        m.put("generator", map("cpu_s_window", usage.generatorCpuS(), "cpu_share_window", usage.generatorShare()));
        m.put("machine", map("cpu_share_window", usage.machineShare(), "cores", usage.cores()));
        m.put("server", o.serverPid() > 0 ? map("pid", o.serverPid(), "cpu_share_window", usage.serverShare()) : null);
        m.put("send_lag_us_window", map("p50", sendLagUs.getValueAtPercentile(50),
                "p99", sendLagUs.getValueAtPercentile(99), "p999", sendLagUs.getValueAtPercentile(99.9),
                "max", sendLagUs.getMaxValue(), "count", sendLagUs.getTotalCount()));
        m.put("host_check", o.hostCheck());
        List<Object> intervals = new ArrayList<>();
        for (Accounting.Interval iv : s.intervals()) {
            intervals.add(map("t_s", iv.index, "length_s", iv.lengthNanos / 1e9,
                    "phase", iv.phase.name().toLowerCase(Locale.ROOT), "sent", iv.sent,
                    "completed", iv.completed, "timed_out", iv.timedOut, "errors", iv.errors,
                    "not_sent", iv.notSent, "in_flight_mean", Math.round(iv.inFlightMean() * 1000) / 1000.0,
                    "in_flight_max", iv.inFlightMax));
        }
        m.put("intervals", intervals);
        return m;
    }

    private static Map<String, Object> map(Object... keysAndValues) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            m.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return m;
    }

    static String summary(Options o, Accounting.Snapshot s, Histogram sendLagUs) {
        Accounting.Counts w = s.window();
        return String.format(Locale.ROOT,
                "loadgen: window %d s: offered %.1f/s, sent %.1f/s; window requests sent %d: completed %d, "
                        + "timed out %d, errors %d, not sent %d; in flight %d at start, %d at end (mean %.1f, "
                        + "max %d); drain %.1f s; send lag p99 %.2f ms, max %.2f ms; abandoned %d%n",
                o.durationS(), o.rate(), s.sentInWindowByActualTime() / (double) o.durationS(), w.sent(),
                w.completed(), w.timedOut(), w.errors(), w.notSent(), s.inFlightAtWindowStart(),
                s.inFlightAtWindowEnd(), s.windowInFlightMean(), s.windowInFlightMax(),
                s.drainNanos() / 1e9, sendLagUs.getValueAtPercentile(99) / 1000.0,
                sendLagUs.getMaxValue() / 1000.0, s.abandoned());
    }
}
