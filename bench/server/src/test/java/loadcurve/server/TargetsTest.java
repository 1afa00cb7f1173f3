package loadcurve.server;

import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Every target serves the contract over HTTP: the same status, type and bytes for each scenario. */
class TargetsTest {
    private static final String[] REQUESTS = {"/sleep?ms=20", "/cpu?rounds=5", "/json", "/fanout?impl=futures",
        "/fanout?impl=pekko", "/health", "/nothing"};

    @Test
    void everyTargetServesEveryScenario() throws Exception {
        try (HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(5)).build()) {
            for (String id : Targets.IDS) {
                Targets.Running target = Targets.start(id, 4, 0, 64);
                try {
                    for (String request : REQUESTS) {
                        URI uri = URI.create("http://127.0.0.1:" + target.port() + request);
                        HttpResponse<byte[]> got = client.send(HttpRequest.newBuilder(uri)
                                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofByteArray());
                        int q = request.indexOf('?');
                        Scenarios.Response expected = Scenarios.blocking(q < 0 ? request : request.substring(0, q),
                                q < 0 ? null : request.substring(q + 1));
                        String what = id + " " + request;
                        assertEquals(expected.status(), got.statusCode(), what);
                        assertEquals(expected.contentType(), got.headers().firstValue("Content-Type").orElse(""), what);
                        assertArrayEquals(expected.body(), got.body(), what);
                    }
                } finally {
                    target.stop();
                }
            }
        }
    }

    /**
     * The thread model is what the id says: 12 concurrent 300 ms sleeps take three rounds on a
     * pool of 4 threads, one round on virtual threads and on an event loop (whose timer never holds it).
     */
    @Test
    void poolsQueueWhileVirtualThreadsAndEventLoopsDoNot() throws Exception {
        try (HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
            for (String id : Targets.IDS) {
                Targets.Running target = Targets.start(id, 4, 0, 64);
                try {
                    URI uri = URI.create("http://127.0.0.1:" + target.port() + "/sleep?ms=300");
                    client.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.discarding());
                    long start = System.nanoTime();
                    java.util.List<java.util.concurrent.CompletableFuture<HttpResponse<Void>>> all = new java.util.ArrayList<>();
                    for (int i = 0; i < 12; i++) {
                        all.add(client.sendAsync(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.discarding()));
                    }
                    for (var f : all) {
                        assertEquals(200, f.get(10, java.util.concurrent.TimeUnit.SECONDS).statusCode(), id);
                    }
                    long ms = (System.nanoTime() - start) / 1_000_000;
                    if (id.endsWith("-pool")) {
                        org.junit.jupiter.api.Assertions.assertTrue(ms >= 900, id + ": 12 sleeps on 4 threads in " + ms + " ms");
                    } else {
                        org.junit.jupiter.api.Assertions.assertTrue(ms < 850, id + ": 12 concurrent sleeps in " + ms + " ms");
                    }
                } finally {
                    target.stop();
                }
            }
        }
    }

    @Test
    void targetsListenOnLoopbackOnlyAndRejectUnknownIds() throws Exception {
        Targets.Running target = Targets.start("jdk-pool", 1, 0, 16);
        try {
            assertEquals(200, HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + target.port() + "/health")).build(),
                    HttpResponse.BodyHandlers.ofString()).statusCode());
        } finally {
            target.stop();
        }
        assertThrows(IllegalArgumentException.class, () -> Targets.start("tomcat", 1, 0, 16));
        assertThrows(IllegalArgumentException.class, () -> TargetServer.executorFor("pool:0"));
    }
}
