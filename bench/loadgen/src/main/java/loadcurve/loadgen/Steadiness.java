package loadcurve.loadgen;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The warm-up's rule (issue 32, bench/README.md "Warm-up until steady"): whether the last
 * {@link #SECONDS} whole seconds of a run look like a steady state, judged from the generator's
 * own per-second figures only. Every constant of the rule is here.
 *
 * <p>Steady means all of:
 * <ul>
 * <li>the requests in flight have no trend: their Theil-Sen slope over the seconds, times the
 * span, is within {@link #IN_FLIGHT_TOLERANCE} of their median level and within
 * {@link #RATE_SHARE} of the offered rate per second (whichever is less), plus
 * {@link #IN_FLIGHT_FLOOR} requests;</li>
 * <li>the last second is back near that level (the same tolerance): the window starts now, so a
 * queue just starting to grow, which a robust slope ignores, must not pass;</li>
 * <li>that level is not above what Little's law gives from the latency of the requests that
 * ended in those seconds (offered rate x their mean time in flight, a timeout counting as the
 * timeout) by more than {@link #LITTLE_FACTOR} (plus the floor): a standing backlog;</li>
 * <li>the per-second p99 of the completed requests has no trend, over the seconds that had
 * completions (when at least {@link #MIN_P99_SECONDS} had; below that, at a rate of a request
 * every few seconds or with every request failing, there is no p99 to trend). A trend is both a
 * direction (Mann-Kendall: of the pairs of seconds, later minus earlier, the ones going one way
 * outnumber the others by {@link #P99_MIN_AGREEMENT} or more) and a size (Theil-Sen slope x
 * span beyond {@link #P99_TOLERANCE} of their median plus {@link #P99_FLOOR_MS}).</li>
 * </ul>
 */
final class Steadiness {
    /**
     * K, the seconds judged. Five is the fewest on which a Theil-Sen slope (median of the 10
     * pairwise slopes) still ignores one odd second, such as a GC pause or a one-off compile; it
     * is also the fixed warm-up the harness used before, so a server steady from its start is
     * measured after the same 5 s as before.
     */
    static final int SECONDS = 5;
    /**
     * Change over the K seconds allowed in the requests in flight, as a share of their level.
     * A draining backlog loses far more than a fifth of its level in 4 s (the fan-out cell: 3,190
     * to 4 in 4 s); the time-average of a steady queue's size over 1 s varies much less (a
     * 400 req/s x 200 ms cell: level 80, standard deviation about 6, so a fitted 4 s change of
     * about 7, against the 18 allowed).
     */
    static final double IN_FLIGHT_TOLERANCE = 0.2;
    /**
     * A slope of the requests in flight, per second, allowed as a share of the offered rate. A
     * queue growing by s requests a second is a server completing s fewer than it is sent: the
     * knee search calls a server completing under 95 % saturated, so a steady one must stay well
     * inside that. Without it a queue that grows by the same number each second would pass once
     * it is large (200 a second is under a fifth of a level of 4,000).
     */
    static final double RATE_SHARE = 0.02;
    /**
     * Requests in flight a change may always have: at a few requests in flight (1,000 req/s x
     * 2 ms) a 20 ms GC pause adds about 1 to a second's mean, which is no trend.
     */
    static final double IN_FLIGHT_FLOOR = 2;
    /**
     * How far above Little's law the in-flight level may be. With the mean time in flight the law
     * is exact in a steady state; the factor leaves room for what the generator cannot see: the
     * time an error took (errors have no latency here) and the edges of a 5 s span.
     */
    static final double LITTLE_FACTOR = 2;
    /**
     * Change over the K seconds allowed in the per-second p99, as a share of its median: a
     * per-second p99 of a few hundred samples moves by tens of percent from second to second on a
     * shared host; the JIT's warm-up halves it or more.
     */
    static final double P99_TOLERANCE = 0.25;
    /** A p99 change below this is never a trend: the scheduler's and timer's granularity. */
    static final double P99_FLOOR_MS = 1;
    /**
     * The Mann-Kendall S (pairs rising minus pairs falling) a p99 trend needs. A second's p99 is
     * the tail of one second's requests: at 40 req/s on a shared host it jumped between 4 and
     * 97 ms from one second to the next with no trend at all (tests/test_harness_warmup.py's
     * server), so a fitted slope alone called noise a trend. Of the 10 pairs of 5 seconds, 9 or
     * more going one way (S >= 8) happens by chance in 5 of the 120 orders of 5 distinct
     * values, 8 % both ways; a transient (the JIT, a queue draining) moves the tail one way
     * second after second.
     */
    static final int P99_MIN_AGREEMENT = 8;
    /** Seconds with completions needed for a p99 trend (of the K). */
    static final int MIN_P99_SECONDS = 3;

    private Steadiness() {
    }

    /**
     * One whole second of the run: the time-weighted mean of the requests in flight, the
     * requests completed in it (answered in time) with their p99 and mean latency in
     * milliseconds (0 when none), and the requests that timed out in it.
     */
    record Second(double inFlightMean, long completed, double p99Ms, double meanMs, long timedOut) {
    }

    /** The verdict, and in a few words why (the generator's log prints it). */
    record Verdict(boolean steady, String why) {
    }

    /**
     * Whether the last {@link #SECONDS} of {@code seconds} (oldest first) are steady, at offered
     * rate {@code rate} req/s with a timeout of {@code timeoutS}.
     */
    static Verdict judge(List<Second> seconds, double rate, double timeoutS) {
        if (seconds.size() < SECONDS) {
            return new Verdict(false, "fewer than " + SECONDS + " s to judge");
        }
        List<Second> last = seconds.subList(seconds.size() - SECONDS, seconds.size());
        double[] inFlight = new double[SECONDS];
        double[] at = new double[SECONDS];
        double resolved = 0;
        double timeInFlightMs = 0;
        List<double[]> p99 = new ArrayList<>();
        for (int i = 0; i < SECONDS; i++) {
            Second s = last.get(i);
            inFlight[i] = s.inFlightMean();
            at[i] = i;
            resolved += s.completed() + s.timedOut();
            timeInFlightMs += s.completed() * s.meanMs() + s.timedOut() * timeoutS * 1000;
            if (s.completed() > 0) {
                p99.add(new double[] {i, s.p99Ms()});
            }
        }
        double level = median(inFlight);
        double allowed = IN_FLIGHT_TOLERANCE * level + IN_FLIGHT_FLOOR;
        double change = theilSen(at, inFlight) * (SECONDS - 1);
        double allowedChange = Math.min(IN_FLIGHT_TOLERANCE * level, RATE_SHARE * rate * (SECONDS - 1))
                + IN_FLIGHT_FLOOR;
        if (Math.abs(change) > allowedChange) {
            return new Verdict(false, String.format(Locale.ROOT,
                    "in flight %s by %.1f in %d s (level %.1f)", change > 0 ? "rising" : "falling",
                    Math.abs(change), SECONDS - 1, level));
        }
        double lastInFlight = inFlight[SECONDS - 1];
        if (Math.abs(lastInFlight - level) > allowed) {
            return new Verdict(false, String.format(Locale.ROOT,
                    "in flight %.1f in the last second, level %.1f", lastInFlight, level));
        }
        if (resolved > 0) {
            double little = rate * timeInFlightMs / resolved / 1000;
            if (level > LITTLE_FACTOR * little + IN_FLIGHT_FLOOR) {
                return new Verdict(false, String.format(Locale.ROOT,
                        "in flight %.1f, Little's law gives %.1f", level, little));
            }
        }
        if (p99.size() >= MIN_P99_SECONDS) {
            double[] x = new double[p99.size()];
            double[] y = new double[p99.size()];
            for (int i = 0; i < x.length; i++) {
                x[i] = p99.get(i)[0];
                y[i] = p99.get(i)[1];
            }
            double p99Level = median(y);
            double p99Change = theilSen(x, y) * (SECONDS - 1);
            if (Math.abs(mannKendall(y)) >= P99_MIN_AGREEMENT
                    && Math.abs(p99Change) > P99_TOLERANCE * p99Level + P99_FLOOR_MS) {
                return new Verdict(false, String.format(Locale.ROOT,
                        "p99 %s by %.1f ms in %d s (level %.1f ms)", p99Change > 0 ? "rising" : "falling",
                        Math.abs(p99Change), SECONDS - 1, p99Level));
            }
        }
        return new Verdict(true, String.format(Locale.ROOT, "steady: in flight %.1f", level));
    }

    /**
     * The warm-up's choice over a whole series of seconds (what the generator does second by
     * second): the window starts at the first whole second k, from {@code minS} (but not before
     * K seconds exist to judge) to {@code maxS}, at which the K seconds before it are steady;
     * at {@code maxS} at the latest, then not reached. Returns {k, reached ? 1 : 0}, or null
     * when the series ends before a choice.
     */
    static int[] choose(List<Second> seconds, double rate, double timeoutS, int minS, int maxS) {
        for (int k = firstCheck(minS, maxS); k <= maxS && k <= seconds.size(); k++) {
            if (judge(seconds.subList(0, k), rate, timeoutS).steady()) {
                return new int[] {k, 1};
            }
            if (k == maxS) {
                return new int[] {k, 0};
            }
        }
        return null;
    }

    /** The first second at which the rule is asked: after the minimum, with K seconds to judge. */
    static int firstCheck(int minS, int maxS) {
        return Math.min(maxS, Math.max(minS, SECONDS));
    }

    static double median(double[] values) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    /** Mann-Kendall's S: over every pair i < j, +1 when y[j] > y[i], -1 when below, 0 when equal. */
    static int mannKendall(double[] y) {
        int s = 0;
        for (int i = 0; i < y.length; i++) {
            for (int j = i + 1; j < y.length; j++) {
                s += Double.compare(y[j], y[i]) > 0 ? 1 : y[j] < y[i] ? -1 : 0;
            }
        }
        return s;
    }

    /** The median of the pairwise slopes: a line's slope that one odd point does not move. */
    static double theilSen(double[] x, double[] y) {
        List<Double> slopes = new ArrayList<>();
        for (int i = 0; i < x.length; i++) {
            for (int j = i + 1; j < x.length; j++) {
                if (x[j] != x[i]) {
                    slopes.add((y[j] - y[i]) / (x[j] - x[i]));
                }
            }
        }
        if (slopes.isEmpty()) {
            return 0;
        }
        double[] s = new double[slopes.size()];
        for (int i = 0; i < s.length; i++) {
            s[i] = slopes.get(i);
        }
        return median(s);
    }
}
