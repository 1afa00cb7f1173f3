package loadcurve.server;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The handler contract every target serves: the same endpoints, the same work and the same
 * response bytes, whatever the server. A target only turns its request into (path, raw query)
 * and writes the {@link Response} back.
 *
 * <pre>
 *   GET /sleep?ms=100          wait 100 ms, answer "ok"
 *   GET /cpu?rounds=N          a fixed amount of computation (N rounds of a mixing loop; the
 *                              default is about 1 ms on the development machine), answer a checksum
 *   GET /json?items=N          build a small order document (N items, default 10) with Jackson's
 *                              tree model and serialize it
 *   GET /fanout?impl=futures   2 parallel calls to the in-process dependency (Dependency, each
 *   GET /fanout?impl=pekko     1-4 ms), combined; with CompletableFuture, or a Pekko Streams graph
 *                              materialised per request (Fanout)
 *   GET /health                answer "ok" at once (readiness)
 * </pre>
 *
 * Two forms of one contract. {@link #blocking} is for thread-per-request targets (a pool's or a
 * virtual thread): the wait holds the thread (Thread.sleep, join on the fan-out). {@link #async}
 * is for event-loop targets: the waits are the loop's timer and the fan-out's future, so the
 * loop is never held, while cpu and json run on the loop as an event-loop server runs them.
 * Both forms give byte-identical responses (ScenariosTest).
 */
public final class Scenarios {
    /** An HTTP answer: status, Content-Type, body. */
    public record Response(int status, String contentType, byte[] body) {
        static Response text(int status, String body) {
            return new Response(status, "text/plain", body.getBytes(StandardCharsets.US_ASCII));
        }
    }

    /** The event loop's timer, for the async form's waits: completes after {@code ms}. */
    @FunctionalInterface
    public interface Timer {
        CompletionStage<Void> after(long ms);
    }

    static final Response OK = Response.text(200, "ok\n");
    static final Response NOT_FOUND = Response.text(404, "not found\n");
    /** About 1 ms of computation (0.9-1.1 ms measured) on the 2-core development machine (JDK 25, C2-compiled). */
    public static final int DEFAULT_CPU_ROUNDS = 600;
    private static final ObjectMapper JSON = new ObjectMapper();

    private Scenarios() {
    }

    /** Thread-per-request form: the calling thread waits. */
    public static Response blocking(String path, String rawQuery) throws InterruptedException {
        return switch (path) {
            case "/sleep" -> {
                Thread.sleep(query(rawQuery, "ms", 100));
                yield OK;
            }
            case "/fanout" -> {
                CompletableFuture<Response> future = fanout(rawQuery).toCompletableFuture();
                try {
                    yield future.get();
                } catch (java.util.concurrent.ExecutionException e) {
                    yield Response.text(500, "fanout failed: " + e.getCause() + "\n");
                }
            }
            default -> immediate(path, rawQuery);
        };
    }

    /** Event-loop form: never waits on the calling thread. */
    public static CompletionStage<Response> async(String path, String rawQuery, Timer timer) {
        return switch (path) {
            case "/sleep" -> timer.after(query(rawQuery, "ms", 100)).thenApply(v -> OK);
            case "/fanout" -> fanout(rawQuery);
            default -> CompletableFuture.completedFuture(immediate(path, rawQuery));
        };
    }

    private static CompletionStage<Response> fanout(String rawQuery) {
        String impl = queryString(rawQuery, "impl", "futures");
        CompletionStage<Fanout.Result> result = switch (impl) {
            case "futures" -> Fanout.withFutures();
            case "pekko" -> Fanout.withPekkoStreams();
            default -> null;
        };
        if (result == null) {
            return CompletableFuture.completedFuture(Response.text(400, "impl must be futures or pekko\n"));
        }
        return result.thenApply(r -> new Response(200, "application/json",
                r.json().getBytes(StandardCharsets.US_ASCII)));
    }

    /** The endpoints that never wait: the same on every thread model. */
    private static Response immediate(String path, String rawQuery) {
        return switch (path) {
            case "/cpu" -> Response.text(200, Long.toHexString(cpu((int) query(rawQuery, "rounds", DEFAULT_CPU_ROUNDS))) + "\n");
            case "/json" -> json((int) query(rawQuery, "items", 10));
            case "/health" -> OK;
            default -> NOT_FOUND;
        };
    }

    /** A fixed amount of work (not a time): every target does the same computation per request. */
    static long cpu(int rounds) {
        long checksum = 0x9E3779B97F4A7C15L;
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < 1000; i++) {
                checksum = Long.rotateLeft(checksum * 0xBF58476D1CE4E5B9L + i, 31);
            }
        }
        return checksum;
    }

    /** Builds the document per request (allocation included), then serializes it. */
    static Response json(int items) {
        ObjectNode order = JSON.createObjectNode();
        order.put("id", "order-" + items);
        order.put("currency", "EUR");
        ObjectNode customer = order.putObject("customer");
        customer.put("id", 4711);
        customer.put("name", "Ada Lovelace");
        customer.put("email", "ada@example.org");
        ArrayNode lines = order.putArray("items");
        long totalCents = 0;
        for (int i = 1; i <= items; i++) {
            ObjectNode line = lines.addObject();
            long priceCents = 199L * i + 50;
            line.put("sku", "SKU-" + (1000 + i));
            line.put("name", "Item number " + i);
            line.put("quantity", 1 + i % 3);
            line.put("price", priceCents / 100.0);
            line.putArray("tags").add("bench").add(i % 2 == 0 ? "even" : "odd");
            totalCents += priceCents * (1 + i % 3);
        }
        order.put("total", totalCents / 100.0);
        try {
            return new Response(200, "application/json", JSON.writeValueAsBytes(order));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            return Response.text(500, "json failed\n");
        }
    }

    /** A whole-number query parameter, clamped to [0, 60000]; the default when absent or bad. */
    static long query(String rawQuery, String name, long defaultValue) {
        String value = queryString(rawQuery, name, null);
        if (value == null) {
            return defaultValue;
        }
        try {
            return Math.max(0, Math.min(60_000, Long.parseLong(value)));
        } catch (NumberFormatException e) {
            return defaultValue;
        }
    }

    static String queryString(String rawQuery, String name, String defaultValue) {
        if (rawQuery != null) {
            for (String pair : rawQuery.split("&")) {
                int eq = pair.indexOf('=');
                if (eq > 0 && pair.substring(0, eq).equals(name)) {
                    return pair.substring(eq + 1);
                }
            }
        }
        return defaultValue;
    }
}
