package loadcurve.loadgen;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Locale;
import java.util.concurrent.locks.LockSupport;

/**
 * A minimal single-threaded HTTP/1.1 client that sends GETs on an open-loop schedule.
 *
 * <p>One thread does everything (sending on schedule, reading replies, expiring timeouts) with
 * one selector, so the generator allocates almost nothing per request and has no GC pauses or
 * thread hand-offs of its own to add to the latencies it measures. HTTP/1.1 without pipelining:
 * a request goes on an idle keep-alive connection if there is one, else on a new connection, so
 * a request never waits for an earlier reply. A request with no complete reply {@code timeout}
 * after its intended send time is a timeout and its connection is closed.
 */
final class OpenLoopClient implements AutoCloseable {
    /** Sends in a row before replies and timeouts are served again (see run). */
    private static final int SEND_BATCH = 64;

    /** One request on the wire. Kept in send order, so deadlines are in order too. */
    private static final class Request {
        final long intendedNanos;
        final long deadlineNanos;
        Connection connection;
        boolean done;
        boolean retried;

        Request(long intendedNanos, long deadlineNanos) {
            this.intendedNanos = intendedNanos;
            this.deadlineNanos = deadlineNanos;
        }
    }

    private static final class Connection {
        final SocketChannel channel;
        final SelectionKey key;
        ByteBuffer in = ByteBuffer.allocate(512);
        ByteBuffer out;
        Request request;
        boolean reused;
        boolean closed;

        Connection(SocketChannel channel, SelectionKey key) {
            this.channel = channel;
            this.key = key;
        }
    }

    private final Selector selector;
    private final InetSocketAddress address;
    private final byte[] requestBytes;
    private final long timeoutNanos;
    private final int maxInFlight;
    private final Accounting accounting;
    private final ArrayDeque<Connection> idle = new ArrayDeque<>();
    private final ArrayDeque<Request> pending = new ArrayDeque<>();
    private int inFlight;
    private long connectionsOpened;
    private long retries;
    private String firstError;

