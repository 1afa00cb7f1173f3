package loadcurve.loadgen;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What the generator sends and what counts as success: the method, one URL or a weighted list
 * of them taken in turn (smooth weighted round-robin, so the order is fixed and the weights hold
 * over every window of their sum), extra headers, a body, the success statuses, and whether
 * https skips certificate checks. Each URL's request bytes are made once, here.
 */
final class RequestShape {
    /** One URL with its weight in the rotation. */
    record Weighted(URI url, int weight) {
    }

    static final String DEFAULT_SUCCESS = "200-399";
    static final int MAX_WEIGHT = 1_000_000;
    /** Headers the generator writes itself from the options. */
    private static final Set<String> FRAMING = Set.of("content-length", "transfer-encoding");
    /** Methods a client may send again when a kept-alive connection closes under it (RFC 9110 9.2.2). */
    private static final Set<String> IDEMPOTENT = Set.of("GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE");
    private static final Set<String> EMPTY_BODY_NEEDS_LENGTH = Set.of("POST", "PUT", "PATCH");

    final String method;
    final List<Weighted> urls;
    final List<String[]> headers;
    final byte[] body;
    final String success;
    final boolean insecure;
    private final boolean[] successful = new boolean[600];
    private final long[] current;
    private final int totalWeight;

    RequestShape(String method, List<Weighted> urls, List<String[]> headers, byte[] body, String success,
                 boolean insecure) {
        if (!method.matches("[!#$%&'*+.^_`|~0-9A-Za-z-]+")) {
            throw new IllegalArgumentException("--method must be an HTTP token such as GET or POST, not " + method);
        }
        if (urls.isEmpty()) {
            throw new IllegalArgumentException("no URL to send to");
        }
        for (String[] h : headers) {
            if (FRAMING.contains(h[0].toLowerCase(Locale.ROOT))) {
                throw new IllegalArgumentException("--header " + h[0] + " is set by the generator (from --body-file)");
            }
        }
        this.method = method;
        this.urls = List.copyOf(urls);
        this.headers = List.copyOf(headers);
        this.body = body;
        this.success = success;
        this.insecure = insecure;
        parseSuccess(success, successful);
        this.current = new long[urls.size()];
        int total = 0;
        for (Weighted w : urls) {
            total += w.weight();
        }
        this.totalWeight = total;
    }

    /** A GET of one URL, success 200-399: what the generator sent before these options. */
    static RequestShape get(URI url) {
        return new RequestShape("GET", List.of(new Weighted(checkedUrl(url.toString()), 1)), List.of(), new byte[0],
                DEFAULT_SUCCESS, false);
    }

    boolean isSuccess(int status) {
        return status >= 0 && status < successful.length && successful[status];
    }

    boolean head() {
        return method.equals("HEAD");
    }

    boolean idempotent() {
        return IDEMPOTENT.contains(method);
    }

    /**
     * The index of the next URL in the rotation (nginx's smooth weighted round-robin: each URL
     * gains its weight, the one ahead is taken and loses the total). Deterministic.
     */
    int next() {
        int best = 0;
        for (int i = 0; i < current.length; i++) {
            current[i] += urls.get(i).weight();
            if (current[i] > current[best]) {
                best = i;
            }
        }
        current[best] -= totalWeight;
        return best;
    }

    /** "verified" or "insecure" when some URL is https, else null. */
    String tls() {
        for (Weighted w : urls) {
            if (w.url().getScheme().equals("https")) {
                return insecure ? "insecure" : "verified";
            }
        }
        return null;
    }

    /** The whole request for one URL: request line, headers, then the body. */
    byte[] requestBytes(URI url) {
        String target = url.getRawPath() == null || url.getRawPath().isEmpty() ? "/" : url.getRawPath();
        if (url.getRawQuery() != null) {
            target += "?" + url.getRawQuery();
        }
        StringBuilder b = new StringBuilder(method).append(' ').append(target).append(" HTTP/1.1\r\n");
        Map<String, String> head = new LinkedHashMap<>();
        head.put("host", "Host: " + url.getHost() + (url.getPort() > 0 ? ":" + url.getPort() : ""));
        head.put("user-agent", "User-Agent: loadcurve-loadgen");
        head.put("accept", "Accept: */*");
        for (String[] h : headers) {
            head.put(h[0].toLowerCase(Locale.ROOT), h[0] + ": " + h[1]);
        }
        if (body.length > 0 || EMPTY_BODY_NEEDS_LENGTH.contains(method)) {
            head.put("content-length", "Content-Length: " + body.length);
        }
        for (String line : head.values()) {
            b.append(line).append("\r\n");
        }
        b.append("\r\n");
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(b.toString().getBytes(StandardCharsets.ISO_8859_1));
        out.writeBytes(body);
        return out.toByteArray();
    }

