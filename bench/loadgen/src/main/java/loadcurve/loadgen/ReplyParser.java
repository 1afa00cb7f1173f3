package loadcurve.loadgen;

import java.net.ProtocolException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Reads one HTTP/1.1 reply at a time from a connection's bytes, as they arrive, without
 * allocating: the status and the headers that frame the body, then the body, which is skipped
 * (only its first {@link #HEAD_BYTES} bytes are kept, for an error's report). A body is framed
 * by Content-Length, by {@code Transfer-Encoding: chunked}, or by the server closing the
 * connection; a reply to HEAD and a 204 or 304 have none (RFC 9112, 6.3). Interim 1xx replies
 * are skipped. One parser per connection, {@link #reset} before each request.
 */
final class ReplyParser {
    static final int HEAD_BYTES = 200;
    private static final int STATUS_LINE_BYTES = 120;

    private enum State { HEADERS, LENGTH, CHUNK_SIZE, CHUNK_DATA, CHUNK_END, TRAILERS, UNTIL_CLOSE, DONE }

    private State state = State.HEADERS;
    private boolean headRequest;
    private boolean started;
    private int status;
    private boolean closeAfter;
    private long remaining;
    private boolean chunkSizeDigits;
    private boolean chunkExtension;
    private int lineLength;
    private final byte[] statusLine = new byte[STATUS_LINE_BYTES];
    private int statusLineLength;
    private final byte[] bodyHead = new byte[HEAD_BYTES];
    private int bodyHeadLength;

    void reset(boolean headRequest) {
        this.headRequest = headRequest;
        state = State.HEADERS;
        started = false;
        status = 0;
        closeAfter = false;
        bodyHeadLength = 0;
        statusLineLength = 0;
    }

    /** Whether any byte of the reply has arrived (a request with none may be re-sent). */
    boolean started() {
        return started;
    }

    int status() {
        return status;
    }

    /** The server will close the connection after this reply: it cannot be reused. */
    boolean closeAfter() {
        return closeAfter;
    }

    String statusLine() {
        return new String(statusLine, 0, statusLineLength, StandardCharsets.ISO_8859_1);
    }

    /** The body's first bytes as text, a malformed UTF-8 sequence replaced by U+FFFD. */
    String bodyHead() {
        return new String(bodyHead, 0, bodyHeadLength, StandardCharsets.UTF_8);
    }

    /**
     * Consumes what it can of {@code buf} (in read mode) and says whether the reply is whole.
     * An incomplete header block stays in {@code buf} (the caller compacts and reads more);
     * bytes after a whole reply stay there too.
     */
    boolean feed(ByteBuffer buf) throws ProtocolException {
        if (buf.hasRemaining()) {
            started = true;
        }
        while (true) {
            switch (state) {
                case HEADERS -> {
                    if (!headers(buf)) {
                        return false;
                    }
                }
                case LENGTH -> {
                    skip(buf);
                    if (remaining > 0) {
                        return false;
                    }
                    state = State.DONE;
                }
                case CHUNK_SIZE -> {
                    if (!chunkSize(buf)) {
                        return false;
                    }
                }
                case CHUNK_DATA -> {
                    skip(buf);
                    if (remaining > 0) {
                        return false;
                    }
                    state = State.CHUNK_END;
                }
                case CHUNK_END -> {
                    if (!lineEnd(buf)) {
                        return false;
                    }
                    state = State.CHUNK_SIZE;
                }
                case TRAILERS -> {
                    if (!trailers(buf)) {
                        return false;
                    }
                    state = State.DONE;
                }
                case UNTIL_CLOSE -> {
                    remaining = Long.MAX_VALUE;
                    skip(buf);
                    return false;
                }
                case DONE -> {
                    return true;
                }
            }
        }
    }

    /** At the end of the stream: true if that ends the reply (a body delimited by the close). */
    boolean endsAtClose() {
        return state == State.UNTIL_CLOSE;
    }

    private void skip(ByteBuffer buf) {
        int n = (int) Math.min(remaining, buf.remaining());
        int keep = Math.min(n, HEAD_BYTES - bodyHeadLength);
        buf.get(bodyHead, bodyHeadLength, keep);
        bodyHeadLength += keep;
        buf.position(buf.position() + n - keep);
        remaining -= n;
    }

    /** Parses the header block once it is whole; false while it is not. */
    private boolean headers(ByteBuffer buf) throws ProtocolException {
        byte[] a = buf.array();
        int from = buf.arrayOffset() + buf.position();
        int to = buf.arrayOffset() + buf.limit();
        int end = -1;
        for (int i = from; i + 3 < to; i++) {
            if (a[i] == '\r' && a[i + 1] == '\n' && a[i + 2] == '\r' && a[i + 3] == '\n') {
                end = i;
                break;
            }
        }
        if (end < 0) {
            return false;
        }
        int lineEnd = indexOf(a, from, end + 2, (byte) '\r');
        statusLineLength = Math.min(lineEnd - from, STATUS_LINE_BYTES);
        System.arraycopy(a, from, statusLine, 0, statusLineLength);
        boolean http10 = parseStatus(a, from, lineEnd);
        long contentLength = -1;
        boolean chunked = false;
        boolean teOther = false;
        boolean keepAlive = false;
        boolean close = false;
        for (int line = lineEnd + 2; line < end; ) {
            int next = indexOf(a, line, end + 2, (byte) '\r');
            int colon = indexOf(a, line, next, (byte) ':');
            if (colon < next) {
                int v = colon + 1;
                int w = next;
                while (v < w && (a[v] == ' ' || a[v] == '\t')) {
                    v++;
                }
                while (w > v && (a[w - 1] == ' ' || a[w - 1] == '\t')) {
                    w--;
                }
                if (nameIs(a, line, colon, "content-length")) {
                    contentLength = digits(a, v, w);
                } else if (nameIs(a, line, colon, "transfer-encoding")) {
                    chunked = contains(a, v, w, "chunked");
                    teOther = !chunked;
                } else if (nameIs(a, line, colon, "connection")) {
                    close |= contains(a, v, w, "close");
                    keepAlive |= contains(a, v, w, "keep-alive");
                }
            }
            line = next + 2;
        }
        buf.position(end + 4 - buf.arrayOffset());
        closeAfter = close || (http10 && !keepAlive);
        if (status < 200) {
            if (status == 101) {
                throw new ProtocolException("the server switched protocols (101): " + statusLine());
            }
            return true; // an interim reply: the real one follows
        }
        remaining = 0;
        if (headRequest || status == 204 || status == 304) {
            state = State.DONE;
        } else if (chunked) {
            startChunk();
        } else if (teOther || contentLength < 0) {
            state = State.UNTIL_CLOSE;
            closeAfter = true;
        } else {
            remaining = contentLength;
            state = remaining > 0 ? State.LENGTH : State.DONE;
        }
        return true;
    }

    /** "HTTP/1.x NNN ...": sets the status, says whether it is HTTP/1.0. */
    private boolean parseStatus(byte[] a, int from, int to) throws ProtocolException {
        if (to - from < 12 || !prefix(a, from, "HTTP/1.") || a[from + 8] != ' ' || (to - from > 12 && a[from + 12] != ' ')) {
            throw new ProtocolException("not an HTTP/1.x status line: " + statusLine());
        }
        long code = digits(a, from + 9, from + 12);
        if (code < 100 || code > 599) {
            throw new ProtocolException("status out of range: " + statusLine());
        }
        status = (int) code;
        return a[from + 7] == '0';
    }

    /** The chunk-size line: hex digits, an optional ";extension", CRLF. */
    private boolean chunkSize(ByteBuffer buf) throws ProtocolException {
        while (buf.hasRemaining()) {
            byte b = buf.get();
            if (b == '\n') {
                if (!chunkSizeDigits) {
                    throw new ProtocolException("a chunk size line without a size");
                }
                if (remaining == 0) {
                    state = State.TRAILERS;
                    lineLength = 0;
                } else {
                    state = State.CHUNK_DATA;
                }
                return true;
            }
            if (chunkExtension || b == '\r') {
                continue;
            }
            if (b == ';' || b == ' ' || b == '\t') {
                chunkExtension = true;
                continue;
            }
            int digit = Character.digit(b, 16);
            if (digit < 0 || remaining > (Long.MAX_VALUE >> 4)) {
                throw new ProtocolException("a bad chunk size");
            }
            remaining = remaining * 16 + digit;
            chunkSizeDigits = true;
        }
        return false;
    }

    private void startChunk() {
        state = State.CHUNK_SIZE;
        remaining = 0;
        chunkSizeDigits = false;
        chunkExtension = false;
    }

    /** The CRLF after a chunk's data. */
    private boolean lineEnd(ByteBuffer buf) throws ProtocolException {
        while (buf.hasRemaining()) {
            byte b = buf.get();
            if (b == '\n') {
                startChunk();
                return true;
            }
            if (b != '\r') {
                throw new ProtocolException("a chunk longer than its size");
            }
        }
        return false;
    }

    /** Trailer lines up to an empty one. */
    private boolean trailers(ByteBuffer buf) {
        while (buf.hasRemaining()) {
            byte b = buf.get();
            if (b == '\n') {
                if (lineLength == 0) {
                    return true;
                }
                lineLength = 0;
            } else if (b != '\r') {
                lineLength++;
            }
        }
        return false;
    }

    private static int indexOf(byte[] a, int from, int to, byte b) {
        for (int i = from; i < to; i++) {
            if (a[i] == b) {
                return i;
            }
        }
        return to;
    }

    private static long digits(byte[] a, int from, int to) throws ProtocolException {
        if (from >= to || to - from > 18) {
            throw new ProtocolException("a bad number in the reply's headers");
        }
        long n = 0;
        for (int i = from; i < to; i++) {
            if (a[i] < '0' || a[i] > '9') {
                throw new ProtocolException("a bad number in the reply's headers");
            }
            n = n * 10 + (a[i] - '0');
        }
        return n;
    }

    private static boolean prefix(byte[] a, int from, String s) {
        for (int i = 0; i < s.length(); i++) {
            if (a[from + i] != s.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    /** Case-insensitive: {@code lower} is lower case. */
    private static boolean nameIs(byte[] a, int from, int to, String lower) {
        return to - from == lower.length() && regionIs(a, from, lower);
    }

    private static boolean regionIs(byte[] a, int from, String lower) {
        for (int i = 0; i < lower.length(); i++) {
            int c = a[from + i];
            if ((c >= 'A' && c <= 'Z' ? c + 32 : c) != lower.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    private static boolean contains(byte[] a, int from, int to, String lower) {
        for (int i = from; i + lower.length() <= to; i++) {
            if (regionIs(a, i, lower)) {
                return true;
            }
        }
        return false;
    }
}
