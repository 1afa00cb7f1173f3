package loadcurve.loadgen;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedTrustManager;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;

/**
 * The TLS side of https URLs: client engines from the JDK's default trust store with host-name
 * checks (verified), or, with --insecure, from a trust manager that accepts any certificate for
 * any name (a self-signed test server). The engines run on the client's selector thread.
 */
final class Tls {
    static final int WARM_HANDSHAKES = 30;
    static final long WARM_NANOS = 2_000_000_000L;

    private final SSLContext context;
    private final boolean insecure;

    Tls(boolean insecure) {
        this.insecure = insecure;
        try {
            if (insecure) {
                context = SSLContext.getInstance("TLS");
                context.init(null, new TrustManager[] {new TrustAll()}, null);
            } else {
                context = SSLContext.getDefault();
            }
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("no TLS in this JDK: " + e, e);
        }
    }

    /**
     * Handshakes with the origin a few times before the schedule starts (at most
     * {@link #WARM_HANDSHAKES}, or {@link #WARM_NANOS}): a fresh JVM's first handshakes run its
     * crypto interpreted, tens of ms each on the generator's one thread, and at tens of new
     * connections a second the sender fell seconds behind. It also puts a session in the
     * client cache for the run's handshakes to resume. A failing handshake ends the warm-up;
     * the run's requests will fail the same way and say why.
     */
    void warm(InetSocketAddress address, String host) {
        long start = System.nanoTime();
        for (int i = 0; i < WARM_HANDSHAKES && System.nanoTime() - start < WARM_NANOS; i++) {
            try (SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket()) {
                socket.connect(address, 2000);
                socket.setSoTimeout(2000);
                socket.setSSLParameters(engine(host, address.getPort()).getSSLParameters());
                socket.startHandshake();
            } catch (IOException e) {
                return;
            }
        }
    }

    SSLEngine engine(String host, int port) {
        SSLEngine engine = context.createSSLEngine(host, port);
        engine.setUseClientMode(true);
        if (!insecure) {
            SSLParameters parameters = engine.getSSLParameters();
            parameters.setEndpointIdentificationAlgorithm("HTTPS");
            engine.setSSLParameters(parameters);
        }
        return engine;
    }

    /**
     * Accepts every certificate. An X509ExtendedTrustManager, because the JDK wraps a plain
     * X509TrustManager in one that still checks the host name.
     */
    private static final class TrustAll extends X509ExtendedTrustManager {
        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) {
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) {
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) {
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) {
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }
}
