package loadcurve.loadgen;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ProtocolException;
import java.net.StandardSocketOptions;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

/**
 * A minimal single-threaded HTTP/1.1 client that sends requests on an open-loop schedule.
 *
 * <p>One thread does everything (sending on schedule, reading replies, expiring timeouts) with
 * one selector, so the generator allocates almost nothing per request and has no GC pauses or
 * thread hand-offs of its own to add to the latencies it measures. HTTP/1.1 without pipelining:
 * a request goes on an idle keep-alive connection to its origin if there is one, else on a new
 * connection, so a request never waits for an earlier reply. https runs an SSLEngine on the same
 * selector (a handshake per new connection; kept-alive connections keep their session). A
 * request with no complete reply {@code timeout} after its intended send time is a timeout and
 * its connection is closed.
 */
final class OpenLoopClient implements AutoCloseable {
    /** Sends in a row before replies and timeouts are served again (see run). */
    private static final int SEND_BATCH = 64;
    private static final int PLAIN_BUFFER = 4096;
    private static final int MAX_HEADER_BYTES = 65_536;
    private static final ByteBuffer NOTHING = ByteBuffer.allocate(0);

    /** One request on the wire. Kept in send order, so deadlines are in order too. */
    private static final class Request {
        final long intendedNanos;
        final long deadlineNanos;
        final Target target;
        Connection connection;
        boolean done;
        boolean retried;

        Request(long intendedNanos, long deadlineNanos, Target target) {
            this.intendedNanos = intendedNanos;
            this.deadlineNanos = deadlineNanos;
            this.target = target;
        }
    }

    /** Scheme, host and port: connections are kept alive and reused per origin. */
    private static final class Origin {
        final InetSocketAddress address;
        final String host;
        final boolean https;
        final ArrayDeque<Connection> idle = new ArrayDeque<>();

        Origin(InetSocketAddress address, String host, boolean https) {
            this.address = address;
            this.host = host;
            this.https = https;
        }
    }

    /** A URL of the rotation: its origin and its request, made once. */
    private record Target(Origin origin, byte[] requestBytes) {
    }

    private static final class Connection {
        final SocketChannel channel;
        final SelectionKey key;
        final Origin origin;
        final SSLEngine tls;
        final ReplyParser reply = new ReplyParser();
        /** Plain bytes read (decrypted for https), in write mode. */
        ByteBuffer in;
        ByteBuffer out;
        /** https only: bytes from the socket still to decrypt (write mode), and to send (read mode). */
        ByteBuffer netIn;
        ByteBuffer netOut;
        Request request;
        boolean reused;
        boolean closed;

        Connection(SocketChannel channel, SelectionKey key, Origin origin, SSLEngine tls) {
            this.channel = channel;
            this.key = key;
            this.origin = origin;
            this.tls = tls;
            if (tls == null) {
                in = ByteBuffer.allocate(PLAIN_BUFFER);
            } else {
                in = ByteBuffer.allocate(tls.getSession().getApplicationBufferSize());
                netIn = ByteBuffer.allocate(tls.getSession().getPacketBufferSize());
                netOut = ByteBuffer.allocate(tls.getSession().getPacketBufferSize());
                netOut.flip();
            }
        }
    }

    private final Selector selector;
    private final RequestShape shape;
    private final Target[] targets;
    private final Tls tls;
    private final long timeoutNanos;
    private final int maxInFlight;
    private Accounting accounting;
    private final Errors errors = new Errors();
    private final ArrayDeque<Request> pending = new ArrayDeque<>();
    private int inFlight;
    private long connectionsOpened;
    private long retries;