    /** For the counts file: names, never header values (they may hold credentials). */
    Map<String, Object> json() {
        List<Object> list = new ArrayList<>();
        for (Weighted w : urls) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("url", w.url().toString());
            m.put("weight", w.weight());
            list.add(m);
        }
        List<Object> names = new ArrayList<>();
        for (String[] h : headers) {
            names.add(h[0]);
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("method", method);
        m.put("urls", list);
        m.put("header_names", names);
        m.put("body_bytes", body.length);
        m.put("success", success);
        m.put("tls", tls());
        return m;
    }

    /** An absolute http:// or https:// URL with a host. */
    static URI checkedUrl(String text) {
        URI url;
        try {
            url = new URI(text);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException("not a URL: " + text);
        }
        String scheme = url.getScheme() == null ? "" : url.getScheme().toLowerCase(Locale.ROOT);
        if (!(scheme.equals("http") || scheme.equals("https")) || url.getHost() == null) {
            throw new IllegalArgumentException("not an http:// or https:// URL with a host: " + text);
        }
        if (url.getRawUserInfo() != null || url.getRawFragment() != null) {
            throw new IllegalArgumentException("a URL with user info or a #fragment is not sent as such: " + text);
        }
        return url;
    }

    /** "Name: value", the name an HTTP token. */
    static String[] header(String spec) {
        int colon = spec.indexOf(':');
        String name = colon < 0 ? "" : spec.substring(0, colon).trim();
        String value = colon < 0 ? "" : spec.substring(colon + 1).trim();
        if (!name.matches("[!#$%&'*+.^_`|~0-9A-Za-z-]+") || value.indexOf('\r') >= 0 || value.indexOf('\n') >= 0) {
            throw new IllegalArgumentException("--header takes 'Name: value', not " + spec);
        }
        return new String[] {name, value};
    }

    /**
     * The URLs file: one "URL" or "WEIGHT URL" a line; blank lines and lines starting with #
     * are skipped. A bad line is an error naming FILE:LINE.
     */
    static List<Weighted> readUrls(Path file) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalArgumentException("--urls-file " + file + ": cannot read it (" + e.getMessage() + ")");
        }
        List<Weighted> urls = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String[] fields = line.split("\\s+");
            String where = file + ":" + (i + 1) + ": ";
            if (fields.length > 2) {
                throw new IllegalArgumentException(where + "expected URL or WEIGHT URL, not " + line);
            }
            int weight = 1;
            if (fields.length == 2) {
                weight = fields[0].matches("[0-9]{1,7}") ? Integer.parseInt(fields[0]) : 0;
                if (weight < 1 || weight > MAX_WEIGHT) {
                    throw new IllegalArgumentException(where + "the weight must be a whole number 1.."
                            + MAX_WEIGHT + ", not " + fields[0]);
                }
            }
            try {
                urls.add(new Weighted(checkedUrl(fields[fields.length - 1]), weight));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where + e.getMessage());
            }
        }
        if (urls.isEmpty()) {
            throw new IllegalArgumentException(file + ": no URL in it (one URL or WEIGHT URL a line)");
        }
        return urls;
    }

    /** "200-399", "200,204" or a mix: the statuses (100..599) that count as success. */
    static void parseSuccess(String spec, boolean[] successful) {
        for (String item : spec.split(",", -1)) {
            String[] range = item.strip().split("-", -1);
            if (range.length > 2 || !range[0].matches("[1-5][0-9][0-9]")
                    || (range.length == 2 && !range[1].matches("[1-5][0-9][0-9]"))) {
                throw new IllegalArgumentException("--success takes statuses and ranges such as 200-399 or 200,204, not "
                        + spec);
            }
            int from = Integer.parseInt(range[0]);
            int to = range.length == 2 ? Integer.parseInt(range[1]) : from;
            if (to < from) {
                throw new IllegalArgumentException("--success: the range " + item.strip() + " is empty");
            }
            for (int s = from; s <= to; s++) {
                successful[s] = true;
            }
        }
    }
}
