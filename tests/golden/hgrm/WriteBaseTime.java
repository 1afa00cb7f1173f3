// WriteBaseTime: interval logs with a #[BaseTime] and no #[StartTime], written by HdrHistogram's
// own HistogramLogWriter (outputBaseTime without outputStartTime: what writers that only note a
// base time produce). genhlog always writes a StartTime line, so it cannot make this shape.
//   basetime-only.hlog     untagged, ns values, the first interval at BaseTime (timestamp 0.000)
//   basetime-late.hlog     untagged + Tag=io, us values, the first interval 2.5 s after BaseTime
//                          (a first timestamp that is not 0: HistogramLogProcessor then prints
//                          a StartTime line of its own)
// Lognormal latencies, seeded (deterministic).
// Usage: java WriteBaseTime OUTDIR
import org.HdrHistogram.*;
import java.io.*;
import java.util.*;

public class WriteBaseTime {
    public static void main(String[] args) throws Exception {
        String dir = args[0];
        write(dir + "/basetime-only.hlog", 1795306954757L, 0L, 24, 1.0, false, 5);
        write(dir + "/basetime-late.hlog", 1795307124308L, 2500L, 16, 1e-3, true, 6);
    }

    static void write(String path, long base, long firstOffsetMs, int intervals, double unit,
                      boolean tagged, long seed) throws Exception {
        Random rnd = new Random(seed);
        try (PrintStream out = new PrintStream(new FileOutputStream(path), false, "US-ASCII")) {
            HistogramLogWriter w = new HistogramLogWriter(out);
            w.outputComment("[loadcurve test: BaseTime and no StartTime, HdrHistogram 2.2.2]");
            w.outputLogFormatVersion();
            w.outputBaseTime(base);
            w.setBaseTime(base);
            w.outputLegend();
            Histogram h = new Histogram(3_600_000_000_000L, 3);
            for (int i = 0; i < intervals; i++) {
                long s = base + firstOffsetMs + i * 1000L;
                for (String tag : tagged ? new String[] {null, "io"} : new String[] {null}) {
                    h.reset();
                    for (int k = 0; k < 400 + rnd.nextInt(400); k++) {
                        double ns = 250_000 * Math.exp(0.6 * rnd.nextGaussian());
                        h.recordValue(Math.max(1L, Math.round(ns * unit)));
                    }
                    h.setStartTimeStamp(s);
                    h.setEndTimeStamp(s + 1000L);
                    h.setTag(tag);
                    w.outputIntervalHistogram(h);
                }
            }
        }
    }
}
