package loadcurve.loadgen;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The warm-up rule on per-second series of known shape, at 1,000 req/s with a 15 s timeout:
 * each second completes 1,000 requests unless said otherwise.
 */
class SteadinessTest {
    private static final double RATE = 1000;
    private static final double TIMEOUT_S = 15;

    /** A second with {@code inFlight} requests in flight and 1,000 completions of p99/mean ms. */
    private static Steadiness.Second second(double inFlight, double p99Ms, double meanMs) {
        return new Steadiness.Second(inFlight, 1000, p99Ms, meanMs, 0);
    }

    /** A server answering in 4 ms (p99 8 ms): 1,000 req/s x 4 ms = 4 in flight. */
    private static Steadiness.Second steady() {
        return second(4, 8, 4);
    }

    private static boolean judge(List<Steadiness.Second> seconds) {
        return Steadiness.judge(seconds, RATE, TIMEOUT_S).steady();
    }

    @Test
    void aFlatSeriesIsSteadyAsSoonAsTheRuleIsAsked() {
        List<Steadiness.Second> flat = new ArrayList<>();
        double[] noise = {0.3, -0.4, 0.1, 0.5, -0.2, 0.0, 0.4, -0.3, 0.2, -0.1};
        for (double n : noise) {
            flat.add(second(4 + n, 8 + 2 * n, 4 + n / 2));
        }
        assertArrayEquals(new int[] {5, 1}, Steadiness.choose(flat, RATE, TIMEOUT_S, 5, 60));
        // A minimum above K: the first second asked is the minimum.
        assertArrayEquals(new int[] {7, 1}, Steadiness.choose(flat, RATE, TIMEOUT_S, 7, 60));
        // Fewer than K seconds are never steady: a minimum of 1 is still asked at K first.
        assertArrayEquals(new int[] {5, 1}, Steadiness.choose(flat, RATE, TIMEOUT_S, 1, 60));
        assertFalse(judge(flat.subList(0, 4)));
    }

    @Test
    void oneGcPauseInsideTheSecondsJudgedIsNoTrendButOneInTheLastSecondWaits() {
        List<Steadiness.Second> seconds = new ArrayList<>(List.of(steady(), steady(), steady(), steady(), steady()));
        // 150 ms pause: 150 requests queue for up to 150 ms; that second's p99 ~150 ms.
        seconds.set(2, second(15, 150, 15));
        assertTrue(judge(seconds), "one odd second in the middle");
        seconds.set(2, steady());
        seconds.set(4, second(15, 150, 15));
        assertFalse(judge(seconds), "the last second away from the level");
    }

    @Test
    void aDrainingBacklogIsNotSteadyUntilItHasDrained() {
        // A fresh JVM slow for 3 s builds 3,000 in flight, then drains them in 3 s (the fan-out
        // cell's shape), then answers in 4 ms.
        List<Steadiness.Second> seconds = new ArrayList<>(List.of(
                second(1000, 1900, 1000), second(2000, 2900, 2000), second(3000, 3900, 3000),
                second(1500, 3500, 2000), second(200, 1500, 600), second(20, 50, 20)));
        for (int i = 0; i < 10; i++) {
            seconds.add(steady());
        }
        for (int k = 5; k < 10; k++) {
            assertFalse(judge(seconds.subList(0, k)), "still draining, judged at " + k + " s");
        }
        // The first K seconds of which at most one (the first) is still the backlog's tail.
        assertTrue(judge(seconds.subList(0, 10)));
        assertArrayEquals(new int[] {10, 1}, Steadiness.choose(seconds, RATE, TIMEOUT_S, 5, 60));
    }

    @Test
    void aGrowingQueueIsNeverSteadyAndRunsIntoTheMaximum() {
        // A server completing 800 of 1,000 req/s: 200 more in flight every second, the
        // completions' latency growing with the queue.
        List<Steadiness.Second> seconds = new ArrayList<>();
        for (int i = 0; i < 70; i++) {
            double queue = 200.0 * (i + 1);
            seconds.add(new Steadiness.Second(queue, 800, queue / 800 * 1000 * 1.1, queue / 800 * 1000, 0));
        }
        for (int k = 5; k <= 60; k++) {
            assertFalse(judge(seconds.subList(0, k)), "growing, judged at " + k + " s");
        }
        assertArrayEquals(new int[] {60, 0}, Steadiness.choose(seconds, RATE, TIMEOUT_S, 5, 60));
        // A series that ends before the maximum leaves the choice open.
        assertEquals(null, Steadiness.choose(seconds.subList(0, 30), RATE, TIMEOUT_S, 5, 60));
    }

    @Test
    void aFlatButStandingBacklogIsAboveLittlesLaw() {
        // 3,000 in flight that do not move while the requests that complete take 4 ms: a queue
        // of requests that never get answered (yet): Little's law gives 4.
        List<Steadiness.Second> seconds = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            seconds.add(second(3000, 8, 4));
        }
        Steadiness.Verdict v = Steadiness.judge(seconds, RATE, TIMEOUT_S);
        assertFalse(v.steady());
        assertTrue(v.why().contains("Little's law gives 4.0"), v.why());
        // Every request timing out is a steady (saturated) state: 15 s x 1,000 req/s in flight.
        seconds.clear();
        for (int i = 0; i < 5; i++) {
            seconds.add(new Steadiness.Second(15_000, 0, 0, 0, 1000));
        }
        assertTrue(judge(seconds));
    }

    @Test
    void aP99TrendIsNotSteadyEvenWithTheQueueFlat() {
        // The JIT at work: the same few in flight, the tail halving over 4 s.
        List<Steadiness.Second> seconds = List.of(second(4, 40, 4), second(4, 32, 4), second(4, 26, 4),
                second(4, 22, 4), second(4, 20, 4));
        Steadiness.Verdict v = Steadiness.judge(seconds, RATE, TIMEOUT_S);
        assertFalse(v.steady());
        assertTrue(v.why().startsWith("p99 falling"), v.why());
    }

    @Test
    void aNoisyP99WithoutADirectionIsNoTrend() {
        // Per-second p99 at 40 req/s on a shared host (tests/test_harness_warmup.py's server
        // once quick): 97, 52, 28, 60, 9 ms. A fitted slope of about -15 ms/s, but no direction
        // (S = -6 of 10 pairs). The same values in falling order are a trend.
        double[] noisy = {97, 52, 28, 60, 9};
        List<Steadiness.Second> seconds = new ArrayList<>();
        for (double p99 : noisy) {
            seconds.add(new Steadiness.Second(0.1, 40, p99, 2, 0));
        }
        assertEquals(-6, Steadiness.mannKendall(noisy));
        assertTrue(Steadiness.judge(seconds, 40, TIMEOUT_S).steady());
        double[] falling = {97, 60, 52, 28, 9};
        seconds.clear();
        for (double p99 : falling) {
            seconds.add(new Steadiness.Second(0.1, 40, p99, 2, 0));
        }
        assertEquals(-10, Steadiness.mannKendall(falling));
        assertFalse(Steadiness.judge(seconds, 40, TIMEOUT_S).steady());
    }

    @Test
    void theilSenIgnoresOneOutlier() {
        assertEquals(1.0, Steadiness.theilSen(new double[] {0, 1, 2, 3, 4}, new double[] {0, 1, 100, 3, 4}));
        assertEquals(2.5, Steadiness.median(new double[] {4, 1, 3, 2}));
    }
}
