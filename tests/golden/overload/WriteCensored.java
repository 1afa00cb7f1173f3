// WriteCensored: logs of window populations with timeouts, written by HdrHistogram's own
// HistogramLogWriter, as the harness writes them (bench/README.md, "The format"):
//   NAME.hlog             untagged = completed window requests, tag "timeout" = each timed-out
//                         request recorded at the timeout value
//   NAME-population.hlog  the same values, all untagged (javastats on it = the population)
// Latencies in microseconds, seeded (deterministic), below the timeout of 15 s.
// Usage: java WriteCensored OUTDIR
import org.HdrHistogram.*;
import java.io.*;
import java.util.*;

public class WriteCensored {
    static final long TIMEOUT_US = 15_000_000L;
    static final int INTERVALS = 10;

    public static void main(String[] args) throws Exception {
        String dir = args[0];
        // name, completed, timed out, seed
        write(dir, "none", 2000, 0, 1);
        write(dir, "p999-boundary", 2000, 2, 2);    // p99.9 target = 2000 = completed: a value
        write(dir, "p999-censored", 2000, 3, 3);    // p99.9 target = 2001 > completed
        write(dir, "p99-censored", 1900, 100, 4);   // p95 target = 1900 = completed
        write(dir, "p50-censored", 400, 600, 5);
    }

    static void write(String dir, String name, int completed, int timedOut, long seed) throws Exception {
        Random rnd = new Random(seed);
        long[] values = new long[completed];
        for (int i = 0; i < completed; i++) {
            long v = (long) (200_000 * Math.exp(rnd.nextGaussian() * 0.9));
            values[i] = Math.max(1, Math.min(v, TIMEOUT_US - 1));
        }
        try (PrintStream a = new PrintStream(new FileOutputStream(dir + "/" + name + ".hlog"));
             PrintStream b = new PrintStream(new FileOutputStream(dir + "/" + name + "-population.hlog"))) {
            HistogramLogWriter wa = new HistogramLogWriter(a);
            HistogramLogWriter wb = new HistogramLogWriter(b);
            long start = 1795307124308L;
            for (HistogramLogWriter w : new HistogramLogWriter[] {wa, wb}) {
                w.outputComment("loadcurve test: " + name + ", " + completed + " completed, "
                        + timedOut + " timed out at " + TIMEOUT_US + " us");
                w.outputLogFormatVersion();
                w.outputStartTime(start);
                w.setBaseTime(start);
                w.outputLegend();
            }
            for (int k = 0; k < INTERVALS; k++) {
                Histogram done = new Histogram(3_600_000_000L, 3);
                Histogram lost = new Histogram(3_600_000_000L, 3);
                Histogram all = new Histogram(3_600_000_000L, 3);
                for (int i = k; i < completed; i += INTERVALS) { done.recordValue(values[i]); all.recordValue(values[i]); }
                for (int i = k; i < timedOut; i += INTERVALS) { lost.recordValue(TIMEOUT_US); all.recordValue(TIMEOUT_US); }
                long t0 = start + k * 1000L;
                for (Histogram h : new Histogram[] {done, lost, all}) { h.setStartTimeStamp(t0); h.setEndTimeStamp(t0 + 1000L); }
                lost.setTag("timeout");
                wa.outputIntervalHistogram(done);
                if (lost.getTotalCount() > 0) wa.outputIntervalHistogram(lost);
                wb.outputIntervalHistogram(all);
            }
        }
    }
}
