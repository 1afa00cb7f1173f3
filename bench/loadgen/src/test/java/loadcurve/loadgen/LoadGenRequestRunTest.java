package loadcurve.loadgen;

import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static loadcurve.loadgen.LoadGenRunTest.field;
import static loadcurve.loadgen.LoadGenRunTest.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The request options end to end, against servers started here on 127.0.0.1. */
class LoadGenRequestRunTest {
    private static final Pattern TOP = Pattern.compile("(?m)^  \"([a-z_]+)\": (.*?),?$");

    /** A top-level value of the counts file, as written. */
    private static String top(String json, String key) {
        Matcher m = TOP.matcher(json);
        while (m.find()) {
            if (m.group(1).equals(key)) {
                return m.group(2);
            }
        }
        throw new AssertionError(key + " not in " + json);
    }

    private static HttpServer start(HttpServer server, com.sun.net.httpserver.HttpHandler handler) {
        server.createContext("/", handler);
        server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
        server.start();
        return server;
    }

    private static HttpServer http() throws Exception {
        return HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 256);
    }

    private static String base(HttpServer server) {
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    @Test
    void everyTenth500IsAnErrorWithItsStatusAndBodyHead(@TempDir Path dir) throws Exception {
        AtomicLong n = new AtomicLong();
        HttpServer server = start(http(), exchange -> {
            boolean fail = n.incrementAndGet() % 10 == 0;
            byte[] body = (fail ? "boom \u00e9\n" : "ok\n").getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(fail ? 500 : 200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        try {
            String json = run(dir, "--url", base(server) + "/x", "--rate", "200");
            long errors = field(json, "window", "errors");
            assertEquals(200, field(json, "window", "sent"));
            assertTrue(errors >= 19 && errors <= 21, json);
            assertEquals(200, errors + field(json, "window", "completed") + field(json, "window", "timed_out"));
            assertEquals("{\"500\": " + errors + "}", top(json, "errors_by_status"));
            // The server's 10th request: intended at 9 / 200 s, give or take a request overtaken.
            Matcher first = Pattern.compile("\\{\"status\": 500, \"reason\": \"HTTP/1.1 500 Internal Server Error\", "
                    + "\"body_head\": \"boom \\\\u00e9\\\\u000a\", \"intended_s\": ([0-9.]+)}").matcher(top(json, "first_error"));
            assertTrue(first.matches(), json);
            assertEquals(0.045, Double.parseDouble(first.group(1)), 0.0101, json);
            long answered = field(json, "total", "completed") + field(json, "total", "errors");
            assertTrue(n.get() >= answered && n.get() <= answered + field(json, "total", "in_flight_at_end"),
                    "every request reached the server once (the abandoned ones perhaps): " + n + " " + json);
        } finally {
            server.stop(0);
        }
    }

    @Test
    void weightedUrlsMethodHeadersAndBodyReachTheServer(@TempDir Path dir) throws Exception {
        Map<String, AtomicLong> byPath = new ConcurrentHashMap<>();
        Map<String, String> seen = new ConcurrentHashMap<>();
        HttpServer server = start(http(), exchange -> {
            byPath.computeIfAbsent(exchange.getRequestURI().toString(), k -> new AtomicLong()).incrementAndGet();
            seen.put("method", exchange.getRequestMethod());
            seen.put("token", String.valueOf(exchange.getRequestHeaders().getFirst("X-Token")));
            seen.put("body", new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
            exchange.sendResponseHeaders(204, -1);
            exchange.close();
        });
        try {
            Path urls = dir.resolve("urls.txt");
            Files.writeString(urls, "# three to one\n3 " + base(server) + "/a?k=v\n" + base(server) + "/b\n");
            Path body = dir.resolve("body.json");
            Files.writeString(body, "{\"item\": 7}");
            String json = run(dir, "--urls-file", urls.toString(), "--rate", "200", "--method", "POST",
                    "--header", "X-Token: s3cret", "--body-file", body.toString(), "--success", "204");
            assertEquals(200, field(json, "window", "completed"), json);
            // The rotation is a, a, b, a over and over: a is 3 in every 4 the server received
            // (the last few may still have been on their way when the generator stopped).
            long a = byPath.get("/a?k=v").get();
            long received = a + byPath.get("/b").get();
            assertTrue(received >= 400 && received <= field(json, "total", "sent"), json);
            assertEquals(received * 0.75, a, 1.0, "a " + a + " of " + received);
            assertEquals(Map.of("method", "POST", "token", "s3cret", "body", "{\"item\": 7}"), seen);
            assertEquals("{\"method\": \"POST\", \"urls\": [{\"url\": \"" + base(server) + "/a?k=v\", \"weight\": 3}, "
                    + "{\"url\": \"" + base(server) + "/b\", \"weight\": 1}], \"header_names\": [\"X-Token\"], "
                    + "\"body_bytes\": 11, \"success\": \"204\", \"tls\": null}", top(json, "request"));
            assertTrue(!json.contains("s3cret"));
            assertEquals("{}", top(json, "errors_by_status"));
            assertEquals("null", top(json, "first_error"));
        } finally {
            server.stop(0);
        }
    }

    /** A server of raw sockets that frames every reply one way: "chunked" or "close". */
    private static ServerSocket rawServer(String framing, AtomicLong requests) throws Exception {
        ServerSocket listener = new ServerSocket(0, 512, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().start(() -> {
            while (!listener.isClosed()) {
                try {
                    Socket socket = listener.accept();
                    Thread.ofVirtual().start(() -> serveRaw(socket, framing, requests));
                } catch (Exception e) {
                    return;
                }
            }
        });
        return listener;
    }

    private static void serveRaw(Socket socket, String framing, AtomicLong requests) {
        try (socket; InputStream in = socket.getInputStream(); OutputStream out = socket.getOutputStream()) {
            int matched = 0;
            int b;
            while ((b = in.read()) >= 0) {
                matched = b == (matched % 2 == 0 ? '\r' : '\n') ? matched + 1 : (b == '\r' ? 1 : 0);
                if (matched < 4) {
                    continue;
                }
                matched = 0;
                requests.incrementAndGet();
                if (framing.equals("chunked")) {
                    // Split so that chunks straddle the client's reads.
                    out.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nsome\r\n".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    out.write("6;x=y\r\n body!\r\n0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                } else {
                    out.write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    return;
                }
            }
        } catch (Exception e) {
            // the client reset it
        }
    }

    @Test
    void chunkedRepliesKeepTheConnectionAndCloseDelimitedOnesEndWithIt(@TempDir Path dir) throws Exception {
        for (String framing : List.of("chunked", "close")) {
            AtomicLong requests = new AtomicLong();
            try (ServerSocket server = rawServer(framing, requests)) {
                String json = run(dir, "--url", "http://127.0.0.1:" + server.getLocalPort() + "/", "--rate", "200");
                assertEquals(200, field(json, "window", "completed"), framing + ": " + json);
                assertEquals(0, field(json, "window", "errors"), framing + ": " + json);
                long opened = Long.parseLong(top(json, "connections_opened"));
                if (framing.equals("close")) {
                    assertEquals(field(json, "total", "sent"), opened, "one connection per request");
                } else {
                    assertTrue(opened < requests.get() / 4, "kept alive: " + opened + " for " + requests.get());
                }
            }
        }
    }

    /** A self-signed certificate for 127.0.0.1, made with the JDK's keytool. */
    private static SSLContext selfSigned(Path dir) throws Exception {
        Path store = dir.resolve("server.p12");
        Process keytool = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair", "-keyalg", "RSA", "-keysize", "2048", "-alias", "server", "-dname", "CN=loadgen-test", "-validity", "2",
                "-ext", "san=ip:127.0.0.1", "-storetype", "PKCS12", "-keystore", store.toString(),
                "-storepass", "changeit").redirectErrorStream(true).start();
        String output = new String(keytool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, keytool.waitFor(), output);
        KeyStore keys = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            keys.load(in, "changeit".toCharArray());
        }
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, "changeit".toCharArray());
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(kmf.getKeyManagers(), null, null);
        return context;
    }

    @Test
    void httpsWithASelfSignedCertificateIsRefusedUnlessInsecure(@TempDir Path dir) throws Exception {
        HttpsServer https = HttpsServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 256);
        https.setHttpsConfigurator(new HttpsConfigurator(selfSigned(dir)));
        HttpServer server = start(https, exchange -> {
            byte[] body = "{\"secure\": true}".getBytes(StandardCharsets.US_ASCII);
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        String url = "https://127.0.0.1:" + server.getAddress().getPort() + "/item";
        try {
            // 20 req/s after 3 s of warm-up: every new connection costs a handshake on the
            // generator's one thread, tens of ms while the JIT has not compiled the crypto
            // (and this JVM is the server's too).
            String measured = run(dir, "--url", url, "--rate", "20", "--warmup-s", "3", "--insecure");
            assertEquals(20, field(measured, "window", "completed"), measured);
            assertEquals(0, field(measured, "window", "errors"), measured);
            assertEquals("{}", top(measured, "errors_by_status"));
            assertTrue(top(measured, "request").endsWith("\"tls\": \"insecure\"}"), measured);
            // Kept alive: a connection is opened only when every open one is busy, so never
            // more than the most requests in flight at once (plus reconnects after a server's
            // close), and fewer than the requests. Not "fewer than half of them": on a starved
            // machine (CI beside other work) slow handshakes pile up 60 requests in flight.
            long opened = Long.parseLong(top(measured, "connections_opened"));
            assertTrue(opened <= Long.parseLong(top(measured, "max_in_flight"))
                            + Long.parseLong(top(measured, "retries_on_closed_keepalive"))
                            && opened < field(measured, "total", "sent"),
                    "TLS connections are kept alive: " + measured);

            // Refused: every window request fails its handshake (or, the handshakes running on
            // the generator's one thread, times out waiting behind the others).
            String refused = run(dir, "--url", url, "--rate", "20");
            long errors = field(refused, "window", "errors");
            assertEquals(0, field(refused, "window", "completed"), refused);
            assertEquals(20, errors + field(refused, "window", "timed_out"), refused);
            assertTrue(errors > 0, refused);
            assertEquals("{\"connection\": " + errors + "}", top(refused, "errors_by_status"));
            assertTrue(top(refused, "first_error").startsWith("{\"status\": null, \"reason\": "
                    + "\"javax.net.ssl.SSLHandshakeException: "), refused);
            assertTrue(top(refused, "first_error").contains("PKIX path building failed"), refused);
            assertTrue(top(refused, "request").endsWith("\"tls\": \"verified\"}"), refused);
        } finally {
            server.stop(0);
        }
    }

    @Test
    void aBadOptionIsOneErrorLineAndStatus2(@TempDir Path dir) throws Exception {
        Path urls = dir.resolve("urls.txt");
        Files.writeString(urls, "http://127.0.0.1:1/a\nten http://127.0.0.1:1/b\n");
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), LoadGen.class.getName(),
                "--urls-file", urls.toString(), "--rate", "10", "--duration-s", "1",
                "--hlog", dir.resolve("x.hlog").toString(), "--counts", dir.resolve("x.json").toString())
                .redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(2, p.waitFor(), output);
        assertEquals("error: " + urls + ":2: the weight must be a whole number 1..1000000, not ten"
                + " (--help lists the options)\n", output);
    }
}
