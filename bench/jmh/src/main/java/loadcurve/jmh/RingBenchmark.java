package loadcurve.jmh;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.pekko.actor.AbstractActor;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.Props;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import com.typesafe.config.ConfigFactory;

/**
 * The actor review's ring: {@code ringSize} actors, each knowing the next one; one token goes
 * round the ring for {@code messages} hops (one message each). One operation is the token's
 * whole journey, so the score is the time of {@code messages} sends and receives, and
 * {@code -prof gc}'s allocation per op is per {@code messages} messages.
 *
 * <p>Four kinds of actor: a platform thread per actor blocking on its mailbox, the same with
 * virtual threads, a mailbox-plus-flag actor scheduled on a ForkJoinPool (what most actor
 * libraries do underneath), and Pekko classic actors on Pekko's default dispatcher. The ring
 * is built once per trial (one fork's measurement), outside the timed part.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class RingBenchmark {

    /** The ring's shape, shared by the four kinds. */
    @State(Scope.Benchmark)
    public static class Shape {
        @Param({"16", "1024"})
        public int ringSize;

        @Param({"1000", "10000"})
        public int messages;

        /** Completed by the actor that receives the token with no hops left. */
        volatile CompletableFuture<Void> done;

        /** The last hop: every kind calls this when the token arrives with 0 hops left. */
        final void finish() {
            done.complete(null);
        }

        final CompletableFuture<Void> start() {
            CompletableFuture<Void> next = new CompletableFuture<>();
            done = next;
            return next;
        }
    }

    // ---- threads (platform or virtual) blocking on a queue ---------------------------------

    /** One thread per actor; the mailbox is a queue the thread blocks on. */
    static final class ThreadRing {
        final LinkedTransferQueue<Integer>[] mailboxes;
        final Thread[] threads;

        @SuppressWarnings("unchecked")
        ThreadRing(Shape shape, Thread.Builder builder) {
            int n = shape.ringSize;
            mailboxes = new LinkedTransferQueue[n];
            threads = new Thread[n];
            for (int i = 0; i < n; i++) {
                mailboxes[i] = new LinkedTransferQueue<>();
            }
            for (int i = 0; i < n; i++) {
                LinkedTransferQueue<Integer> inbox = mailboxes[i];
                LinkedTransferQueue<Integer> next = mailboxes[(i + 1) % n];
                threads[i] = builder.unstarted(() -> {
                    try {
                        while (true) {
                            int hops = inbox.take();
                            if (hops == 0) {
                                shape.finish();
                            } else {
                                next.put(hops - 1);
                            }
                        }
                    } catch (InterruptedException stop) {
                        Thread.currentThread().interrupt();
                    }
                });
                threads[i].setDaemon(true);
                threads[i].start();
            }
        }

        void send(int hops) {
            mailboxes[0].put(hops);
        }

        void stop() throws InterruptedException {
            for (Thread t : threads) {
                t.interrupt();
            }
            for (Thread t : threads) {
                t.join(5000);
            }
        }
    }

    @State(Scope.Benchmark)
    public static class PlatformThreads {
        ThreadRing ring;

        @Setup(Level.Trial)
        public void setUp(Shape shape) {
            ring = new ThreadRing(shape, Thread.ofPlatform().daemon(true));
        }

        @TearDown(Level.Trial)
        public void tearDown() throws InterruptedException {
            ring.stop();
        }
    }

    @State(Scope.Benchmark)
    public static class VirtualThreads {
        ThreadRing ring;

        @Setup(Level.Trial)
        public void setUp(Shape shape) {
            ring = new ThreadRing(shape, Thread.ofVirtual());
        }

        @TearDown(Level.Trial)
        public void tearDown() throws InterruptedException {
            ring.stop();
        }
    }

    // ---- an executor-based actor -------------------------------------------------------------

    /** A mailbox and a "scheduled" flag: the actor runs as one executor task while it has mail. */
    static final class ExecutorActor implements Runnable {
        final ConcurrentLinkedQueue<Integer> mailbox = new ConcurrentLinkedQueue<>();
        final AtomicBoolean scheduled = new AtomicBoolean();
        final ExecutorService executor;
        final Shape shape;
        ExecutorActor next;

        ExecutorActor(ExecutorService executor, Shape shape) {
            this.executor = executor;
            this.shape = shape;
        }

        void tell(int hops) {
            mailbox.offer(hops);
            if (scheduled.compareAndSet(false, true)) {
                executor.execute(this);
            }
        }

        @Override
        public void run() {
            Integer hops;
            while ((hops = mailbox.poll()) != null) {
                if (hops == 0) {
                    shape.finish();
                } else {
                    next.tell(hops - 1);
                }
            }
            scheduled.set(false);
            // Mail that arrived after the last poll but before the flag was cleared.
            if (!mailbox.isEmpty() && scheduled.compareAndSet(false, true)) {
                executor.execute(this);
            }
        }
    }

    @State(Scope.Benchmark)
    public static class ExecutorActors {
        ExecutorService executor;
        ExecutorActor[] actors;

        @Setup(Level.Trial)
        public void setUp(Shape shape) {
            executor = new ForkJoinPool(Runtime.getRuntime().availableProcessors(),
                    ForkJoinPool.defaultForkJoinWorkerThreadFactory, null, true);
            actors = new ExecutorActor[shape.ringSize];
            for (int i = 0; i < actors.length; i++) {
                actors[i] = new ExecutorActor(executor, shape);
            }
            for (int i = 0; i < actors.length; i++) {
                actors[i].next = actors[(i + 1) % actors.length];
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() throws InterruptedException {
            executor.shutdownNow();
            executor.awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    // ---- Pekko classic actors ----------------------------------------------------------------

    /** A Pekko actor of the ring; reads its successor from the shared array on first use. */
    static final class PekkoNode extends AbstractActor {
        private final ActorRef[] ring;
        private final int index;
        private final Shape shape;

        PekkoNode(ActorRef[] ring, int index, Shape shape) {
            this.ring = ring;
            this.index = index;
            this.shape = shape;
        }

        @Override
        public Receive createReceive() {
            // The array is filled before the first token is sent, and every send is a
            // happens-before edge, so each node sees its successor.
            ActorRef[] ringRef = ring;
            return receiveBuilder()
                    .match(Integer.class, hops -> {
                        if (hops == 0) {
                            shape.finish();
                        } else {
                            ringRef[(index + 1) % ringRef.length].tell(hops - 1, getSelf());
                        }
                    })
                    .build();
        }
    }

    @State(Scope.Benchmark)
    public static class PekkoActors {
        ActorSystem system;
        ActorRef[] ring;

        @Setup(Level.Trial)
        public void setUp(Shape shape) {
            system = ActorSystem.create("ring", ConfigFactory.parseString(
                    "pekko.loglevel = WARNING\npekko.stdout-loglevel = WARNING\n"
                            + "pekko.log-dead-letters = off\n")
                    .withFallback(ConfigFactory.load()));
            ring = new ActorRef[shape.ringSize];
            for (int i = 0; i < ring.length; i++) {
                int index = i;
                ActorRef[] nodes = ring;
                ring[i] = system.actorOf(Props.create(PekkoNode.class,
                        () -> new PekkoNode(nodes, index, shape)), "node" + i);
            }
        }

        @TearDown(Level.Trial)
        public void tearDown() throws Exception {
            system.terminate();
            system.getWhenTerminated().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    // ---- the benchmarks ----------------------------------------------------------------------

    @Benchmark
    public void platformThreads(Shape shape, PlatformThreads s) {
        CompletableFuture<Void> done = shape.start();
        s.ring.send(shape.messages);
        done.join();
    }

    @Benchmark
    public void virtualThreads(Shape shape, VirtualThreads s) {
        CompletableFuture<Void> done = shape.start();
        s.ring.send(shape.messages);
        done.join();
    }

    @Benchmark
    public void executorActors(Shape shape, ExecutorActors s) {
        CompletableFuture<Void> done = shape.start();
        s.actors[0].tell(shape.messages);
        done.join();
    }

    @Benchmark
    public void pekkoActors(Shape shape, PekkoActors s) {
        CompletableFuture<Void> done = shape.start();
        s.ring[0].tell(shape.messages, ActorRef.noSender());
        done.join();
    }
}
