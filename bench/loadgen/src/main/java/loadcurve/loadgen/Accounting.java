package loadcurve.loadgen;

import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.List;

/**
 * What happened to every request, by the phase its <em>intended send time</em> falls in: the
 * warm-up [t0, windowStart), the measured window [windowStart, windowEnd) and the drain after it.
 * A cell is the window's requests: each one ends answered (a 200 within the timeout), timed out
 * or in error, and {@code sent = completed + timedOut + errors} holds for them exactly once the
 * drain is over ({@link #windowResolved()}). Warm-up and drain requests only give context. The
 * window's start is given, or (--warmup auto) chosen at run time on a whole second by a
 * {@link WindowChooser}; until then every request is a warm-up request.
 *
 * <p>Events are booked in 1 s intervals from t0 by the time they happen: counts, the requests in
 * flight (time-weighted mean and maximum, exact rather than sampled), and three histograms per
 * interval for the log: the window's completions (untagged), the window's timeouts (tag
 * {@code timeout}, at value = the timeout) and completions of other requests (tag
 * {@code outside}). Latency is from the intended send time, in units of {@code nanosPerUnit}.
 *
 * <p>Called from the client's one thread only; events must come in time order.
 */
final class Accounting {
    static final long SECOND = 1_000_000_000L;

    enum Phase { WARMUP, WINDOW, DRAIN }

    /** Told when the first request of the window, then of the drain, falls due (host probes). */
    interface PhaseListener {
        void entered(Phase phase, long nowNanos);
    }

    /**
     * Decides, while the window's start is open, whether the window starts at whole second
     * {@code second} from t0, given the whole seconds before it (--warmup auto). Asked once per
     * second, when the first request intended in that second falls due.
     */
    interface WindowChooser {
        boolean startsAt(int second, List<Interval> before);
    }

    /** Counts for one population. {@code notSent}: due but over the in-flight cap. */
    record Counts(long sent, long completed, long timedOut, long errors, long notSent) {
    }

    /** One second of the run (the last one may be shorter), by the time events happened. */
    static final class Interval {
        final int index;
        /** Not final: with the window's start chosen at run time, set when it is chosen. */
        Phase phase;
        long lengthNanos = SECOND;
        long sent;
        long completed;
        long timedOut;
        long errors;
        long notSent;
        /** Integral of the requests in flight over time, in request-nanoseconds. */
        double inFlightArea;
        long inFlightMax;
        final Histogram window = new Histogram(3);
        final Histogram timeout = new Histogram(3);
        final Histogram outside = new Histogram(3);

        Interval(int index, Phase phase) {
            this.index = index;
            this.phase = phase;
            timeout.setTag("timeout");
            outside.setTag("outside");
        }

        void absorb(Interval other) {
            sent += other.sent;
            completed += other.completed;
            timedOut += other.timedOut;
            errors += other.errors;
            notSent += other.notSent;
            inFlightMax = Math.max(inFlightMax, other.inFlightMax);
            window.add(other.window);
            timeout.add(other.timeout);
            outside.add(other.outside);
        }

        double inFlightMean() {
            return inFlightArea / lengthNanos;
        }
    }

    /** The state at close. */
    record Snapshot(Counts total, Counts window, long abandoned, long maxInFlight,
                    long sentInWindowByActualTime, long completedDuringWindow,
                    long inFlightAtWindowStart, long inFlightAtWindowEnd,
                    double windowInFlightMean, long windowInFlightMax,
                    long endNanos, long drainNanos, List<Interval> intervals) {
    }

    private final long t0;
    private long windowStart;
    private long windowEnd;
    private final long timeoutNanos;
    private final long nanosPerUnit;
    private long windowRequests;
    private int warmupIntervals;
    private final int windowIntervals;
    /** With --warmup auto: asked until the window's start is chosen, then null. */
    private WindowChooser chooser;
    private Schedule schedule;
    private int lastSecondAsked = -1;
    private PhaseListener listener = (phase, now) -> { };

