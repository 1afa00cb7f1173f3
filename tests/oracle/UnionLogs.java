// UnionLogs: the reference for analysis/derive/merge.py's merge_logs, with HdrHistogram's own
// classes only (HdrLogProcessing's union, by absolute time).
//   java UnionLogs OUT.hlog UNITS_PER_MS IN1.hlog IN2.hlog ...
// Every interval of every log, read with HistogramLogReader, is added (Histogram.add) into the
// histogram of its tag and of the whole epoch second its start timestamp lies in. The union is
// written with HistogramLogWriter: StartTime and BaseTime at the earliest interval start, then per
// second (untagged first, then tags by name) one interval from the earliest start of the intervals
// added into it, as long as the longest of them. Run with -Duser.timezone=UTC for the StartTime date text.
import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;
import org.HdrHistogram.HistogramLogWriter;

import java.io.FileOutputStream;
import java.io.PrintStream;
import java.util.Map;
import java.util.TreeMap;

public class UnionLogs {
    public static void main(String[] args) throws Exception {
        double unitsPerMs = Double.parseDouble(args[1]);
        // second -> tag ("" untagged, sorts first) -> [sum, earliest start, longest length]
        TreeMap<Long, TreeMap<String, Object[]>> seconds = new TreeMap<>();
        long earliest = Long.MAX_VALUE;
        for (int i = 2; i < args.length; i++) {
            HistogramLogReader reader = new HistogramLogReader(args[i]);
            EncodableHistogram e;
            while ((e = reader.nextIntervalHistogram()) != null) {
                Histogram h = (Histogram) e;
                long start = h.getStartTimeStamp(), end = h.getEndTimeStamp();
                earliest = Math.min(earliest, start);
                String tag = h.getTag() == null ? "" : h.getTag();
                Object[] slot = seconds.computeIfAbsent(Math.floorDiv(start, 1000L),
                        s -> new TreeMap<>()).get(tag);
                if (slot == null) {
                    Histogram sum = new Histogram(3);
                    sum.add(h);
                    seconds.get(Math.floorDiv(start, 1000L)).put(tag, new Object[]{sum, start, end - start});
                } else {
                    ((Histogram) slot[0]).add(h);
                    slot[1] = Math.min((Long) slot[1], start);
                    slot[2] = Math.max((Long) slot[2], end - start);
                }
            }
        }
        try (PrintStream out = new PrintStream(new FileOutputStream(args[0]))) {
            HistogramLogWriter writer = new HistogramLogWriter(out);
            writer.outputLogFormatVersion();
            writer.outputStartTime(earliest);
            writer.setBaseTime(earliest);
            writer.outputBaseTime(earliest);
            writer.outputLegend();
            for (Map<String, Object[]> tags : seconds.values()) {
                for (Map.Entry<String, Object[]> t : tags.entrySet()) {
                    Histogram sum = (Histogram) t.getValue()[0];
                    sum.setTag(t.getKey().isEmpty() ? null : t.getKey());
                    sum.setStartTimeStamp((Long) t.getValue()[1]);
                    sum.setEndTimeStamp((Long) t.getValue()[1] + (Long) t.getValue()[2]);
                    // (this form writes the times as given: relative to BaseTime here)
                    writer.outputIntervalHistogram((sum.getStartTimeStamp() - earliest) / 1000.0,
                            (sum.getEndTimeStamp() - earliest) / 1000.0, sum, unitsPerMs);
                }
            }
        }
    }
}
