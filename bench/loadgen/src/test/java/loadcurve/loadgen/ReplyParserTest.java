package loadcurve.loadgen;

import org.junit.jupiter.api.Test;

import java.net.ProtocolException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReplyParserTest {
    /**
     * Feeds the reply {@code step} bytes at a time through a small buffer as the client does
     * (flip, feed, compact) and returns how many bytes were left over once it was whole, or -1
     * if it never was.
     */
    private static int feed(ReplyParser p, byte[] reply, int step) throws ProtocolException {
        ByteBuffer buf = ByteBuffer.allocate(4096);
        for (int at = 0; at < reply.length; at += step) {
            buf.put(reply, at, Math.min(step, reply.length - at));
            buf.flip();
            boolean whole = p.feed(buf);
            int left = buf.remaining();
            buf.compact();
            if (whole) {
                return left + Math.max(0, reply.length - at - step);
            }
        }
        return -1;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }

    @Test
    void contentLengthInAnySplit() throws Exception {
        byte[] reply = bytes("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\ncontent-length:  5 \r\n\r\nhello");
        for (int step : new int[] {1, 2, 7, reply.length}) {
            ReplyParser p = new ReplyParser();
            p.reset(false);
            assertEquals(0, feed(p, reply, step), "step " + step);
            assertEquals(200, p.status());
            assertFalse(p.closeAfter());
            assertEquals("hello", p.bodyHead());
        }
    }

    @Test
    void chunkedWithExtensionsAndTrailersInAnySplit() throws Exception {
        byte[] reply = bytes("HTTP/1.1 500 Oops\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "5;name=x\r\nhello\r\nA\r\n, world!!!\r\n0\r\nX-Trailer: 1\r\n\r\nHTTP/1.1");
        for (int step : new int[] {1, 3, reply.length}) {
            ReplyParser p = new ReplyParser();
            p.reset(false);
            assertEquals(8, feed(p, reply, step), "the next reply's bytes are left, step " + step);
            assertEquals(500, p.status());
            assertEquals("HTTP/1.1 500 Oops", p.statusLine());
            assertEquals("hello, world!!!", p.bodyHead());
        }
    }

    @Test
    void aBodyWithoutLengthEndsWhenTheServerCloses() throws Exception {
        ReplyParser p = new ReplyParser();
        p.reset(false);
        assertEquals(-1, feed(p, bytes("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nall of it"), 4));
        assertTrue(p.endsAtClose());
        assertTrue(p.closeAfter());
        assertEquals("all of it", p.bodyHead());
    }

    @Test
    void headAnd204And304HaveNoBodyAndInterimRepliesAreSkipped() throws Exception {
        ReplyParser p = new ReplyParser();
        p.reset(true);
        assertEquals(0, feed(p, bytes("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"), 5));
        for (String status : new String[] {"204 No Content", "304 Not Modified"}) {
            p.reset(false);
            assertEquals(0, feed(p, bytes("HTTP/1.1 " + status + "\r\nContent-Length: 9\r\n\r\n"), 3));
        }
        p.reset(false);
        assertEquals(0, feed(p, bytes("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok"), 6));
        assertEquals(201, p.status());
    }

    @Test
    void http10ClosesUnlessKeptAlive() throws Exception {
        ReplyParser p = new ReplyParser();
        p.reset(false);
        feed(p, bytes("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"), 100);
        assertTrue(p.closeAfter());
        p.reset(false);
        feed(p, bytes("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n"), 100);
        assertFalse(p.closeAfter());
    }

    @Test
    void theBodyHeadIsTheFirst200BytesWithBadBytesReplaced() throws Exception {
        byte[] body = new byte[300];
        java.util.Arrays.fill(body, (byte) 'x');
        body[0] = (byte) 0xff;
        byte[] head = bytes("HTTP/1.1 503 Busy\r\nContent-Length: 300\r\n\r\n");
        byte[] reply = new byte[head.length + body.length];
        System.arraycopy(head, 0, reply, 0, head.length);
        System.arraycopy(body, 0, reply, head.length, body.length);
        ReplyParser p = new ReplyParser();
        p.reset(false);
        assertEquals(0, feed(p, reply, 64));
        assertEquals("\ufffd" + "x".repeat(199), p.bodyHead());
    }

    @Test
    void whatIsNotHttpIsAProtocolError() {
        ReplyParser p = new ReplyParser();
        p.reset(false);
        assertThrows(ProtocolException.class, () -> feed(p, bytes("SSH-2.0-OpenSSH\r\n\r\n"), 100));
        p.reset(false);
        assertThrows(ProtocolException.class, () -> feed(p, bytes("HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n"), 100));
        p.reset(false);
        assertThrows(ProtocolException.class,
                () -> feed(p, bytes("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"), 100));
    }
}