    /** Resolves each URL's host once, here: a name that does not resolve is an UnknownHostException. */
    OpenLoopClient(RequestShape shape, long timeoutNanos, int maxInFlight) throws IOException {
        this.shape = shape;
        this.timeoutNanos = timeoutNanos;
        this.maxInFlight = maxInFlight;
        this.tls = shape.tls() == null ? null : new Tls(shape.insecure);
        Map<String, Origin> origins = new HashMap<>();
        targets = new Target[shape.urls.size()];
        for (int i = 0; i < targets.length; i++) {
            URI url = shape.urls.get(i).url();
            boolean https = url.getScheme().equalsIgnoreCase("https");
            int port = url.getPort() > 0 ? url.getPort() : https ? 443 : 80;
            String host = url.getHost().startsWith("[") ? url.getHost().substring(1, url.getHost().length() - 1)
                    : url.getHost();
            String key = (https ? "https://" : "http://") + host + ":" + port;
            Origin origin = origins.get(key);
            if (origin == null) {
                origin = new Origin(new InetSocketAddress(InetAddress.getByName(host), port), host, https);
                origins.put(key, origin);
                if (https) {
                    tls.warm(origin.address, host);
                }
            }
            targets[i] = new Target(origin, shape.requestBytes(url));
        }
        this.selector = Selector.open();
    }

    long connectionsOpened() {
        return connectionsOpened;
    }

    long retries() {
        return retries;
    }

    Errors errors() {
        return errors;
    }

