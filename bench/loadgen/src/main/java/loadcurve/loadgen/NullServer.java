package loadcurve.loadgen;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * The self-test's server: one NIO thread on 127.0.0.1 that answers every request (a request is
 * whatever ends with an empty line: the self-test sends bodiless GETs) with a fixed keep-alive
 * 200. It does no work per request, so what limits the self-test is the generator, plus this
 * thread's share of the same cores.
 */
final class NullServer implements AutoCloseable {
    private static final byte[] REPLY = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
            .getBytes(StandardCharsets.US_ASCII);

    /** Per connection: how much of "\r\n\r\n" the last bytes matched, and replies owed. */
    private static final class Peer {
        final ByteBuffer in = ByteBuffer.allocate(4096);
        int matched;
        int owed;
        ByteBuffer out;
    }

    private final Selector selector;
    private final ServerSocketChannel listener;
    private final Thread thread;
    private volatile boolean stopping;

    NullServer() throws IOException {
        selector = Selector.open();
        listener = ServerSocketChannel.open();
        listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 4096);
        listener.configureBlocking(false);
        listener.register(selector, SelectionKey.OP_ACCEPT);
        thread = new Thread(this::serve, "loadgen-null-server");
        thread.setDaemon(true);
        thread.start();
    }

    int port() {
        return listener.socket().getLocalPort();
    }

    private void serve() {
        try {
            while (!stopping) {
                selector.select(100);
                for (SelectionKey key : selector.selectedKeys()) {
                    try {
                        handle(key);
                    } catch (IOException e) {
                        key.cancel();
                        key.channel().close(); // the client reset it (a timed-out request)
                    }
                }
                selector.selectedKeys().clear();
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private void handle(SelectionKey key) throws IOException {
        if (!key.isValid()) {
            return;
        }
        if (key.isAcceptable()) {
            SocketChannel channel;
            while ((channel = listener.accept()) != null) {
                channel.configureBlocking(false);
                channel.register(selector, SelectionKey.OP_READ, new Peer());
            }
            return;
        }
        SocketChannel channel = (SocketChannel) key.channel();
        Peer peer = (Peer) key.attachment();
        if (key.isReadable()) {
            peer.in.clear();
            if (channel.read(peer.in) < 0) {
                key.cancel();
                channel.close();
                return;
            }
            count(peer);
        }
        write(key, channel, peer);
    }

    /** Counts the requests that end in this read ("\r\n\r\n", possibly split across reads). */
    private static void count(Peer peer) {
        byte[] a = peer.in.array();
        for (int i = 0; i < peer.in.position(); i++) {
            byte expected = (peer.matched % 2 == 0) ? (byte) '\r' : (byte) '\n';
            if (a[i] == expected) {
                if (++peer.matched == 4) {
                    peer.owed++;
                    peer.matched = 0;
                }
            } else {
                peer.matched = a[i] == '\r' ? 1 : 0;
            }
        }
    }

    private static void write(SelectionKey key, SocketChannel channel, Peer peer) throws IOException {
        while (peer.owed > 0) {
            if (peer.out == null) {
                peer.out = ByteBuffer.wrap(REPLY);
            }
            channel.write(peer.out);
            if (peer.out.hasRemaining()) {
                key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
                return;
            }
            peer.out = null;
            peer.owed--;
        }
        key.interestOps(SelectionKey.OP_READ);
    }

    @Override
    public void close() throws IOException {
        stopping = true;
        selector.wakeup();
        try {
            thread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (SelectionKey key : selector.keys()) {
            key.channel().close();
        }
        selector.close();
    }
}
