package loadcurve.loadgen;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What the errors were: the window's errors by status (a status outside --success) or by kind
 * ({@link #CONNECTION}: the connection failed, was reset or closed before a whole reply, TLS
 * included; {@link #BAD_REPLY}: the reply was not HTTP/1.x as the generator reads it), so that
 * the values add up to the window's {@code errors}; and the first error of the whole run, with
 * its status line or exception, the body's first bytes and its intended send time.
 */
final class Errors {
    static final String CONNECTION = "connection";
    static final String BAD_REPLY = "bad_reply";

    private final long[] windowByStatus = new long[600];
    private long windowConnection;
    private long windowBadReply;
    private Map<String, Object> first;

    /** The reply's text is made only for the first error: a run of 500s allocates nothing. */
    void status(ReplyParser reply, double intendedS, boolean window) {
        if (window) {
            windowByStatus[reply.status()]++;
        }
        if (first == null) {
            noteFirst(reply.status(), reply.statusLine(), reply.bodyHead(), intendedS);
        }
    }

    void failure(boolean badReply, String reason, double intendedS, boolean window) {
        if (window) {
            if (badReply) {
                windowBadReply++;
            } else {
                windowConnection++;
            }
        }
        noteFirst(null, reason, null, intendedS);
    }

    private void noteFirst(Integer status, String reason, String bodyHead, double intendedS) {
        if (first == null) {
            first = new LinkedHashMap<>();
            first.put("status", status);
            first.put("reason", reason);
            first.put("body_head", bodyHead);
            first.put("intended_s", Math.round(intendedS * 1e6) / 1e6);
        }
    }

    /** The first error, or null. */
    Map<String, Object> first() {
        return first;
    }

    /** The window's errors: "500": n, ..., then "connection" and "bad_reply" when not 0. */
    Map<String, Object> windowByStatus() {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int s = 0; s < windowByStatus.length; s++) {
            if (windowByStatus[s] > 0) {
                m.put(Integer.toString(s), windowByStatus[s]);
            }
        }
        if (windowConnection > 0) {
            m.put(CONNECTION, windowConnection);
        }
        if (windowBadReply > 0) {
            m.put(BAD_REPLY, windowBadReply);
        }
        return m;
    }
}
