// HlpBatch: HdrHistogram's own HistogramLogProcessor run on many logs in one JVM, as the `hlp`
// oracle script runs it on one (a JVM start and warm-up per log was most of a case's time).
//   java HlpBatch JOBS: one run a line of JOBS, HistogramLogProcessor's arguments separated by
//   tabs (-i LOG -o OUT and its flags; OUT and OUT.hgrm are written as by the script)
import org.HdrHistogram.HistogramLogProcessor;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;

public class HlpBatch {
    public static void main(String[] args) throws Exception {
        for (String job : Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8)) {
            if (!job.isEmpty()) new HistogramLogProcessor(job.split("\t", -1)).run();
        }
    }
}
