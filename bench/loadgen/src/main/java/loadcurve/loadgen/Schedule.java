package loadcurve.loadgen;

/**
 * When each request is meant to be sent: request i (from 0) at start + i / rate, computed from i
 * rather than by adding a period, so rounding never accumulates into drift. The open-loop
 * generator sends on this schedule whatever the server does, and measures latency from these
 * intended times (the wrk2 method), so a stalled server cannot hide its stall.
 */
final class Schedule {
    private final long startNanos;
    private final double ratePerSecond;

    Schedule(long startNanos, double ratePerSecond) {
        if (!(ratePerSecond > 0) || Double.isInfinite(ratePerSecond)) {
            throw new IllegalArgumentException("rate must be a positive number, not " + ratePerSecond);
        }
        this.startNanos = startNanos;
        this.ratePerSecond = ratePerSecond;
    }

    long startNanos() {
        return startNanos;
    }

    double ratePerSecond() {
        return ratePerSecond;
    }

    /** The intended send time of request {@code index}, in System.nanoTime() units. */
    long intendedNanos(long index) {
        if (index < 0) {
            throw new IllegalArgumentException("index must be >= 0: " + index);
        }
        return startNanos + Math.round(index * 1e9 / ratePerSecond);
    }

    /** How many requests are intended strictly before {@code nanos} (0 before the start). */
    long countBefore(long nanos) {
        if (nanos <= startNanos) {
            return 0;
        }
        // First estimate from the rate, then correct by the exact rounding of intendedNanos.
        long n = (long) Math.ceil((nanos - startNanos) * ratePerSecond / 1e9);
        while (n > 0 && intendedNanos(n - 1) >= nanos) {
            n--;
        }
        while (intendedNanos(n) < nanos) {
            n++;
        }
        return n;
    }
}
