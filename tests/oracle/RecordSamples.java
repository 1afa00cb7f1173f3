// RecordSamples: the reference for analysis/read/loadtools/record.py and
// analysis/read/hdr/log_writer.py, written with HdrHistogram's own classes only.
//   java RecordSamples IN.csv OUT.hlog UNITS_PER_MS [EXPECTED_INTERVAL|0] [COMMENT]
//   java RecordSamples --batch JOBS: one log a line of JOBS, the arguments above separated by
//   tabs (a module's cases in one JVM: its start and warm-up were most of each case's time)
// IN.csv: one request a line, "start_ms,value,class": start_ms the send time (a double, ms),
// value the latency in the recorded unit (a long), class "" (answered), "error" or "timeout".
// Each request goes into the Histogram(3) of its second, floor(start_ms / 1000), and class, with
// recordValue (recordValueWithExpectedInterval when EXPECTED_INTERVAL > 0). The log: COMMENT,
// the format version, StartTime and BaseTime at the first second, the legend, then for every
// second from the first to the last one line per class that any request has (answered always),
// empty histograms included, each written with outputIntervalHistogram(start, end, h,
// UNITS_PER_MS). Run with -Duser.timezone=UTC for the StartTime date text.
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;

import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.FileReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.TreeMap;

public class RecordSamples {
    static final String[] TAGS = {null, "error", "timeout"};

    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals("--batch")) {
            for (String job : Files.readAllLines(Paths.get(args[1]), StandardCharsets.UTF_8)) {
                if (!job.isEmpty()) record(job.split("\t", -1));
            }
        } else {
            record(args);
        }
    }

    static void record(String[] args) throws Exception {
        double unitsPerMs = Double.parseDouble(args[2]);
        long expected = args.length > 3 ? Long.parseLong(args[3]) : 0;
        String comment = args.length > 4 ? args[4] : null;
        TreeMap<Long, Histogram[]> seconds = new TreeMap<>();
        boolean[] present = {true, false, false};
        try (BufferedReader in = new BufferedReader(new FileReader(args[0]))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.isEmpty()) continue;
                String[] f = line.split(",", -1);
                long second = (long) Math.floor(Double.parseDouble(f[0]) / 1000.0);
                long value = Long.parseLong(f[1]);
                int cls = f[2].isEmpty() ? 0 : f[2].equals("error") ? 1 : 2;
                present[cls] = true;
                Histogram h = seconds.computeIfAbsent(second, s -> new Histogram[3])[cls];
                if (h == null) {
                    h = new Histogram(3);
                    seconds.get(second)[cls] = h;
                }
                if (expected > 0) h.recordValueWithExpectedInterval(value, expected);
                else h.recordValue(value);
            }
        }
        long first = seconds.firstKey(), last = seconds.lastKey();
        PrintStream stream = new PrintStream(new FileOutputStream(args[1]), false, "UTF-8");
        HistogramLogWriter w = new HistogramLogWriter(stream);
        if (comment != null) w.outputComment(comment);
        w.outputLogFormatVersion();
        w.setBaseTime(first * 1000);
        w.outputStartTime(first * 1000);
        w.outputBaseTime(first * 1000);
        w.outputLegend();
        for (long s = first; s <= last; s++) {
            Histogram[] hs = seconds.get(s);
            for (int cls = 0; cls < 3; cls++) {
                if (!present[cls]) continue;
                Histogram h = hs != null && hs[cls] != null ? hs[cls] : new Histogram(3);
                h.setTag(TAGS[cls]);
                w.outputIntervalHistogram(s - first, s - first + 1, h, unitsPerMs);
            }
        }
        w.close();
    }
}
