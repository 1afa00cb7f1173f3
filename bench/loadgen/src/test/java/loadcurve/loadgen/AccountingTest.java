package loadcurve.loadgen;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.PriorityQueue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The accounting on synthetic request streams with known send, completion and timeout times. */
class AccountingTest {
    private static final long SECOND = Accounting.SECOND;
    private static final long MS = 1_000_000L;
    private static final long TIMEOUT = 15 * SECOND;

    /** t0 = 0, warm-up [0, 5) s, window [5, 17) s, 15 s timeout, values in microseconds. */
    private static Accounting standard(long windowRequests) {
        return new Accounting(0, 5 * SECOND, 17 * SECOND, TIMEOUT, 1_000, windowRequests);
    }

    private static long total(List<Accounting.Interval> intervals, String tag) {
        long n = 0;
        for (Accounting.Interval iv : intervals) {
            n += (tag == null ? iv.window : tag.equals("timeout") ? iv.timeout : iv.outside).getTotalCount();
        }
        return n;
    }

    private static void assertWindowBalanced(Accounting.Snapshot s) {
        Accounting.Counts w = s.window();
        assertEquals(w.sent(), w.completed() + w.timedOut() + w.errors(),
                "window: sent = completed + timed_out + errors: " + w);
        Accounting.Counts t = s.total();
        assertEquals(t.sent(), t.completed() + t.timedOut() + t.errors() + s.abandoned(),
                "total: sent = completed + timed_out + errors + abandoned: " + t);
        assertEquals(w.completed(), total(s.intervals(), null), "untagged log count = window completed");
        assertEquals(w.timedOut(), total(s.intervals(), "timeout"), "timeout tag count = window timed out");
        long completedAll = 0;
        for (Accounting.Interval iv : s.intervals()) {
            completedAll += iv.completed;
            assertEquals(iv.completed, iv.window.getTotalCount() + iv.outside.getTotalCount(),
                    "interval " + iv.index + ": completed = untagged + outside");
        }
        assertEquals(t.completed(), completedAll);
    }

    /** What a simulated run produced, with the drain's end computed by the simulation itself. */
    record Simulated(Accounting.Snapshot snapshot, long lastWindowResolutionNanos) {
    }

    /**
     * A FIFO server with {@code workers} workers, each request holding one for
     * {@code serviceNanos}; it serves requests whose client has given up too (as HttpServer
     * does). Requests at {@code rate} from t0 = 0; the generator's loop is replayed: sends at
     * their intended times, outcomes in time order, stop once the window has resolved.
     */
    private static Simulated simulateFifo(int workers, long serviceNanos, double rate) {
        Schedule schedule = new Schedule(0, rate);
        long windowRequests = schedule.countBefore(17 * SECOND) - schedule.countBefore(5 * SECOND);
        Accounting a = standard(windowRequests);
        PriorityQueue<Long> free = new PriorityQueue<>();
        for (int i = 0; i < workers; i++) {
            free.add(0L);
        }
        // outcome events: {time, intended, completed? 1 : 0}
        PriorityQueue<long[]> outcomes = new PriorityQueue<>((x, y) -> Long.compare(x[0], y[0]));
        long lastWindowResolution = 0;
        long next = 0;
        while (true) {
            long sendAt = schedule.intendedNanos(next);
            long now;
            if (outcomes.isEmpty() || sendAt <= outcomes.peek()[0]) {
                now = sendAt;
                next++;
                a.onSent(sendAt, sendAt);
                long start = Math.max(sendAt, free.poll());
                long done = start + serviceNanos;
                free.add(done);
                boolean inTime = done - sendAt < TIMEOUT;
                outcomes.add(new long[] {inTime ? done : sendAt + TIMEOUT, sendAt, inTime ? 1 : 0});
            } else {
                long[] e = outcomes.poll();
                now = e[0];
                if (e[2] == 1) {
                    a.onCompleted(e[1], now);
                } else {
                    a.onTimeout(e[1], now);
                }
                if (a.phase(e[1]) == Accounting.Phase.WINDOW) {
                    lastWindowResolution = Math.max(lastWindowResolution, now);
                }
            }
            if (now >= 17 * SECOND && a.windowResolved()) {
                return new Simulated(a.close(now), lastWindowResolution);
            }
        }
    }

