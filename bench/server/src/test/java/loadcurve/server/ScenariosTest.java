package loadcurve.server;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The handler contract itself: both forms give the same answers; the waits wait. */
class ScenariosTest {
    private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor();
    private static final Scenarios.Timer TIMER_AFTER = ms -> {
        CompletableFuture<Void> done = new CompletableFuture<>();
        TIMER.schedule(() -> done.complete(null), ms, TimeUnit.MILLISECONDS);
        return done;
    };

    private static String body(Scenarios.Response r) {
        return new String(r.body(), StandardCharsets.UTF_8);
    }

    private static Scenarios.Response async(String path, String query) throws Exception {
        return Scenarios.async(path, query, TIMER_AFTER).toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    @Test
    void blockingAndAsyncFormsAnswerTheSameBytes() throws Exception {
        String[][] requests = {{"/sleep", "ms=5"}, {"/cpu", null}, {"/cpu", "rounds=3"}, {"/json", null},
            {"/json", "items=2"}, {"/fanout", "impl=futures"}, {"/fanout", "impl=pekko"}, {"/health", null},
            {"/nothing", null}, {"/fanout", "impl=other"}};
        for (String[] r : requests) {
            Scenarios.Response blocking = Scenarios.blocking(r[0], r[1]);
            Scenarios.Response async = async(r[0], r[1]);
            String what = r[0] + "?" + r[1];
            assertEquals(blocking.status(), async.status(), what);
            assertEquals(blocking.contentType(), async.contentType(), what);
            assertArrayEquals(blocking.body(), async.body(), what);
        }
    }

    @Test
    void statusesAndBodies() throws Exception {
        assertEquals("ok\n", body(Scenarios.blocking("/sleep", "ms=1")));
        assertEquals("ok\n", body(Scenarios.blocking("/health", null)));
        assertEquals(404, Scenarios.blocking("/nothing", null).status());
        assertEquals(400, Scenarios.blocking("/fanout", "impl=other").status());
        assertEquals(Long.toHexString(Scenarios.cpu(3)) + "\n", body(Scenarios.blocking("/cpu", "rounds=3")));
        // The two fan-out orchestrations combine the same two dependency answers (1000 + 2000).
        assertEquals("{\"parts\":2,\"sum\":3000}\n", body(Scenarios.blocking("/fanout", "impl=futures")));
        assertEquals("{\"parts\":2,\"sum\":3000}\n", body(Scenarios.blocking("/fanout", "impl=pekko")));
    }

    @Test
    void jsonIsASmallValidDocument() throws Exception {
        Scenarios.Response r = Scenarios.blocking("/json", null);
        assertEquals("application/json", r.contentType());
        var tree = new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.body());
        assertEquals(10, tree.get("items").size());
        assertEquals("Ada Lovelace", tree.get("customer").get("name").asText());
        assertTrue(r.body().length > 500 && r.body().length < 3000, r.body().length + " bytes");
    }

    @Test
    void sleepWaitsInBothForms() throws Exception {
        long start = System.nanoTime();
        Scenarios.blocking("/sleep", "ms=50");
        assertTrue(System.nanoTime() - start >= 50_000_000L);
        start = System.nanoTime();
        async("/sleep", "ms=50");
        assertTrue(System.nanoTime() - start >= 50_000_000L);
    }

    @Test
    void fanoutMakesItsTwoCallsInParallel() throws Exception {
        for (String impl : new String[] {"futures", "pekko"}) {
            Scenarios.blocking("/fanout", "impl=" + impl);  // warm (Pekko's system starts once)
            Fanout.MAX_OUTSTANDING.set(0);
            long start = System.nanoTime();
            for (int i = 0; i < 10; i++) {
                Scenarios.blocking("/fanout", "impl=" + impl);
            }
            // One request at a time: 2 calls outstanding at once only if they run in parallel.
            assertEquals(2, Fanout.MAX_OUTSTANDING.get(), impl);
            assertEquals(0, Fanout.OUTSTANDING.get(), impl);
            double meanMs = (System.nanoTime() - start) / 1e6 / 10;
            assertTrue(meanMs >= 1.0, impl + ": mean " + meanMs + " ms (each call waits 1-4 ms)");
        }
    }

    @Test
    void queryParameters() {
        assertEquals(7, Scenarios.query("a=1&ms=7", "ms", 100));
        assertEquals(100, Scenarios.query("ms=x", "ms", 100));
        assertEquals(100, Scenarios.query(null, "ms", 100));
        assertEquals(60_000, Scenarios.query("ms=999999", "ms", 100));
    }
}