    private final List<Interval> intervals = new ArrayList<>();
    private long lastNanos;
    private long sent;
    private long completed;
    private long timedOut;
    private long errors;
    private long notSent;
    private long windowSent;
    private long windowCompleted;
    private long windowTimedOut;
    private long windowErrors;
    private long windowNotSent;
    private long sentInWindowByActualTime;
    private volatile long inFlight;
    private long maxInFlight;
    private long inFlightAtWindowStart = -1;
    private long inFlightAtWindowEnd = -1;
    private Phase lastDuePhase;
    private boolean closed;

    /**
     * @param windowRequests how many requests the schedule has in the window (so the drain
     *                       knows when the last of them has resolved)
     */
    Accounting(long t0Nanos, long windowStartNanos, long windowEndNanos, long timeoutNanos,
               long nanosPerUnit, long windowRequests) {
        if (windowStartNanos - t0Nanos < 0 || (windowStartNanos - t0Nanos) % SECOND != 0
                || windowEndNanos - windowStartNanos <= 0 || (windowEndNanos - windowStartNanos) % SECOND != 0) {
            throw new IllegalArgumentException("the warm-up and the window must be whole seconds, the window > 0");
        }
        this.t0 = t0Nanos;
        this.windowStart = windowStartNanos;
        this.windowEnd = windowEndNanos;
        this.timeoutNanos = timeoutNanos;
        this.nanosPerUnit = nanosPerUnit;
        this.windowRequests = windowRequests;
        this.warmupIntervals = (int) ((windowStartNanos - t0Nanos) / SECOND);
        this.windowIntervals = (int) ((windowEndNanos - windowStartNanos) / SECOND);
        this.lastNanos = t0Nanos;
    }

    /**
     * A window of {@code windowSeconds} whose start the chooser decides at run time, on a whole
     * second from t0, at {@code latestStartSecond} at the latest. Until then every request is a
     * warm-up request, and the window's bounds are those of the latest start (the client's hard
     * stop); {@link #windowChosen()} says when it is decided.
     */
    Accounting(long t0Nanos, int latestStartSecond, int windowSeconds, long timeoutNanos, long nanosPerUnit,
               Schedule schedule, WindowChooser chooser) {
        this(t0Nanos, t0Nanos + latestStartSecond * SECOND, t0Nanos + (latestStartSecond + windowSeconds) * SECOND,
                timeoutNanos, nanosPerUnit, 0);
        this.schedule = schedule;
        this.chooser = chooser;
    }

    /** Whether the window's bounds are final (always, unless a chooser has not decided yet). */
    boolean windowChosen() {
        return chooser == null;
    }

    /** Whole seconds from t0 to the window's start (the latest possible one while not chosen). */
    int warmupSeconds() {
        return warmupIntervals;
    }

    /** The window's end (while not chosen, the latest possible one). */
    long windowEndNanos() {
        return windowEnd;
    }

    void listener(PhaseListener phaseListener) {
        this.listener = phaseListener;
    }

    /** Seconds from t0 (the log's StartTime) to {@code nanos}. */
    double secondsSinceStart(long nanos) {
        return (nanos - t0) / 1e9;
    }

    Phase phase(long intendedNanos) {
        if (chooser != null || intendedNanos - windowStart < 0) {
            return Phase.WARMUP;
        }
        return intendedNanos - windowEnd < 0 ? Phase.WINDOW : Phase.DRAIN;
    }

    /** The requests in flight now (read by the generator's summary; written by one thread). */
    long inFlight() {
        return inFlight;
    }

    /** Whether every window request has fallen due and been resolved: the drain may stop. */
    boolean windowResolved() {
        return chooser == null && windowSent + windowNotSent == windowRequests
                && windowCompleted + windowTimedOut + windowErrors == windowSent;
    }