    @Test
    void aFifoServerAt8TimesItsCeilingAnswersNoWindowRequestInTime() {
        // 2 workers x 200 ms = 10 req/s; offered 80 req/s. By the window's start 400 requests
        // are queued, 35 s of work: every window request waits far past the 15 s timeout.
        Simulated sim = simulateFifo(2, 200 * MS, 80);
        Accounting.Snapshot s = sim.snapshot();
        assertEquals(new Accounting.Counts(960, 0, 960, 0, 0), s.window());
        assertWindowBalanced(s);
        assertEquals(0, total(s.intervals(), null), "no untagged value: nothing answered in time");
        for (Accounting.Interval iv : s.intervals()) {
            Histogram h = iv.timeout;
            if (h.getTotalCount() > 0) {
                assertTrue(h.valuesAreEquivalent(15_000_000, h.getMinValue())
                        && h.valuesAreEquivalent(15_000_000, h.getMaxValue()), "timeouts at the timeout");
                assertTrue(iv.index >= 20, "a window request times out 15 s after its send, not at " + iv.index);
            }
        }
        // The drain ends when the last window request (sent at 17 s - 12.5 ms) times out.
        assertEquals(sim.lastWindowResolutionNanos(), s.endNanos());
        assertEquals(17 * SECOND - SECOND / 80 + TIMEOUT, s.endNanos());
        assertEquals(TIMEOUT - SECOND / 80, s.drainNanos());
        // The warm-up's first requests complete (outside), and the queue only grows.
        assertTrue(total(s.intervals(), "outside") > 0);
        assertTrue(s.inFlightAtWindowEnd() > s.inFlightAtWindowStart(), s.toString());
        // 400 warm-up requests, of which 2 workers finished about 50 in 5 s.
        assertTrue(s.inFlightAtWindowStart() >= 345 && s.inFlightAtWindowStart() <= 355, s.toString());
    }

    @Test
    void belowItsCeilingEveryWindowRequestCompletesAndTheDrainIsShort() {
        // 10 req/s ceiling, offered 9.6 req/s: it keeps up; each request at 200 ms or a bit more.
        Simulated sim = simulateFifo(2, 200 * MS, 9.6);
        Accounting.Snapshot s = sim.snapshot();
        Accounting.Counts w = s.window();
        assertEquals(w.sent(), w.completed());
        assertEquals(0, w.timedOut());
        assertWindowBalanced(s);
        assertTrue(s.endNanos() >= sim.lastWindowResolutionNanos());
        assertTrue(s.drainNanos() < SECOND, "drain " + s.drainNanos());
        long min = Long.MAX_VALUE;
        for (Accounting.Interval iv : s.intervals()) {
            if (iv.window.getTotalCount() > 0) {
                min = Math.min(min, iv.window.getMinValue());
                assertTrue(iv.phase != Accounting.Phase.WARMUP, "no window completion in the warm-up");
            }
        }
        assertTrue(min >= 199_000 && min <= 201_000, "min " + min);
    }

    @Test
    void phasesOutcomesAndTagsFollowTheIntendedSendTime() {
        Accounting a = standard(2);
        // A warm-up request completing in the window: outside, never part of the cell.
        a.onSent(4 * SECOND + 900 * MS, 4 * SECOND + 900 * MS);
        a.onCompleted(4 * SECOND + 900 * MS, 5 * SECOND + 100 * MS);
        // Window requests: one sent 40 ms late and answered 200 ms after its send (latency
        // 240 ms); one answered after its timeout, in the drain (it counts as timed out).
        a.onSent(16 * SECOND, 16 * SECOND + 40 * MS);
        a.onCompleted(16 * SECOND, 16 * SECOND + 240 * MS);
        a.onSent(16 * SECOND + 500 * MS, 16 * SECOND + 500 * MS);
        a.onSent(17 * SECOND, 17 * SECOND); // a drain request: outside
        a.onCompleted(17 * SECOND, 17 * SECOND + 200 * MS);
        assertTrue(!a.windowResolved());
        a.onCompleted(16 * SECOND + 500 * MS, 31 * SECOND + 600 * MS);
        assertTrue(a.windowResolved());
        Accounting.Snapshot s = a.close(31 * SECOND + 600 * MS);
        assertEquals(new Accounting.Counts(2, 1, 1, 0, 0), s.window());
        assertEquals(new Accounting.Counts(4, 3, 1, 0, 0), s.total());
        assertWindowBalanced(s);
        List<Accounting.Interval> iv = s.intervals();
        assertEquals(32, iv.size());
        assertEquals(600 * MS, iv.get(31).lengthNanos);
        assertEquals(1, iv.get(5).outside.getTotalCount());
        assertEquals(Accounting.Phase.WINDOW, iv.get(16).phase);
        assertTrue(iv.get(16).window.valuesAreEquivalent(240_000, iv.get(16).window.getMaxValue()));
        assertEquals(1, iv.get(17).outside.getTotalCount());
        assertEquals(Accounting.Phase.DRAIN, iv.get(17).phase);
        assertEquals(1, iv.get(31).timeout.getTotalCount());
        assertEquals(2, s.sentInWindowByActualTime());
        assertEquals(0, s.abandoned());
    }