    /**
     * Sends request {@code i} of the schedule at its intended time, for i = 0, 1, ... (warm-up,
     * window, then the drain at the same rate), and serves replies and timeouts until every
     * window request has resolved ({@link Accounting#windowResolved()}), or at the latest
     * {@code stopMarginNanos} after the window's end (the latest possible one while the window's
     * start is not chosen yet). Returns the time it stopped; what is still in flight is abandoned.
     * Records the send lag of the window's requests (actual minus intended, microseconds) in
     * {@code lagUs}.
     */
    long run(Accounting accounting, Schedule schedule, long stopMarginNanos, org.HdrHistogram.Histogram lagUs)
            throws IOException {
        this.accounting = accounting;
        long next = 0;
        while (true) {
            long now = System.nanoTime();
            // Everything due is sent, however late: the schedule never waits for replies. At most
            // SEND_BATCH at a time, so that a sender running behind still reads replies and
            // expires timeouts on time in between.
            int batch = 0;
            while (schedule.intendedNanos(next) - now <= 0 && batch++ < SEND_BATCH) {
                long intended = schedule.intendedNanos(next++);
                // Sent (or counted not sent) first: that may choose the window's start (--warmup auto).
                send(intended, now);
                if (accounting.phase(intended) == Accounting.Phase.WINDOW) {
                    lagUs.recordValue(Math.max(0, now - intended) / 1000);
                }
                now = System.nanoTime();
            }
            expire(now);
            long windowEndNanos = accounting.windowEndNanos();
            long hardStopNanos = windowEndNanos + stopMarginNanos;
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
        Request request = new Request(intended, intended + timeoutNanos, targets[shape.next()]);
        accounting.onSent(intended, now);
        inFlight++;
        pending.addLast(request);
        assign(request, false);
    }

    /** Puts the request on an idle keep-alive connection to its origin (unless {@code fresh}), or a new one. */
    private void assign(Request request, boolean fresh) {
        Origin origin = request.target.origin();
        Connection c = null;
        while (!fresh && (c = origin.idle.pollLast()) != null && c.closed) {
            // closed by the server while idle; skip it
        }
        try {
            if (c == null) {
                SocketChannel channel = SocketChannel.open();
                channel.configureBlocking(false);
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                SelectionKey key = channel.register(selector, 0);
                c = new Connection(channel, key, origin,
                        origin.https ? tls.engine(origin.host, origin.address.getPort()) : null);
                key.attach(c);
                connectionsOpened++;
                prepare(c, request);
                if (channel.connect(origin.address)) {
                    connected(c);
                } else {
                    key.interestOps(SelectionKey.OP_CONNECT);
                }
            } else {
                c.reused = true;
                prepare(c, request);
                write(c);
            }
        } catch (IOException | RuntimeException e) {
            fail(c, request, e);
        }
    }

    private void prepare(Connection c, Request request) {
        c.request = request;
        request.connection = c;
        c.out = ByteBuffer.wrap(request.target.requestBytes());
        c.in.clear();
        c.reply.reset(shape.head());
    }

    private void connected(Connection c) throws IOException {
        if (c.tls != null) {
            c.tls.beginHandshake();
        }
        write(c);
    }

    /** Sends what is left of the request (https: and moves the handshake on). */
    private void write(Connection c) throws IOException {
        if (c.tls != null) {
            progressTls(c);
            return;
        }
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
                connected(c);
            } else if (c.tls != null) {
                progressTls(c);
            } else if (key.isWritable()) {
                write(c);
            } else if (key.isReadable()) {
                readPlain(c);
            }
        } catch (IOException | RuntimeException e) {
            fail(c, request, e);
        }
    }

    private void readPlain(Connection c) throws IOException {
        if (!c.in.hasRemaining()) {
            grow(c);
        }
        int n = c.channel.read(c.in);
        if (n < 0) {
            endOfStream(c);
        } else if (n > 0) {
            deliver(c);
        }
    }

    /** Only a header block that does not fit makes the buffer grow (bodies are not kept). */
    private static void grow(Connection c) throws IOException {
        if (c.in.capacity() >= MAX_HEADER_BYTES) {
            throw new ProtocolException("reply headers over 64 KiB");
        }
        ByteBuffer bigger = ByteBuffer.allocate(c.in.capacity() * 4);
        c.in.flip();
        bigger.put(c.in);
        c.in = bigger;
    }

    /** Hands the bytes read to the reply's parser; completes the request when the reply is whole. */
    private void deliver(Connection c) throws IOException {
        if (c.request == null) {
            close(c); // bytes nobody asked for on an idle connection: it cannot be trusted
            return;
        }
        c.in.flip();
        boolean whole = c.reply.feed(c.in);
        boolean extra = c.in.hasRemaining();
        c.in.compact();
        if (whole) {
            complete(c, extra);
        }
    }

    private void endOfStream(Connection c) throws IOException {
        if (c.request == null) {
            close(c); // the server closed an idle keep-alive connection
        } else if (c.reply.endsAtClose()) {
            complete(c, true);
        } else {
            throw new IOException("connection closed before a complete reply");
        }
    }

    private void complete(Connection c, boolean closeAfter) {
        Request request = c.request;
        long now = System.nanoTime();
        request.done = true;
        c.request = null;
        inFlight--;
        int status = c.reply.status();
        if (shape.isSuccess(status)) {
            accounting.onCompleted(request.intendedNanos, now);
        } else {
            errors.status(c.reply, seconds(request), accounting.phase(request.intendedNanos) == Accounting.Phase.WINDOW);
            accounting.onError(request.intendedNanos, now);
        }
        if (closeAfter || c.reply.closeAfter()) {
            close(c);
        } else {
            c.key.interestOps(SelectionKey.OP_READ); // to notice the server closing it
            c.origin.idle.addLast(c);
        }
    }

    /**
     * Moves a TLS connection on as far as the socket allows: the handshake, the request's
     * records, then the reply's. Stops when it must wait for the socket (and says for what).
     */
    private void progressTls(Connection c) throws IOException {
        SSLEngine engine = c.tls;
        while (!c.closed) {
            if (c.netOut.hasRemaining()) {
                c.channel.write(c.netOut);
                if (c.netOut.hasRemaining()) {
                    c.key.interestOps(SelectionKey.OP_WRITE);
                    return;
                }
            }
            switch (engine.getHandshakeStatus()) {
                case NEED_TASK -> {
                    Runnable task;
                    while ((task = engine.getDelegatedTask()) != null) {
                        task.run();
                    }
                }
                case NEED_WRAP -> wrap(c, NOTHING);
                case NEED_UNWRAP, NEED_UNWRAP_AGAIN -> {
                    if (!unwrap(c)) {
                        return;
                    }
                }
                default -> {
                    if (c.request != null && c.out.hasRemaining()) {
                        wrap(c, c.out);
                    } else if (!unwrap(c)) {
                        return;
                    } else if (c.in.position() > 0) {
                        deliver(c);
                        if (c.request == null) {
                            return; // whole (or an idle connection closed)
                        }
                    }
                }
            }
        }
    }

    private static void wrap(Connection c, ByteBuffer source) throws IOException {
        c.netOut.clear();
        SSLEngineResult result = c.tls.wrap(source, c.netOut);
        c.netOut.flip();
        if (result.getStatus() != SSLEngineResult.Status.OK) {
            throw new SSLException("TLS wrap: " + result.getStatus());
        }
    }

    /**
     * Decrypts what has arrived, reading the socket when nothing is left to decrypt. False
     * when it has to wait for more bytes (the key then waits for OP_READ), or the stream ended.
     */
    private boolean unwrap(Connection c) throws IOException {
        c.netIn.flip();
        SSLEngineResult result = c.tls.unwrap(c.netIn, c.in);
        c.netIn.compact();
        switch (result.getStatus()) {
            case BUFFER_OVERFLOW -> {
                if (c.in.position() > 0 && c.request != null) {
                    deliver(c); // the parser frees room by consuming the body
                    if (c.request != null && c.in.position() > 0) {
                        grow(c);
                    }
                } else {
                    grow(c);
                }
                return !c.closed;
            }
            case CLOSED -> {
                endOfStream(c);
                return false;
            }
            default -> {
                if (result.bytesConsumed() > 0 || result.bytesProduced() > 0
                        || result.getHandshakeStatus() != SSLEngineResult.HandshakeStatus.NOT_HANDSHAKING
                        && result.getHandshakeStatus() != SSLEngineResult.HandshakeStatus.NEED_UNWRAP) {
                    return true;
                }
            }
        }
        if (!c.netIn.hasRemaining()) {
            ByteBuffer bigger = ByteBuffer.allocate(c.netIn.capacity() * 2);
            c.netIn.flip();
            bigger.put(c.netIn);
            c.netIn = bigger;
        }
        int n = c.channel.read(c.netIn);
        if (n < 0) {
            endOfStream(c);
            return false;
        }
        if (n == 0) {
            c.key.interestOps(SelectionKey.OP_READ);
            return false;
        }
        return true;
    }

    private double seconds(Request request) {
        return accounting.secondsSinceStart(request.intendedNanos);
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

    private void fail(Connection c, Request request, Exception e) {
        if (request != null && !request.done && !request.retried && c != null && c.reused
                && !c.reply.started() && shape.idempotent()) {
            // A kept-alive connection the server closed just as we reused it (HttpServer
            // closes idle connections beyond its limit): nothing of the reply arrived, so the
            // request is sent once more on a new connection, as HTTP clients do with idempotent
            // methods. Its latency still runs from the intended send time.
            request.retried = true;
            c.request = null;
            close(c);
            retries++;
            assign(request, true);
            return;
        }
        if (request != null && !request.done) {
            request.done = true;
            inFlight--;
            String reason = e.getClass().getName() + ": " + e.getMessage()
                    + (c == null ? "" : c.reused ? " (reused connection" : " (new connection")
                    + (c == null ? "" : request.retried ? ", retried request)" : ")");
            errors.failure(e instanceof ProtocolException, reason, seconds(request),
                    accounting.phase(request.intendedNanos) == Accounting.Phase.WINDOW);
            accounting.onError(request.intendedNanos, System.nanoTime());
        }
        if (c != null) {
            c.request = null;
            close(c);
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
