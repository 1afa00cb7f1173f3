package loadcurve.loadgen;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ScheduleTest {
    private static final long SECOND = 1_000_000_000L;

    @Test
    void firstRequestIsIntendedAtTheStart() {
        assertEquals(123_456L, new Schedule(123_456L, 800).intendedNanos(0));
    }

    @Test
    void requestsAreEvenlySpacedAtTheOfferedRate() {
        Schedule s = new Schedule(0, 800);
        for (long i = 1; i < 10_000; i++) {
            long gap = s.intendedNanos(i) - s.intendedNanos(i - 1);
            assertEquals(1_250_000L, gap, "gap before request " + i);
        }
    }

    @Test
    void roundingDoesNotAccumulateIntoDrift() {
        // 3 req/s has a period of 333,333,333.33 ns: adding a rounded period would drift by
        // 1/3 ns per request; computing from the index keeps request 3n exactly on n seconds.
        Schedule s = new Schedule(1_000L, 3);
        assertEquals(1_000L + 3_600L * SECOND, s.intendedNanos(3 * 3_600));
        assertEquals(1_000L + 333_333_333L, s.intendedNanos(1));
        assertEquals(1_000L + 666_666_667L, s.intendedNanos(2));
    }

    @Test
    void countBeforeGivesTheNumberOfRequestsInAWindow() {
        Schedule s = new Schedule(5 * SECOND, 25);
        assertEquals(0, s.countBefore(0));
        assertEquals(0, s.countBefore(5 * SECOND));
        assertEquals(1, s.countBefore(5 * SECOND + 1));
        // [start, start + 12 s) holds exactly 25 * 12 intended sends.
        assertEquals(300, s.countBefore(17 * SECOND));
        // A window [a, b) holds countBefore(b) - countBefore(a) requests.
        assertEquals(250, s.countBefore(17 * SECOND) - s.countBefore(7 * SECOND));
    }

    @Test
    void countBeforeAgreesWithIntendedTimesForAwkwardRates() {
        for (double rate : new double[] {0.7, 3, 7, 33.3, 800, 12_345.6}) {
            Schedule s = new Schedule(17, rate);
            for (long i = 0; i < 2_000; i++) {
                long t = s.intendedNanos(i);
                assertEquals(i, s.countBefore(t), "rate " + rate + " index " + i);
                assertEquals(i + 1, s.countBefore(t + 1), "rate " + rate + " index " + i);
            }
        }
    }

    @Test
    void intendedTimesAreIndependentOfWhenTheyAreAsked() {
        // The schedule is a pure function of the index: an open-loop sender that falls behind
        // still measures from these times, never from when it got round to sending.
        Schedule s = new Schedule(0, 200);
        long late = s.intendedNanos(1_000);
        s.intendedNanos(5);
        assertEquals(late, s.intendedNanos(1_000));
        assertEquals(5 * SECOND, late);
    }

    @Test
    void rejectsNonPositiveRates() {
        assertThrows(IllegalArgumentException.class, () -> new Schedule(0, 0));
        assertThrows(IllegalArgumentException.class, () -> new Schedule(0, -1));
        assertThrows(IllegalArgumentException.class, () -> new Schedule(0, Double.NaN));
        assertTrue(new Schedule(0, 0.001).intendedNanos(1) > 0);
    }
}