    @Test
    void inFlightIsTimeWeightedPerIntervalAndAtTheWindowsEdges() {
        Accounting a = standard(1);
        a.onSent(4 * SECOND, 4 * SECOND);                // 1 in flight from 4.0 s
        a.onSent(4 * SECOND + 500 * MS, 4 * SECOND + 500 * MS); // 2 from 4.5 s
        a.onSent(5 * SECOND, 5 * SECOND);                // window starts with 2 in flight; 3 now
        a.onCompleted(4 * SECOND, 5 * SECOND + 250 * MS); // 2 from 5.25 s
        a.onError(4 * SECOND + 500 * MS, 6 * SECOND);     // 1 from 6 s
        a.onSent(17 * SECOND, 17 * SECOND);              // the drain starts with 1 in flight
        a.onTimeout(5 * SECOND, 20 * SECOND);
        Accounting.Snapshot s = a.close(20 * SECOND);
        assertEquals(2, s.inFlightAtWindowStart());
        assertEquals(1, s.inFlightAtWindowEnd());
        List<Accounting.Interval> iv = s.intervals();
        assertEquals(1.5, iv.get(4).inFlightMean(), 1e-9);
        assertEquals(2, iv.get(4).inFlightMax);
        assertEquals(0.25 * 3 + 0.75 * 2, iv.get(5).inFlightMean(), 1e-9);
        assertEquals(3, iv.get(5).inFlightMax);
        assertEquals(1.0, iv.get(6).inFlightMean(), 1e-9);
        assertEquals((0.25 * 3 + 0.75 * 2 + 11 * 1.0) / 12, s.windowInFlightMean(), 1e-9);
        assertEquals(3, s.windowInFlightMax());
        assertEquals(new Accounting.Counts(1, 0, 1, 0, 0), s.window());
        assertEquals(1, s.total().errors());
        assertEquals(1, s.abandoned(), "the drain request is still in flight and abandoned");
        assertWindowBalanced(s);
    }

    @Test
    void requestsOverTheCapAreNotSentAndNotPartOfTheIdentity() {
        Accounting a = standard(3);
        a.onNotSent(2 * SECOND, 2 * SECOND);
        a.onSent(5 * SECOND, 5 * SECOND);
        a.onNotSent(6 * SECOND, 6 * SECOND);
        a.onSent(7 * SECOND, 7 * SECOND);
        a.onCompleted(7 * SECOND, 7 * SECOND + 200 * MS);
        a.onError(5 * SECOND, 8 * SECOND);
        assertTrue(a.windowResolved());
        Accounting.Snapshot s = a.close(8 * SECOND);
        assertEquals(new Accounting.Counts(2, 1, 0, 1, 1), s.window());
        assertEquals(2, s.total().notSent());
        assertEquals(1, s.intervals().get(6).notSent);
        assertWindowBalanced(s);
    }