    /** A request handed to the client at {@code nowNanos}, meant for {@code intendedNanos}. */
    void onSent(long intendedNanos, long nowNanos) {
        Phase phase = due(intendedNanos, nowNanos);
        Interval iv = advance(nowNanos);
        sent++;
        iv.sent++;
        if (phase == Phase.WINDOW) {
            windowSent++;
        }
        if (nowNanos - windowStart >= 0 && nowNanos - windowEnd < 0) {
            sentInWindowByActualTime++;
        }
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        iv.inFlightMax = Math.max(iv.inFlightMax, inFlight);
    }

    /** A request the generator did not send because its in-flight cap was reached. */
    void onNotSent(long intendedNanos, long nowNanos) {
        Phase phase = due(intendedNanos, nowNanos);
        advance(nowNanos).notSent++;
        notSent++;
        if (phase == Phase.WINDOW) {
            windowNotSent++;
        }
    }

    /** A 200 reply. One that arrives after the timeout counts as a timeout. */
    void onCompleted(long intendedNanos, long nowNanos) {
        long latencyNanos = Math.max(0, nowNanos - intendedNanos);
        if (latencyNanos >= timeoutNanos) {
            onTimeout(intendedNanos, nowNanos);
            return;
        }
        Interval iv = resolve(nowNanos);
        completed++;
        iv.completed++;
        if (phase(intendedNanos) == Phase.WINDOW) {
            windowCompleted++;
            iv.window.recordValue(latencyNanos / nanosPerUnit);
        } else {
            iv.outside.recordValue(latencyNanos / nanosPerUnit);
        }
    }

    void onTimeout(long intendedNanos, long nowNanos) {
        Interval iv = resolve(nowNanos);
        timedOut++;
        iv.timedOut++;
        if (phase(intendedNanos) == Phase.WINDOW) {
            windowTimedOut++;
            iv.timeout.recordValue(timeoutNanos / nanosPerUnit);
        }
    }

    /** A non-200 reply or a failed connection: counted, never in the log. */
    void onError(long intendedNanos, long nowNanos) {
        Interval iv = resolve(nowNanos);
        errors++;
        iv.errors++;
        if (phase(intendedNanos) == Phase.WINDOW) {
            windowErrors++;
        }
    }

    /** Stops at {@code endNanos}; requests still in flight are abandoned. */
    Snapshot close(long endNanos) {
        if (closed) {
            throw new IllegalStateException("closed twice");
        }
        advance(endNanos);
        closed = true;
        Interval last = intervals.get(intervals.size() - 1);
        last.lengthNanos = endNanos - t0 - (long) last.index * SECOND;
        if (last.lengthNanos == 0 && intervals.size() > 1) {
            // Stopped exactly on a boundary: the events at that instant close the interval before.
            intervals.remove(intervals.size() - 1);
            intervals.get(intervals.size() - 1).absorb(last);
        }
        double area = 0;
        long max = 0;
        long completedDuringWindow = 0;
        for (Interval iv : intervals) {
            if (iv.phase == Phase.WINDOW) {
                area += iv.inFlightArea;
                max = Math.max(max, iv.inFlightMax);
                completedDuringWindow += iv.completed;
            }
        }
        return new Snapshot(
                new Counts(sent, completed, timedOut, errors, notSent),
                new Counts(windowSent, windowCompleted, windowTimedOut, windowErrors, windowNotSent),
                inFlight, maxInFlight, sentInWindowByActualTime, completedDuringWindow,
                Math.max(0, inFlightAtWindowStart), inFlightAtWindowEnd < 0 ? inFlight : inFlightAtWindowEnd,
                area / (windowEnd - windowStart), max, endNanos, Math.max(0, endNanos - windowEnd),
                List.copyOf(intervals));
    }

