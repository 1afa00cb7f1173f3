package loadcurve.loadgen;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How fast this host can drive the generator: against a {@link NullServer} in this process, the
 * offered rate doubles from {@link #FIRST_RATE} until the generator falls behind by the rule the
 * harness warns with (bench/manifest.py: sent below 99 % of the offered rate, or the window's
 * send lag above 20 ms at p99), then is bisected twice between the last rate it kept up with and
 * the first it did not. The limit is what a run on this host may ask for; a rate above it would
 * measure the generator, not the server.
 */
final class SelfTest {
    static final double FIRST_RATE = 1000;
    static final double MAX_RATE = LoadGen.MAX_RATE;
    static final double MIN_SENT_SHARE = 0.99;
    static final long MAX_LAG_P99_US = 20_000;
    static final int BISECTIONS = 2;
    /** run.sh keeps the generator's in-flight cap this far below the open-file limit. */
    static final long FD_MARGIN = 1000;

    private SelfTest() {
    }

    /** One probe at one rate: did the generator keep up? */
    record Step(double rate, double sentRate, double lagP99Ms, boolean keptUp, double cpuUsPerRequest) {
        Map<String, Object> json() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("rate", rate);
            m.put("sent_rate", Math.round(sentRate * 10) / 10.0);
            m.put("lag_p99_ms", lagP99Ms);
            m.put("kept_up", keptUp);
            m.put("client_cpu_us_per_request", Math.round(cpuUsPerRequest * 100) / 100.0);
            return m;
        }
    }

    static int run(int windowS, PrintStream out) throws IOException {
        return run(windowS, FIRST_RATE, MAX_RATE, out);
    }

    /** The ramp from {@code firstRate} up to at most {@code maxRate} (tests stop it early). */
    static int run(int windowS, double firstRate, double maxRate, PrintStream out) throws IOException {
        List<Step> steps = new ArrayList<>();
        double good = 0;
        double bad = 0;
        try (NullServer server = new NullServer()) {
            URI url = URI.create("http://127.0.0.1:" + server.port() + "/");
            for (double rate = firstRate; rate <= maxRate; rate *= 2) {
                Step step = probe(url, rate, windowS);
                steps.add(step);
                if (!step.keptUp()) {
                    bad = rate;
                    break;
                }
                good = rate;
            }
            for (int i = 0; bad > 0 && good > 0 && i < BISECTIONS; i++) {
                double mid = Math.round((good + bad) / 2 / 100) * 100.0;
                Step step = probe(url, mid, windowS);
                steps.add(step);
                if (step.keptUp()) {
                    good = mid;
                } else {
                    bad = mid;
                }
            }
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("max_rate", good);
        long fdLimit = fileDescriptorLimit();
        long ports = ephemeralPorts();
        m.put("max_in_flight", maxInFlight(fdLimit, ports));
        m.put("cores", Runtime.getRuntime().availableProcessors());
        m.put("rule", "sent >= 99% of offered and send lag p99 <= 20 ms, against a null server in this process");
        m.put("window_s", windowS);
        m.put("fd_limit", fdLimit);
        m.put("ephemeral_ports", ports);
        m.put("first_failing_rate", bad > 0 ? bad : null);
        List<Object> stepList = new ArrayList<>();
        for (Step s : steps) {
            stepList.add(s.json());
        }
        m.put("steps", stepList);
        out.println(Json.line(m));
        return good > 0 ? 0 : 1;
    }

    /** Warm-up 1 s, then the window; a short timeout so a saturated probe ends soon. */
    static Step probe(URI url, double rate, int windowS) throws IOException {
        LoadGen.Options o = LoadGen.Options.probe(url, rate, 1, windowS, 2, (int) Math.min(Integer.MAX_VALUE,
                maxInFlight(fileDescriptorLimit(), ephemeralPorts())));
        // The client thread's own CPU time: the process's would include the null server's.
        long cpu0 = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
        LoadGen.Measurement m = LoadGen.measure(o);
        long cpuNanos = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime() - cpu0;
        double sentRate = m.sentRate(windowS);
        double lagP99Ms = m.sendLagUs().getValueAtPercentile(99) / 1000.0;
        boolean keptUp = sentRate >= MIN_SENT_SHARE * rate && m.sendLagUs().getValueAtPercentile(99) <= MAX_LAG_P99_US
                && m.snapshot().window().notSent() == 0;
        return new Step(rate, sentRate, lagP99Ms, keptUp, cpuNanos / 1000.0 / Math.max(1, m.snapshot().total().sent()));
    }

    /**
     * Each request in flight holds a connection: a file descriptor, and to one server a local
     * port. So the cap is the smaller of the open-file limit (less run.sh's margin) and the
     * ephemeral port range.
     */
    static long maxInFlight(long fdLimit, long ports) {
        long byFds = fdLimit > 0 ? fdLimit - FD_MARGIN : Long.MAX_VALUE;
        long byPorts = ports > 0 ? ports : Long.MAX_VALUE;
        long cap = Math.min(byFds, byPorts);
        return cap == Long.MAX_VALUE ? -1 : Math.max(1, cap);
    }

    /** The JVM raises its soft open-file limit to the hard one at start (MaxFDLimit). -1 if unknown. */
    static long fileDescriptorLimit() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.UnixOperatingSystemMXBean unix) {
            return unix.getMaxFileDescriptorCount();
        }
        return -1;
    }

    /** The size of Linux's ephemeral port range; -1 if it cannot be read. */
    static long ephemeralPorts() {
        try {
            // readAllLines, not readString: /proc files report size 0, and readString then
            // returned a stray "3" here (JDK 25).
            String[] range = Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).get(0)
                    .trim().split("\\s+");
            return Long.parseLong(range[1]) - Long.parseLong(range[0]) + 1;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