    OpenLoopClient(InetSocketAddress address, String pathAndQuery, long timeoutNanos, int maxInFlight,
                   Accounting accounting) throws IOException {
        this.selector = Selector.open();
        this.address = address;
        this.timeoutNanos = timeoutNanos;
        this.maxInFlight = maxInFlight;
        this.accounting = accounting;
        String host = address.getHostString() + ":" + address.getPort();
        this.requestBytes = ("GET " + pathAndQuery + " HTTP/1.1\r\nHost: " + host
                + "\r\nUser-Agent: loadcurve-loadgen\r\nAccept: */*\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII);
    }

    long connectionsOpened() {
        return connectionsOpened;
    }

    long retries() {
        return retries;
    }

    String firstError() {
        return firstError;
    }

    /**
     * Sends request {@code i} of the schedule at its intended time, for i = 0, 1, ... (warm-up,
     * window, then the drain at the same rate), and serves replies and timeouts until every
     * window request has resolved ({@link Accounting#windowResolved()}), or at the latest at
     * {@code hardStopNanos}. Returns the time it stopped; what is still in flight is abandoned.
     * Records the send lag of the window's requests (actual minus intended, microseconds) in
     * {@code lagUs}.
     */
    long run(Schedule schedule, long windowEndNanos, long hardStopNanos, org.HdrHistogram.Histogram lagUs)
            throws IOException {
        long next = 0;
        while (true) {
            long now = System.nanoTime();
            // Everything due is sent, however late: the schedule never waits for replies. At most
            // SEND_BATCH at a time, so that a sender running behind still reads replies and
            // expires timeouts on time in between.
            int batch = 0;
            while (schedule.intendedNanos(next) - now <= 0 && batch++ < SEND_BATCH) {
                long intended = schedule.intendedNanos(next++);
                if (accounting.phase(intended) == Accounting.Phase.WINDOW) {
                    lagUs.recordValue(Math.max(0, now - intended) / 1000);
                }
                send(intended, now);
                now = System.nanoTime();
            }
            expire(now);
            if ((now - windowEndNanos >= 0 && accounting.windowResolved()) || now - hardStopNanos >= 0) {
                return now;
            }
            long wakeAt = Math.min(hardStopNanos, schedule.intendedNanos(next));
            Request head = pending.peekFirst();
            if (head != null) {
                wakeAt = Math.min(wakeAt, head.deadlineNanos);
            }
            long waitNanos = wakeAt - System.nanoTime();
            if (waitNanos >= 2_000_000L) {
                // select() has millisecond resolution: wake a little early, then park the rest.
                selector.select(waitNanos / 1_000_000L - 1);
            } else {
                if (waitNanos > 0 && selector.selectNow() == 0) {
                    LockSupport.parkNanos(Math.min(waitNanos, 200_000L));
                }
                selector.selectNow();
            }
            for (SelectionKey key : selector.selectedKeys()) {
                handle((Connection) key.attachment(), key);
            }
            selector.selectedKeys().clear();
        }
    }

    private void send(long intended, long now) {
        if (inFlight >= maxInFlight) {
            accounting.onNotSent(intended, now);
            return;
        }
        Request request = new Request(intended, intended + timeoutNanos);
        accounting.onSent(intended, now);
        inFlight++;
        pending.addLast(request);
        assign(request, false);
    }

    /** Puts the request on an idle keep-alive connection (unless {@code fresh}), or a new one. */
    private void assign(Request request, boolean fresh) {
        Connection c = null;
        while (!fresh && (c = idle.pollLast()) != null && c.closed) {
            // closed by the server while idle; skip it
        }
        try {
            if (c == null) {
                SocketChannel channel = SocketChannel.open();
                channel.configureBlocking(false);
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                SelectionKey key = channel.register(selector, 0);
                c = new Connection(channel, key);
                key.attach(c);
                connectionsOpened++;
                c.request = request;
                request.connection = c;
                if (channel.connect(address)) {
                    startWrite(c);
                } else {
                    key.interestOps(SelectionKey.OP_CONNECT);
                }
            } else {
                c.reused = true;
                c.request = request;
                request.connection = c;
                startWrite(c);
            }
        } catch (IOException e) {
            fail(c, request, e);
        }
    }

    private void startWrite(Connection c) throws IOException {
        c.out = ByteBuffer.wrap(requestBytes);
        c.in.clear();
        c.channel.write(c.out);
        c.key.interestOps(c.out.hasRemaining() ? SelectionKey.OP_WRITE : SelectionKey.OP_READ);
    }

    private void handle(Connection c, SelectionKey key) {
        Request request = c.request;
        try {
            if (!key.isValid()) {
                return;
            }
            if (key.isConnectable()) {
                c.channel.finishConnect();
                startWrite(c);
                return;
            }
            if (key.isWritable()) {
                c.channel.write(c.out);
                if (!c.out.hasRemaining()) {
                    key.interestOps(SelectionKey.OP_READ);
                }
                return;
            }
            if (key.isReadable()) {
                if (c.in.remaining() == 0) {
                    if (c.in.capacity() >= 65_536) {
                        throw new IOException("reply headers and body over 64 KiB");
                    }
                    ByteBuffer bigger = ByteBuffer.allocate(c.in.capacity() * 4);
                    c.in.flip();
                    bigger.put(c.in);
                    c.in = bigger;
                }
                int n = c.channel.read(c.in);
                if (n < 0) {
                    if (request == null) {
                        close(c); // the server closed an idle keep-alive connection
                        return;
                    }
                    throw new IOException("connection closed before a complete reply");
                }
                if (request != null) {
                    readReply(c, request);
                }
            }
        } catch (IOException e) {
            fail(c, request, e);
        }
    }

    /** Completes the request if {@code c.in} holds a whole reply. */
    private void readReply(Connection c, Request request) throws IOException {
        byte[] data = c.in.array();
        int length = c.in.position();
        int headerEnd = indexOf(data, length);
        if (headerEnd < 0) {
            return;
        }
        String headers = new String(data, 0, headerEnd, StandardCharsets.US_ASCII);
        int contentLength = -1;
        boolean closeAfter = false;
        int status = -1;
        String[] lines = headers.split("\r\n");
        String[] statusLine = lines[0].split(" ", 3);
        if (statusLine.length >= 2 && statusLine[0].startsWith("HTTP/1.")) {
            status = Integer.parseInt(statusLine[1]);
        }
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            if (colon <= 0) {
                continue;
            }
            String name = lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT);
            String value = lines[i].substring(colon + 1).trim();
            if (name.equals("content-length")) {
                contentLength = Integer.parseInt(value);
            } else if (name.equals("connection") && value.equalsIgnoreCase("close")) {
                closeAfter = true;
            }
        }
        if (status < 0 || contentLength < 0) {
            throw new IOException("unsupported reply (status line or Content-Length missing): "
                    + lines[0]);
        }
        int total = headerEnd + 4 + contentLength;
        if (length < total) {
            if (total > 65_536) {
                throw new IOException("reply over 64 KiB");
            }
            return;
        }
        long now = System.nanoTime();
        request.done = true;
        c.request = null;
        inFlight--;
        if (status == 200) {
            accounting.onCompleted(request.intendedNanos, now);
        } else {
            noteError("HTTP status " + status);
            accounting.onError(request.intendedNanos, now);
        }
        if (closeAfter || length > total) {
            close(c);
        } else {
            c.in.clear();
            c.key.interestOps(SelectionKey.OP_READ); // to notice the server closing it
            idle.addLast(c);
        }
    }

    private static int indexOf(byte[] data, int length) {
        for (int i = 0; i + 3 < length; i++) {
            if (data[i] == '\r' && data[i + 1] == '\n' && data[i + 2] == '\r' && data[i + 3] == '\n') {
                return i;
            }
        }
        return -1;
    }

    /** Requests past their deadline are timeouts; their connections are closed. */
    private void expire(long now) {
        Request head;
        while ((head = pending.peekFirst()) != null) {
            if (head.done) {
                pending.pollFirst();
                continue;
            }
            if (head.deadlineNanos - now > 0) {
                return;
            }
            pending.pollFirst();
            head.done = true;
            inFlight--;
            accounting.onTimeout(head.intendedNanos, now);
            if (head.connection != null) {
                head.connection.request = null;
                abort(head.connection);
            }
        }
    }

    private void fail(Connection c, Request request, IOException e) {
        if (request != null && !request.done && !request.retried && c != null && c.reused
                && c.in.position() == 0) {
            // A kept-alive connection the server closed just as we reused it (HttpServer
            // closes idle connections beyond its limit): nothing of the reply arrived, so the
            // GET is sent once more on a new connection, as HTTP clients do. Its latency still
            // runs from the intended send time.
            request.retried = true;
            c.request = null;
            close(c);
            retries++;
            assign(request, true);
            return;
        }
        noteError(e.getClass().getName() + ": " + e.getMessage()
                + (c == null ? "" : c.reused ? " (reused connection" : " (new connection")
                + (c == null ? "" : request != null && request.retried ? ", retried request)" : ")"));
        if (request != null && !request.done) {
            request.done = true;
            inFlight--;
            accounting.onError(request.intendedNanos, System.nanoTime());
        }
        if (c != null) {
            c.request = null;
            close(c);
        }
    }

    private void noteError(String message) {
        if (firstError == null) {
            firstError = message;
        }
    }

    /**
     * Gives up on a connection with a reset (SO_LINGER 0) rather than a FIN: the client port is
     * free at once instead of waiting in FIN_WAIT2/TIME_WAIT for a server that is not reading.
     * A saturated cell times out hundreds of requests a second; closed gracefully, their ports
     * filled loopback's ephemeral range and made every connect() slow (measured: pool20 at
     * 800 req/s, connect0 in nearly every sample from 20 s on).
     */
    private static void abort(Connection c) {
        try {
            c.channel.setOption(StandardSocketOptions.SO_LINGER, 0);
        } catch (IOException ignored) {
            // already closed: nothing to reset
        }
        close(c);
    }

    private static void close(Connection c) {
        if (c.closed) {
            return;
        }
        c.closed = true;
        c.key.cancel();
        try {
            c.channel.close();
        } catch (IOException ignored) {
            // closing is best effort; the request's outcome is already counted
        }
    }

    @Override
    public void close() throws IOException {
        for (SelectionKey key : selector.keys()) {
            close((Connection) key.attachment());
        }
        selector.close();
    }
}