    /** The phase of a request falling due; the first one of a phase marks the phase's start. */
    private Phase due(long intendedNanos, long nowNanos) {
        if (chooser != null) {
            choose(intendedNanos, nowNanos);
        }
        Phase phase = phase(intendedNanos);
        if (phase != lastDuePhase) {
            lastDuePhase = phase;
            if (phase == Phase.WINDOW) {
                inFlightAtWindowStart = inFlight;
            } else if (phase == Phase.DRAIN) {
                inFlightAtWindowEnd = inFlight;
            }
            listener.entered(phase, nowNanos);
        }
        return phase;
    }

    /**
     * The first request intended in a new second k asks the chooser whether the window starts
     * at k: no request intended at or after k has been sent yet, so every request keeps the
     * phase it was booked with. Its seconds before k are whole by now (now >= intended).
     */
    private void choose(long intendedNanos, long nowNanos) {
        int second = (int) ((intendedNanos - t0) / SECOND);
        if (intendedNanos - t0 < 0 || second <= lastSecondAsked) {
            return;
        }
        lastSecondAsked = second;
        advance(nowNanos);
        List<Interval> before = intervals.subList(0, Math.min(second, intervals.size()));
        // Asked at the latest second too: the chooser records whether it was reached there.
        boolean starts = chooser.startsAt(second, List.copyOf(before));
        if (starts || second >= warmupIntervals) {
            chooseWindow(Math.min(second, warmupIntervals));
        }
    }

    private void chooseWindow(int second) {
        chooser = null;
        warmupIntervals = second;
        windowStart = t0 + second * SECOND;
        windowEnd = windowStart + windowIntervals * SECOND;
        windowRequests = schedule.countBefore(windowEnd) - schedule.countBefore(windowStart);
        // The sender may run behind the clock: seconds already opened from here on are the window's.
        for (Interval iv : intervals) {
            if (iv.index >= second) {
                iv.phase = phaseOfInterval(iv.index);
            }
        }
    }

    private Interval resolve(long nowNanos) {
        Interval iv = advance(nowNanos);
        inFlight--;
        return iv;
    }

    /** Books the in-flight integral up to {@code nowNanos} and returns now's interval. */
    private Interval advance(long nowNanos) {
        if (closed && nowNanos != lastNanos) {
            throw new IllegalStateException("event after close");
        }
        if (nowNanos - lastNanos < 0) {
            nowNanos = lastNanos; // clock reads of one thread never go back; guard rounding only
        }
        int index = (int) ((nowNanos - t0) / SECOND);
        if (intervals.isEmpty()) {
            intervals.add(new Interval(0, phaseOfInterval(0)));
        }
        Interval iv = intervals.get(intervals.size() - 1);
        while (iv.index < index) {
            long boundary = t0 + (long) (iv.index + 1) * SECOND;
            iv.inFlightArea += (double) inFlight * (boundary - lastNanos);
            lastNanos = boundary;
            iv = new Interval(iv.index + 1, phaseOfInterval(iv.index + 1));
            iv.inFlightMax = inFlight;
            intervals.add(iv);
        }
        iv.inFlightArea += (double) inFlight * (nowNanos - lastNanos);
        lastNanos = nowNanos;
        return iv;
    }

    /** The warm-up rule's view of whole seconds: in flight, and the completions' p99 and mean. */
    List<Steadiness.Second> seconds(List<Interval> whole) {
        List<Steadiness.Second> out = new ArrayList<>(whole.size());
        double msPerUnit = nanosPerUnit / 1e6;
        for (Interval iv : whole) {
            Histogram completed = iv.outside.copy();
            completed.add(iv.window);
            long n = completed.getTotalCount();
            out.add(new Steadiness.Second(iv.inFlightMean(), n,
                    n == 0 ? 0 : completed.getValueAtPercentile(99) * msPerUnit,
                    n == 0 ? 0 : completed.getMean() * msPerUnit, iv.timedOut));
        }
        return out;
    }

    private Phase phaseOfInterval(int index) {
        if (index < warmupIntervals) {
            return Phase.WARMUP;
        }
        return index < warmupIntervals + windowIntervals ? Phase.WINDOW : Phase.DRAIN;
    }
}
