package loadcurve.loadgen;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AccountingTest {
    private static final long SECOND = 1_000_000_000L;
    private static final long MS = 1_000_000L;

    private static Accounting window(long startS, long endS, Recorder recorder) {
        return new Accounting(startS * SECOND, endS * SECOND, 1_000, recorder);
    }

    private static void assertBalanced(Accounting.Snapshot s) {
        Accounting.Counts t = s.total();
        assertEquals(t.sent(), t.completed() + t.errors() + t.timeouts() + s.inFlightAtEnd(),
                "sent = completed + errors + timeouts + in flight at the end: " + s);
    }

    @Test
    void everyOutcomeIsCountedOnceAndTheRestIsInFlight() {
        Recorder recorder = new Recorder(3);
        Accounting a = window(1, 3, recorder);
        for (int i = 0; i < 10; i++) {
            a.onSent(2 * SECOND + i * MS, 2 * SECOND + i * MS);
        }
        a.onCompleted(2 * SECOND, 2 * SECOND + 200 * MS);
        a.onCompleted(2 * SECOND + MS, 2 * SECOND + 201 * MS);
        a.onError(2 * SECOND + 300 * MS);
        a.onTimeout(2 * SECOND + 900 * MS);
        Accounting.Snapshot s = a.close();
        assertEquals(new Accounting.Counts(10, 2, 1, 1), s.total());
        assertEquals(6, s.inFlightAtEnd());
        assertEquals(10, s.maxInFlight());
        assertBalanced(s);
    }

    @Test
    void latencyIsMeasuredFromTheIntendedSendTime() {
        Recorder recorder = new Recorder(3);
        Accounting a = window(0, 10, recorder);
        long intended = SECOND;
        // Sent 40 ms late (the sender stalled): the 40 ms belong to the latency.
        a.onSent(intended, intended + 40 * MS);
        a.onCompleted(intended, intended + 240 * MS);
        a.close();
        Histogram h = a.takeInterval(null);
        assertEquals(1, h.getTotalCount());
        assertTrue(h.valuesAreEquivalent(240_000, h.getMaxValue()), "max " + h.getMaxValue());
    }

    @Test
    void onlyTheMeasuredWindowIsRecordedAndCountedAsWindow() {
        Recorder recorder = new Recorder(3);
        Accounting a = window(5, 10, recorder);
        // Warm-up request completing in the warm-up: total only.
        a.onSent(1 * SECOND, 1 * SECOND);
        a.onCompleted(1 * SECOND, 1 * SECOND + 200 * MS);
        // Warm-up request completing in the window: the window's completions (wrk2 convention).
        a.onSent(4 * SECOND + 900 * MS, 4 * SECOND + 900 * MS);
        a.onCompleted(4 * SECOND + 900 * MS, 5 * SECOND + 100 * MS);
        // Window request completing after the window: total only.
        a.onSent(9 * SECOND + 900 * MS, 9 * SECOND + 900 * MS);
        a.onCompleted(9 * SECOND + 900 * MS, 10 * SECOND + 100 * MS);
        // Window request timing out in the window.
        a.onSent(6 * SECOND, 6 * SECOND);
        a.onTimeout(8 * SECOND);
        // Intended in the window but sent after it (a badly lagging sender).
        a.onSent(9 * SECOND + 999 * MS, 10 * SECOND + 5 * MS);
        Accounting.Snapshot s = a.close();
        assertEquals(new Accounting.Counts(3, 1, 0, 1), s.window());
        assertEquals(new Accounting.Counts(5, 3, 0, 1), s.total());
        assertEquals(2, s.sentInWindowByActualTime());
        assertEquals(1, s.inFlightAtEnd());
        assertEquals(1, a.takeInterval(null).getTotalCount());
        assertBalanced(s);
    }

    @Test
    void eventsAfterCloseAreNotCountedAndStayInFlight() {
        Accounting a = window(0, 10, new Recorder(3));
        a.onSent(SECOND, SECOND);
        a.onSent(SECOND, SECOND);
        Accounting.Snapshot s = a.close();
        a.onCompleted(SECOND, 2 * SECOND);
        a.onTimeout(3 * SECOND);
        assertFalse(a.onSent(SECOND, SECOND));
        assertEquals(2, s.inFlightAtEnd());
        assertEquals(2, a.close().inFlightAtEnd());
        assertBalanced(a.close());
    }

    @Test
    void notSentRequestsAreNeitherSentNorInFlight() {
        Accounting a = window(0, 10, new Recorder(3));
        a.onNotSent();
        a.onNotSent();
        Accounting.Snapshot s = a.close();
        assertEquals(2, s.notSent());
        assertEquals(0, s.total().sent());
        assertEquals(0, s.inFlightAtEnd());
    }

    @Test
    void countsBalanceAndMatchTheLogWhenOutcomesRaceWithClose() throws Exception {
        // Many threads resolve requests while the interval histograms are taken and the
        // accounting closes: every window completion must be in exactly one interval.
        for (int round = 0; round < 20; round++) {
            Recorder recorder = new Recorder(3);
            Accounting a = new Accounting(0, Long.MAX_VALUE / 2, 1_000, recorder);
            int threads = 4;
            int perThread = 20_000;
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                Thread w = new Thread(() -> {
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        return;
                    }
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    for (int i = 0; i < perThread; i++) {
                        long now = System.nanoTime();
                        if (!a.onSent(now - 5 * MS, now)) {
                            return;
                        }
                        switch (random.nextInt(5)) {
                            case 0 -> a.onTimeout(now);
                            case 1 -> a.onError(now);
                            case 2 -> { } // stays in flight
                            default -> a.onCompleted(now - 5 * MS, now + random.nextInt(1000));
                        }
                    }
                });
                w.start();
                workers.add(w);
            }
            go.countDown();
            long logged = 0;
            Histogram interval = null;
            for (int i = 0; i < 5; i++) {
                Thread.sleep(1);
                interval = a.takeInterval(interval);
                logged += interval.getTotalCount();
            }
            Accounting.Snapshot s = a.close();
            logged += a.takeInterval(interval).getTotalCount();
            for (Thread w : workers) {
                w.join(30_000);
            }
            assertBalanced(s);
            assertEquals(s.window().completed(), logged, "completions counted vs logged");
            assertEquals(s.total(), a.close().total(), "nothing counted after close");
        }
    }
}
