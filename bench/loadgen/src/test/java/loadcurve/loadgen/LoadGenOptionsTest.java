package loadcurve.loadgen;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

class LoadGenOptionsTest {
    private static final String[] REQUIRED = {
        "--url", "http://127.0.0.1:1234/sleep?ms=200", "--rate", "800", "--duration-s", "12",
        "--hlog", "x.hlog", "--counts", "x.counts.json"};

    @Test
    void defaultsAreTheDocumentedOnes() {
        LoadGen.Options o = LoadGen.parse(REQUIRED);
        assertEquals(5.0, o.warmupS());
        assertEquals(15.0, o.timeoutS());
        assertEquals(15_000, o.maxInFlight());
        assertEquals(800.0, o.rate());
    }

    @Test
    void refusesTargetsOffLoopback() {
        String[] args = REQUIRED.clone();
        args[1] = "http://10.0.0.1:1234/sleep";
        assertThrows(IllegalArgumentException.class, () -> LoadGen.parse(args));
    }

    @Test
    void helpReturnsNoOptions() {
        assertNull(LoadGen.parse(new String[] {"--help"}));
    }

    @Test
    void jsonStringsAreEscaped() {
        assertEquals("\"a\\\"b\\\\c\\u000a\"", LoadGen.quote("a\"b\\c\n"));
    }
}