    @Test
    void theWarmupAndWindowMustBeWholeSeconds() {
        assertThrows(IllegalArgumentException.class,
                () -> new Accounting(0, SECOND / 2, 3 * SECOND, TIMEOUT, 1_000, 1));
        assertThrows(IllegalArgumentException.class,
                () -> new Accounting(0, SECOND, SECOND, TIMEOUT, 1_000, 1));
    }
    /**
     * A window whose start a chooser decides (--warmup auto): asked once per second from the
     * first request due in it, with the whole seconds before it; the window then starts there.
     * 10 req/s, each answered in 50 ms, a 2 s window, started at 7 s of at most 60.
     */
    @Test
    void aChosenWindowStartsAtTheSecondItWasChosenAndEverythingFollowsIt() {
        Schedule schedule = new Schedule(0, 10);
        List<Integer> asked = new java.util.ArrayList<>();
        Accounting a = new Accounting(0, 60, 2, TIMEOUT, 1_000, schedule, (second, before) -> {
            asked.add(second);
            assertEquals(second, before.size(), "the whole seconds before it");
            assertTrue(before.stream().allMatch(iv -> iv.phase == Accounting.Phase.WARMUP));
            return second == 7;
        });
        assertTrue(!a.windowChosen());
        assertEquals(62 * SECOND, a.windowEndNanos(), "until chosen, the latest possible end");
        long next = 0;
        long now = 0;
        PriorityQueue<long[]> replies = new PriorityQueue<>((x, y) -> Long.compare(x[0], y[0]));
        while (!(now >= a.windowEndNanos() && a.windowResolved())) {
            long sendAt = schedule.intendedNanos(next);
            if (replies.isEmpty() || sendAt <= replies.peek()[0]) {
                now = sendAt;
                next++;
                a.onSent(sendAt, sendAt);
                replies.add(new long[] {sendAt + 50 * MS, sendAt});
            } else {
                long[] r = replies.poll();
                now = r[0];
                a.onCompleted(r[1], now);
            }
        }
        assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7), asked);
        assertTrue(a.windowChosen());
        assertEquals(7, a.warmupSeconds());
        assertEquals(9 * SECOND, a.windowEndNanos());
        Accounting.Snapshot s = a.close(now);
        assertEquals(new Accounting.Counts(20, 20, 0, 0, 0), s.window());
        assertWindowBalanced(s);
        for (Accounting.Interval iv : s.intervals()) {
            Accounting.Phase expected = iv.index < 7 ? Accounting.Phase.WARMUP
                    : iv.index < 9 ? Accounting.Phase.WINDOW : Accounting.Phase.DRAIN;
            assertEquals(expected, iv.phase, "interval " + iv.index);
            assertEquals(iv.phase == Accounting.Phase.WINDOW ? 10 : 0, iv.window.getTotalCount());
        }
        // The one of 6.9 s was answered at 6.95 s; in the window 10 x 50 ms in flight a second.
        assertEquals(0, s.inFlightAtWindowStart());
        assertEquals(0.5, s.windowInFlightMean(), 1e-9);
    }

    @Test
    void aSenderBehindTheClockStillStartsTheWindowOnTheSecondOfItsFirstRequest() {
        Schedule schedule = new Schedule(0, 10);
        Accounting a = new Accounting(0, 60, 1, TIMEOUT, 1_000, schedule, (second, before) -> second == 3);
        for (long i = 0; i < 30; i++) {
            a.onSent(schedule.intendedNanos(i), schedule.intendedNanos(i));
        }
        // The request intended at 3.0 s goes out at 4.5 s: the seconds 3 and 4 already opened
        // as warm-up by then become the window's and the drain's.
        a.onSent(schedule.intendedNanos(30), 4 * SECOND + 500 * MS);
        assertEquals(3, a.warmupSeconds());
        assertEquals(Accounting.Phase.WINDOW, a.phase(3 * SECOND));
        Accounting.Snapshot s = a.close(4 * SECOND + 600 * MS);
        assertEquals(Accounting.Phase.WARMUP, s.intervals().get(2).phase);
        assertEquals(Accounting.Phase.WINDOW, s.intervals().get(3).phase);
        assertEquals(Accounting.Phase.DRAIN, s.intervals().get(4).phase);
    }

    @Test
    void aWindowNeverChosenStartsAtTheLatestSecond() {
        Schedule schedule = new Schedule(0, 2);
        List<Integer> asked = new java.util.ArrayList<>();
        Accounting a = new Accounting(0, 4, 1, TIMEOUT, 1_000, schedule, (second, before) -> {
            asked.add(second);
            return false;
        });
        for (long i = 0; i < 10; i++) {
            a.onSent(schedule.intendedNanos(i), schedule.intendedNanos(i));
        }
        assertEquals(List.of(0, 1, 2, 3, 4), asked, "asked at the latest second too");
        assertTrue(a.windowChosen());
        assertEquals(4, a.warmupSeconds());
        assertEquals(Accounting.Phase.WINDOW, a.phase(4 * SECOND));
        assertEquals(Accounting.Phase.DRAIN, a.phase(5 * SECOND));
    }
}
