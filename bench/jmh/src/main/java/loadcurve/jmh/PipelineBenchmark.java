package loadcurve.jmh;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;

import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import com.typesafe.config.ConfigFactory;

/**
 * The stream article's variants of one pipeline: {@link #ELEMENTS} numbers, two map stages of
 * {@link #work} each, summed. Every variant computes the same sum (checked in setUp); the
 * score is elements per second ({@code @OperationsPerInvocation}), so variants compare
 * directly. Variants: Pekko Streams fused (one actor runs every stage), with an async
 * boundary after each stage, with the stages as {@code mapAsync(parallelism)} on a pool,
 * batched ({@code grouped} into lists of {@link #BATCH}), and a {@code java.util.stream}
 * baseline on the calling thread.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@OperationsPerInvocation(PipelineBenchmark.ELEMENTS)
public class PipelineBenchmark {

    static final int ELEMENTS = 100_000;
    static final int BATCH = 256;

    /** A few rounds of xorshift: enough work per element that stages are not free. */
    static long work(long x) {
        long v = x;
        for (int i = 0; i < 8; i++) {
            v ^= v << 13;
            v ^= v >>> 7;
            v ^= v << 17;
        }
        return v;
    }

    static long expected() {
        return LongStream.rangeClosed(1, ELEMENTS).map(PipelineBenchmark::work)
                .map(PipelineBenchmark::work).sum();
    }

    @State(Scope.Benchmark)
    public static class Pekko {
        ActorSystem system;
        ExecutorService pool;

        @Setup(Level.Trial)
        public void setUp() {
            system = ActorSystem.create("pipeline", ConfigFactory.parseString(
                    "pekko.loglevel = WARNING\npekko.stdout-loglevel = WARNING\n")
                    .withFallback(ConfigFactory.load()));
            pool = Executors.newFixedThreadPool(Runtime.getRuntime().availableProcessors());
        }

        @TearDown(Level.Trial)
        public void tearDown() throws Exception {
            pool.shutdownNow();
            system.terminate();
            system.getWhenTerminated().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }

        long run(Source<Long, ?> source) throws Exception {
            long sum = source.runWith(Sink.fold(0L, Long::sum), system)
                    .toCompletableFuture().get(60, TimeUnit.SECONDS);
            if (sum != EXPECTED) {
                throw new IllegalStateException("pipeline sum " + sum + " != " + EXPECTED);
            }
            return sum;
        }
    }

    static final long EXPECTED = expected();

    /** The mapAsync variants' parallelism: a state of their own so the other variants run once. */
    @State(Scope.Benchmark)
    public static class Parallelism {
        @Param({"1", "4", "16"})
        public int parallelism;
    }

    static Source<Long, ?> numbers() {
        return Source.range(1, ELEMENTS).map(Integer::longValue);
    }

    @Benchmark
    public long fused(Pekko p) throws Exception {
        return p.run(numbers().map(PipelineBenchmark::work).map(PipelineBenchmark::work));
    }

    @Benchmark
    public long asyncBoundaries(Pekko p) throws Exception {
        return p.run(numbers().async().map(PipelineBenchmark::work).async()
                .map(PipelineBenchmark::work).async());
    }

    @Benchmark
    public long mapAsync(Pekko p, Parallelism par) throws Exception {
        return p.run(numbers()
                .mapAsync(par.parallelism, x -> CompletableFuture.supplyAsync(() -> work(x), p.pool))
                .mapAsync(par.parallelism, x -> CompletableFuture.supplyAsync(() -> work(x), p.pool)));
    }

    @Benchmark
    public long batched(Pekko p) throws Exception {
        return p.run(numbers().grouped(BATCH).map(PipelineBenchmark::workBatch));
    }

    static long workBatch(List<Long> batch) {
        long sum = 0;
        for (long x : batch) {
            sum += work(work(x));
        }
        return sum;
    }

    @Benchmark
    public long javaStream() {
        return LongStream.rangeClosed(1, ELEMENTS).map(PipelineBenchmark::work)
                .map(PipelineBenchmark::work).sum();
    }
}
