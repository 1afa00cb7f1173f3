package loadcurve.loadgen;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SelfTestTest {
    @Test
    void theSelfTestPrintsOneJsonLineWithTheHighestRateThatKeptUp() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        // 500 then 1000 req/s, 1 s windows: short, and within what even a busy 2-core host sends.
        int status = SelfTest.run(1, 500, 1000, new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String text = bytes.toString(StandardCharsets.UTF_8);
        assertEquals(1, text.lines().count(), text);
        Matcher max = Pattern.compile("^\\{\"max_rate\": (\\d+), \"max_in_flight\": (-?\\d+), \"cores\": (\\d+), ")
                .matcher(text);
        assertTrue(max.find(), text);
        assertEquals(Runtime.getRuntime().availableProcessors(), Integer.parseInt(max.group(3)));
        // max_rate is the highest probed rate that kept up, and every failing probe is above it
        // (the ramp doubles, then bisects between the two); 0 when none kept up, and status 1.
        double lastKept = 0;
        double firstFailing = Double.MAX_VALUE;
        Matcher step = Pattern.compile("\\{\"rate\": (\\d+), \"sent_rate\": [0-9.]+, \"lag_p99_ms\": [0-9.]+, "
                + "\"kept_up\": (true|false)").matcher(text);
        int steps = 0;
        while (step.find()) {
            steps++;
            double rate = Double.parseDouble(step.group(1));
            if (step.group(2).equals("true")) {
                lastKept = Math.max(lastKept, rate);
            } else {
                firstFailing = Math.min(firstFailing, rate);
            }
        }
        assertTrue(steps >= 1, text);
        assertEquals(lastKept, Double.parseDouble(max.group(1)), text);
        assertTrue(lastKept < firstFailing, text);
        assertEquals(lastKept > 0 ? 0 : 1, status);
        assertEquals(SelfTest.maxInFlight(SelfTest.fileDescriptorLimit(), SelfTest.ephemeralPorts()),
                Long.parseLong(max.group(2)));
    }

    @Test
    void theInFlightLimitIsTheSmallerOfFilesLessTheMarginAndPorts() {
        assertEquals(19_000, SelfTest.maxInFlight(20_000, 28_232));
        assertEquals(28_232, SelfTest.maxInFlight(1_048_576, 28_232));
        assertEquals(23_000, SelfTest.maxInFlight(24_000, -1));
        assertEquals(-1, SelfTest.maxInFlight(-1, -1));
        assertTrue(SelfTest.ephemeralPorts() > 1000, "read from /proc on Linux");
    }
}
