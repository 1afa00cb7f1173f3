package loadcurve.loadgen;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.HdrHistogram.WriterReaderPhaser;

import java.util.concurrent.atomic.AtomicLong;

/**
 * What happened to every request, counted so that at any close
 * {@code sent = completed + errors + timeouts + in flight} holds exactly, for the whole run and
 * separately for the measured window.
 *
 * <p>The measured window is [windowStart, windowEnd) in System.nanoTime() units. A request counts
 * as sent in the window when its intended send time falls in it; completions, errors and timeouts
 * count in the window when they happen in it (the wrk2 convention: the achieved rate is what
 * completed during the window). Latencies of completions in the window go to the interval
 * recorder, in the unit given by {@code nanosPerUnit} (1000 for microseconds).
 *
 * <p>Events that race with {@link #close()} are resolved by a writer-reader phaser: once close()
 * returns, no event is counted any more, and the requests those late events belong to stay
 * counted as in flight at the end.
 */
final class Accounting {
    /** Counts for one scope (the whole run, or the measured window). */
    record Counts(long sent, long completed, long errors, long timeouts) {
    }

    /** The state at close. {@code inFlightAtEnd} is tracked, not derived, so the sum is a check. */
    record Snapshot(Counts total, Counts window, long inFlightAtEnd, long maxInFlight,
                    long notSent, long sentInWindowByActualTime) {
    }

    private final long windowStartNanos;
    private final long windowEndNanos;
    private final long nanosPerUnit;
    private final Recorder recorder;
    private final WriterReaderPhaser phaser = new WriterReaderPhaser();
    private volatile boolean closed;

    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong completed = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private final AtomicLong timeouts = new AtomicLong();
    private final AtomicLong windowSent = new AtomicLong();
    private final AtomicLong windowCompleted = new AtomicLong();
    private final AtomicLong windowErrors = new AtomicLong();
    private final AtomicLong windowTimeouts = new AtomicLong();
    private final AtomicLong inFlight = new AtomicLong();
    private final AtomicLong maxInFlight = new AtomicLong();
    private final AtomicLong notSent = new AtomicLong();
    private final AtomicLong sentInWindowByActualTime = new AtomicLong();

    Accounting(long windowStartNanos, long windowEndNanos, long nanosPerUnit, Recorder recorder) {
        if (windowEndNanos <= windowStartNanos) {
            throw new IllegalArgumentException("the window must have a positive length");
        }
        this.windowStartNanos = windowStartNanos;
        this.windowEndNanos = windowEndNanos;
        this.nanosPerUnit = nanosPerUnit;
        this.recorder = recorder;
    }

    boolean inWindow(long nanos) {
        return nanos - windowStartNanos >= 0 && nanos - windowEndNanos < 0;
    }

    /** A request handed to the client at {@code actualNanos}, meant for {@code intendedNanos}. */
    boolean onSent(long intendedNanos, long actualNanos) {
        long stamp = phaser.writerCriticalSectionEnter();
        try {
            if (closed) {
                return false;
            }
            sent.incrementAndGet();
            if (inWindow(intendedNanos)) {
                windowSent.incrementAndGet();
            }
            if (inWindow(actualNanos)) {
                sentInWindowByActualTime.incrementAndGet();
            }
            long now = inFlight.incrementAndGet();
            maxInFlight.accumulateAndGet(now, Math::max);
            return true;
        } finally {
            phaser.writerCriticalSectionExit(stamp);
        }
    }

    /** A request the generator did not send because its in-flight cap was reached. */
    void onNotSent() {
        notSent.incrementAndGet();
    }

    long inFlight() {
        return inFlight.get();
    }

    void onCompleted(long intendedNanos, long nowNanos) {
        long stamp = phaser.writerCriticalSectionEnter();
        try {
            if (closed) {
                return;
            }
            inFlight.decrementAndGet();
            completed.incrementAndGet();
            if (inWindow(nowNanos)) {
                long latencyUnits = Math.max(0, nowNanos - intendedNanos) / nanosPerUnit;
                recorder.recordValue(latencyUnits);
                windowCompleted.incrementAndGet();
            }
        } finally {
            phaser.writerCriticalSectionExit(stamp);
        }
    }

    void onTimeout(long nowNanos) {
        resolveFailure(timeouts, windowTimeouts, nowNanos);
    }

    void onError(long nowNanos) {
        resolveFailure(errors, windowErrors, nowNanos);
    }

    private void resolveFailure(AtomicLong total, AtomicLong window, long nowNanos) {
        long stamp = phaser.writerCriticalSectionEnter();
        try {
            if (closed) {
                return;
            }
            inFlight.decrementAndGet();
            total.incrementAndGet();
            if (inWindow(nowNanos)) {
                window.incrementAndGet();
            }
        } finally {
            phaser.writerCriticalSectionExit(stamp);
        }
    }

    /** Stops counting; every event that started before this returns is included. */
    Snapshot close() {
        closed = true;
        phaser.readerLock();
        try {
            phaser.flipPhase();
        } finally {
            phaser.readerUnlock();
        }
        return new Snapshot(
                new Counts(sent.get(), completed.get(), errors.get(), timeouts.get()),
                new Counts(windowSent.get(), windowCompleted.get(), windowErrors.get(), windowTimeouts.get()),
                inFlight.get(), maxInFlight.get(), notSent.get(), sentInWindowByActualTime.get());
    }

    /** The latencies recorded since the last call (see Recorder.getIntervalHistogram). */
    Histogram takeInterval(Histogram recycle) {
        return recorder.getIntervalHistogram(recycle);
    }
}
