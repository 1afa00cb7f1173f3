package loadcurve.server;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TargetServerTest {
    private static HttpResponse<String> get(HttpServer server, String pathAndQuery) throws Exception {
        URI uri = URI.create("http://127.0.0.1:" + server.getAddress().getPort() + pathAndQuery);
        try (HttpClient client = HttpClient.newHttpClient()) {
            return client.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.ofString());
        }
    }

    @Test
    void sleepHoldsTheRequestForTheGivenTime() throws Exception {
        ExecutorService executor = TargetServer.executorFor("virtual");
        HttpServer server = TargetServer.start(executor, 0, 16);
        try {
            long start = System.nanoTime();
            HttpResponse<String> response = get(server, "/sleep?ms=50");
            long elapsedMs = (System.nanoTime() - start) / 1_000_000;
            assertEquals(200, response.statusCode());
            assertEquals("ok\n", response.body());
            assertTrue(elapsedMs >= 50, "answered after " + elapsedMs + " ms");
        } finally {
            server.stop(0);
            executor.shutdownNow();
        }
    }

    @Test
    void cpuBurnsAndAnswersWithAChecksum() throws Exception {
        ExecutorService executor = TargetServer.executorFor("pool:2");
        HttpServer server = TargetServer.start(executor, 0, 16);
        try {
            HttpResponse<String> response = get(server, "/cpu?ms=2");
            assertEquals(200, response.statusCode());
            assertTrue(response.body().matches("[0-9a-f]+\n"), response.body());
            assertEquals(200, get(server, "/health").statusCode());
        } finally {
            server.stop(0);
            executor.shutdownNow();
        }
    }

    @Test
    void listensOnLoopbackOnly() throws Exception {
        ExecutorService executor = TargetServer.executorFor("pool:1");
        HttpServer server = TargetServer.start(executor, 0, 16);
        try {
            assertTrue(server.getAddress().getAddress().isLoopbackAddress());
        } finally {
            server.stop(0);
            executor.shutdownNow();
        }
    }

    @Test
    void executorSpecs() {
        ExecutorService pool = TargetServer.executorFor("pool:20");
        assertEquals(20, ((ThreadPoolExecutor) pool).getMaximumPoolSize());
        pool.shutdownNow();
        assertThrows(IllegalArgumentException.class, () -> TargetServer.executorFor("pool:0"));
        assertThrows(IllegalArgumentException.class, () -> TargetServer.executorFor("cached"));
    }
}
