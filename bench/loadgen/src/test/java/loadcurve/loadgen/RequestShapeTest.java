package loadcurve.loadgen;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RequestShapeTest {
    private static RequestShape.Weighted w(String url, int weight) {
        return new RequestShape.Weighted(URI.create(url), weight);
    }

    private static RequestShape shape(String success, RequestShape.Weighted... urls) {
        return new RequestShape("GET", List.of(urls), List.of(), new byte[0], success, false);
    }

    @Test
    void theRotationIsSmoothWeightedRoundRobin() {
        RequestShape s = shape("200", w("http://h/a", 5), w("http://h/b", 1), w("http://h/c", 1));
        StringBuilder order = new StringBuilder();
        for (int i = 0; i < 14; i++) {
            order.append("abc".charAt(s.next()));
        }
        // nginx's documented sequence for weights 5, 1, 1, twice: interleaved, not aaaaabc.
        assertEquals("aabacaa" + "aabacaa", order.toString());
    }

    @Test
    void everyWindowOfTheWeightsSumHoldsTheWeights() {
        RequestShape s = shape("200", w("http://h/a", 3), w("http://h/b", 2), w("http://h/c", 4));
        int[] counts = new int[3];
        for (int i = 0; i < 9 * 50; i++) {
            counts[s.next()]++;
        }
        assertArrayEquals(new int[] {150, 100, 200}, counts);
    }

    @Test
    void successIsTheGivenStatusesAndRanges() {
        RequestShape s = shape("200,204,300-302", w("http://h/", 1));
        assertTrue(s.isSuccess(200) && s.isSuccess(204) && s.isSuccess(301) && s.isSuccess(302));
        assertFalse(s.isSuccess(201) || s.isSuccess(303) || s.isSuccess(500) || s.isSuccess(199));
        RequestShape byDefault = shape(RequestShape.DEFAULT_SUCCESS, w("http://h/", 1));
        assertTrue(byDefault.isSuccess(200) && byDefault.isSuccess(399) && byDefault.isSuccess(304));
        assertFalse(byDefault.isSuccess(400) || byDefault.isSuccess(199) || byDefault.isSuccess(503));
        for (String bad : new String[] {"2xx", "200-", "399-200", "600", "200,,204", "99"}) {
            assertThrows(IllegalArgumentException.class, () -> shape(bad, w("http://h/", 1)), bad);
        }
    }

    @Test
    void theRequestCarriesMethodHeadersAndBodyAndTheCountsOnlyHeaderNames() {
        RequestShape s = new RequestShape("POST", List.of(w("http://127.0.0.1:8080/api/x?q=1", 1)),
                List.of(RequestShape.header("Authorization: Bearer secret"), RequestShape.header("accept: text/plain")),
                "{\"a\":1}".getBytes(StandardCharsets.UTF_8), "200", false);
        assertEquals("POST /api/x?q=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: loadcurve-loadgen\r\n"
                        + "accept: text/plain\r\nAuthorization: Bearer secret\r\nContent-Length: 7\r\n\r\n{\"a\":1}",
                new String(s.requestBytes(s.urls.get(0).url()), StandardCharsets.ISO_8859_1));
        String json = Json.line(s.json());
        assertEquals("{\"method\": \"POST\", \"urls\": [{\"url\": \"http://127.0.0.1:8080/api/x?q=1\", \"weight\": 1}], "
                + "\"header_names\": [\"Authorization\", \"accept\"], \"body_bytes\": 7, \"success\": \"200\", "
                + "\"tls\": null}", json);
        assertFalse(json.contains("secret"));
        assertThrows(IllegalArgumentException.class, () -> new RequestShape("GET", List.of(w("http://h/", 1)),
                List.<String[]>of(RequestShape.header("Content-Length: 3")), new byte[0], "200", false));
        assertThrows(IllegalArgumentException.class, () -> RequestShape.header("no colon"));
        assertThrows(IllegalArgumentException.class, () -> new RequestShape("GE T", List.of(w("http://h/", 1)),
                List.of(), new byte[0], "200", false));
    }

    @Test
    void tlsIsVerifiedUnlessInsecureAndOnlyForHttps() {
        assertEquals(null, shape("200", w("http://h/", 1)).tls());
        assertEquals("verified", shape("200", w("http://h/", 1), w("https://h/", 1)).tls());
        assertEquals("insecure", new RequestShape("GET", List.of(w("https://h/", 1)), List.of(), new byte[0], "200",
                true).tls());
    }

    @Test
    void theUrlsFileTakesWeightsAndCommentsAndNamesTheBadLine(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("urls.txt");
        Files.writeString(file, "# the mix\nhttp://127.0.0.1:1/a\n\n  3 http://127.0.0.1:1/b?x=1\n");
        assertEquals(List.of(w("http://127.0.0.1:1/a", 1), w("http://127.0.0.1:1/b?x=1", 3)),
                RequestShape.readUrls(file));
        Files.writeString(file, "http://127.0.0.1:1/a\nx http://127.0.0.1:1/b\n");
        assertEquals(file + ":2: the weight must be a whole number 1..1000000, not x",
                assertThrows(IllegalArgumentException.class, () -> RequestShape.readUrls(file)).getMessage());
        Files.writeString(file, "# only\n2 ftp://h/\n");
        assertEquals(file + ":2: not an http:// or https:// URL with a host: ftp://h/",
                assertThrows(IllegalArgumentException.class, () -> RequestShape.readUrls(file)).getMessage());
        Files.writeString(file, "0 http://h/\n");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> RequestShape.readUrls(file)).getMessage()
                .startsWith(file + ":1: the weight"));
        Files.writeString(file, "1 http://h/ extra\n");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> RequestShape.readUrls(file)).getMessage()
                .startsWith(file + ":1: expected URL or WEIGHT URL"));
        Files.writeString(file, "# nothing\n");
        assertEquals(file + ": no URL in it (one URL or WEIGHT URL a line)",
                assertThrows(IllegalArgumentException.class, () -> RequestShape.readUrls(file)).getMessage());
    }
}
