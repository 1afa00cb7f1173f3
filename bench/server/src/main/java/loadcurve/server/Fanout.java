package loadcurve.server;

import com.typesafe.config.ConfigFactory;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;

import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The fan-out scenario: 2 parallel calls to a dependency, each answering after 1-4 ms, combined.
 *
 * <p>The dependency is an in-process simulated asynchronous call ({@link #call}): a future
 * completed by one timer thread after a uniformly drawn 1-4 ms. Not a second local HTTP server,
 * because on a 2-core machine that server would compete with the target for the same cores and
 * add its own queueing and client stack to every request; the scenario is meant to measure the
 * orchestration (how the target composes two waits), so the dependency costs next to nothing.
 *
 * <p>Two orchestrations of the same calls: {@link #withFutures} combines two CompletableFutures
 * (on a virtual-thread target the handler's thread parks on the result); {@link #withPekkoStreams}
 * materialises a small Pekko Streams graph per request, source of the 2 call ids ->
 * mapAsyncUnordered(2, call) -> fold, on one ActorSystem per JVM, created on first use.
 */
public final class Fanout {
    /** The combined answer of the two calls. */
    public record Result(long first, long second) {
        String json() {
            return "{\"parts\":2,\"sum\":" + (first + second) + "}\n";
        }
    }

    private static final ScheduledExecutorService DEPENDENCY = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "fanout-dependency");
        t.setDaemon(true);
        return t;
    });

    private Fanout() {
    }

    /** The dependency: answers part {@code part} (its value: part * 1000) after 1-4 ms. */
    static CompletionStage<Long> call(long part) {
        CompletableFuture<Long> answer = new CompletableFuture<>();
        long delayUs = ThreadLocalRandom.current().nextLong(1_000, 4_001);
        MAX_OUTSTANDING.accumulateAndGet(OUTSTANDING.incrementAndGet(), Math::max);
        DEPENDENCY.schedule(() -> {
            OUTSTANDING.decrementAndGet();
            answer.complete(part * 1000);
        }, delayUs, TimeUnit.MICROSECONDS);
        return answer;
    }

    // Calls made and not yet answered, and the most at once: with one request at a time, 2
    // shows that an orchestration makes its calls in parallel (ScenariosTest), whatever the
    // machine's speed. Two atomic updates per call.
    static final AtomicInteger OUTSTANDING = new AtomicInteger();
    static final AtomicInteger MAX_OUTSTANDING = new AtomicInteger();

    static CompletionStage<Result> withFutures() {
        return call(1).thenCombine(call(2), Result::new);
    }

    static CompletionStage<Result> withPekkoStreams() {
        return Source.from(List.of(1L, 2L))
                .mapAsyncUnordered(2, Fanout::call)
                .runWith(Sink.fold(new long[2], (acc, v) -> {
                    acc[v == 1000 ? 0 : 1] = v;
                    return acc;
                }), Pekko.MATERIALIZER)
                .thenApply(acc -> new Result(acc[0], acc[1]));
    }

    /** One ActorSystem per JVM, created when the first Pekko fan-out arrives (lazy holder). */
    private static final class Pekko {
        static final ActorSystem SYSTEM = ActorSystem.create("fanout", ConfigFactory.parseString(
                "pekko.loglevel = WARNING\npekko.stdout-loglevel = WARNING\n"
                        + "pekko.coordinated-shutdown.run-by-jvm-shutdown-hook = on")
                .withFallback(ConfigFactory.load()));
        static final Materializer MATERIALIZER = Materializer.matFromSystem(SYSTEM);
    }
}
