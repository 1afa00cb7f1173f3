package loadcurve.server;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerOptions;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The targets: real servers from Maven Central (versions pinned in bench/pom.xml), each serving
 * {@link Scenarios} on 127.0.0.1 and nothing else. Thread-per-request targets call
 * {@link Scenarios#blocking}; event-loop targets call {@link Scenarios#async} with their loop's
 * timer and write the answer back on the loop.
 */
public final class Targets {
    /** The target ids, in the order the harness lists them (family-model). */
    public static final List<String> IDS = List.of("jdk-pool", "jdk-virtual", "jetty-pool",
            "jetty-virtual", "helidon-virtual", "vertx-eventloop", "netty-eventloop");

    /** A started target: its bound port, and how to stop it. */
    public interface Running {
        int port();

        void stop() throws Exception;
    }

    private Targets() {
    }

    /**
     * Starts target {@code id} on loopback ({@code port} 0: an ephemeral one). {@code threads} is
     * the pool size of the pool targets (the others ignore it).
     */
    public static Running start(String id, int threads, int port, int backlog) throws Exception {
        return switch (id) {
            case "jdk-pool" -> jdk(Executors.newFixedThreadPool(threads), port, backlog);
            case "jdk-virtual" -> jdk(Executors.newVirtualThreadPerTaskExecutor(), port, backlog);
            case "jetty-pool" -> jetty(threads, false, port, backlog);
            case "jetty-virtual" -> jetty(threads, true, port, backlog);
            case "helidon-virtual" -> helidon(port, backlog);
            case "vertx-eventloop" -> vertx(port, backlog);
            case "netty-eventloop" -> netty(port, backlog);
            default -> throw new IllegalArgumentException(
                    "unknown target " + id + " (one of " + String.join(", ", IDS) + ")");
        };
    }

    // --- JDK com.sun.net.httpserver.HttpServer, handlers run by the given executor ---

    static Running jdk(ExecutorService executor, int port, int backlog) throws IOException {
        HttpServer server = HttpServer.create(
                new InetSocketAddress(InetAddress.getLoopbackAddress(), port), backlog);
        server.createContext("/", Targets::jdkHandle);
        server.setExecutor(executor);
        server.start();
        return new Running() {
            public int port() {
                return server.getAddress().getPort();
            }

            public void stop() {
                // Requests still queued are abandoned: their clients have been stopped already.
                server.stop(0);
                executor.shutdownNow();
            }
        };
    }

    private static void jdkHandle(HttpExchange exchange) throws IOException {
        Scenarios.Response response;
        try {
            response = Scenarios.blocking(exchange.getRequestURI().getPath(),
                    exchange.getRequestURI().getRawQuery());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            exchange.close();
            return;
        }
        exchange.getResponseHeaders().set("Content-Type", response.contentType());
        exchange.sendResponseHeaders(response.status(), response.body().length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(response.body());
        }
    }

    // --- Jetty 12 core (no servlets): a QueuedThreadPool of `threads`, or virtual threads ---

    static Running jetty(int threads, boolean virtual, int port, int backlog) throws Exception {
        QueuedThreadPool pool = new QueuedThreadPool(threads, Math.min(threads, 8));
        pool.setName(virtual ? "jetty-virtual" : "jetty-pool");
        if (virtual) {
            // Jetty runs blocking handlers on this executor (one virtual thread per request);
            // the pool keeps only Jetty's own selector and acceptor work.
            pool.setVirtualThreadsExecutor(Executors.newVirtualThreadPerTaskExecutor());
        }
        Server server = new Server(pool);
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(port);
        connector.setAcceptQueueSize(backlog);
        server.addConnector(connector);
        // Handler.Abstract is a blocking handler: Jetty calls it where it may block.
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(org.eclipse.jetty.server.Request request,
                                  org.eclipse.jetty.server.Response response, Callback callback)
                    throws Exception {
                Scenarios.Response answer = Scenarios.blocking(
                        org.eclipse.jetty.server.Request.getPathInContext(request),
                        request.getHttpURI().getQuery());
                response.setStatus(answer.status());
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, answer.contentType());
                response.getHeaders().put(HttpHeader.CONTENT_LENGTH, answer.body().length);
                response.write(true, ByteBuffer.wrap(answer.body()), callback);
                return true;
            }
        });
        server.start();
        return new Running() {
            public int port() {
                return connector.getLocalPort();
            }

            public void stop() throws Exception {
                server.stop();
            }
        };
    }

    // --- Helidon 4 SE WebServer: a virtual thread per request (its only model) ---

    static Running helidon(int port, int backlog) {
        io.helidon.webserver.WebServer server = io.helidon.webserver.WebServer.builder()
                .host("127.0.0.1")
                .port(port)
                .backlog(backlog)
                .routing(routing -> routing.any((req, res) -> {
                    Scenarios.Response answer = Scenarios.blocking(req.path().rawPath(),
                            req.query().rawValue());
                    res.status(answer.status());
                    res.header(io.helidon.http.HeaderNames.CONTENT_TYPE, answer.contentType());
                    res.send(answer.body());
                }))
                .build()
                .start();
        return new Running() {
            public int port() {
                return server.port();
            }

            public void stop() {
                server.stop();
            }
        };
    }

    // --- Vert.x 5: one HttpServer verticle per event loop (2 x cores), its timer for the waits ---

    static Running vertx(int port, int backlog) throws Exception {
        Vertx vertx = Vertx.vertx();
        // A server created outside a verticle serves every connection on one event loop; one
        // verticle instance per event loop spreads them, as Netty's group does. Vert.x shares
        // one listening socket among instances bound to the same port, but not to port 0 (each
        // would get its own), so port 0 is first resolved to a free port.
        int loops = io.vertx.core.VertxOptions.DEFAULT_EVENT_LOOP_POOL_SIZE;
        int listenPort = port;
        if (listenPort == 0) {
            try (java.net.ServerSocket probe = new java.net.ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                listenPort = probe.getLocalPort();
            }
        }
        int chosen = listenPort;
        java.util.List<VertxServer> servers = new java.util.concurrent.CopyOnWriteArrayList<>();
        await(vertx.deployVerticle(() -> {
            VertxServer server = new VertxServer(chosen, backlog);
            servers.add(server);
            return server;
        }, new io.vertx.core.DeploymentOptions().setInstances(loops)));
        int bound = servers.get(0).actualPort;
        for (VertxServer server : servers) {
            if (server.actualPort != bound) {
                vertx.close();
                throw new IllegalStateException("Vert.x instances listen on different ports: "
                        + servers.stream().map(x -> x.actualPort).toList());
            }
        }
        return new Running() {
            public int port() {
                return bound;
            }

            public void stop() throws Exception {
                await(vertx.close());
            }
        };
    }

    private static <T> T await(io.vertx.core.Future<T> future) throws Exception {
        return future.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    private static final class VertxServer extends io.vertx.core.VerticleBase {
        private final int port;
        private final int backlog;
        volatile int actualPort;

        VertxServer(int port, int backlog) {
            this.port = port;
            this.backlog = backlog;
        }

        @Override
        public io.vertx.core.Future<?> start() {
            Scenarios.Timer timer = ms -> {
                CompletableFuture<Void> done = new CompletableFuture<>();
                vertx.setTimer(Math.max(1, ms), id -> done.complete(null));
                return done;
            };
            return vertx.createHttpServer(new HttpServerOptions()
                            .setHost("127.0.0.1").setPort(port).setAcceptBacklog(backlog))
                    .requestHandler(req -> Scenarios.async(req.path(), req.query(), timer)
                            .whenComplete((answer, error) ->
                                    // Back on this verticle's event loop: the fan-out completes
                                    // on other threads.
                                    context.runOnContext(v -> {
                                        if (error != null) {
                                            req.response().setStatusCode(500).end("error\n");
                                            return;
                                        }
                                        req.response().setStatusCode(answer.status())
                                                .putHeader("Content-Type", answer.contentType())
                                                .end(io.vertx.core.buffer.Buffer.buffer(answer.body()));
                                    })))
                    .listen()
                    .onSuccess(server -> actualPort = server.actualPort());
        }
    }

    // --- Netty 4.2: NIO event loops (2 x cores, its default), the channel's loop as timer ---

    static Running netty(int port, int backlog) throws Exception {
        EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        EventLoopGroup workers = new MultiThreadIoEventLoopGroup(NioIoHandler.newFactory());
        Channel channel = new ServerBootstrap()
                .group(boss, workers)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_BACKLOG, backlog)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(65_536),
                                new NettyHandler());
                    }
                })
                .bind(InetAddress.getLoopbackAddress(), port).sync().channel();
        return new Running() {
            public int port() {
                return ((InetSocketAddress) channel.localAddress()).getPort();
            }

            public void stop() throws Exception {
                channel.close().sync();
                boss.shutdownGracefully(0, 1, TimeUnit.SECONDS);
                workers.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
            }
        };
    }

    private static final class NettyHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
            boolean keepAlive = HttpUtil.isKeepAlive(request);
            io.netty.handler.codec.http.HttpVersion version = request.protocolVersion();
            String uri = request.uri();
            int q = uri.indexOf('?');
            String path = q < 0 ? uri : uri.substring(0, q);
            String query = q < 0 ? null : uri.substring(q + 1);
            Scenarios.Timer timer = ms -> {
                CompletableFuture<Void> done = new CompletableFuture<>();
                ctx.executor().schedule(() -> done.complete(null), ms, TimeUnit.MILLISECONDS);
                return done;
            };
            Scenarios.async(path, query, timer).whenComplete((answer, error) -> {
                Runnable write = () -> {
                    Scenarios.Response a = error == null ? answer : Scenarios.Response.text(500, "error\n");
                    FullHttpResponse response = new DefaultFullHttpResponse(version,
                            HttpResponseStatus.valueOf(a.status()), Unpooled.wrappedBuffer(a.body()));
                    response.headers().set(HttpHeaderNames.CONTENT_TYPE, a.contentType());
                    HttpUtil.setContentLength(response, a.body().length);
                    if (keepAlive) {
                        response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
                        ctx.writeAndFlush(response);
                    } else {
                        ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
                    }
                };
                // Written on the channel's event loop (the fan-out completes on other threads).
                if (ctx.executor().inEventLoop()) {
                    write.run();
                } else {
                    ctx.executor().execute(write);
                }
            });
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
