package loadcurve.loadgen;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LoadGenOptionsTest {
    private static final String[] REQUIRED = {
        "--url", "http://127.0.0.1:1234/sleep?ms=200", "--rate", "800", "--duration-s", "12",
        "--hlog", "x.hlog", "--counts", "x.counts.json"};

    @Test
    void defaultsAreTheDocumentedOnes() {
        LoadGen.Options o = LoadGen.parse(REQUIRED);
        assertEquals(5, o.warmupS());
        assertEquals(15.0, o.timeoutS());
        assertEquals(15_000, o.maxInFlight());
        assertEquals(800.0, o.rate());
        assertEquals(0, o.serverPid());
        assertNull(o.hostCheck());
    }

    @Test
    void hostCheckIsParsedAndItsKeysChecked() {
        assertEquals("{busy_share_before=0.05, waited_s=0.0, verdict=quiet}",
                LoadGen.parseHostCheck("busy_share_before=0.05,waited_s=0,verdict=quiet").toString());
        assertThrows(IllegalArgumentException.class, () -> LoadGen.parseHostCheck("cpu=1"));
        assertThrows(IllegalArgumentException.class, () -> LoadGen.parseHostCheck("waited_s=x"));
    }

    @Test
    void hostCheckCarriesTheSettleWaitOfAServerGivenByUrl() {
        assertEquals("{verdict=quiet, settle=unsettled, settle_waited_s=60.2, settle_bound_ms=154.0}",
                LoadGen.parseHostCheck("verdict=quiet,settle=unsettled,settle_waited_s=60.2,settle_bound_ms=154")
                        .toString());
        assertThrows(IllegalArgumentException.class, () -> LoadGen.parseHostCheck("settle_waited_s=long"));
    }

    @Test
    void warmupIsWholeSeconds() {
        String[] args = java.util.Arrays.copyOf(REQUIRED, REQUIRED.length + 2);
        args[REQUIRED.length] = "--warmup-s";
        args[REQUIRED.length + 1] = "0.5";
        assertThrows(IllegalArgumentException.class, () -> LoadGen.parse(args));
    }

    @Test
    void takesAnyHttpOrHttpsHostButNoOtherScheme() {
        String[] args = REQUIRED.clone();
        args[1] = "https://example.org/api?x=1";
        assertEquals("example.org", LoadGen.parse(args).url().getHost());
        args[1] = "ftp://127.0.0.1/x";
        assertEquals("not an http:// or https:// URL with a host: ftp://127.0.0.1/x",
                assertThrows(IllegalArgumentException.class, () -> LoadGen.parse(args)).getMessage());
    }

    @Test
    void startAtMustBeAheadButNotFar() {
        long now = 1_800_000_000_000L;
        assertEquals(now + 5_000, LoadGen.startAt(Long.toString(now + 5_000), now));
        assertEquals("--start-at 1799999999000 is 1000 ms in the past (now 1800000000000); give an instant a few"
                + " seconds ahead, the same for every generator",
                assertThrows(IllegalArgumentException.class, () -> LoadGen.startAt("1799999999000", now)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> LoadGen.startAt(Long.toString(now), now));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> LoadGen.startAt(Long.toString(now + 601_000), now)).getMessage().contains("more than 600 s"));
        assertThrows(IllegalArgumentException.class, () -> LoadGen.startAt("soon", now));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LoadGen.startAt("1800000005", now))
                .getMessage().contains("milliseconds since the epoch, not seconds"));
    }

    @Test
    void aStartAtInThePastIsRefusedWhenParsed() {
        String[] args = java.util.Arrays.copyOf(REQUIRED, REQUIRED.length + 2);
        args[REQUIRED.length] = "--start-at";
        args[REQUIRED.length + 1] = Long.toString(System.currentTimeMillis() - 1);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LoadGen.parse(args)).getMessage()
                .contains("in the past"));
        assertEquals(0, LoadGen.parse(REQUIRED).startAtEpochMs(), "without it, as soon as ready");
    }

    @Test
    void aStartThatPassesWhileGettingReadyIsRefused() {
        assertThrows(LoadGen.StartPassed.class, () -> LoadGen.nanoTimeAt(System.currentTimeMillis() - 1));
        long ahead = LoadGen.nanoTimeAt(System.currentTimeMillis() + 2_000) - System.nanoTime();
        assertTrue(ahead > 1_900_000_000L && ahead <= 2_000_000_000L, "nanos ahead: " + ahead);
    }

    @Test
    void generatorIsIndexOfCount() {
        assertEquals("[2, 3]", java.util.Arrays.toString(LoadGen.generator("2/3")));
        for (String bad : new String[] {"0/2", "3/2", "2", "a/b", "1/0", "1/2/3"}) {
            assertThrows(IllegalArgumentException.class, () -> LoadGen.generator(bad), bad);
        }
        String[] args = java.util.Arrays.copyOf(REQUIRED, REQUIRED.length + 4);
        System.arraycopy(new String[] {"--generator", "1/2", "--warmup", "auto"}, 0, args, REQUIRED.length, 4);
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LoadGen.parse(args)).getMessage()
                .contains("choose its own window"), "one window for all generators: a fixed warm-up");
        args[REQUIRED.length + 3] = "fixed";
        LoadGen.Options o = LoadGen.parse(args);
        assertEquals(1, o.generatorIndex());
        assertEquals(2, o.generators());
    }

    @Test
    void helpReturnsNoOptions() {
        assertNull(LoadGen.parse(new String[] {"--help"}));
    }

    @Test
    void jsonStringsAreEscaped() {
        assertEquals("\"a\\\"b\\\\c\\u000a\"", Json.quote("a\"b\\c\n"));
    }
}
